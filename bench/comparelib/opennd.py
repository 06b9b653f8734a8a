"""OpenND's own rows: bin/ndperf from the build, on every data path of the
software provider (shm = shared-memory rings + cross-memory attach, copy =
through the rings only, tcp = when the provider has it: a probe run decides),
then, on the default path, blocking completions, message rate and bandwidth
over several QPs and threads, memory registration and connection setup rate.

ndperf --json prints a list of rows: {"test", "mode", "size", "qps",
"threads", "median_us", "p99_us", "min_us", "spread", "gbps", "mmsgps",
"rate_per_s", "transport", "data_path", ...}; one-connection bandwidth rows
add "gbps_median" (median of the window rounds, used as the figure) and
"working_set"; "mr" rows add "dereg_*",
"connect" rows "inflight", write_lat rows "signaled". The opennd_benchlib document ({"results": [...]})
is read too. Without bin/ndperf the runner returns nothing."""

import json
import os

from .common import error_summary, record, run

# (label word, --transport value or None for the provider's default)
DATA_PATHS = [("shm", None), ("copy", "copy"), ("tcp", "tcp")]
LATENCY_TESTS = "send_lat,write_lat,read_lat"
BANDWIDTH_TESTS = "send_bw,write_bw,read_bw"
MULTI_QPS, MULTI_THREADS = 4, 2
SPIN_US = 20  # the blocking row with spin-then-block


def _ndperf(s, exe, args, what, kind, size):
    """Runs ndperf --json args; (rows, None) or (None, failed record)."""
    cmd = [exe, "--json", "--no-progress"] + args
    s.log("ndperf " + " ".join(cmd[1:]))
    rc, stdout, stderr = run(cmd, s.run_timeout * 2)
    try:
        doc = json.loads(stdout)
        if rc != 0 or not isinstance(doc, list):
            raise ValueError
        return doc, cmd
    except ValueError:
        # The client's own line first ("ndperf: ..."), then the server's.
        mine = [l for l in (stderr or "").splitlines() if l.startswith("ndperf: ") and "warning" not in l]
        why = (mine[0][:300] if mine else error_summary(stderr)) if rc is not None else stderr
        theirs = [l for l in (stderr or "").splitlines() if l.startswith("ndperf server: ")]
        if mine and theirs:
            why += "; " + theirs[0][:200]
        return None, record("ndperf", f"OpenND {what}", "nd", what, kind, size,
                            error=f"ndperf failed (exit {rc}): {why}", command=cmd)


def _suffix(path, r):
    parts = [path]
    if r.get("signaled"):
        parts.append("signaled")
    if r.get("mode") == "blocking":
        parts.append("blocking")
        if r.get("spin_us", -1) > 0:
            parts.append(f"spin {r['spin_us']} µs")
    if r.get("qps", 1) > 1:
        parts.append(f"{r['qps']} QPs")
    if r.get("threads", 1) > 1:
        parts.append(f"{r['threads']} threads")
    return ", ".join(parts)


def ndperf_records(rows, command, path="shm", kind_override=None):
    """Records from ndperf's JSON rows (see the module doc)."""
    command = " ".join(command) if isinstance(command, list) else command
    out = []
    for r in rows:
        test = r["test"]
        common = dict(command=command, iterations=r.get("iters"), qps=r.get("qps"), threads=r.get("threads"),
                      data_path=r.get("data_path"))
        if test == "mr":
            n = r.get("threads", 1)
            out.append(record("ndperf", f"OpenND Register ({n} thread{'s' if n > 1 else ''})", path, "register",
                              "registration", r["size"], r["median_us"], "median", p99=r.get("p99_us"),
                              min=r.get("min_us"), spread=r.get("spread"), dereg_median=r.get("dereg_median_us"),
                              dereg_p99=r.get("dereg_p99_us"), rate_per_s=r.get("rate_per_s"),
                              truncated=r.get("truncated") or None, **common))
            continue
        if test == "connect":
            out.append(record("ndperf", f"OpenND connect ({path}, {r['inflight']} at once)", path, "connect", "connect", 0,
                              r["rate_per_s"], "overall", median_us=r.get("median_us"), p99_us=r.get("p99_us"),
                              inflight=r.get("inflight"), truncated=r.get("truncated") or None, **common))
            continue
        verb = test.split("_")[0]
        label = f"OpenND {verb} ({_suffix(path, r)})"
        if test.endswith("_lat"):
            # ndperf's read_lat is a full round trip (one RDMA read); the others half of one.
            out.append(record("ndperf", label, path, test + (" (full round trip)" if test == "read_lat" else ""),
                              "latency", r["size"], r["median_us"], "median", p99=r.get("p99_us"),
                              min=r.get("min_us"), spread=r.get("spread"), **common))
        elif kind_override == "msgrate":
            out.append(record("ndperf", label, path, test, "msgrate", r["size"], r["mmsgps"], "overall",
                              spread=r.get("spread"), **common))
        else:
            # One connection: the median of the window rounds' rates, like
            # ndbaseline's figure; several: the aggregate over the run.
            median = r.get("gbps_median")
            out.append(record("ndperf", label, path, test, "bandwidth", r["size"],
                              median if median is not None else r["gbps"], "median" if median is not None else "overall",
                              overall=r["gbps"], working_set=r.get("working_set"), spread=r.get("spread"), **common))
    return out


