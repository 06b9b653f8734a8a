#!/usr/bin/env bash
# Checks the built man pages (man/): each renders with no warning from
# groff, and each tool's page names every option its --help prints.
# Usage: check_man.sh BUILD_DIR. 77: no groff here (skipped).
set -uo pipefail
build=$1
command -v groff >/dev/null || { echo "SKIP: no groff"; exit 77; }
fail=0
render() { groff -man -Tascii -P-cbu -rHY=0 -rLL=200n "$1" 2>/dev/null; }  # no hyphenation, long lines
for page in "$build"/share/man/man1/*.1 "$build"/share/man/man3/*.3 "$build"/share/man/man7/*.7; do
  [ -e "$page" ] || { echo "FAIL: no pages in $build/share/man"; exit 1; }
  [ "$(head -c 4 "$page")" = ".so " ] && continue  # a name of another page (checked below)
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warnings" ] || { echo "FAIL: $page: $warnings"; fail=1; }
  [ "$(render "$page" | wc -l)" -gt 20 ] || { echo "FAIL: $page renders almost nothing"; fail=1; }
done
for tool in ndinfo ndinstall ndperf ndrping ndconformance ndksmbd ndbaseline; do
  page=$build/share/man/man1/$tool.1
  # A tool this build leaves out (ndbaseline without the benchmarks) has no page either.
  if [ ! -x "$build/bin/$tool" ]; then
    [ ! -e "$page" ] || { echo "FAIL: a page for $tool, which this build does not make"; fail=1; }
    echo "not built: $tool"; continue
  fi
  [ -e "$page" ] || { echo "FAIL: no page for $tool"; fail=1; continue; }
  text=$(render "$page")
  # Every option word of the tool's usage: -x, --long-name.
  opts=$("$build/bin/$tool" --help 2>&1 | grep -oE '(^|[][ ,|(])--?[a-zA-Z0-9][a-zA-Z0-9-]*' | sed -E 's/^[][ ,|(]//' | sort -u)
  [ -n "$opts" ] || { echo "FAIL: $tool --help lists no options"; fail=1; }
  missing=""
  for o in $opts; do
    grep -qE -- "(^|[^a-zA-Z0-9-])$o([^a-zA-Z0-9-]|\$)" <<<"$text" || missing="$missing $o"
  done
  if [ -n "$missing" ]; then echo "FAIL: $tool.1 does not name:$missing"; fail=1; else echo "ok: $tool.1 ($(wc -w <<<"$opts") options)"; fi
done
# Each Nd* helper's page is ndsupport(3), and that page names it.
for fn in NdStartup NdCleanup NdFlushProviders NdQueryAddressList NdResolveAddress NdCheckAddress NdOpenAdapter; do
  grep -qx '.so man3/ndsupport.3' "$build/share/man/man3/$fn.3" 2>/dev/null || { echo "FAIL: no $fn(3)"; fail=1; }
  render "$build/share/man/man3/ndsupport.3" | grep -q "$fn(" || { echo "FAIL: ndsupport(3) does not describe $fn"; fail=1; }
done
# A page for every ND SPI v2 interface.
for i in IND2Provider IND2Adapter IND2Overlapped IND2CompletionQueue IND2MemoryRegion IND2MemoryWindow \
         IND2SharedReceiveQueue IND2QueuePair IND2Connector IND2Listener; do
  [ -e "$build/share/man/man3/$i.3" ] || { echo "FAIL: no $i(3)"; fail=1; }
done
for p in man7/opennd.7 man7/ndkpi.7 man3/ndsupport.3; do
  [ -e "$build/share/man/$p" ] || { echo "FAIL: no $p"; fail=1; }
done
[ $fail = 0 ] && echo "PASS: every page renders cleanly and names its tool's options"
exit $fail
