# How the conformance suite runs against ndsoft (read by tests/conformance):
# every data path it has, each with the groups that exercise it. Every
# feature ndsoft's adapter reports is tested; the suite skips only what an
# adapter says it lacks.

# Shared memory with cross-memory attach (the default on one host): everything.
ndconformance_run(ndsoft PROVIDER ndsoft GROUPS ${NDCONFORMANCE_GROUPS})

# Copying through the rings, as when cross-memory attach is not permitted
# (Yama, containers): the groups that move data.
ndconformance_run(ndsoft-copy PROVIDER ndsoft GROUPS QueuePair RemoteAccess DataIntegrity Disconnect
                  ENV OPENND_SOFT_CMA=0)

# iWARP over TCP between the two processes (OPENND_SOFT_TRANSPORT=tcp forces
# it on one host), every group that connects. A stream parked for a polling
# application waits 1 s instead of 1 ms (OPENND_SOFT_PARK_MS): a wrong park,
# a Write left to a program that stopped polling, fails a case instead of
# costing it a millisecond.
ndconformance_run(ndsoft-tcp PROVIDER ndsoft GROUPS ${NDCONFORMANCE_CONNECTED_GROUPS}
                  ENV OPENND_SOFT_TRANSPORT=tcp OPENND_SOFT_PARK_MS=1000)

# Over TCP with CRC32c on every FPDU (both sides ask for it), the groups that
# move data: a CRC one side computes wrongly ends every connection.
ndconformance_run(ndsoft-tcp-crc PROVIDER ndsoft GROUPS QueuePair RemoteAccess DataIntegrity
                  ENV OPENND_SOFT_TRANSPORT=tcp OPENND_SOFT_MPA_CRC=1 OPENND_SOFT_PARK_MS=1000)

# Between two network namespaces: the TCP path chosen by itself, as between hosts.
ndconformance_netns(ndsoft-netns PROVIDER ndsoft GROUPS ${NDCONFORMANCE_CONNECTED_GROUPS}
                    ENV OPENND_SOFT_PARK_MS=1000)

# --library mode against the real provider: the rights cases pass; and the
# same cases fail against ndsoft_broken (checks_off.cpp).
set(_soft_guid "{4F70656E-4E44-536F-6674-000000000001}")
ndconformance_library(ndsoft.LibraryMode LIBRARY ndsoft GUID ${_soft_guid} FILTER "*RemoteAccess.*Right*")
if(TARGET ndsoft_broken)
  ndconformance_expect_rights_failures(SuiteCatchesBrokenProvider LIBRARY ndsoft_broken GUID ${_soft_guid})
endif()
