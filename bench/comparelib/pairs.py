"""Paired rounds: OpenND's shared-memory RDMA Write and Read at 1 MiB set
against the raw cross-memory-attach copy they are made of, each round
measuring both back to back (ndbaseline cma-*-bw, then ndperf write_bw /
read_bw). On a VM whose vCPUs move, one run of each is off by up to 2x
either way; the median of the per-round ratios is the figure, with its
range."""

import json
import statistics

from .common import error_summary, record, run

SIZE = 1024 * 1024
OPS = {"write": ("cma-write-bw", "write_bw"), "read": ("cma-read-bw", "read_bw")}


def _baseline(s, exe):
    cmd = [exe, "--json", "--quick", "--sizes", str(SIZE), "cma-write-bw", "cma-read-bw"]
    rc, out, err = run(cmd, s.run_timeout)
    if rc != 0:
        raise RuntimeError(f"ndbaseline failed ({error_summary(err or out)})")
    return {r["name"]: r["stats"]["median"] for r in json.loads(out)["results"] if "stats" in r}


def _ndperf(s, exe):
    cmd = [exe, "--json", "--no-progress", "--local", "-t", "write_bw,read_bw", "-S", str(SIZE)]
    rc, out, err = run(cmd, s.run_timeout)
    if rc != 0:
        raise RuntimeError(f"ndperf failed ({error_summary(err or out)})")
    return {r["test"]: r.get("gbps_median", r["gbps"]) for r in json.loads(out)}


def paired_cma_runner(s):
    from .runners import find_tool  # runners imports this module
    base, perf = find_tool(s, "ndbaseline"), find_tool(s, "ndperf")
    if not base or not perf:
        return []
    rounds = 7 if s.quick else 11
    ratios = {op: [] for op in OPS}
    figures = {op: ([], []) for op in OPS}
    try:
        for k in range(rounds):
            s.log(f"paired CMA round {k + 1}/{rounds}")
            raw, nd = _baseline(s, base), _ndperf(s, perf)
            for op, (raw_name, nd_name) in OPS.items():
                if raw.get(raw_name) and nd.get(nd_name):
                    ratios[op].append(nd[nd_name] / raw[raw_name])
                    figures[op][0].append(nd[nd_name])
                    figures[op][1].append(raw[raw_name])
    except (RuntimeError, ValueError, KeyError) as e:
        return [record("ndperf", f"OpenND {op} (shm) ×CMA, paired", "nd", f"{op}_bw", "ratio", SIZE,
                       error=str(e)) for op in OPS]
    out = []
    for op in OPS:
        if not ratios[op]:
            continue
        out.append(record("ndperf", f"OpenND {op} (shm) ×CMA, paired", "nd", f"{op}_bw", "ratio", SIZE,
                          statistics.median(ratios[op]), "median", rounds=len(ratios[op]),
                          low=min(ratios[op]), high=max(ratios[op]), ratios=ratios[op],
                          opennd_gbps=statistics.median(figures[op][0]),
                          cma_gbps=statistics.median(figures[op][1])))
    return out
