#!/usr/bin/env bash
# Runs verbs_facts (the device behaviours the ND-over-verbs provider relies
# on) on rxe and on siw in a throw-away VM, one boot per device (rdma_cm
# must not see rxe and siw on one netdev), and prints the FACT lines that
# docs/verbs.md records.
#
# usage: tests/interop/verbs_facts.sh [BUILD_DIR] [-- verbs_facts options]
# environment: RDMA_VM_RUN (run-vm.sh). Exit status: 0, 1 a VM run failed,
# 77 cannot run here (no verbs_facts or no VM tool).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
vm=${RDMA_VM_RUN:-$root/../shared/tools/rdma-vm/run-vm.sh}
facts=$build/bin/verbs_facts
[ -x "$facts" ] || { echo "verbs_facts: $facts not built (rdma-core headers missing?)"; exit 77; }
[ -x "$vm" ] || { echo "verbs_facts: no VM tool at $vm"; exit 77; }
rc=0
for dev in rxe0 siw0; do
  log=$(mktemp)
  timeout 900 "$vm" --links "$dev:eth0" --add "$facts" -c "verbs_facts -a 10.0.2.15 -T 10 $*" >"$log" 2>&1 ||
    { echo "verbs_facts: the $dev run failed (exit $?):"; tail -n 30 "$log"; rc=1; }
  grep '^FACT' "$log"
  rm -f "$log"
done
exit $rc
