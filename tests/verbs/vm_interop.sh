#!/usr/bin/env bash
# ND code against native verbs code on one RDMA device: ndrping over the
# verbs provider (ndverbs, the only provider in its catalog here) paired
# with rdma-core's rping, and ndrping --bulk with tests/interop/verbs_bulk,
# each way, in the rdma-vm VM on rxe0 and on siw0 (one boot each). Both
# programs run in the VM on the device's address, so every byte crosses
# the device's own transport (RoCE v2 packets through rxe; MPA/DDP/RDMAP
# through siw's TCP) between an ND process and a verbs process.
#
#   a) rping -s          <- ndrping -c         (64 B and 65535 B pings)
#   b) ndrping -s        <- rping -c -V        (64 B and 65535 B pings)
#   c) verbs_bulk -s     <- ndrping --bulk -c  (Sends; Write, Read 1 MiB)
#   d) ndrping --bulk -s <- verbs_bulk -c
# and a-v6, d-v6: the same over IPv6 (fd77:15::15, added to the netdev);
#   e) SMB Direct on NDK over ndverbs: ndksmbd server <- ndksmbd client
#      (a 3 MB file by RDMA Read, read back by RDMA Write, checksums and
#      every byte compared by ndksmbd; then with inline data)
#   f) NDK fast-register MRs and shared endpoints over ndverbs: test_ndk's
#      NdkFastRegister, NdkReadInvalidate and NdkSharedEndpoint cases on the
#      device's address (one process, both ends on the device). On
#      siw not the four whose refused Write must fail its initiator: siw
#      completes a Write once sent, and the target's refusal ends the
#      connection after (docs/verbs.md); what they check of the memory
#      holds there too.
# A ping exchange passes when both exit 0 and each printed every ping;
# a bulk one when both printed their four verified steps (docs/interop.md).
# One that fails is shown and run once more: a pass then is RETRIED, two
# failures fail (rxe in the VM rarely runs out of retries; docs/verbs.md).
#
# usage: tests/verbs/vm_interop.sh [BUILD_DIR] [--device rxe|siw|both] [--count N]
#                                   [--messages M]
# --count: pings per rping exchange (10); --messages: Sends each side of a
# bulk exchange makes (64; the Writes and Reads of 1 MiB are the same).
# environment: RDMA_VM_RUN (run-vm.sh). Exit status: 0 every exchange
# verified, 1 a failure, 77 cannot run here.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=build devices="rxe siw" count=10 messages=64
while [ $# -gt 0 ]; do
  case $1 in
    --device) case $2 in both) devices="rxe siw";; *) devices=$2;; esac; shift 2;;
    --count) count=$2; shift 2;;
    --messages) messages=$2; shift 2;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    -*) echo "vm_interop: unknown option $1" >&2; exit 2;;
    *) build=$1; shift;;
  esac
