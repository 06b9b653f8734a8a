"""OpenND's verbs provider (ndverbs) against perftest on the same RDMA
device: ndperf over ndverbs and rdma-core's perftest (ib_send_lat,
ib_write_lat, ib_read_lat, ib_send_bw, ib_write_bw, ib_read_bw, all with
rdma_cm) in the rdma-vm VM on rxe0 and on siw0, server and client in the
VM on the device's address. Each round runs both tools back to back for
every test (alternating which goes first), so they share the round's core
placement; the figure is the median of the per-round ratios with its
range. The VM is emulated (TCG): absolute figures are a small fraction of
a real host's, and the ratio says what the ND layer adds over raw verbs
on one device, not what a NIC does. Latency: half a round trip for Send
and Write, a whole one for Read, as both tools report them (ndperf's median,
perftest's t_typical); bandwidth: GB/s (perftest's MB are MiB)."""

import json
import os
import re
import statistics

from .common import record, run

IP = "10.0.2.15"
SIZES = {"lat": 8, "bw": 65536}
TESTS = ("send_lat", "write_lat", "read_lat", "send_bw", "write_bw", "read_bw")
PERFTEST = {t: "ib_" + t for t in TESTS}
DEVICES = ("rxe", "siw")


_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _vm_tool():
    path = os.environ.get("RDMA_VM_RUN") or os.path.join(_ROOT, "..", "shared", "tools", "rdma-vm", "run-vm.sh")
    return path if os.access(path, os.X_OK) else None


def _script(build, rounds, lat_iters, bw_iters):
    """The VM's busy-box shell script: every round, every test, both tools;
    each run's output between '@@ TOOL TEST SIZE ROUND' and '@@ end'."""
    with open(os.path.join(_ROOT, "tests", "verbs", "vm_tree.sh")) as f:
        tree = f.read()  # the build tree linked in, an ndverbs-only catalog, listening()
    lines = [
        f"b={build}",
        tree,
        "export OPENND_CATALOG=/root/catalog",
        "port=7400",
        # run TOOL TEST SIZE ROUND SERVER CLIENT
        'run() { port=$((port+1)); s=$(echo "$5" | sed "s/PORT/$port/g"); c=$(echo "$6" | sed "s/PORT/$port/g")',
        '  timeout -k 5 120 sh -c "exec $s" >/tmp/server.log 2>&1 & sp=$! i=0',
        '  while ! listening $port && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done',
        '  echo "@@ $1 $2 $3 $4"; timeout -k 5 120 sh -c "exec $c" 2>&1; echo "@@ end rc=$?"',
        "  wait $sp; }",
        "nd=$b/bin/ndperf",
    ]
    for k in range(rounds):
        for test in TESTS:
            size = SIZES[test.split("_")[1]]
            lat = test.endswith("_lat")
            n = lat_iters if lat else bw_iters
            extra = " --recv-first" if test == "send_lat" else ""  # perftest's order of posting
            window = "" if lat else " -t 32"  # ndperf's default window
            nd = (f'run nd {test} {size} {k} "$nd -s -a {IP} -p PORT" '
                  f'"$nd -c {IP} -p PORT -t {test} -S {size} -n {n} --json --no-progress{extra}"')
            pt = (f'run perftest {test} {size} {k} "{PERFTEST[test]} -R -p PORT -s {size} -n {n}{window}" '
                  f'"{PERFTEST[test]} -R -p PORT -s {size} -n {n}{window} {IP}"')
            lines += [nd, pt] if k % 2 == 0 else [pt, nd]
    return "\n".join(lines)


def _parse_nd(text, test):
    start = text.find("[")
    rows = json.loads(text[start:text.rfind("]") + 1]) if start >= 0 else []
    for r in rows:
        if r.get("test") == test:
            return r["median_us"] if test.endswith("_lat") else r["gbps"]
    return None


def _parse_perftest(text, test):
    """t_typical (µs) of a latency test, BW average (MiB/s, as GB/s) of a bandwidth one."""
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 5 and f[0].isdigit() and f[1].isdigit():
            return float(f[4]) if test.endswith("_lat") else float(f[3]) * 1048576 / 1e9
    return None


def parse(output):
    """{(tool, test, size): {round: value}} and the failures' texts."""
    got, failed = {}, {}
    for m in re.finditer(r"^@@ (\w+) (\w+) (\d+) (\d+)\n(.*?)^@@ end rc=(\d+)", output, re.S | re.M):
        tool, test, size, k, text, rc = m.group(1), m.group(2), int(m.group(3)), int(m.group(4)), m.group(5), m.group(6)
        try:
            value = (_parse_nd if tool == "nd" else _parse_perftest)(text, test) if rc == "0" else None
        except ValueError:
            value = None
        if value is None:
            failed[(tool, test, size)] = f"exit {rc}: " + " / ".join(text.strip().splitlines()[-2:])[:300]
        else:
            got.setdefault((tool, test, size), {})[k] = value
    return got, failed


def summarise(device, got, failed):
    out = []
    for test in TESTS:
        size = SIZES[test.split("_")[1]]
        lat = test.endswith("_lat")
        label = f"ndverbs {test} ÷perftest ({device}, VM)"
        nd, pt = got.get(("nd", test, size), {}), got.get(("perftest", test, size), {})
        rounds = sorted(set(nd) & set(pt))
        if not rounds:
            why = failed.get(("nd", test, size)) or failed.get(("perftest", test, size)) or "no round ran"
            out.append(record("verbs_vm", label, device, test, "verbs_paired", size, error=why))
            continue
        # Higher is better for both: perftest's time over ours, our rate over perftest's.
        ratios = [pt[k] / nd[k] if lat else nd[k] / pt[k] for k in rounds]
        out.append(record("verbs_vm", label, device, test, "verbs_paired", size, statistics.median(ratios), "median",
                          rounds=len(rounds), low=min(ratios), high=max(ratios), ratios=ratios,
                          nd=statistics.median(nd[k] for k in rounds), perftest=statistics.median(pt[k] for k in rounds),
                          figure_unit="us" if lat else "GB/s"))
    return out


def verbs_vm_runner(s):
    vm = _vm_tool()
    build = s.build_dir
    if not vm or not build or not os.path.exists(os.path.join(build, "lib", "opennd", "libndverbs.so")):
        s.notes.append("ndverbs against perftest left out: it needs ../shared/tools/rdma-vm and a build with ndverbs")
        return []
    rounds = 3 if s.quick else 7
    script = _script(build, rounds, 300 if s.quick else 1000, 200 if s.quick else 500)
    out = []
    for device in DEVICES:
        s.log(f"ndverbs against perftest on {device}0 in the VM, {rounds} rounds")
        rc, stdout, stderr = run([vm, "--timeout", "1700", "--links", f"{device}0:eth0", "--share", build,
                                  "-c", script], 1800)
        got, failed = parse(stdout or "")
        if rc != 0 and not got:
            why = f"the VM run failed (exit {rc}): {(stderr or stdout or '').strip().splitlines()[-1:]}"
            out += [record("verbs_vm", f"ndverbs {t} ÷perftest ({device}, VM)", device, t, "verbs_paired",
                           SIZES[t.split("_")[1]], error=why) for t in TESTS]
            continue
        out += summarise(device, got, failed)
    return out