def _probe(s, exe, transport):
    """True if ndperf runs on this data path (a provider without it refuses)."""
    rows, got = _ndperf(s, exe, ["--local", "--transport", transport, "-t", "send_lat,write_bw", "-S", "4096",
                                 "-n", "50"], "probe", "latency", 8)
    if rows is None:
        s.notes.append(f"OpenND {transport} rows left out: {got['error']}")
        s.log(f"ndperf --transport {transport}: left out ({got['error']})")
    return rows is not None


def ndperf_runner(s):
    exe = s.bin("ndperf")
    if not exe or not os.access(exe, os.X_OK):
        return []
    lat = ",".join(map(str, s.lat_sizes))
    def n_lat(path):  # TCP's round trips are ~50x longer, but a quick run's 2000 still take < 1 s
        return ["-n", str(s.lat_iters)] if s.quick else []

    def n_bw(path, size):  # a quick run halves the byte budget (three paths, three tests each)
        return str(max(20, s.bw_iters(size) // (2 if s.quick else 1) // (4 if path == "tcp" else 1)))
    out = []

    def take(args, what, kind, size, path="shm", kind_override=None):
        rows, got = _ndperf(s, exe, args, what, kind, size)
        out.extend(ndperf_records(rows, got, path, kind_override) if rows is not None else [got])

    paths = []
    for path, transport in DATA_PATHS:
        t = ["--transport", transport] if transport else []
        if transport == "tcp" and not _probe(s, exe, transport):
            continue
        paths.append((path, t))
        take(["--local", "-t", LATENCY_TESTS, "-S", lat] + n_lat(path) + t, f"{path} latency", "latency",
             s.lat_sizes[0], path)
        # perftest's ib_write_lat order: each Write signaled and reaped, so
        # the program polls its CQ and then waits on memory the provider fills.
        take(["--local", "-t", "write_lat", "--signaled", "-S", lat] + n_lat(path) + t, f"{path} signaled Write",
             "latency", s.lat_sizes[0], path)
        for size in s.bw_sizes:  # one run per size: iterations by the byte budget
            take(["--local", "-t", BANDWIDTH_TESTS, "-S", str(size), "-n", n_bw(path, size)] + t,
                 f"{path} bandwidth", "bandwidth", size, path)
    # The default path only: blocking mode, several QPs, message rate, registration, connections.
    take(["--local", "-b", "-t", "send_lat", "-S", lat, "-n", str(max(200, s.lat_iters // 4))], "blocking",
         "latency", s.lat_sizes[0])
    # The notify path's other design: the progress thread spins a while
    # before it sleeps (OPENND_SOFT_SPIN_US; off by default).
    take(["--local", "-b", "-t", "send_lat", "-S", lat, "-n", str(max(200, s.lat_iters // 4)), "--spin-us",
          str(SPIN_US)], "blocking, spin", "latency", s.lat_sizes[0])
    for size in s.bw_sizes:
        take(["--local", "-t", "write_bw,send_bw", "-S", str(size), "-q", str(MULTI_QPS), "-T", str(MULTI_THREADS),
              "-n", str(max(20, s.bw_iters(size) // MULTI_QPS))], "several QPs", "bandwidth", size)
    rate_iters = ["-n", "10000" if s.quick else "200000"]
    take(["--local", "-t", "send_bw,write_bw", "-S", "8"] + rate_iters, "message rate", "msgrate", 8,
         kind_override="msgrate")
    take(["--local", "-t", "send_bw,write_bw", "-S", "8", "-q", str(MULTI_QPS), "-T", f"1,{MULTI_THREADS}"]
         + rate_iters, "message rate", "msgrate", 8, kind_override="msgrate")
    take(["mr", "-S", ",".join(map(str, s.mr_sizes)), "-T", f"1,{MULTI_THREADS}", "-n", "200" if s.quick else "2000",
          "--max-seconds", "5"], "registration", "registration", s.mr_sizes[0])
    # Connection setup differs between shared memory and TCP (MPA), not between shm and copy.
    for path, t in paths:
        if path == "copy":
            continue
        for inflight in (1, 16):
            take(["connect-rate", "--local", "--connections", str(s.connections), "--inflight", str(inflight),
                  "--max-seconds", "10"] + t, "connect", "connect", 0, path)
    return out
