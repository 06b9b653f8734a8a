"""Running ucx_perftest: a server and a client on this host, and the final
row it prints. Used by the UCX rows (runners.py) and the paired rounds."""

import os

from .common import free_port, pair_error, run_pair

UCX_MB = 1024 * 1024  # ucx_perftest's MB/s are MiB/s


def parse_ucx(text):
    """The final row: iterations, p50 latency, avg, overall, bw avg, bw
    overall (MiB/s), rate avg, rate overall. None if absent."""
    for line in reversed(text.splitlines()):
        tokens = line.replace("Final:", " ").split()
        if len(tokens) == 8:
            try:
                return [float(t) for t in tokens]
            except ValueError:
                continue
    return None


def ucx_pair(exe, test, size, iters, tls, timeout):
    """ucx_perftest -t test -s size -n iters (a tenth of them warm-up) with
    the environment `tls` (e.g. {"UCX_TLS": "posix"}). Returns (final row
    or None, why it failed or None, the command as text)."""
    args = ["-t", test, "-s", str(size), "-n", str(iters), "-w", str(max(iters // 10, 2)), "-f"]
    env = dict(os.environ, UCX_WARN_UNUSED_ENV_VARS="n", **tls)
    port = str(free_port())
    rc, cout, sout = run_pair([exe, "-p", port] + args, [exe, "127.0.0.1", "-p", port] + args, timeout, env=env)
    row = parse_ucx(cout) if rc == 0 else None
    command = " ".join(f"{k}={v}" for k, v in tls.items()) + " " + " ".join(["ucx_perftest"] + args)
    return row, None if row else pair_error(rc, cout, sout), command
