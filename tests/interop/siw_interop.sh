#!/usr/bin/env bash
# OpenND <-> Linux soft-iWARP (siw) interoperability: ndrping on this host
# (the software provider's iWARP-over-TCP transport) against rdma-core's
# rping on siw0 in a throw-away VM (../shared/tools/rdma-vm/run-vm.sh).
#
#   a) rping -s in the VM (siw is the one-sided initiator), ndrping -c here;
#   b) ndrping -s here (OpenND is the one-sided initiator), rping -c in the VM;
# each at rping's default size and at its maximum (65535 B: multi-segment
# Writes and Read Responses). Together they cover Send, RDMA Write and RDMA
# Read in both directions, every byte verified (see docs/interop.md). Then
# the bulk exchange (tools/ndrping/bulk_protocol.h: both sides Send, Write
# and Read 1 MiB at once, many requests in flight, every byte verified):
#   c) verbs_bulk -s in the VM (rdma_cm + verbs on siw), ndrping --bulk -c here;
#   d) ndrping --bulk -s here, verbs_bulk -c in the VM.
# One exchange of each direction runs over IPv6 too (ids ending in -v6).
# Then ND to ND across providers: the same programs on both sides, OpenND's
# software provider here and its verbs provider (ndverbs, alone in the VM's
# catalog) over siw0 there:
#   e) ndrping -s in the VM (ndverbs), ndrping -c here (ndsoft);
#   f) ndrping -s here, ndrping -c in the VM;
#   g) ndrping --bulk -s in the VM, ndrping --bulk -c here;  h) the reverse;
#   p) ndperf -s in the VM, ndperf -c here (Send, Write and Read latency and
#      bandwidth at 8 B and 64 KiB);  q) the reverse;
#   x) ndconformance here (ndsoft), its peers started in the VM on ndverbs by
#      ndconformance --serve-peers: every two-sided case but the "cross"
#      lines of tests/verbs/known_failures, over IPv4 and IPv6.
#
# The VM gets a tap in network namespace $NETNS (192.168.100.2; this side
# 192.168.100.1, reached with `ip netns exec`). One VM boot runs every
# exchange (another boot if the VM crashes or hangs); the two sides hand over
# through files in a shared directory. Every wait is bounded. Needs root, /dev/net/tun and qemu (run-vm.sh
# installs its packages with --install-deps).
#
# usage: tests/interop/siw_interop.sh [BUILD_DIR] [options]
#   BUILD_DIR            build tree with bin/ndrping, bin/verbs_bulk and the provider catalog (default: build)
#   --count N            pings per rping exchange (default 10)
#   --only LIST          run only these directions (comma-separated: a,b,c,d,e,f,g,h,p,q)
#   --client-pause MS    ndrping -c waits MS between Connect and CompleteConnect (diagnosis)
#   --keep               keep the work directory (logs, capture) even on success
# environment: RDMA_VM_RUN (run-vm.sh), SIW_INTEROP_NETNS (default rdmavm)
# Exit status: 0 every exchange verified; 1 a failure; 77 cannot run here.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=build count=10 only= pause=0 keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --count) count=$2; shift 2;;
    --only) only=$2; shift 2;;
    --client-pause) pause=$2; shift 2;;
    --keep) keep=1; shift;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    -*) echo "siw_interop: unknown option $1" >&2; exit 2;;
    *) build=$1; shift;;
  esac
