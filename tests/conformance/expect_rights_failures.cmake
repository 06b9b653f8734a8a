# The suite's own test: ndconformance against a deliberately broken provider
# (ndsoft_broken: the software provider built without remote rights checks)
# must report the rights cases as FAILED. Run as
#   cmake -DNDCONFORMANCE=... -DLIBRARY=... -DGUID=... -P expect_rights_failures.cmake
set(_cases
  ReadWithoutRemoteReadRight WriteWithoutRemoteWriteRight WriteWithOnlyLocalWriteRight
  WriteThroughWindowWithoutWriteRight ReadThroughWindowWithoutReadRight)
execute_process(
  COMMAND ${NDCONFORMANCE} --library ${LIBRARY} --guid ${GUID} --filter "*RemoteAccess.*Right*" --timeout 10
  OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
message("${_out}")
if(NOT _rc EQUAL 1)
  message(FATAL_ERROR "ndconformance should exit 1 (cases failed) against the broken provider, got '${_rc}'\n${_err}")
endif()
foreach(_case ${_cases})
  if(NOT _out MATCHES "\\[ FAIL \\] Addr/RemoteAccess\\.${_case}/")
    message(FATAL_ERROR "the broken provider was not caught by RemoteAccess.${_case}")
  endif()
endforeach()
if(_out MATCHES "\\[ PASS \\] [^\n]*Right")
  message(FATAL_ERROR "a rights case passed against a provider that checks no rights")
endif()
message(STATUS "ndconformance reported every rights case as failed against the broken provider")
