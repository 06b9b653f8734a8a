"""The runners. Each is a function(settings) -> list of records (see
common.record); a runner never raises for a tool or transport that fails,
it returns a failed record saying why. To add rows, write one more
function and append it to RUNNERS."""

import json
import os
import re
import shutil

from .common import error_summary, free_port, pair_error, record, run, run_pair
from .fabric_rma import libfabric_rma_runner
from .opennd import ndperf_runner
from .latency_pairs import paired_latency_busy_runner, paired_latency_runner
from .mpi import mpi_runner
from .pairs import paired_cma_busy_runner, paired_cma_runner
from .ucx import UCX_MB, ucx_pair
from .verbs_vm import verbs_vm_runner


def find_tool(s, name):
    """The build's bin/<name> if present, else <name> on PATH, else None."""
    path = s.bin(name)
    if path and os.access(path, os.X_OK):
        return path
    return shutil.which(name)


def kind_of_test(name, unit=None):
    if unit:
        return "bandwidth" if unit == "GB/s" else "latency"
    return "bandwidth" if name.endswith("-bw") or "stream" in name else "latency"


def records_from_bench_json(doc, source, label_of, command):
    """Records from the JSON written by opennd_benchlib (ndbaseline, ndperf)."""
    out = []
    for r in doc.get("results", []):
        st = r["stats"]
        out.append(record(source, label_of(r), r["transport"], r["operation"], kind_of_test(r["name"], r["unit"]),
                          r["size"], st["median"], "median", command=command, name=r["name"], p99=st["p99"],
                          min=st["min"], spread=st["spread"], truncated=r.get("truncated") or None))
    for f in doc.get("failures", []):
        fake = {"name": f["name"], "transport": "?", "size": f["size"]}
        out.append(record(source, label_of(fake), "?", f["name"], kind_of_test(f["name"]), f["size"] or 8,
                          error=f["error"], command=command, name=f["name"]))
    return out


# --- ndbaseline: the raw limits of this machine ---------------------------

NDBASELINE_LABELS = {
    ("cacheline-pingpong", "shm"): "raw cache-line flag",
    ("shm-pingpong", "shm"): "raw shm memcpy",
    ("shm-copy-bw", "shm"): "raw shm memcpy",
    ("cma-write-bw", "cma"): "raw CMA write",
    ("cma-read-bw", "cma"): "raw CMA read",
    ("tcp-pingpong", "tcp4-busypoll"): "raw TCP busy-poll",
    ("tcp-pingpong", "tcp4-blocking"): "raw TCP blocking",
    ("tcp-stream", "tcp4"): "raw TCP blocking",
}
NDBASELINE_BY_NAME = {name: label for (name, _), label in NDBASELINE_LABELS.items()}


def ndbaseline_label(r):
    return NDBASELINE_LABELS.get((r["name"], r["transport"])) or NDBASELINE_BY_NAME.get(r["name"]) \
        or f"raw {r['name']} {r['transport']}"


def ndbaseline_runner(s):
    exe = find_tool(s, "ndbaseline")
    if not exe:
        return [record("ndbaseline", "raw (ndbaseline)", "-", "all", "latency", 8,
                       error="ndbaseline not found: build it (cmake --build BUILD --target ndbaseline) "
                             "and pass --build BUILD")]
    runs = [
        (["cacheline-pingpong", "shm-pingpong", "tcp-pingpong"], s.lat_sizes, []),
        (["tcp-pingpong"], s.lat_sizes, ["--blocking"]),
        (["shm-copy-bw", "cma-write-bw", "cma-read-bw", "tcp-stream"], s.bw_sizes, []),
    ]
    out = []
    for tests, sizes, extra in runs:
        cmd = [exe, "--json"] + (["--quick"] if s.quick else []) + ["--sizes", ",".join(map(str, sizes))]
        cmd += extra + tests
        s.log("ndbaseline " + " ".join(cmd[1:]))
        rc, stdout, stderr = run(cmd, s.run_timeout * 3)
        try:
            doc = json.loads(stdout)
        except ValueError:
            why = error_summary(stderr) if rc is not None else stderr
            out += [record("ndbaseline", NDBASELINE_BY_NAME.get(t, t), "-", t, kind_of_test(t), sizes[0],
                           error=f"ndbaseline failed (exit {rc}): {why}", command=cmd) for t in tests]
            continue
        out += records_from_bench_json(doc, "ndbaseline", ndbaseline_label, " ".join(cmd))
    return out


# --- HOOK: OpenND's own rows: comparelib/opennd.py (ndperf_runner) ------

# --- libfabric fi_pingpong -------------------------------------------------

FI_CONFIGS = [("shm", "rdm"), ("tcp", "msg"), ("tcp", "rdm")]
# bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec
FI_LINE = re.compile(r"^\s*\S+\s+\S+\s+=?\S+\s+\S+\s+[\d.]+s\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")


