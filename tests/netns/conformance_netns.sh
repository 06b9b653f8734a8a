#!/bin/sh
# The conformance suite between two "hosts": two network namespaces joined
# by a veth pair, IPv4 and IPv6. The suite runs in one, its peer process in
# the other, so every connection goes over the provider's TCP path for real
# (nothing is forced). Needs root (ip netns); exits 77 (skipped) without it.
#
#   conformance_netns.sh NDCONFORMANCE [ndconformance options...]
set -eu
ndc=$1
shift
if [ "$(id -u)" != 0 ] || ! command -v ip > /dev/null; then
    echo "skipped: needs root and iproute2 (ip netns)"
    exit 77
fi
a=ondc-a-$$
b=ondc-b-$$
cleanup() {
    ip netns del "$a" 2> /dev/null || true
    ip netns del "$b" 2> /dev/null || true
}
trap cleanup EXIT INT TERM
ip netns add "$a"
ip netns add "$b"
ip link add ondc-va netns "$a" type veth peer name ondc-vb netns "$b"
setup() {  # namespace, interface, IPv4, IPv6
    ip -n "$1" link set lo up
    ip -n "$1" link set "$2" up
    ip -n "$1" addr add "$3/24" dev "$2"
    ip -n "$1" -6 addr add "$4/64" dev "$2" nodad
}
setup "$a" ondc-va 10.77.0.1 fd77::1
setup "$b" ondc-vb 10.77.0.2 fd77::2
# Both ends up (bounded; veth comes up at once, but do not race it).
i=0
until ip -n "$a" link show ondc-va | grep -q 'state UP' && ip -n "$b" link show ondc-vb | grep -q 'state UP'; do
    i=$((i + 1))
    [ "$i" -lt 50 ] || { echo "the veth link did not come up"; exit 1; }
    sleep 0.1
done
# Both ends are OpenND: no hold after the MPA reply for Linux siw (it would
# add 0.3 s to each of the suite's hundreds of connections).
export OPENND_SOFT_MPA_HOLD_MS=0
exec ip netns exec "$a" "$ndc" --address 10.77.0.1 --address fd77::1 \
    --peer-netns "$b" --peer-address 10.77.0.2 --peer-address fd77::2 "$@"
