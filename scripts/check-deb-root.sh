#!/usr/bin/env bash
# OpenND's Debian packages in a fresh Debian 12 root: debootstrap makes a
# minimal bookworm (from this machine's apt mirror), apt installs the .deb
# files there with their declared dependencies and nothing else OpenND's
# build machine happens to have (the software provider with no rdma-core
# library, then the verbs provider with them), and what a user runs is run there:
# ndinfo, ndinstall -l, ndperf --local (two processes over ndsoft), and a
# program compiled with `pkg-config --cflags --libs opennd`. A Depends: line
# that misses a library shows up here and nowhere else.
# Needs root (chroot, mounts) and debootstrap. Exit 77: not root.
# Usage: check-deb-root.sh DEB_DIR   (the packages scripts/check-deb.sh built)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
debs=$(cd "${1:?usage: check-deb-root.sh DEB_DIR}" && pwd)
[ "$(id -u)" = 0 ] || { echo "check-deb-root: skipped: needs root (chroot)"; exit 77; }
command -v debootstrap >/dev/null || { echo "check-deb-root: needs debootstrap (scripts/deps.sh)" >&2; exit 1; }
# The mirror this machine's apt uses (deb822 or one-line sources), else Debian's.
mirror=$(grep -hs -m1 '^URIs:' /etc/apt/sources.list.d/debian.sources | awk '{print $2}' || true)
[ -n "$mirror" ] || mirror=$(grep -hs -m1 -E '^deb [^ ]*debian[^ ]* bookworm ' /etc/apt/sources.list | awk '{print $2}' || true)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

work=$(mktemp -d /tmp/opennd-deb-root-XXXXXX)
sysroot=$work/root
mounted=()
cleanup() {
  local m
  for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
in_root() { chroot "$sysroot" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

echo "-- debootstrap --variant=minbase bookworm ($mirror)"
debootstrap --variant=minbase bookworm "$sysroot" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -n 20 "$work/debootstrap.log"; echo "check-deb-root: debootstrap failed" >&2; exit 1; }
for m in proc dev/shm; do mkdir -p "$sysroot/$m"; done
mount -t proc proc "$sysroot/proc"
mounted+=("$sysroot/proc")
mount -t tmpfs -o mode=1777 shm "$sysroot/dev/shm"
mounted+=("$sysroot/dev/shm")
# The device nodes apt and the programs need: made here, never bind-mounted
# from the host (the cleanup's rm stays on the root's own file system).
for d in "null 1 3" "zero 1 5" "random 1 8" "urandom 1 9"; do
  set -- $d
  [ -c "$sysroot/dev/$1" ] || { rm -f "$sysroot/dev/$1"; mknod -m 666 "$sysroot/dev/$1" c "$2" "$3"; }
done
cp /etc/resolv.conf "$sysroot/etc/resolv.conf"
mkdir -p "$sysroot/tmp/debs"
for d in "$debs"/*.deb; do case $d in *-dbgsym_*) ;; *) cp "$d" "$sysroot/tmp/debs/";; esac; done

# First all but the verbs provider: nothing of rdma-core may come with them.
apt_install() {
  in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >>"$work/apt.log" 2>&1 ||
    { tail -n 30 "$work/apt.log"; echo "check-deb-root: $* do not install" >&2; exit 1; }
}
echo "-- apt-get install the packages but opennd-provider-verbs (and g++, pkg-config for the program)"
in_root apt-get update -q >"$work/apt.log" 2>&1 ||
  { tail -n 30 "$work/apt.log"; echo "check-deb-root: apt-get update failed" >&2; exit 1; }
apt_install $(cd "$sysroot" && ls tmp/debs/*.deb | grep -v /opennd-provider-verbs_ | sed 's|^|/|') g++ pkg-config
for p in libibverbs1 librdmacm1; do
  st=$(in_root dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$st" != installed ] || { echo "check-deb-root: $p came without the verbs provider" >&2; exit 1; }
done
# Outputs are taken whole, then searched: a failing tool fails the check.
list=$(in_root ndinstall -l) || { echo "check-deb-root: ndinstall -l failed" >&2; exit 1; }
if grep -q ndverbs <<<"$list"; then echo "check-deb-root: ndverbs is listed without its package" >&2; exit 1; fi
echo "-- apt-get install opennd-provider-verbs"
apt_install $(cd "$sysroot" && ls tmp/debs/opennd-provider-verbs_*.deb | sed 's|^|/|')

echo "-- ndinfo, ndinstall -l, ndperf --local"
list=$(in_root ndinstall -l) || { echo "check-deb-root: ndinstall -l failed" >&2; exit 1; }
grep -q ndverbs <<<"$list" || { echo "check-deb-root: ndinstall -l does not list ndverbs" >&2; exit 1; }
grep -q ndsoft <<<"$list" || { echo "check-deb-root: ndinstall -l does not list ndsoft" >&2; exit 1; }
info=$(in_root ndinfo) || { echo "check-deb-root: ndinfo failed" >&2; exit 1; }
grep -q ndsoft <<<"$info" || { echo "check-deb-root: ndinfo does not show ndsoft" >&2; exit 1; }
out=$(in_root timeout 120 ndperf --local -t send_lat -S 8 -n 2000 2>&1) ||
  { echo "$out"; echo "check-deb-root: ndperf --local failed" >&2; exit 1; }
echo "$out" | grep -q send_lat || { echo "$out"; echo "check-deb-root: ndperf printed no send_lat" >&2; exit 1; }

echo "-- a program built with pkg-config opennd"
cp "$root/examples/hello.cpp" "$sysroot/tmp/hello.cpp"
in_root sh -c 'g++ -std=c++17 -Wall -Wextra -Werror /tmp/hello.cpp $(pkg-config --cflags --libs opennd) -o /tmp/hello' ||
  { echo "check-deb-root: hello.cpp does not build with pkg-config opennd" >&2; exit 1; }
said=$(in_root /tmp/hello) || { echo "check-deb-root: hello failed" >&2; exit 1; }
grep -q "127.0.0.1" <<<"$said" || { echo "check-deb-root: hello does not see ndsoft's 127.0.0.1" >&2; exit 1; }
echo "-- the packages install and work in a fresh Debian 12 root"
