#!/usr/bin/env bash
# completions/opennd.bash offers each tool's options, ndperf's modes and
# tests, and ndksmbd's roles. Usage: check_completion.sh BIN_DIR
set -uo pipefail
PATH=$1:$PATH
source "$(dirname "$0")/../../completions/opennd.bash"
fail=0
offer() {  # offer WANT WORD...: completing the last WORD offers WANT
    COMP_WORDS=("${@:2}"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
    _opennd_complete
    [[ " ${COMPREPLY[*]} " == *" $1 "* ]] || { echo "FAIL: '${*:2}' does not offer $1 (offered: ${COMPREPLY[*]})"; fail=1; }
}
offer --sweep ndperf --sw
offer --working-set ndperf -S 8 --wor
offer connect-rate ndperf con
offer write_bw ndperf -t write
offer tcp ndperf --transport t
offer --peer-netns ndconformance --peer
offer --install ndinstall --ins
offer --params ndinfo --pa
offer --bulk ndrping --bu
offer server ndksmbd se
offer cma-read-bw ndbaseline cma-r
for t in $(ndbaseline --list | awk '{print $1}'); do offer "$t" ndbaseline "${t:0:3}"; done  # every test it has
[ $fail = 0 ] && echo "PASS: completions offered"
exit $fail
