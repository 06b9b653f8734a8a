#!/usr/bin/env bash
# The shared libraries export exactly what their Debian symbols files pin
# (debian/*.symbols, from the version scripts src/libopennd.map and
# ndk/libopennd_ndk.map): every listed symbol is exported at its version,
# and every exported symbol is listed or in a node a (symver) line covers.
# The package build checks the same with dpkg-gensymbols -c4 (CI's Debian
# stage); this finds a difference in the ordinary suite, without root.
# usage: check_exports.sh SOURCE_DIR LIBRARY SYMBOLS_FILE
set -euo pipefail
src=$1 lib=$2 symbols=$3
[ -f "$lib" ] || { echo "no library $lib"; exit 1; }
# name@version of every defined dynamic symbol (version nodes themselves too).
exported=$(nm -D --defined-only "$lib" | awk '{ n = $3; sub(/@@/, "@", n); if ($2 == "A") n = n "@" n; print n }' | sort -u)
listed=$(grep '^ [^(]' "$src/$symbols" | awk '{print $1}' | sort -u)
covered=$(grep -o '^ (symver)[^ ]*' "$src/$symbols" | sed 's/^ (symver)//' || true)
status=0
missing=$(comm -13 <(echo "$exported") <(echo "$listed"))
if [ -n "$missing" ]; then
  echo "listed in $symbols but not exported by $(basename "$lib"):"; echo "$missing" | sed 's/^/  /'; status=1
fi
extra=$(comm -23 <(echo "$exported") <(echo "$listed"))
for v in $covered; do  # fixed strings: a version's dots are not patterns
  extra=$(echo "$extra" | awk -v v="@$v" 'substr($0, length($0) - length(v) + 1) != v')
  echo "$exported" | awk -v v="@$v" 'substr($0, length($0) - length(v) + 1) == v {f = 1} END {exit !f}' ||
    { echo "$symbols covers version $v, which $(basename "$lib") no longer has"; status=1; }
done
if [ -n "$extra" ]; then
  echo "exported by $(basename "$lib") but not in $symbols (add it to a new version node and the file, or hide it):"
  echo "$extra" | sed 's/^/  /'; status=1
fi
[ $status = 0 ] && echo "$(basename "$lib"): $(echo "$exported" | wc -l) exported symbols, all pinned"
exit $status
