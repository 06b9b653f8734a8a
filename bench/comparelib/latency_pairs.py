"""Paired rounds at 8 B: OpenND's shared-memory Send ping-pong set against
UCX posix tag_lat, Open MPI's shared memory (mpi_bench lat: mpi.py) and
the raw cache-line ping-pong, all back to back in each round. On this kind
of VM the two processes' vCPUs land on cores that pass a cache line in
0.035-0.25 us, and that placement changes within minutes: one run of each
tool, minutes apart, can compare two different machines. Within a round
all share a placement, so the per-round figures are what compare: OpenND
over UCX, the rounds OpenND was ahead of each library, and each figure
minus the cache line (the software's own share, which placement moves
least). Medians of the rounds, with their ranges. The same rounds set
OpenND's 8 B message rate (ndperf send_bw) against UCX's (tag_bw) and
Open MPI's (mpi_bench bw), 32 in flight each. OpenND runs in both
orders of ndperf send_lat: the next receive posted after the answer (its
default; ucx_perftest's tag_lat order) and before it (--recv-first;
perftest's order). They also set OpenND's 8 B RDMA Write (write_lat, half a
round trip) and Read (read_lat, one Read) against the floor one system
call sets (ndbaseline's process_vm_writev ping-pong and one
process_vm_readv) and against OpenND's own Send in the same round."""

import json
import statistics
import tempfile

from . import mpi
from .common import BUSY, busy_core, error_summary, record, run
from .ucx import ucx_pair

SIZE = 8
LABELS = {"cacheline": "raw cache-line flag", "opennd": "OpenND send (shm)",
          "opennd_recv_first": "OpenND send (shm, recv first)", "ucx": "UCX posix tag",
          "mpi": "Open MPI sm (vader)"}
RIVALS = {"ucx": "UCX", "mpi": "Open MPI"}  # what the OpenND rows are set against, round by round
# The same rounds also measure the 8 B message rate (32 in flight, one connection).
RATE_LABELS = {"opennd_rate": "OpenND send (shm)", "ucx_rate": "UCX posix tag", "mpi_rate": "Open MPI sm (vader)"}
# And one-sided requests, each against the one-call floor it is made of (key: (label, floor key or None)).
ONE_SIDED = {"nd_write": ("OpenND write (shm)", "cma_write"), "cma_write": ("raw CMA write ping-pong", None),
             "nd_read": ("OpenND read (shm, one Read)", "cma_read"), "cma_read": ("raw CMA read (one call)", None)}


def _cacheline(s, exe):
    rc, out, err = run([exe, "--json", "--quick", "cacheline-pingpong"], s.run_timeout)
    if rc != 0:
        raise RuntimeError(f"ndbaseline failed ({error_summary(err or out)})")
    return json.loads(out)["results"][0]["stats"]["median"]


def _floor(s, exe, test):
    rc, out, err = run([exe, "--json", "--quick", "--sizes", str(SIZE), test], s.run_timeout)
    if rc != 0:
        raise RuntimeError(f"ndbaseline failed ({error_summary(err or out)})")
    return json.loads(out)["results"][0]["stats"]["median"]


def _ndperf(s, exe, test, field, iters, *extra):
    cmd = [exe, "--json", "--no-progress", "--local", "-t", test, "-S", str(SIZE), "-n", str(iters), *extra]
    rc, out, err = run(cmd, s.run_timeout)
    if rc != 0:
        raise RuntimeError(f"ndperf failed ({error_summary(err or out)})")
    return json.loads(out)[0][field]


def _ucx(s, exe, test, iters):
    """tag_lat: the p50 latency (us); tag_bw: the overall message rate (Mmsg/s)."""
    row, why, _ = ucx_pair(exe, test, SIZE, iters, {"UCX_TLS": "posix"}, s.run_timeout)
    if row is None:
        raise RuntimeError(f"ucx_perftest failed ({why})")
    return row[1] if test == "tag_lat" else row[7] / 1e6


def _mpi(s, exe, test, iters):
    """lat: the median half round trip (us); bw: the message rate (Mmsg/s)."""
    doc = mpi.measure(exe, test, SIZE, iters, s.run_timeout, mpi.WINDOW if test == "bw" else None)
    return doc["median_us"] if test == "lat" else doc["mmsgps"]


def _versus(rounds, mine, better):
    """For OpenND's figure `mine`: its median ratio to UCX's with the range,
    and the rounds it was better(own, rival's) than each rival's."""
    extra = {}
    suffix = "_rate" if mine.endswith("_rate") else ""
    ucx = "ucx" + suffix
    ratios = [r[mine] / r[ucx] for r in rounds if mine in r and ucx in r]
    if ratios:
        extra.update(ratio_to_ucx=statistics.median(ratios), ratio_low=min(ratios), ratio_high=max(ratios))
    for rival in RIVALS:
        won = [better(r[mine], r[rival + suffix]) for r in rounds if mine in r and rival + suffix in r]
        if won:
            extra[f"ahead_of_{rival}"] = sum(won)
            extra[f"paired_with_{rival}"] = len(won)
    return extra


