#!/usr/bin/env bash
# Builds OpenND's Debian packages (debian/) from this checkout, checks them
# with lintian, installs them on this machine and checks what a user of the
# packages gets: the tools find the providers through /etc/opennd, a
# program builds with `pkg-config opennd` and with find_package(OpenND),
# the manual pages and completions are there, nothing carries a RUNPATH.
# Then it removes them again (also on failure), and installs and uses them
# in a fresh Debian 12 root (scripts/check-deb-root.sh). Needs root (dpkg -i)
# and the packages scripts/deps.sh installs with OPENND_DEPS_EXTRA="debhelper
# lintian man-db debootstrap". Exit 77: not root. Usage: check-deb.sh [OUT_DIR]
# (OUT_DIR: keep the .deb files there).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "check-deb: skipped: needs root (dpkg -i)"; exit 77; }
packages=(libopennd-dev opennd-utils opennd-provider-verbs opennd-provider-soft libopennd-ndk0 libopennd0)
for p in "${packages[@]}" "${packages[@]/%/-dbgsym}"; do
  case $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) in
    ''|not-installed) ;;
    *) echo "check-deb: $p is on this machine already; remove it first (dpkg -P $p)" >&2; exit 1;;
  esac
done
work=$(mktemp -d /tmp/opennd-deb-XXXXXX)
chmod 755 "$work"
cleanup() {  # every package built (debug symbols too), whatever happened
  local names=()
  for d in "$work"/*.deb; do [ -e "$d" ] && names+=("$(dpkg-deb -f "$d" Package)"); done
  [ ${#names[@]} = 0 ] || dpkg -P "${names[@]}" >/dev/null 2>&1 ||
    echo "check-deb: could not remove ${names[*]}" >&2
  rm -rf "$work"
}
trap cleanup EXIT

# The checkout without its build trees and history, as a source package sees it.
mkdir "$work/src"
tar -C "$root" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$work/src" -xf -
echo "-- building the packages (dpkg-buildpackage -b)"
if ! (cd "$work/src" && DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck ${OPENND_DEB_OPTIONS:-}" dpkg-buildpackage -b -us -uc) \
    >"$work/build.log" 2>&1; then
  tail -n 40 "$work/build.log"
  echo "check-deb: dpkg-buildpackage failed" >&2
  exit 1
fi
ls "$work"/*.deb | sed 's|.*/|   |'
for p in "${packages[@]}"; do
  ls "$work/${p}_"*.deb >/dev/null 2>&1 || { echo "check-deb: no package $p was built" >&2; exit 1; }
done

echo "-- lintian"
lintian --allow-root --fail-on error,warning "$work"/*.changes

echo "-- installing"
dpkg -i "$work"/*.deb >/dev/null

# Every installed ELF file: no RUNPATH or RPATH (the libraries are in the
# linker's path), and each library has the SONAME its package is named for.
for f in $(dpkg -L "${packages[@]}" | sort -u); do
  [ -f "$f" ] && [ ! -L "$f" ] && head -c 4 "$f" | grep -q ELF || continue
  if readelf -d "$f" | grep -qE 'RUNPATH|RPATH'; then echo "check-deb: $f has a RUNPATH" >&2; exit 1; fi
done
readelf -d "$(dpkg -L libopennd0 | grep 'libopennd.so.0\.')" | grep -q 'SONAME.*libopennd.so.0' ||
  { echo "check-deb: libopennd0 does not hold libopennd.so.0" >&2; exit 1; }

# The tools find the providers through the system catalog.
unset OPENND_CATALOG
. "$root/scripts/user-checks.sh"
ndinstall -l | grep -q ndsoft || { echo "check-deb: ndinstall -l does not list ndsoft" >&2; exit 1; }
ndinfo --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
names = {p["name"]: p for p in d["providers"]}
assert "ndsoft" in names and names["ndsoft"]["usable"], d
assert "ndverbs" in names, d
print("-- ndinfo: providers " + ", ".join(sorted(names)))'

# A provider's package brings its provider and takes it away again: removed,
# its entry (a conffile) stays but its library is gone, and programs skip it
# without a warning (as libibverbs skips a removed driver); purged, the
# entry goes too. The other provider keeps working throughout.
dpkg -r opennd-provider-verbs >/dev/null
said=$(ndinfo --json 2>&1 >"$work/ndinfo.json") || { echo "check-deb: ndinfo fails once ndverbs is removed" >&2; exit 1; }
[ -z "$said" ] || { echo "check-deb: ndinfo complains once ndverbs is removed: $said" >&2; exit 1; }
python3 - "$work/ndinfo.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = {p["name"]: p for p in d["providers"]}
assert names["ndsoft"]["usable"], d
assert "ndverbs" not in names or not names["ndverbs"]["usable"], d
PY
dpkg -P opennd-provider-verbs >/dev/null
list=$(ndinstall -l)
if grep -q ndverbs <<<"$list" || ! grep -q ndsoft <<<"$list"; then
  echo "check-deb: purging opennd-provider-verbs did not take ndverbs alone out of the catalog" >&2; exit 1
fi
dpkg -i "$work"/opennd-provider-verbs_*.deb >/dev/null
list=$(ndinstall -l)
grep -q ndverbs <<<"$list" || { echo "check-deb: opennd-provider-verbs did not add ndverbs" >&2; exit 1; }
echo "-- a provider's package adds it; removed, it is skipped quietly; purged, its entry goes"

# A program built against the installed headers and library, both ways.
g++ -std=c++17 -Wall -Wextra -Werror "$root/examples/hello.cpp" $(pkg-config --cflags --libs opennd) -o "$work/hello"
"$work/hello" | grep -q "127.0.0.1" || { echo "check-deb: hello (pkg-config) does not see ndsoft's 127.0.0.1" >&2; exit 1; }
hello=$(consumer_hello "$work/consumer")
"$hello" | grep -q "127.0.0.1" || { echo "check-deb: hello (find_package) does not see ndsoft's 127.0.0.1" >&2; exit 1; }
echo "-- a program builds with pkg-config opennd and find_package(OpenND)"

# Manual pages and completion.
man_finds "" 1 ndinfo 'ndinfo - list NetworkDirect providers'
man_finds "" 3 IND2QueuePair IND2QueuePair
completions_installed /usr/share/bash-completion/completions ndinfo ndinstall ndperf ndrping ndconformance ndksmbd
echo "-- man pages and completions installed"
[ -n "${1:-}" ] && mkdir -p "$1" && cp "$work"/*.deb "$1"/

# The same packages in a fresh Debian 12 root, where only what they declare
# is installed (OPENND_DEB_FRESH_ROOT=0 skips it, e.g. with no mirror).
if [ "${OPENND_DEB_FRESH_ROOT:-1}" != 0 ]; then
  bash "$root/scripts/check-deb-root.sh" "$work"
fi
echo "-- Debian packages checked: ${packages[*]}"