def parse_fi_pingpong(text):
    """usec/xfer (half a round trip, averaged over the run), or None."""
    for line in reversed(text.splitlines()):
        m = FI_LINE.match(line)
        if m:
            return float(m.group(2))
    return None


def libfabric_runner(s):
    exe = shutil.which("fi_pingpong")
    out = []
    for prov, ep in FI_CONFIGS:
        label = f"libfabric {prov} ({ep})"
        if not exe:
            out.append(record("libfabric", label, prov, "fi_pingpong", "latency", 8,
                              error="fi_pingpong not found (Debian package libfabric-bin)"))
            continue
        for size in s.lat_sizes:
            iters = s.lat_iters if size <= 64 * 1024 else max(100, s.lat_iters // 10)
            port = free_port()
            base = [exe, "-p", prov, "-e", ep, "-I", str(iters), "-S", str(size)]
            s.log(f"fi_pingpong -p {prov} -e {ep} -S {size}")
            rc, cout, sout = run_pair(base + ["-B", str(port)], base + ["-P", str(port), "127.0.0.1"], s.run_timeout)
            usec = parse_fi_pingpong(cout) if rc == 0 else None
            if usec is None:
                out.append(record("libfabric", label, prov, "fi_pingpong", "latency", size,
                                  error=pair_error(rc, cout, sout), command=base))
                break  # the larger sizes would fail the same way
            out.append(record("libfabric", label, prov, "fi_pingpong msg ping-pong", "latency", size, usec,
                              "mean", command=base, iterations=iters))
    return out


# --- UCX ucx_perftest ------------------------------------------------------

UCX_CONFIGS = [
    ("posix", {"UCX_TLS": "posix"}),
    # cma moves bulk data only; UCP needs an active-message transport too.
    ("cma+posix", {"UCX_TLS": "cma,posix"}),
    ("tcp", {"UCX_TLS": "tcp", "UCX_NET_DEVICES": "lo"}),
]
def ucx_tests(exe):
    """(test name, kind, row group); put/get names differ between versions."""
    rc, out, err = run([exe, "-h"], 10)
    names = set(re.findall(r"^\s+(\w+) - ", (out or "") + (err or ""), re.M))
    get = "ucp_get_bw" if "ucp_get_bw" in names else "ucp_get"
    return [("tag_lat", "latency", "tag"), ("tag_bw", "bandwidth", "tag"),
            ("ucp_put_bw", "bandwidth", "put"), (get, "bandwidth", "get")]


def ucx_runner(s):
    exe = shutil.which("ucx_perftest")
    if not exe:
        return [record("ucx", f"UCX {name} tag", name, "tag_lat", "latency", 8,
                       error="ucx_perftest not found (Debian package ucx-utils)") for name, _ in UCX_CONFIGS]
    out = []
    tests = ucx_tests(exe)
    for name, tls in UCX_CONFIGS:
        for test, kind, group in tests:
            label = f"UCX {name} {group}"
            for size in (s.lat_sizes if kind == "latency" else s.bw_sizes):
                if kind == "latency":
                    n = s.lat_iters if size <= 64 * 1024 else max(100, s.lat_iters // 10)
                else:
                    n = s.bw_iters(size)
                s.log(f"ucx_perftest {name} {test} {size}")
                row, why, command = ucx_pair(exe, test, size, n, tls, s.run_timeout)
                if row is None:
                    out.append(record("ucx", label, name, test, kind, size, error=why, command=command))
                    break  # the larger sizes would fail the same way
                if kind == "latency":
                    out.append(record("ucx", label, name, test, kind, size, row[1], "median", command=command,
                                      mean=row[3], iterations=int(row[0])))
                else:
                    out.append(record("ucx", label, name, test, kind, size, row[5] * UCX_MB / 1e9, "overall",
                                      command=command, iterations=int(row[0])))
        out += ucx_msgrate(s, exe, name, tls)
    return out


def ucx_msgrate(s, exe, name, tls, size=8):
    """tag_bw at 8 B: UCX's overall message rate, next to ndperf's."""
    if name != "posix":
        return []
    s.log(f"ucx_perftest {name} tag_bw {size} (message rate)")
    row, why, command = ucx_pair(exe, "tag_bw", size, 20000 if s.quick else 200000, tls, s.run_timeout)
    if row is None:
        return [record("ucx", f"UCX {name} tag", name, "tag_bw", "msgrate", size, error=why, command=command)]
    return [record("ucx", f"UCX {name} tag", name, "tag_bw", "msgrate", size, row[7] / 1e6, "overall",
                   command=command, iterations=int(row[0]))]


def netns_runner(s):
    """Between two network namespaces (comparelib/netns.py)."""
    from .netns import netns_runner as between_namespaces  # it imports this module
    return between_namespaces(s)


RUNNERS = [ndbaseline_runner, ndperf_runner, libfabric_runner, ucx_runner, mpi_runner, netns_runner, libfabric_rma_runner,
           paired_cma_runner, paired_latency_runner, paired_cma_busy_runner, paired_latency_busy_runner,
           verbs_vm_runner]
