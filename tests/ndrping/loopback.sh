#!/usr/bin/env bash
# ndrping against itself on one host: server and client as two processes over
# the software provider, on ADDRESS (127.0.0.1 or ::1). Checks both exit 0,
# that every ping printed by -v on both sides is rping's text, and sizes from
# rping's minimum to its maximum. Usage: loopback.sh NDRPING ADDRESS
set -euo pipefail
ndrping=$1 addr=$2
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT

pair() {  # pair COUNT SIZE: one server + client run
  local count=$1 size=$2 port= i
  : >"$dir/server.log"  # emptied (not the last server's port) and there before the server opens it (set -e: sed on no file ends the script)
  timeout 60 "$ndrping" -s -a "$addr" -p 0 -C "$count" -S "$size" -v -T 20 >"$dir/server.log" 2>&1 &
  local server=$!
  for i in $(seq 100); do
    port=$(sed -n 's/^ndrping server: listening on .* port \([0-9]*\)$/\1/p' "$dir/server.log" 2>/dev/null)
    [ -n "$port" ] && break
    kill -0 $server 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "FAIL: the server did not start"; cat "$dir/server.log"; return 1
  fi
  local crc=0 src=0
  timeout 60 "$ndrping" -c -a "$addr" -p "$port" -C "$count" -S "$size" -v -V -T 20 >"$dir/client.log" 2>&1 || crc=$?
  wait $server || src=$?
  local cpings spings
  cpings=$(grep -c '^ping data: rdma-ping-' "$dir/client.log" || true)
  spings=$(grep -c '^server ping data: rdma-ping-' "$dir/server.log" || true)
  if [ $crc != 0 ] || [ $src != 0 ] || [ "$cpings" != "$count" ] || [ "$spings" != "$count" ]; then
    echo "FAIL: $count x $size bytes on $addr: client rc=$crc ($cpings pings), server rc=$src ($spings pings)"
    echo "--- client"; tail -n 5 "$dir/client.log"; echo "--- server"; tail -n 5 "$dir/server.log"
    return 1
  fi
  tail -n 1 "$dir/client.log"
  tail -n 1 "$dir/server.log"
}

pair 10 64
pair 3 23
pair 50 65535
pair 1 23
# The exact text rping's client would print for ping 0 at its minimum size.
grep -qx 'ping data: rdma-ping-0: ABCDEFGHI' "$dir/client.log" ||
  { echo "FAIL: unexpected ping text: $(head -n 1 "$dir/client.log")"; exit 1; }
echo "PASS ndrping loopback on $addr"
