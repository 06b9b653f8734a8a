#!/usr/bin/env bash
# Instructions per message of ndperf over ndverbs, counted by callgrind in
# the rdma-vm VM (../shared/tools/rdma-vm), function by function: the
# figure the emulated VM can resolve where its timings cannot
# (docs/verbs.md, "Against perftest"). The client runs a test twice, for
# N and 3N iterations, and the difference divided by 2N is what one
# iteration costs, setup and teardown cancelled. A function's figure is
# its own instructions (callees apart); a polling function's includes its
# empty polls, which vary with the round trip's time, while a posting
# function's do not.
#
# usage: bench/verbs_callgrind.sh [BUILD_DIR] [--device rxe|siw]
#                                 [--test send_lat|write_lat|read_lat|...]
#                                 [--size BYTES] [-n N]
# needs: valgrind on this host (its tools are copied into the VM).
# Exit status: 0 measured, 1 a run failed, 77 cannot run here.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=build dev=rxe test=send_lat size=8 n=1000
while [ $# -gt 0 ]; do
  case $1 in
    --device) dev=$2; shift 2;;
    --test) test=$2; shift 2;;
    --size) size=$2; shift 2;;
    -n) n=$2; shift 2;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    -*) echo "verbs_callgrind: unknown option $1" >&2; exit 2;;
    *) build=$1; shift;;
  esac
done
build=$(cd "$build" 2>/dev/null && pwd) || { echo "verbs_callgrind: no build directory" >&2; exit 2; }
vm=${RDMA_VM_RUN:-$root/../shared/tools/rdma-vm/run-vm.sh}
[ -x "$vm" ] || { echo "verbs_callgrind: no rdma-vm tool ($vm)" >&2; exit 77; }
[ -x /usr/bin/valgrind.bin ] && [ -d /usr/libexec/valgrind ] || { echo "verbs_callgrind: needs valgrind (apt-get install valgrind)" >&2; exit 77; }
[ -x "$build/bin/ndperf" ] && [ -e "$build/lib/opennd/libndverbs.so" ] || { echo "verbs_callgrind: $build has no ndperf or ndverbs" >&2; exit 77; }

# The VM sees the build tree at /host; valgrind's tools go there too.
work="$build/verbs_callgrind"
rm -rf "$work" && mkdir -p "$work/vg" && cp -r /usr/libexec/valgrind/. "$work/vg/"
{ echo "b=$build"; cat "$root/tests/verbs/vm_tree.sh"; } > "$work/run.sh"
cat >> "$work/run.sh" <<EOF
export OPENND_CATALOG=/root/catalog VALGRIND_LIB=/host/verbs_callgrind/vg
port=7400 rc=0
for k in $n $((3 * n)); do
  port=\$((port+1))
  \$b/bin/ndperf -s -a 10.0.2.15 -p \$port > /dev/null 2>&1 & sp=\$!
  i=0; while ! listening \$port && [ \$i -lt 300 ]; do sleep 0.05; i=\$((i+1)); done
  valgrind.bin --tool=callgrind --callgrind-out-file=/host/verbs_callgrind/cg.\$k.out \\
    \$b/bin/ndperf -c 10.0.2.15 -p \$port -t $test -S $size -n \$k --no-progress > /host/verbs_callgrind/client.\$k.txt 2>&1 || rc=1
  wait \$sp || rc=1
done
echo "CALLGRIND-RC=\$rc"
EOF
out=$(timeout 1200 "$vm" --timeout 1100 --links "${dev}0:eth0" --share "$build" --add /usr/bin/valgrind.bin \
  -c "sh /host/verbs_callgrind/run.sh" 2>&1)
echo "$out" | grep -q "CALLGRIND-RC=0" || { echo "$out" | grep -v '^\[ *[0-9]' | tail -20; echo "verbs_callgrind: a run failed"; exit 1; }
python3 - "$work/cg.$n.out" "$work/cg.$((3 * n)).out" "$n" "$dev" "$test" "$size" <<'EOF'
import re, subprocess, sys
def load(path):
    text = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", path], capture_output=True, text=True).stdout
    own, total = {}, 0
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*)$", line)
        if not m or "=>" in line:
            continue
        count, what = int(m.group(1).replace(",", "")), m.group(2)
        if what.startswith("PROGRAM TOTALS"):
            total = count
            continue
        name = re.sub(r"\(.*", "", what.split(":", 1)[1]) if ":" in what and not what.startswith("???") else what
        own[name] = own.get(name, 0) + count
    return own, total
(a, ta), (b, tb) = load(sys.argv[1]), load(sys.argv[2])
n, dev, test, size = int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
per = {k: (b.get(k, 0) - a.get(k, 0)) / (2 * n) for k in set(a) | set(b)}
print(f"ndperf -t {test} -S {size} over ndverbs on {dev}: {(tb - ta) / (2 * n):.0f} instructions per iteration (client)")
for k, v in sorted(per.items(), key=lambda kv: -kv[1]):
    if v >= 3:
        print(f"{v:8.1f}  {k[:120]}")
EOF
