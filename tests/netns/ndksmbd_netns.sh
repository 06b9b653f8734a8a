#!/bin/sh
# The NDK SMB Direct demo between two "hosts": ndksmbd server in one network
# namespace, ndksmbd client in another (veth, IPv4 then IPv6). The client
# copies a file of random bytes, checks the server's checksum and reads it
# back by RDMA (the server invalidating each buffer remotely as it ends a
# read); then the copy on the server's side is compared byte for byte.
# Needs root (ip netns); exits 77 (skipped) without it.
#
#   ndksmbd_netns.sh NDKSMBD [SIZE]
set -eu
smbd=$1
size=${2:-64M}
if [ "$(id -u)" != 0 ] || ! command -v ip > /dev/null; then
    echo "skipped: needs root and iproute2 (ip netns)"
    exit 77
fi
a=ondk-a-$$
b=ondk-b-$$
tmp=$(mktemp -d /tmp/ndksmbd-netns.XXXXXX)
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2> /dev/null || true
    ip netns del "$a" 2> /dev/null || true
    ip netns del "$b" 2> /dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
ip netns add "$a"
ip netns add "$b"
ip link add ondk-va netns "$a" type veth peer name ondk-vb netns "$b"
for side in "$a ondk-va 10.79.0.1 fd79::1" "$b ondk-vb 10.79.0.2 fd79::2"; do
    set -- $side
    ip -n "$1" link set lo up
    ip -n "$1" addr add "$3/24" dev "$2"
    ip -n "$1" -6 addr add "$4/64" dev "$2" nodad
    ip -n "$1" link set "$2" up
done
head -c "$(numfmt --from=iec "$size")" /dev/urandom > "$tmp/source.bin"
for pair in "10.79.0.1 10.79.0.2" "fd79::1 fd79::2"; do
    set -- $pair
    local_ip=$1
    ip=$2
    rm -rf "$tmp/out" && mkdir "$tmp/out"
    : > "$tmp/server.log"  # there before the loop below reads it (the shell below may open it later)
    ip netns exec "$b" "$smbd" server -a "$ip" -p 0 -d "$tmp/out" > "$tmp/server.log" 2>&1 &
    server=$!
    port=
    i=0
    while [ -z "$port" ]; do
        port=$(sed -n 's/.*listening on .* port \([0-9]*\).*/\1/p' "$tmp/server.log")
        i=$((i + 1))
        if [ "$i" -gt 100 ]; then echo "the server did not start:"; cat "$tmp/server.log"; exit 1; fi
        [ -n "$port" ] || sleep 0.1
    done
    echo "== $size from namespace $a to [$ip]:$port (namespace $b)"
    status=0
    ip netns exec "$a" timeout 300 "$smbd" client -l "$local_ip" -c "$ip" -p "$port" -f "$tmp/source.bin" --name copy.bin \
        > "$tmp/client.log" 2>&1 || status=$?
    cat "$tmp/client.log"
    [ "$status" = 0 ] || exit "$status"
    # The server ended its reads with Send-and-Invalidate (iWARP's Send with
    # Invalidate here), as Windows does.
    if grep -q ' 0 invalidated by the server' "$tmp/client.log" || ! grep -q 'invalidated by the server' "$tmp/client.log"; then
        echo "no buffer of the client's was invalidated by the server"; exit 1
    fi
    wait "$server"
    server=
    cmp "$tmp/source.bin" "$tmp/out/copy.bin"
    echo "== [$ip]: the server's copy is identical"
done