done
case $build in /*) ;; *) build=$root/$build;; esac
runvm=${RDMA_VM_RUN:-$root/../shared/tools/rdma-vm/run-vm.sh}
netns=${SIW_INTEROP_NETNS:-rdmavm}
ndrping=$build/bin/ndrping ndperf=$build/bin/ndperf ndconf=$build/bin/ndconformance
verbs_bulk=$build/bin/verbs_bulk
bulk_size=1048576 bulk_messages=64
vm_ip4=192.168.100.2 host_ip4=192.168.100.1
vm_ip6=fd77:100::2 host_ip6=fd77:100::1  # added to the tap link by this script
host_timeout=20         # ndrping -T: every wait on the host side
vm_timeout=60           # rping in the VM runs under `timeout` (TCG is slow)
handover=90             # waiting for the other side of an exchange
start=$SECONDS

log() { printf '[siw_interop %3ds] %s\n' $((SECONDS - start)) "$*"; }
skip() { echo "siw_interop: SKIP: $*"; exit 77; }

# ------------------------------------------------------------ preconditions
[ "$(id -u)" = 0 ] || skip "needs root (network namespace, tap)"
[ -c /dev/net/tun ] || skip "no /dev/net/tun"
[ -x "$runvm" ] || skip "no run-vm.sh at $runvm (set RDMA_VM_RUN)"
[ -x "$ndrping" ] && [ -x "$ndperf" ] || { echo "siw_interop: no $ndrping or $ndperf (build first)"; exit 1; }
# verbs_bulk needs rdma-core's headers at build time (scripts/deps.sh).
[ -x "$verbs_bulk" ] || { echo "siw_interop: no $verbs_bulk (libibverbs-dev/librdmacm-dev missing at build?)"; exit 1; }
command -v ip >/dev/null || skip "no ip (iproute2)"
probe=siw-interop-probe-$$  # can we make a tap in a namespace here (containers)?
if ! { ip netns add "$probe" && ip -n "$probe" tuntap add dev probe0 mode tap; } 2>/dev/null; then
  ip netns del "$probe" 2>/dev/null; skip "cannot create a tap in a network namespace"
fi
ip netns del "$probe"

log "preparing the VM (packages, siw.ko, initramfs; first run ~5 min, then cached)"
timeout 1200 "$runvm" --install-deps >/dev/null 2>&1 || skip "run-vm.sh --install-deps failed"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
if ! timeout 1200 "$runvm" --build-only > /tmp/siw_interop.build.log 2>&1; then
  tail -n 5 /tmp/siw_interop.build.log; skip "run-vm.sh --build-only failed"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/siw_interop.XXXXXX")
# The VM sees the build tree (at its own path, as vm_conformance.sh links
# it: ndrping and ndperf over ndverbs run from there) and, inside it, the
# directory the two sides hand over through.
hand=.siw_interop.$$
share=$build/$hand
mkdir -p "$share"
vm_pid= cap_pid=
cleanup() {
  [ "$keep" = 1 ] || rm -rf "$share"
  [ -n "$cap_pid" ] && kill "$cap_pid" 2>/dev/null
  [ -n "$vm_pid" ] && kill "$vm_pid" 2>/dev/null && wait "$vm_pid" 2>/dev/null
  jobs -p | xargs -r kill 2>/dev/null
}
trap cleanup EXIT

# ------------------------------------------------------------ the exchanges
# id  direction  size  port  crc (1: OpenND asks for CRC32c, OPENND_SOFT_MPA_CRC=1;
# as the responder it then insists: siw must compute and check it either way)
# [ip version, default 4]
# Directions c and d are the bulk exchange: size is the RDMA Write/Read size.
exchanges=()
want() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
want a && exchanges+=("a-64 a 64 7174 0" "a-65535 a 65535 7175 0" "a-crc a 65535 7178 1" "a-v6 a 65535 7184 0 6")
want b && exchanges+=("b-64 b 64 7176 0" "b-65535 b 65535 7177 0" "b-crc b 65535 7179 1" "b-v6 b 65535 7185 0 6")
want c && exchanges+=("c-bulk c $bulk_size 7180 0" "c-crc c $bulk_size 7182 1" "c-v6 c $bulk_size 7186 0 6")
want d && exchanges+=("d-bulk d $bulk_size 7181 0" "d-crc d $bulk_size 7183 1" "d-v6 d $bulk_size 7187 0 6")
want e && exchanges+=("e-64 e 64 7188 0" "e-65535 e 65535 7189 0" "e-v6 e 65535 7190 0 6")
want f && exchanges+=("f-64 f 64 7191 0" "f-65535 f 65535 7192 0" "f-v6 f 65535 7193 0 6")
want g && exchanges+=("g-bulk g $bulk_size 7194 0" "g-crc g $bulk_size 7195 1")
want h && exchanges+=("h-bulk h $bulk_size 7196 0" "h-v6 h $bulk_size 7197 0 6")
want p && exchanges+=("p-perf p 0 7198 0")
want q && exchanges+=("q-perf q 0 7199 0" "q-v6 q 0 7200 0 6")
want x && exchanges+=("x-conf x 0 7300 0")
[ ${#exchanges[@]} -gt 0 ] || { echo "siw_interop: --only $only names no direction (a-h, p, q)" >&2; exit 2; }
perf_tests=send_lat,write_lat,read_lat,send_bw,write_bw,read_bw perf_sizes=8,65536
perf_rows=12  # tests x sizes: one table row each
conf_timeout=1200  # the whole conformance run across providers (x)
# x: every two-sided case, with ndsoft here and its peer on ndverbs there,
# but those tests/verbs/known_failures lists for "cross" (each with why).
conf_known=$(awk '$1 == "cross" {printf "%s%s", sep, $2; sep=":"}' "$root/tests/verbs/known_failures")
conf_filter="Addr/*${conf_known:+-$conf_known}"


# The directions where the VM side listens (the host side connects).
vm_serves() { case $1 in a|c|e|g|p|x) return 0;; *) return 1;; esac; }

# vm_script EXCHANGE...: the VM's half, run by busybox sh inside. Per exchange
# it reports its program's exit status in $H/ID.vm-rc and its output in
# $H/ID.vm.log ($H: the handover directory). rping can hang in the kernel after a stalled siw
# connection, where even SIGKILL does not end it: the VM then reports "hung"
# 5 s after the host side is done and moves on (a new port per exchange).
vm_script() {
  # The IPv6 address of the -v6 exchanges, usable at once (no duplicate
  # address detection on a link of two).
  echo 'echo 0 > /proc/sys/net/ipv6/conf/eth0/accept_dad 2>/dev/null; ip -6 addr add '$vm_ip6'/64 dev eth0'
  # The build tree at its own path; a catalog that lists ndverbs alone.
  echo "H=/host/$hand b=$build"
  cat "$root/tests/verbs/vm_tree.sh"
  echo 'export OPENND_CATALOG=/root/catalog'
  echo 'echo VM-READY'
  echo 'wait_file() { i=0; while [ ! -e "$1" ] && [ ! -e "$2" ] && [ $i -lt '$((handover * 10))' ]; do sleep 0.1; i=$((i+1)); done; [ -e "$1" ]; }'
  echo 'listening() { grep -qE ":$(printf %04X $1) 0+:0000 0A" /proc/net/tcp /proc/net/tcp6; }'
  echo 'finish() {  # finish ID PID: exit status of PID into $H/ID.vm-rc, bounded by the host side
  j=0
  while kill -0 $2 2>/dev/null; do
    [ -e $H/$1.host-done ] && j=$((j+1)) && [ $j -gt 50 ] && break
    sleep 0.1
  done
  if kill -0 $2 2>/dev/null; then kill -9 $2; echo hung > $H/$1.vm-rc; else wait $2; echo $? > $H/$1.vm-rc; fi
}'
  local x id dir size port
  for x; do
    read -r id dir size port _ ipv <<<"$x"
    local vm_ip=$vm_ip4 host_ip=$host_ip4
    [ "${ipv:-4}" = 6 ] && vm_ip=$vm_ip6 host_ip=$host_ip6
    local server="rping -s -a $vm_ip -p $port -C $count -S $size -v"
    local client="rping -c -a $host_ip -p $port -C $count -S $size -v -V"
    local ping="-C $count -S $size -v -T $vm_timeout" bulk="--bulk -C $bulk_messages -S $size -T $vm_timeout"
    local perf="-t $perf_tests -S $perf_sizes -n 100"
    # OPENND_LOG=4: ndverbs says what rdma_cm and the device did (on failure).
    local ndrping="env OPENND_LOG=4 $ndrping" ndperf="env OPENND_LOG=4 $ndperf"
    case $dir in
      c) server="verbs_bulk -s -a $vm_ip -p $port -S $size -M $bulk_messages -T $vm_timeout";;
      d) client="verbs_bulk -c -a $host_ip -p $port -S $size -M $bulk_messages -T $vm_timeout";;
      e) server="$ndrping -s -a $vm_ip -p $port $ping";;
      f) client="$ndrping -c -a $host_ip -p $port $ping";;
      g) server="$ndrping -s -a $vm_ip -p $port $bulk";;
      h) client="$ndrping -c -a $host_ip -p $port $bulk";;
      p) server="$ndperf -s -a $vm_ip -p $port";;
      q) client="$ndperf -c $host_ip -p $port $perf";;
    esac
    if [ "$dir" = x ]; then  # a peer server until the host's suite is done
      cat <<EOF
echo "== $id: ndconformance --serve-peers $port on siw0 (ndverbs)"
env OPENND_LOG=3 $ndconf --provider ndverbs --serve-peers $port > \$H/$id.vm.log 2>&1 &
rp=\$!; i=0
while ! listening $port && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i+1)); done
if listening $port; then touch \$H/$id.vm-ready; fi
i=0; while [ ! -e \$H/$id.host-done ] && [ \$i -lt $((conf_timeout * 10)) ]; do sleep 0.1; i=\$((i+1)); done
kill \$rp; echo 0 > \$H/$id.vm-rc
EOF
    elif vm_serves "$dir"; then
      cat <<EOF
echo "== $id: ${server%% *} -s on siw0"
timeout -k 5 $vm_timeout $server > \$H/$id.vm.log 2>&1 &
rp=\$!; i=0
while ! listening $port && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i+1)); done
if listening $port; then touch \$H/$id.vm-ready; fi
finish $id \$rp
EOF
    else
      cat <<EOF
echo "== $id: ${client%% *} -c on siw0"
if wait_file \$H/$id.host-ready \$H/$id.host-failed; then
  timeout -k 5 $vm_timeout $client > \$H/$id.vm.log 2>&1 &
  finish $id \$!
else
  echo "the host side did not start" > \$H/$id.vm.log; echo 99 > \$H/$id.vm-rc
fi
EOF
    fi
  done
  echo 'echo VM-DONE'
}

wait_for() {  # wait_for FILE SECONDS: true once FILE exists; false on timeout or VM exit
  local i=0
  while [ ! -e "$1" ]; do
    [ $i -ge $(($2 * 10)) ] && return 1
    kill -0 "$vm_pid" 2>/dev/null || { sleep 0.5; [ -e "$1" ]; return; }
    sleep 0.1; i=$((i + 1))
  done
}
ns() { ip netns exec "$netns" "$@"; }

# host_side EXCHANGE: this side of one exchange, paced by the VM's files.
host_side() {
  local id dir size port crc ipv sp j client server name listening vm_ip=$vm_ip4 host_ip=$host_ip4
  read -r id dir size port crc ipv <<<"$1"
  [ "${ipv:-4}" = 6 ] && vm_ip=$vm_ip6 host_ip=$host_ip6
  case $dir in
    a|b|e|f) client=("$ndrping" -C "$count" -S "$size" -v -T "$host_timeout")
       name=ndrping listening='^ndrping server: listening';;
    p|q) client=(timeout -k 5 "$vm_timeout" "$ndperf" -t "$perf_tests" -S "$perf_sizes" -n 100)
       name=ndperf listening='^ndperf server listening';;
    x) client=(timeout -k 5 "$conf_timeout" "$ndconf" --provider ndsoft --address "$host_ip4" --address "$host_ip6"
              --peer-host "$vm_ip4:$port" --peer-address "$vm_ip4" --peer-address "$vm_ip6"
              --timeout 20 --case-timeout 120 --filter "$conf_filter")
       name="ndconformance (peers: ndverbs)";;
    *) client=("$ndrping" --bulk -C "$bulk_messages" -S "$size" -T "$host_timeout")
       name="ndrping --bulk" listening='^ndrping bulk server: listening';;
  esac
  server=("${client[@]}" -s -a "$host_ip" -p "$port")
  case $dir in p|q) server=(timeout -k 5 "$vm_timeout" "$ndperf" -s -a "$host_ip" -p "$port");; esac
  # OPENND_LOG=4: the provider says how the stream was set up (CRC on or off).
  if vm_serves "$dir"; then
    log "$id: VM server on siw0 ($vm_ip:$port) <- $name -c"
    case $dir in
      p) client+=(-c "$vm_ip" -p "$port");;
      x) ;;
      *) client+=(-c -a "$vm_ip" -p "$port" --connect-pause "$pause");;
    esac
    if wait_for "$share/$id.vm-ready" "$handover"; then
      ns env OPENND_SOFT_MPA_CRC="$crc" OPENND_LOG=4 "${client[@]}" > "$work/$id.host.log" 2>&1
      echo $? > "$work/$id.host-rc"
    else
      echo "the VM server did not start listening" > "$work/$id.host.log"; echo 99 > "$work/$id.host-rc"
    fi
  else
    log "$id: $name -s ($host_ip:$port) <- VM client on siw0"
    : > "$work/$id.host.log"  # there before the loop below reads it
    ns env OPENND_SOFT_MPA_CRC="$crc" OPENND_LOG=4 "${server[@]}" > "$work/$id.host.log" 2>&1 &
    sp=$!
    j=0
    while ! grep -q "$listening" "$work/$id.host.log" && kill -0 $sp 2>/dev/null && [ $j -lt 100 ]; do
      sleep 0.1; j=$((j + 1))
    done
    if grep -q "$listening" "$work/$id.host.log"; then touch "$share/$id.host-ready"
    else touch "$share/$id.host-failed"; fi
    wait $sp; echo $? > "$work/$id.host-rc"
  fi
  touch "$share/$id.host-done"
  wait_for "$share/$id.vm-rc" 30
}

# boot EXCHANGE...: one VM for these exchanges, in order. Returns when the
# VM is gone; exchanges it did not reach have no host-rc file.
boot() {
  local n=$1 x i vrc limit; shift
  vm_script "$@" > "$work/vm$n.sh"
  limit=$((60 + $# * (vm_timeout + 30)))
  for x; do [ "$(echo "$x" | cut -d' ' -f2)" = x ] && limit=$((limit + conf_timeout)); done
  log "boot $n: VM with siw0 on $vm_ip4 and $vm_ip6 (tap in namespace $netns; this side $host_ip4, $host_ip6)"
  "$runvm" --net tap --netns "$netns" --links siw0:eth0 --share "$build" --add "$verbs_bulk" --add "$ndconf" \
    --timeout "$limit" "$work/vm$n.sh" > "$work/vm$n.console" 2>&1 &
  vm_pid=$!
  i=0
  until grep -q VM-READY "$work/vm$n.console" 2>/dev/null; do
    if ! kill -0 "$vm_pid" 2>/dev/null || [ $i -ge 1800 ]; then
      vrc=0; kill -0 "$vm_pid" 2>/dev/null || { wait "$vm_pid"; vrc=$?; }
      vm_pid=
      tail -n 20 "$work/vm$n.console"
      [ "$vrc" = 126 ] && skip "run-vm.sh could not start the VM here (status 126)"
      log "FAIL: the VM did not start (run-vm.sh status $vrc)"; exit 1
    fi
    sleep 0.1; i=$((i + 1))
  done
  ns ip addr add "$host_ip6/64" dev vmtap0 nodad 2>/dev/null  # (gone with the tap when the VM exits)
  if command -v tcpdump >/dev/null; then  # for the record (failures print from it)
    ns tcpdump -Z root -U -s ${SIW_INTEROP_SNAPLEN:-256} -i vmtap0 -w "$work/capture$n.pcap" tcp >/dev/null 2>&1 &
    cap_pid=$!
    sleep 1
  fi
  local stop=0
  for x; do
    if host_side "$x"; then
      [ "$(cat "$share/${x%% *}.vm-rc")" = hung ] || continue
      # Seen: after one stuck connection siw in that VM accepts no more.
      log "${x%% *}: rping is stuck in the VM's kernel: a fresh VM for the rest"
      stop=1
      break
    fi
    stop=1
    if kill -0 "$vm_pid" 2>/dev/null; then
      log "${x%% *}: the VM side did not finish: ending this boot"
      echo no-answer > "$share/${x%% *}.vm-rc"
    else
      echo vm-died > "$share/${x%% *}.vm-rc"
    fi
    break
  done
  kill "$cap_pid" 2>/dev/null; cap_pid=
  [ $stop = 1 ] || for i in $(seq 300); do kill -0 "$vm_pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$vm_pid" 2>/dev/null; then
    log "stopping the VM"
    kill "$vm_pid"; wait "$vm_pid" 2>/dev/null
  else
    wait "$vm_pid"; vrc=$?
    log "VM exited with status $vrc"
    grep -q 'Kernel panic\|BUG: ' "$work/vm$n.console" && log "the VM kernel crashed: see $work/vm$n.console"
  fi
  vm_pid=
}

# A VM that crashed (seen: a NULL dereference in siw's receive path) or
# whose siw got stuck takes the rest of its list with it: boot again for
# what is left.
todo=("${exchanges[@]}")
for n in 1 2 3 4; do
  [ ${#todo[@]} -gt 0 ] || break
  boot $n "${todo[@]}"
  left=()
  for x in "${todo[@]}"; do [ -e "$work/${x%% *}.host-rc" ] || left+=("$x"); done
  todo=("${left[@]}")
done

# ------------------------------------------------------------ verdicts
# a: ndrping -c verified every ping (what siw read from OpenND memory came
#    back through siw's Write intact) and rping -s served $count pings.
# b: ndrping -s verified every ping it read from siw memory, and rping -c
#    (-V) verified every ping OpenND wrote, printing one line per ping
#    (rping exits 0 on a disconnect too: the count is the check).
# c, d: both sides printed their three verified steps (the peer's messages,
#    what it wrote, what we read from it) and PASS: 4 lines each.
# e, f, g, h: as a, b, c, d, with ndrping over ndverbs in the VM.
# p, q: the ndperf client printed a row for every test and size, and both
#    sides exited 0 (ndperf checks each completion's status and length).
# x: ndconformance exited 0 (no case failed); the count is the cases passed.
count_lines() { local n; n=$(grep -c "$1" "$2" 2>/dev/null); echo "${n:-0}"; }
fails=0
printf '\n%-9s %-48s %-6s %s\n' exchange "host side / VM side" result "verified (pings, or bulk steps)"
for x in "${exchanges[@]}"; do
  read -r id dir size port crc ipv <<<"$x"
  hrc=$(cat "$work/$id.host-rc" 2>/dev/null || echo not-run)
  vrc=$(cat "$share/$id.vm-rc" 2>/dev/null || echo not-run)
  want=$count
  bulk_done='^ndrping bulk [a-z]*: .*\(verified$\|PASS\)' rows='^\(send\|write\|read\)_\(lat\|bw\) '
  case $dir in
    c|d) want=4
      vping=$(count_lines '^verbs_bulk [a-z]*: .*\(verified$\|PASS\)' "$share/$id.vm.log")
      hping=$(count_lines "$bulk_done" "$work/$id.host.log")
      if [ "$dir" = c ]; then sides="ndrping --bulk -c rc=$hrc / verbs_bulk -s rc=$vrc"
      else sides="ndrping --bulk -s rc=$hrc / verbs_bulk -c rc=$vrc"; fi;;
    g|h) want=4
      vping=$(count_lines "$bulk_done" "$share/$id.vm.log")
      hping=$(count_lines "$bulk_done" "$work/$id.host.log")
      if [ "$dir" = g ]; then sides="ndrping --bulk -c rc=$hrc / same -s on ndverbs rc=$vrc"
      else sides="ndrping --bulk -s rc=$hrc / same -c on ndverbs rc=$vrc"; fi;;
    p|q) want=$perf_rows  # the client's table rows; the server served them
      if [ "$dir" = p ]; then
        hping=$(count_lines "$rows" "$work/$id.host.log"); vping=$hping
        sides="ndperf -c rc=$hrc / ndperf -s on ndverbs rc=$vrc"
      else
        vping=$(count_lines "$rows" "$share/$id.vm.log"); hping=$vping
        sides="ndperf -s rc=$hrc / ndperf -c on ndverbs rc=$vrc"
      fi;;
    x) # the suite's own verdict: its exit status, and how many cases passed
      hping=$(awk '$1 == "total" {print $2}' "$work/$id.host.log" 2>/dev/null | tail -n 1)
      want=${hping:-0}; vping=$want; [ "$want" -gt 0 ] || want=1
      sides="ndconformance, ndsoft rc=$hrc / its peers on ndverbs rc=$vrc";;
    a|e)
      vping=$(count_lines '^server ping data: rdma-ping-' "$share/$id.vm.log")
      hping=$(count_lines '^ping data: rdma-ping-' "$work/$id.host.log")
      if [ "$dir" = a ]; then sides="ndrping -c rc=$hrc / rping -s rc=$vrc"
      else sides="ndrping -c rc=$hrc / ndrping -s on ndverbs rc=$vrc"; fi;;
    *)
      vping=$(count_lines '^ping data: rdma-ping-' "$share/$id.vm.log")
      hping=$(count_lines '^server ping data: rdma-ping-' "$work/$id.host.log")
      if [ "$dir" = b ]; then sides="ndrping -s rc=$hrc / rping -c rc=$vrc"
      else sides="ndrping -s rc=$hrc / ndrping -c on ndverbs rc=$vrc"; fi;;
  esac
  # The stream ran with CRC exactly when asked for (the provider's own words).
  want_crc=off; [ "$crc" = 1 ] && want_crc=on
  crc_ok=0; grep -q "iWARP stream set up: .*CRC $want_crc" "$work/$id.host.log" 2>/dev/null && crc_ok=1
  [ $crc_ok = 1 ] || sides="$sides, CRC not $want_crc"
  # An IPv6 exchange names the VM's IPv6 address as its peer (ndperf, the
  # server here, listened on this side's IPv6 address only).
  v6_seen="\[$vm_ip6\]"; [ "$dir" = q ] && v6_seen="listening on $host_ip6 "
  if [ "${ipv:-4}" = 6 ] && ! grep -q "$v6_seen" "$work/$id.host.log" 2>/dev/null; then
    crc_ok=0; sides="$sides, not over IPv6"
  fi
  # The bulk exchange asks for 4 Reads in flight each way; siw grants them.
  if [ "$want" = 4 ] && [ "$dir" != p ] && [ "$dir" != q ] && ! grep -q "iWARP stream set up: .*IRD 4, ORD 4" "$work/$id.host.log" 2>/dev/null; then
    crc_ok=0; sides="$sides, read limits not 4/4"
  fi
  result=FAIL
  if [ "$hrc" = 0 ] && [ "$vrc" = 0 ] && [ "$hping" = "$want" ] && [ "$vping" = "$want" ] && [ $crc_ok = 1 ]; then
    result=PASS
  else
    fails=$((fails + 1)); echo "$x" >> "$work/failed"
  fi
  printf '%-9s %-48s %-6s host %s/%s, VM %s/%s\n' "$id" "$sides" $result "$hping" "$want" "$vping" "$want"
done

if [ $fails -gt 0 ]; then
  while read -r id dir size port _; do
    [ -e "$work/$id.host-rc" ] || continue  # not run
    echo; echo "---- $id: host side ($work/$id.host.log)"; tail -n 4 "$work/$id.host.log" | cut -c1-150
    echo "---- $id: VM side"; tail -n 4 "$share/$id.vm.log" 2>/dev/null | cut -c1-150
    for cap in "$work"/capture*.pcap; do
      [ -s "$cap" ] || continue
      tcpdump -r "$cap" -nn -tt "tcp port $port" 2>/dev/null | grep -q . || continue
      echo "---- $id: the last packets with data on port $port ($cap)"
      tcpdump -r "$cap" -nn -tt -X "tcp port $port and tcp[tcpflags] & tcp-push != 0" 2>/dev/null |
        awk '/^[0-9]/ {n++} {buf[n] = buf[n] $0 "\n"} END {for (i = (n > 6 ? n - 5 : 1); i <= n; i++) printf "%s", buf[i]}' |
        cut -c1-80 | grep -v '^\s*0x00[0-2]0:' | head -n 48
    done
  done < "$work/failed"
  for c in "$work"/vm*.console; do
    echo; echo "---- $(basename "$c") (tail)"; grep -v '^\[' "$c" | tail -n 8
    grep -m1 -A3 'BUG: \|Kernel panic' "$c" | cut -c1-120
  done
  log "FAIL: $fails of ${#exchanges[@]} exchanges failed (logs kept in $work, the VM side's in $share)"
  keep=1; trap - EXIT; cleanup
  exit 1
fi
cat <<EOF

Verified both ways between OpenND (ndsoft over TCP) and Linux siw:
  Send         OpenND -> siw and siw -> OpenND (every exchange)
  RDMA Read    siw reads OpenND memory (a), OpenND reads siw memory (b)
  RDMA Write   siw writes OpenND memory (a), OpenND writes siw memory (b)
  bulk         rdma_cm + verbs on siw against ndrping --bulk, both roles (c, d):
               $bulk_messages Sends, $bulk_size bytes RDMA Write and Read each way at once
  CRC32c       on in the -crc exchanges (OpenND asked), off in the others
  IPv6         the -v6 exchanges ($host_ip6 <-> $vm_ip6), IPv4 the others
  ND to ND     ndsoft here against ndverbs on siw0 (e, f, g, h, p, q): ndrping,
               ndrping --bulk and ndperf, each role on each provider; and (x)
               the two-sided conformance cases, ndsoft here and their peers on
               ndverbs there (ndconformance --peer-host / --serve-peers)
EOF
log "PASS: ${#exchanges[@]} exchanges, every byte verified"
[ "$keep" = 1 ] && log "logs in $work" || rm -rf "$work"
exit 0
