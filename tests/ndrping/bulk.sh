#!/usr/bin/env bash
# ndrping --bulk against itself on one host (the exchange verbs_bulk speaks
# with it in the siw VM): both sides Send, RDMA Write and Read at once with
# many in flight and verify every byte; both must print their three verified
# steps and PASS. On the TCP path the stream must carry 4 Reads in flight
# each way. Then a client that runs another size than the server: both must
# fail, not pass. Usage: bulk.sh NDRPING ADDRESS
set -euo pipefail
ndrping=$1 addr=$2
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT

start_server() {  # start_server ARGS...: sets $server and $port
  port=
  : >"$dir/server.log"  # emptied (not the last server's port) and there before the server opens it (set -e: sed on no file ends the script)
  OPENND_LOG=4 timeout 60 "$ndrping" --bulk -s -a "$addr" -p 0 -T 20 "$@" >"$dir/server.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do
    port=$(sed -n 's/^ndrping bulk server: listening on .* port \([0-9]*\)$/\1/p' "$dir/server.log" 2>/dev/null)
    [ -n "$port" ] && return 0
    kill -0 $server 2>/dev/null || break
    sleep 0.1
  done
  echo "FAIL: the server did not start"; cat "$dir/server.log"; exit 1
}

steps() { grep -c "^ndrping bulk $1: .*\(verified\|PASS\)" "$dir/$1.log" || true; }

run() {  # run SIZE MESSAGES
  start_server -S "$1" -C "$2"
  local crc=0 src=0
  OPENND_LOG=4 timeout 60 "$ndrping" --bulk -c -a "$addr" -p "$port" -S "$1" -C "$2" -T 20 >"$dir/client.log" 2>&1 || crc=$?
  wait $server || src=$?
  if [ $crc != 0 ] || [ $src != 0 ] || [ "$(steps client)" != 4 ] || [ "$(steps server)" != 4 ]; then
    echo "FAIL: bulk $1 bytes, $2 messages on $addr: client rc=$crc, server rc=$src"
    echo "--- client"; tail -n 6 "$dir/client.log"; echo "--- server"; tail -n 6 "$dir/server.log"
    exit 1
  fi
  if [ "${OPENND_SOFT_TRANSPORT:-}" = tcp ]; then
    for side in client server; do
      grep -q "iWARP stream set up: .*IRD 4, ORD 4" "$dir/$side.log" ||
        { echo "FAIL: the $side's stream is not set up for 4 Reads each way"; grep "set up" "$dir/$side.log"; exit 1; }
    done
  fi
  grep "PASS" "$dir/client.log"
}

run 1048576 64
run 1 0                 # one byte, no messages
run 3000001 200         # odd size: the last chunk is short

# Sides that disagree: both fail, one naming the mismatch.
start_server -S 4096 -C 8
rc=0
timeout 60 "$ndrping" --bulk -c -a "$addr" -p "$port" -S 8192 -C 8 -T 20 >"$dir/client.log" 2>&1 || rc=$?
src=0; wait $server || src=$?
# (Whichever side sees the other's hello first names it; the other then
# sees the disconnect.)
if [ $rc = 0 ] || [ $src = 0 ] || ! grep -q "the peer runs size" "$dir/client.log" "$dir/server.log"; then
  echo "FAIL: a size mismatch was not refused (client rc=$rc, server rc=$src)"; cat "$dir/client.log" "$dir/server.log"; exit 1
fi
echo "PASS ndrping --bulk loopback on $addr"
