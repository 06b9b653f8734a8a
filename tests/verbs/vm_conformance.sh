#!/usr/bin/env bash
# The conformance suite against the verbs provider (ndverbs) on Linux's
# soft RDMA devices, in a throw-away VM (../shared/tools/rdma-vm): rxe
# (RoCE v2) and siw (iWARP), one boot each (rdma_cm must not see both on
# one netdev). The two-sided cases run their peer as a second process in
# the VM, connecting to the device's address: IPv4 (10.0.2.15) and IPv6
# (fd77:15::15, added to the device's netdev), each two-sided case on both.
#
# usage: tests/verbs/vm_conformance.sh [BUILD_DIR] [--device rxe|siw|both]
#                                      [--filter PATTERN] [--timeout SEC]
#                                      [--env NAME=VALUE]... [--with-known]
#                                      [--fault-link]
# Without --filter, rxe runs the whole suite and siw the groups in
# $siw_groups (its connection, window, remote access and scale groups
# still fail on iWARP's and siw's semantics, and siw's kernel oopsed in
# the connection group: docs/verbs.md).
# The build tree is shared into the VM at its own path, so its binaries,
# libraries and provider catalog work there unchanged. --env sets a
# variable for the suite in the VM (an OPENND_VERBS_* parameter, say).
# --with-known runs the device's known failures too (to see one fixed).
# --fault-link lets the fault cases take the VM's eth0 down and up again
# (Disconnect.LinkDownUnderAConnection; without it they skip).
# environment: RDMA_VM_RUN (run-vm.sh). Exit status: 0 no case failed,
# 1 a case failed or a VM run failed, 77 cannot run here.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=build devices="rxe siw" filter="" timeout=20 envs="" with_known=0 fault=""
siw_groups="Discovery.*:Registration.*:Helper.*:Types.*:Overlapped.*:Limits.*:MemoryRegion.*:CompletionQueue.*:SharedReceiveQueue.*:Addr/QueuePair.*:Addr/DataIntegrity.*:Addr/Disconnect.*"
while [ $# -gt 0 ]; do
  case $1 in
    --device) case $2 in both) devices="rxe siw";; *) devices=$2;; esac; shift 2;;
    --filter) filter=$2; shift 2;;
    --timeout) timeout=$2; shift 2;;
    --env) case $2 in [A-Za-z_]*=*) envs="$envs $(printf %q "$2")";; *) echo "vm_conformance: --env NAME=VALUE" >&2; exit 2;; esac; shift 2;;
    --with-known) with_known=1; shift;;
    --fault-link) fault=" --fault-link eth0"; shift;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    -*) echo "vm_conformance: unknown option $1" >&2; exit 2;;
    *) build=$1; shift;;
  esac
done
case $build in /*) ;; *) build=$root/$build;; esac
vm=${RDMA_VM_RUN:-$root/../shared/tools/rdma-vm/run-vm.sh}
[ -x "$vm" ] || { echo "vm_conformance: SKIP: no VM tool at $vm"; exit 77; }
[ -e "$build/lib/opennd/libndverbs.so" ] || { echo "vm_conformance: SKIP: ndverbs not built (rdma-core headers?)"; exit 77; }
[ -x "$build/bin/ndconformance" ] || { echo "vm_conformance: no $build/bin/ndconformance (build first)"; exit 1; }
# The VM's packages and image (installed as root, cached after the first run).
timeout 1200 "$vm" --build-only >/dev/null 2>&1 || { echo "vm_conformance: SKIP: run-vm.sh --build-only failed (root installs its packages)"; exit 77; }

# Inside the VM: the shared tree (/host) appears at $build (vm_tree.sh).
setup="b=$build
$(cat "$root/tests/verbs/vm_tree.sh")"
rc=0
for dev in $devices; do
  # Cases a device is known to fail (tests/verbs/known_failures, each with
  # its reason): left out here, listed in the log, and docs/verbs.md says why.
  known=""
  [ $with_known = 1 ] || known=$(awk -v d="$dev" '$1 == d && $0 !~ /^#/ {printf "%s%s", sep, $2; sep=":"}' "$root/tests/verbs/known_failures")
  pattern=${filter:-*}
  [ -z "$filter" ] && [ "$dev" = siw ] && pattern=$siw_groups
  [ -n "$known" ] && pattern="$pattern-$known"
  [ -n "$known" ] && echo "known failures on ${dev}, not run: ${known//:/ }"
  args="--provider ndverbs --address 10.0.2.15 --address fd77:15::15 --timeout $timeout$fault --case-timeout 120 --filter '$pattern'"
  log=$(mktemp)
  echo "== ndconformance on ${dev}0 (ndverbs) =="
  # ndinfo first: the adapter on the device's address, with its notes.
  timeout 3000 "$vm" --timeout 2900 --links "${dev}0:eth0" --share "$build" --add "$build/bin/ndconformance" \
    -c "$setup
echo 0 > /proc/sys/net/ipv6/conf/eth0/accept_dad; echo 1 > /proc/sys/net/ipv6/conf/eth0/keep_addr_on_down; ip -6 addr add fd77:15::15/64 dev eth0
i=0; while ! $build/bin/ndinfo 2>/dev/null | grep -q 'Adapter 0x[0-9a-f]*: 10.0.2.15 fd77:15::15' && [ \$i -lt 50 ]; do sleep 0.1; i=\$((i+1)); done
$build/bin/ndinfo > /tmp/ndinfo.txt 2>&1; grep -A4 '^Provider ndverbs' /tmp/ndinfo.txt; grep 'note: ' /tmp/ndinfo.txt | head -5
for want in 'Adapter 0x[0-9a-f]*: 10.0.2.15 fd77:15::15' 'note: device: ${dev}0' 'note: transport: ' 'note: fork safety: '; do
  grep -q \"\$want\" /tmp/ndinfo.txt || { echo \"ndinfo does not say: \$want\"; exit 1; }
done
env$envs $build/bin/ndconformance $args" >"$log" 2>&1
  status=$?
  # The suite's own lines (not the kernel's console).
  grep -v '^\[ *[0-9][0-9.]*\]' "$log" | grep -v '^\[ PASS' | grep -v '^init:' | grep -v '^run-vm:'
  [ $status -eq 0 ] || { echo "vm_conformance: ${dev}: exit $status"; rc=1; }
  rm -f "$log"
done
exit $rc