def summarise(rounds, busy=False):
    """Records from a list of per-round dicts keyed as LABELS and
    RATE_LABELS (a key is absent where that tool failed in the round);
    `busy`: measured next to a busy core (labels say so)."""
    out = _summarise(rounds)
    if busy:
        for r in out:
            r["label"] += BUSY
    return out


def _summarise(rounds):
    out = []
    for key, label in LABELS.items():
        got = [r[key] for r in rounds if key in r]
        if not got:
            continue
        extra = {}
        paired = [r for r in rounds if key in r and "cacheline" in r]
        if key != "cacheline" and paired:
            extra["above_cacheline"] = statistics.median(r[key] - r["cacheline"] for r in paired)
        if key.startswith("opennd"):
            extra.update(_versus(rounds, key, lambda mine, theirs: mine < theirs))
        out.append(record("paired", label, "shm", "half round trip", "paired_latency", SIZE, statistics.median(got),
                          "median", rounds=len(got), low=min(got), high=max(got), figures=got, **extra))
    for key, (label, floor) in ONE_SIDED.items():
        got = [r[key] for r in rounds if key in r]
        if not got:
            continue
        extra = {}
        for name, base in (("over_floor", floor), ("over_send", "opennd" if floor else None)):
            ratios = [r[key] / r[base] for r in rounds if base and key in r and r.get(base)]
            if ratios:
                extra.update({name: statistics.median(ratios), name + "_low": min(ratios),
                              name + "_high": max(ratios)})
        out.append(record("paired", label, "shm", "half round trip" if "write" in key else "one Read",
                          "paired_onesided", SIZE, statistics.median(got), "median", rounds=len(got), low=min(got),
                          high=max(got), figures=got, **extra))
    for key, label in RATE_LABELS.items():
        got = [r[key] for r in rounds if key in r]
        if not got:
            continue
        extra = _versus(rounds, key, lambda mine, theirs: mine > theirs) if key.startswith("opennd") else {}
        out.append(record("paired", label, "shm", "messages, 32 in flight", "paired_rate", SIZE,
                          statistics.median(got), "median", rounds=len(got), low=min(got), high=max(got),
                          figures=got, **extra))
    return out


def paired_latency_busy_runner(s):
    """The paired 8 B rounds again, next to a process spinning on one core."""
    return paired_latency_runner(s, busy=True)


def paired_latency_runner(s, busy=False):
    from .runners import find_tool  # runners imports this module
    base, perf, ucx = find_tool(s, "ndbaseline"), find_tool(s, "ndperf"), find_tool(s, "ucx_perftest")
    if not base or not perf:
        return []
    n = 20000 if s.quick else 200000
    rounds, failures = [], {}
    if not ucx:
        failures["ucx"] = failures["ucx_rate"] = "ucx_perftest not found (Debian package ucx-utils)"
    with tempfile.TemporaryDirectory() as work:
        mpi_exe, why = mpi.build(work)
        if why:
            failures["mpi"] = failures["mpi_rate"] = why
        tools = [("cacheline", lambda: _cacheline(s, base)),
                 ("opennd", lambda: _ndperf(s, perf, "send_lat", "median_us", n)),
                 ("opennd_recv_first", lambda: _ndperf(s, perf, "send_lat", "median_us", n, "--recv-first"))]
        if ucx:
            tools.append(("ucx", lambda: _ucx(s, ucx, "tag_lat", n)))
        if mpi_exe:
            tools.append(("mpi", lambda: _mpi(s, mpi_exe, "lat", n)))
        tools += [("nd_write", lambda: _ndperf(s, perf, "write_lat", "median_us", n)),
                  ("cma_write", lambda: _floor(s, base, "cma-write-pingpong")),
                  ("nd_read", lambda: _ndperf(s, perf, "read_lat", "median_us", n)),
                  ("cma_read", lambda: _floor(s, base, "cma-read-lat"))]
        tools.append(("opennd_rate", lambda: _ndperf(s, perf, "send_bw", "mmsgps", n)))
        if ucx:
            tools.append(("ucx_rate", lambda: _ucx(s, ucx, "tag_bw", n)))
        if mpi_exe:
            tools.append(("mpi_rate", lambda: _mpi(s, mpi_exe, "bw", n)))
        with busy_core(busy):
            for k in range(7 if s.quick or busy else 21):
                s.log(f"paired 8 B latency round {k + 1}" + (" (busy core)" if busy else ""))
                got = {}
                for key, measure in tools:
                    try:
                        got[key] = float(measure())
                    except (RuntimeError, ValueError, KeyError, IndexError) as e:
                        failures[key] = str(e)
                rounds.append(got)
    out = summarise(rounds, busy)
    have = {(r["label"], r["kind"]) for r in out}
    for key, why in failures.items():
        if key in RATE_LABELS:
            label, kind, op = RATE_LABELS[key], "paired_rate", "messages, 32 in flight"
        elif key in ONE_SIDED:
            label, kind, op = ONE_SIDED[key][0], "paired_onesided", "half round trip"
        else:
            label, kind, op = LABELS[key], "paired_latency", "half round trip"
        label += BUSY if busy else ""
        if (label, kind) not in have:
            out.append(record("paired", label, "shm", op, kind, SIZE, error=why))
    return out
