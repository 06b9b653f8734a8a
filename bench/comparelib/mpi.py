"""Open MPI's own shared-memory transport (pml ob1, btl vader): latency
and bandwidth rows from bench/mpi/mpi_bench.c (what osu_latency and osu_bw
measure; Debian does not package them), built with mpicc for the run and
started with mpirun, two ranks, not pinned (like the other tools here)."""

import json
import os
import shutil
import subprocess
import tempfile

from .common import error_summary, record, run

LABEL = "Open MPI sm (vader)"
SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "mpi", "mpi_bench.c")
# mpirun refuses root without these; the benchmark runs as whoever runs compare.
ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
WINDOW = 32  # requests in flight, as ndperf's and ucx_perftest's bandwidth tests


def build(workdir):
    """mpi_bench built with mpicc into workdir: (path, None) or (None, why not)."""
    mpicc, mpirun = shutil.which("mpicc"), shutil.which("mpirun")
    if not mpicc or not mpirun:
        return None, "mpicc or mpirun not found (Debian packages libopenmpi-dev, openmpi-bin)"
    exe = os.path.join(workdir, "mpi_bench")
    p = subprocess.run([mpicc, "-O2", "-o", exe, SOURCE], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return None, f"mpicc failed ({error_summary(p.stderr or p.stdout)})"
    return exe, None


def command(exe, test, size, iters, extra=None):
    return ["mpirun", "-np", "2", "--bind-to", "none", "--mca", "pml", "ob1", "--mca", "btl", "self,vader",
            exe, test, str(size), str(iters)] + ([str(extra)] if extra is not None else [])


def measure(exe, test, size, iters, timeout, extra=None):
    """The JSON line mpi_bench printed; RuntimeError saying why if none."""
    rc, out, err = run(command(exe, test, size, iters, extra), timeout, env=dict(os.environ, **ENV))
    lines = (out or "").strip().splitlines()
    if rc != 0 or not lines:
        raise RuntimeError(f"mpirun failed (exit {rc}: {error_summary(err or out)})")
    return json.loads(lines[-1])


def mpi_runner(s):
    with tempfile.TemporaryDirectory() as work:
        exe, why = build(work)
        if why:
            return [record("mpi", LABEL, "vader", "MPI_Send/MPI_Recv ping-pong", "latency", 8, error=why)]
        out = []
        for kind, sizes in (("latency", s.lat_sizes), ("bandwidth", s.bw_sizes), ("msgrate", [8])):
            for size in sizes:
                if kind == "latency":
                    test, n, extra, op = "lat", s.lat_iters if size <= 64 * 1024 else max(100, s.lat_iters // 10), \
                        None, "MPI_Send/MPI_Recv ping-pong"
                else:
                    test, n, extra, op = "bw", s.bw_iters(size) if kind == "bandwidth" else \
                        (20000 if s.quick else 200000), WINDOW, f"MPI_Isend/MPI_Irecv, {WINDOW} in flight"
                cmd = command(exe, test, size, n, extra)
                s.log(f"mpi_bench {test} {size}" + (" (message rate)" if kind == "msgrate" else ""))
                try:
                    doc = measure(exe, test, size, n, s.run_timeout, extra)
                except (RuntimeError, ValueError) as e:
                    out.append(record("mpi", LABEL, "vader", op, kind, size, error=str(e), command=cmd))
                    break  # the larger sizes would fail the same way
                if kind == "latency":
                    out.append(record("mpi", LABEL, "vader", op, kind, size, doc["median_us"], "median",
                                      command=cmd, p99=doc["p99_us"], min=doc["min_us"], iterations=n))
                elif kind == "bandwidth":
                    out.append(record("mpi", LABEL, "vader", op, kind, size, doc["gbps_median"], "median",
                                      command=cmd, overall=doc["gbps"], iterations=n))
                else:
                    out.append(record("mpi", LABEL, "vader", op, kind, size, doc["mmsgps"], "overall", command=cmd,
                                      iterations=n))
    return out
