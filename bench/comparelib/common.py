"""Records, run settings and process helpers shared by the runners.

A record is one figure (or one failure) as a plain dict, the unit of
results.json:

  source     "ndbaseline", "libfabric", "ucx", "ndperf", ...
  label      the row in the table and the line in the chart, e.g. "UCX posix tag"
  transport  what carried the bytes, e.g. "shm", "tcp4-busypoll", "posix"
  operation  what one operation is, e.g. "tag_lat", "half round trip"
  kind       "latency" (us, lower is better), "bandwidth" (GB/s = 1e9 B/s),
             "msgrate" (million messages/s), "registration" (us, Register
             median; dereg_median, rate_per_s beside it) or "connect"
             (connections set up and torn down per second; median_us beside),
             "ratio" (paired rounds against raw CMA) or "paired_latency" (us,
             8 B rounds with UCX and the cache line; latency_pairs.py) or
             "paired_rate" (Mmsg/s, the message rate in the same rounds)
  size       message size in bytes
  value      the figure; `statistic` says which ("median", "mean", "overall")
  p99, min, spread   when the tool reports them
  status     "ok" or "failed"; error: why (failed records have no value)
  command    what was run
"""

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time

KIB = 1024
MIB = 1024 * 1024
UNITS = {"latency": "us", "bandwidth": "GB/s", "msgrate": "Mmsg/s", "registration": "us", "connect": "conn/s",
         "ratio": "x", "paired_latency": "us", "paired_onesided": "us",
         "paired_rate": "Mmsg/s", "verbs_paired": "x"}


def record(source, label, transport, operation, kind, size, value=None, statistic="median",
           error=None, command=None, **extra):
    r = {
        "source": source, "label": label, "transport": transport, "operation": operation,
        "kind": kind, "size": int(size), "unit": UNITS[kind],
        "status": "failed" if error else "ok",
    }
    if error:
        r["error"] = error
    else:
        r["value"] = float(value)
        r["statistic"] = statistic
    if command:
        r["command"] = command if isinstance(command, str) else " ".join(command)
    r.update({k: v for k, v in extra.items() if v is not None})
    return r


class Settings:
    """What one compare run measures: sizes, iteration budgets, time limits."""

    def __init__(self, quick, build_dir, log):
        self.quick = quick
        self.build_dir = build_dir
        self.log = log
        self.notes = []  # said in results.json and under the table (e.g. rows left out)
        if quick:
            self.lat_sizes = [8, 4 * KIB, 64 * KIB]
            self.bw_sizes = [64 * KIB, 1 * MIB, 4 * MIB]
            self.lat_iters = 2000
            self.bw_budget = 256 * MIB
            self.run_timeout = 30
            self.mr_sizes = [4 * KIB, 1 * MIB, 64 * MIB]
            self.connections = 500
        else:
            self.lat_sizes = [8, 64, 512, 4 * KIB, 64 * KIB, 1 * MIB]
            self.bw_sizes = [4 * KIB, 64 * KIB, 1 * MIB, 4 * MIB, 32 * MIB]
            self.lat_iters = 20000
            self.bw_budget = 1024 * MIB
            self.run_timeout = 120
            self.mr_sizes = [4 * KIB, 64 * KIB, 1 * MIB, 16 * MIB, 64 * MIB]
            self.connections = 5000

    def bw_iters(self, size, lo=20, hi=100000):
        return max(lo, min(hi, self.bw_budget // size))

    def bin(self, name):
        return os.path.join(self.build_dir, "bin", name) if self.build_dir else None


def fmt_size(n):
    for unit, div in (("MiB", MIB), ("KiB", KIB)):
        if n >= div and n % div == 0:
            return f"{n // div} {unit}"
    return f"{n} B"


def free_port():
    """A TCP port that was free a moment ago (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kill_group(p):
    """Kills the process group we started for p (by its id) and reaps p."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        out, _ = p.communicate(timeout=5)
    except (subprocess.TimeoutExpired, ValueError):
        out = ""
    return out or ""


def run(cmd, timeout, env=None):
    """Runs cmd to completion (or kills it after timeout).
    Returns (returncode or None on timeout, stdout, stderr)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        _kill_group(p)
        return None, "", f"timed out after {timeout} s"


def run_pair(server_cmd, client_cmd, timeout, env=None, retries=3):
    """Starts server_cmd in the background, then client_cmd (retried while
    the server is not listening yet). Both are bounded by timeout and
    reaped. Returns (client_rc or None, client_output, server_output)."""
    server = subprocess.Popen(server_cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env, start_new_session=True)
    try:
        time.sleep(0.3)
        rc, out = None, ""
        for attempt in range(retries):
            if server.poll() is not None:
                break
            client = subprocess.Popen(client_cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      env=env, start_new_session=True)
            try:
                out, _ = client.communicate(timeout=timeout)
                rc = client.returncode
            except subprocess.TimeoutExpired:
                out = _kill_group(client) + f"\n(client timed out after {timeout} s)"
                rc = None
                break
            refused = "refused" in out.lower() or "failed to connect" in out.lower()
            if rc == 0 or not refused:
                break
            time.sleep(0.5 * (attempt + 1))
        try:
            server_out, _ = server.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            server_out = _kill_group(server) + "\n(server killed: it did not exit after the client)"
        return rc, out, server_out or ""
    finally:
        if server.poll() is None:
            _kill_group(server)


def pair_error(rc, client_out, server_out):
    """Why a client/server run failed, from both sides' output."""
    why = f"exit {rc}: client: {error_summary(client_out, limit=200)}"
    server = error_summary(server_out, limit=200)
    if server != "no output":
        why += f"; server: {server}"
    return why


def error_summary(*texts, limit=300):
    """The most telling line of tool output: the first line mentioning an
    error (usually the cause), else the last non-empty line."""
    lines = [re.sub(r"^\[[\d.]+\]\s+\[[^\]]*\]\s+", "", l.strip())  # UCX's "[time] [host:pid:thread]"
             for t in texts for l in (t or "").splitlines() if l.strip()]
    bad = [l for l in lines if any(w in l.lower() for w in ("error", "fail", "unreachable", "refused",
                                                             "timed out", "not found", "denied"))]
    pick = bad[0] if bad else (lines or ["no output"])[-1]
    return " ".join(pick.split())[:limit]


BUSY = ", busy core"  # label suffix of figures measured next to busy_core()


@contextlib.contextmanager
def busy_core(on=True):
    """While the block runs, another process spins on one core (the last
    this process may use), as other work on a user's machine does: the
    paired rounds' contended mode. Yields the core, or None when off."""
    if not on:
        yield None
        return
    core = max(os.sched_getaffinity(0))
    spin = subprocess.Popen([sys.executable, "-c",
                             f"import os\nos.sched_setaffinity(0, {{{core}}})\nwhile True:\n    pass\n"])
    try:
        yield core
    finally:
        spin.kill()
        spin.wait()