done
case $build in /*) ;; *) build=$root/$build;; esac
vm=${RDMA_VM_RUN:-$root/../shared/tools/rdma-vm/run-vm.sh}
[ -x "$vm" ] || { echo "vm_interop: SKIP: no VM tool at $vm"; exit 77; }
[ -e "$build/lib/opennd/libndverbs.so" ] || { echo "vm_interop: SKIP: ndverbs not built (rdma-core headers?)"; exit 77; }
for b in ndrping verbs_bulk; do
  [ -x "$build/bin/$b" ] || { echo "vm_interop: no $build/bin/$b (build first)"; exit 1; }
done
timeout 1200 "$vm" --build-only >/dev/null 2>&1 || { echo "vm_interop: SKIP: run-vm.sh --build-only failed"; exit 77; }

# In the VM: the build tree at its own path, and a catalog that lists
# ndverbs alone (vm_tree.sh, which also gives listening()).
tree=$(cat "$root/tests/verbs/vm_tree.sh")
read -r -d '' inside <<'EOF'
export OPENND_CATALOG=/root/catalog
ip=10.0.2.15 ip6=fd77:15::15 n=$COUNT m=$MESSAGES fails=0 retried=0
echo 0 > /proc/sys/net/ipv6/conf/eth0/accept_dad; ip -6 addr add $ip6/64 dev eth0
i=0; while ! $b/bin/ndinfo 2>/dev/null | grep -q "Adapter 0x[0-9a-f]*: .*$ip6" && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
# pair ID PORT WANT SERVER_PATTERN CLIENT_PATTERN SERVER_COMMAND CLIENT_COMMAND
# (busybox sh in the VM: no arrays, so commands are strings). A pair that
# fails is shown, then run once more: the kernel's rxe, in an emulated VM
# on a loaded machine, rarely lets a connection's retries run out (the
# ND side's Send completes ND_IO_TIMEOUT; ndverbs' debug log, on here,
# names the device's status). A second failure fails the exchange; a pass
# on the second try is counted and listed as RETRIED.
attempt() {
  timeout -k 5 120 sh -c "exec $server" > /tmp/$id.server 2>&1 & sp=$! i=0
  while ! listening $port && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  timeout -k 5 120 sh -c "exec $client" > /tmp/$id.client 2>&1; crc=$?
  wait $sp; src=$?
  sn=$(grep -cE "$spat" /tmp/$id.server); cn=$(grep -cE "$cpat" /tmp/$id.client)
  [ $src = 0 ] && [ $crc = 0 ] && [ "$sn" = "$want" ] && [ "$cn" = "$want" ]
}
pair() {
  id=$1 port=$2 want=$3 spat=$4 cpat=$5 server=$6 client=$7 t0=$(date +%s) r=PASS
  if ! attempt; then
    printf 'RESULT %-10s %-4s server rc=%s %s/%s, client rc=%s %s/%s (first try)\n' $id FAIL $src "$sn" "$want" $crc "$cn" "$want"
    show
    port=$((port + 100)) server=$(echo "$server" | sed "s/-p $2 /-p $port /") client=$(echo "$client" | sed "s/-p $2 /-p $port /")
    if attempt; then r=RETRIED retried=$((retried+1)); else r=FAIL fails=$((fails+1)); fi
  fi
  printf 'RESULT %-10s %-4s server rc=%s %s/%s, client rc=%s %s/%s (%ss)\n' $id $r $src "$sn" "$want" $crc "$cn" "$want" $(($(date +%s) - t0))
  [ $r = FAIL ] && show
}
show() {
  echo "| $id server: $server"; tail -12 /tmp/$id.server | cut -c1-160 | sed 's/^/| /'
  echo "| $id client: $client"; tail -12 /tmp/$id.client | cut -c1-160 | sed 's/^/| /'
}
nd="env OPENND_LOG=4 $b/bin/ndrping" vb=$b/bin/verbs_bulk
ping_s='^server ping data: rdma-ping-' ping_c='^ping data: rdma-ping-'
bulk_nd='^ndrping bulk [a-z]*: .*(verified$|PASS)' bulk_vb='^verbs_bulk [a-z]*: .*(verified$|PASS)'
pair a-64 7301 $n "$ping_s" "$ping_c" "rping -s -a $ip -p 7301 -C $n -S 64 -v" "$nd -c -a $ip -p 7301 -C $n -S 64 -v -T 60"
pair a-65535 7302 $n "$ping_s" "$ping_c" "rping -s -a $ip -p 7302 -C $n -S 65535 -v" "$nd -c -a $ip -p 7302 -C $n -S 65535 -v -T 60"
pair b-64 7303 $n "$ping_s" "$ping_c" "$nd -s -a $ip -p 7303 -C $n -S 64 -v -T 60" "rping -c -a $ip -p 7303 -C $n -S 64 -v -V"
pair b-65535 7304 $n "$ping_s" "$ping_c" "$nd -s -a $ip -p 7304 -C $n -S 65535 -v -T 60" "rping -c -a $ip -p 7304 -C $n -S 65535 -v -V"
pair c-bulk 7305 4 "$bulk_vb" "$bulk_nd" "$vb -s -a $ip -p 7305 -S 1048576 -M $m -T 90" "$nd --bulk -c -a $ip -p 7305 -S 1048576 -C $m -T 90"
pair d-bulk 7306 4 "$bulk_nd" "$bulk_vb" "$nd --bulk -s -a $ip -p 7306 -S 1048576 -C $m -T 90" "$vb -c -a $ip -p 7306 -S 1048576 -M $m -T 90"
pair a-v6 7309 $n "$ping_s" "$ping_c" "rping -s -a $ip6 -p 7309 -C $n -S 64 -v" "$nd -c -a $ip6 -p 7309 -C $n -S 64 -v -T 60"
pair d-v6 7310 4 "$bulk_nd" "$bulk_vb" "$nd --bulk -s -a $ip6 -p 7310 -S 1048576 -C $m -T 90" "$vb -c -a $ip6 -p 7310 -S 1048576 -M $m -T 90"
head -c 3000000 /dev/urandom > /tmp/smbd.bin; mkdir -p /tmp/smbd
pair e-smbd 7307 1 '^ndksmbd: listening' ' [1-9][0-9]* buffers fast-registered over [1-9][0-9]* MRs, [0-9]* invalidated by the server; OK$' "$b/bin/ndksmbd server -a $ip -p 7307 -d /tmp/smbd" "$b/bin/ndksmbd client -c $ip -p 7307 -f /tmp/smbd.bin"
pair e-inline 7308 1 '^ndksmbd: listening' '; OK$' "$b/bin/ndksmbd server -a $ip -p 7308 -d /tmp/smbd" "$b/bin/ndksmbd client -c $ip -p 7308 -f /tmp/smbd.bin --name inline.bin --inline"
t0=$(date +%s) filter='NdkFastRegister.*:NdkReadInvalidate.*:NdkSharedEndpoint.*'
[ "$DEV" = siw ] && filter="$filter-*BytesPastTheLength*:*RightsNotGranted*:*AfterInvalidateThePeer*:*AfterTheReadThePeer*"
OPENND_NDK_TEST_ADDRESS=$ip timeout -k 5 300 $b/bin/test_ndk --gtest_filter="$filter" > /tmp/f.log 2>&1; frc=$?
fn=$(grep -cE '^\[ +(OK|SKIPPED) \] .* \([0-9]+ ms\)$' /tmp/f.log); fw=$(sed -n 's/^\[==========\] \([0-9]*\) tests.* ran.*/\1/p' /tmp/f.log)
r=PASS; if [ $frc != 0 ] || [ -z "$fw" ] || [ "$fn" != "$fw" ]; then r=FAIL; fails=$((fails+1)); fi
printf 'RESULT %-10s %-4s test_ndk rc=%s %s/%s cases, %s skipped (%ss)\n' f-fastreg $r $frc "$fn" "$fw" \
  "$(grep -cE '^\[  SKIPPED \] .* \([0-9]+ ms\)$' /tmp/f.log)" $(($(date +%s) - t0))
[ $r = PASS ] || grep -E 'Failure|FAILED|Expected|Which is|error' /tmp/f.log | head -30 | cut -c1-160 | sed 's/^/| /'
echo "INTEROP-RETRIED=$retried"
echo "INTEROP-FAILS=$fails"
[ $fails = 0 ]
EOF

rc=0
for dev in $devices; do
  echo "== ndverbs <-> rdma-core on ${dev}0 =="
  log=$(mktemp)
  timeout 1800 "$vm" --timeout 1700 --links "${dev}0:eth0" --share "$build" \
    -c "BUILD=$build COUNT=$count MESSAGES=$messages DEV=$dev b=$build
$tree
$inside" >"$log" 2>&1
  status=$?
  grep -E '^(RESULT|\| |INTEROP-FAILS|INTEROP-RETRIED)' "$log"
  if [ $status -ne 0 ] || ! grep -q '^INTEROP-FAILS=0' "$log"; then
    echo "vm_interop: ${dev}: failed (VM status $status)"; tail -5 "$log"; rc=1
  fi
  rm -f "$log"
done
exit $rc
