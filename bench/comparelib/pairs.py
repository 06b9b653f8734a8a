"""Paired rounds: OpenND's shared-memory RDMA Write and Read at 4 KiB,
64 KiB and 1 MiB, and its Send at 1 MiB, set against the raw
cross-memory-attach copy they are made of, and the libraries that move
large messages the same way (UCX cma+posix tag_bw, Open MPI vader) at
1 MiB, each round measuring all of them back to back (ndbaseline
cma-write-bw cma-read-bw, ndperf write_bw,read_bw(,send_bw), ucx_perftest,
mpi_bench bw). ndperf cycles through as much buffer as the raw copy reuses
(one message), so both copy between the same caches. A Send is set
against raw CMA read: its receiver pulls the data. Every figure is a throughput, bytes over the time they took: raw
CMA's from its samples (one call each), the others' overall rates. (A
median of 90 us raw samples leaves out the VM's stalls that every 3 ms
window of the others takes in: it read 2-3% above the raw overall rate.)
On a VM whose vCPUs move, one run of each is off by up to 2x either way;
the median of the per-round ratios is the figure, with its range, and for
OpenND's Send the rounds it was ahead of each library."""

import json
import statistics
import tempfile

from . import mpi
from .common import BUSY, busy_core, error_summary, fmt_size, record, run
from .ucx import UCX_MB, ucx_pair

SIZE = 1024 * 1024
SIZES = (4096, 65536, SIZE)  # one-sided; Sends and the libraries at SIZE only


def _row(name, op, size, raw):
    return (f"{name} {fmt_size(size)} ×CMA, paired", f"{raw}@{size}", size, op)


# key "op@size": (label, raw CMA "name@size" it is set against, size, op)
ROWS = {f"{op}@{n}": _row(f"OpenND {op} (shm)", op, n, f"cma-{op}-bw") for op in ("write", "read") for n in SIZES}
ROWS.update({f"send@{SIZE}": _row("OpenND send (shm)", "send", SIZE, "cma-read-bw"),
             "ucx": _row("UCX cma+posix tag", "ucx", SIZE, "cma-read-bw"),
             "mpi": _row("Open MPI sm (vader)", "mpi", SIZE, "cma-read-bw")})
SEND = f"send@{SIZE}"
RIVALS = ("ucx", "mpi")  # what OpenND's Send is set against, round by round


def overall_rate(samples):
    """Bytes over time of equal-sized samples given as rates: their harmonic mean."""
    return len(samples) / sum(1 / x for x in samples) if samples and all(x > 0 for x in samples) else None


def _baseline(s, exe):
    cmd = [exe, "--json", "--samples", "--quick", "--sizes", ",".join(map(str, SIZES)), "cma-write-bw", "cma-read-bw"]
    rc, out, err = run(cmd, s.run_timeout)
    if rc != 0:
        raise RuntimeError(f"ndbaseline failed ({error_summary(err or out)})")
    return {f"{r['name']}@{r['size']}": overall_rate(r.get("samples"))
            for r in json.loads(out)["results"] if "stats" in r}


def _ndperf(s, exe):
    """{"op@size": GB/s}: one run per size, its working set one message."""
    got = {}
    for size in SIZES:
        tests = "write_bw,read_bw,send_bw" if size == SIZE else "write_bw,read_bw"
        cmd = [exe, "--json", "--no-progress", "--local", "-t", tests, "-S", str(size), "--working-set", str(size)]
        rc, out, err = run(cmd, s.run_timeout)
        if rc != 0:
            raise RuntimeError(f"ndperf failed ({error_summary(err or out)})")
        got.update({f"{r['test'].split('_')[0]}@{size}": r["gbps"] for r in json.loads(out)})
    return got


def _ucx(s, exe):
    row, why, _ = ucx_pair(exe, "tag_bw", SIZE, s.bw_iters(SIZE), {"UCX_TLS": "cma,posix"}, s.run_timeout)
    if row is None:
        raise RuntimeError(f"ucx_perftest failed ({why})")
    return row[5] * UCX_MB / 1e9


def summarise(rounds, busy=False):
    """Records from per-round dicts: "raw" {"ndbaseline name@size": GB/s}
    and OpenND's, UCX's and Open MPI's GB/s by ROWS key (absent where a tool
    failed in that round); `busy`: measured next to a busy core."""
    out = []
    for key, (label, raw_name, size, op) in ROWS.items():
        label += BUSY if busy else ""
        pairs = [(r[key], r["raw"][raw_name]) for r in rounds if key in r and r.get("raw", {}).get(raw_name)]
        if not pairs:
            continue
        ratios = [mine / raw for mine, raw in pairs]
        extra = {}
        if key == SEND:
            for rival in RIVALS:
                ahead = [r[SEND] > r[rival] for r in rounds if SEND in r and rival in r]
                if ahead:
                    extra[f"ahead_of_{rival}"] = sum(ahead)
                    extra[f"paired_with_{rival}"] = len(ahead)
        out.append(record("paired", label, "cma", f"{op}_bw", "ratio", size, statistics.median(ratios), "median",
                          rounds=len(ratios), low=min(ratios), high=max(ratios), ratios=ratios,
                          gbps=statistics.median(p[0] for p in pairs),
                          cma_gbps=statistics.median(p[1] for p in pairs), cma=raw_name.split("@")[0], **extra))
    return out


def paired_cma_runner(s, busy=False):
    from .runners import find_tool  # runners imports this module
    base, perf, ucx = find_tool(s, "ndbaseline"), find_tool(s, "ndperf"), find_tool(s, "ucx_perftest")
    if not base or not perf:
        return []
    failures = {}
    if not ucx:
        failures["ucx"] = "ucx_perftest not found (Debian package ucx-utils)"
    with tempfile.TemporaryDirectory() as work:
        mpi_exe, why = mpi.build(work)
        if why:
            failures["mpi"] = why
        with busy_core(busy):
            rounds = _cma_rounds(s, base, perf, ucx, mpi_exe, failures, busy)
    out = summarise(rounds, busy)
    have = {r["label"] for r in out}
    for key, why in failures.items():
        for row in ([k for k in ROWS if k not in RIVALS] if key in ("raw", "nd") else (key,)):
            label, _, size, op = ROWS[row]
            if label + (BUSY if busy else "") not in have:
                out.append(record("paired", label + (BUSY if busy else ""), "cma", f"{op}_bw", "ratio", size,
                                  error=why))
    return out


def paired_cma_busy_runner(s):
    """The paired CMA rounds again, next to a process spinning on one core."""
    return paired_cma_runner(s, busy=True)


def _cma_rounds(s, base, perf, ucx, mpi_exe, failures, busy):
    """Each round: every tool back to back; {key: figure} (see summarise)."""
    steps = [("raw", lambda: _baseline(s, base)), ("nd", lambda: _ndperf(s, perf))]
    if ucx:
        steps.append(("ucx", lambda: _ucx(s, ucx)))
    if mpi_exe:
        steps.append(("mpi", lambda: mpi.measure(mpi_exe, "bw", SIZE, s.bw_iters(SIZE), s.run_timeout,
                                                 mpi.WINDOW)["gbps"]))
    rounds = []
    for k in range(7 if s.quick else 11):
        s.log(f"paired CMA round {k + 1}" + (" (busy core)" if busy else ""))
        got = {}
        for key, step in steps:
            try:
                value = step()
            except (RuntimeError, ValueError, KeyError, IndexError) as e:
                failures[key] = str(e)
                continue
            if key == "nd":
                got.update({k: v for k, v in value.items() if k in ROWS and v})
            else:
                got[key] = value
        rounds.append(got)
    return rounds
