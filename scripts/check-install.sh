#!/usr/bin/env bash
# Installs a build into a scratch prefix and checks what users get there:
# the tools run, a program built with only `pkg-config --cflags --libs opennd`
# finds the providers installed with that prefix, and find_package(OpenND)
# works. Usage: check-install.sh BUILD_DIR
set -euo pipefail
build=$(realpath "${1:-build}")
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d /tmp/opennd-install-XXXXXX)
chmod 755 "$scratch"
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix
unset OPENND_CATALOG
. "$root/scripts/user-checks.sh"

cmake --install "$build" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name opennd.pc | head -n1)")

echo "-- pkg-config: $(pkg-config --modversion opennd) (ndk: $(pkg-config --modversion opennd-ndk))"
g++ -std=c++17 -Wall -Wextra -Werror "$root/examples/hello.cpp" $(pkg-config --cflags --libs opennd) -o "$scratch/hello"

# A provider installed into the prefix's catalog with the prefix's ndinstall.
# The test provider is copied into the prefix so its directory is not world-writable.
mkdir -p "$prefix/lib/opennd-test"
cp "$build/test-providers/libndloopback.so" "$prefix/lib/opennd-test/"
"$prefix/bin/ndinstall" -i "$prefix/lib/opennd-test/libndloopback.so" --name loopback \
  --guid '{4F70656E-4E44-4C6F-6F70-6261636B0001}' --description "test provider"
"$prefix/bin/ndinstall" -l
out=$("$scratch/hello")
echo "$out"
grep -q "127.0.0.1" <<<"$out" || { echo "hello did not see the provider installed in its prefix" >&2; exit 1; }
"$prefix/bin/ndinfo" >/dev/null
"$prefix/bin/ndinfo" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert any(p["usable"] for p in d["providers"]), d'
"$prefix/bin/ndinstall" -r loopback

# The man pages, where the build made them (scdoc installed): man finds them
# in the prefix.
if grep -q '^OPENND_SCDOC:FILEPATH=/' "$build/CMakeCache.txt"; then
  for page in man1/ndinfo.1 man1/ndinstall.1 man1/ndperf.1 man1/ndrping.1 man1/ndconformance.1 man1/ndksmbd.1 \
              man1/ndbaseline.1 man3/ndsupport.3 man3/NdOpenAdapter.3 man3/IND2QueuePair.3 man7/opennd.7 \
              man7/ndkpi.7; do
    [ -s "$prefix/share/man/$page" ] || { echo "not installed: share/man/$page" >&2; exit 1; }
  done
  man_finds "$prefix/share/man" 1 ndinfo 'ndinfo - list NetworkDirect providers'
  man_finds "$prefix/share/man" 3 NdOpenAdapter NdOpenAdapter
  echo "-- man pages installed"
fi
completions_installed "$prefix/share/bash-completion/completions" ndinfo ndinstall ndperf ndrping ndconformance \
  ndksmbd ndbaseline

# find_package(OpenND) from a consumer project.
hello=$(consumer_hello "$scratch/consumer" "$prefix")
"$hello" >/dev/null
echo "-- install checks passed"
