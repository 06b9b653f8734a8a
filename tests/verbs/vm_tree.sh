# Not run on its own: the text the rdma-vm VM's shell (busybox sh) runs
# first, with $b set to the build tree's path (vm_conformance.sh,
# vm_interop.sh, tests/interop/siw_interop.sh, bench/verbs_callgrind.sh
# and bench/comparelib/verbs_vm.py embed it). It links the shared tree
# (/host) in at $b entry by entry, since run-vm.sh --add put the
# programs' libraries under $b/lib already, so its binaries, libraries and
# provider catalog work at their own paths; and it writes a catalog that
# lists ndverbs alone (so ndsoft cannot answer for the device's address),
# for those that export OPENND_CATALOG=/root/catalog.
# Programs and providers run from the VM's memory: 9p has no page cache
# here, so a program run from /host reads its whole file (ndconformance:
# tens of MB) through the emulated device at every exec, ~0.5 s each. A
# program the caller put in the VM with --add is run from there; the
# providers are copied in once.
mkdir -p $b/lib $b/bin $b/lib/opennd
for e in /host/bin/*; do
  n=${e##*/}
  [ -e "$b/bin/$n" ] && continue
  if [ -x "/usr/local/bin/$n" ]; then ln -s "/usr/local/bin/$n" "$b/bin/$n"; else ln -s "$e" "$b/bin/$n"; fi
done
for e in /host/lib/opennd/*; do [ -e "$b/lib/opennd/${e##*/}" ] || cp -P "$e" "$b/lib/opennd/"; done
for e in /host/*; do [ -e "$b/${e##*/}" ] || ln -s "$e" "$b/${e##*/}"; done
for e in /host/lib/*; do [ -e "$b/lib/${e##*/}" ] || ln -s "$e" "$b/lib/${e##*/}"; done
mkdir -p /root/catalog && chmod 755 /root/catalog
sed "s|^library=.*|library=$b/lib/opennd/libndverbs.so|" $b/etc/opennd/providers.d/50-ndverbs.conf > /root/catalog/50-ndverbs.conf
# A listening rdma_cm id on port $1 (rxe's makes no TCP socket).
listening() { rdma res show cm_id 2>/dev/null | grep -qE "state LISTEN .*src-addr [^ ]*:$1 "; }
