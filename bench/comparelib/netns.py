"""Between two hosts: two network namespaces joined by a veth pair, so the
traffic crosses a real (virtual) link instead of loopback. OpenND's ndperf
(the software provider picks iWARP over TCP by itself: the peer is not on
this host) and UCX's tcp transport, server in one namespace and client in
the other, IPv4. Needs root and iproute2; without them the rows are left
out and a note says why."""

import json
import os
import shutil
import subprocess

from .common import error_summary, record, run_pair
from .opennd import BANDWIDTH_TESTS, LATENCY_TESTS, ndperf_records
from .runners import ucx_tests
from .ucx import UCX_MB, parse_ucx

NS = ("ondb-a", "ondb-b")
VETH = ("ondb-va", "ondb-vb")
ADDR = ("10.81.0.1", "10.81.0.2")
_ports = iter(range(18515, 19515))  # a fresh port per run: the last server may not be gone yet
WHERE = "2 namespaces"


def _ip(*args):
    return subprocess.run(["ip"] + list(args), capture_output=True, text=True, timeout=20)


def _teardown():
    for ns in NS:
        _ip("netns", "del", ns)


def _setup():
    """Creates the namespaces and the link; None, or why it failed."""
    _teardown()
    steps = [("netns", "add", NS[0]), ("netns", "add", NS[1]),
             ("link", "add", VETH[0], "netns", NS[0], "type", "veth", "peer", "name", VETH[1], "netns", NS[1])]
    for ns, dev, addr in zip(NS, VETH, ADDR):
        steps += [("-n", ns, "link", "set", "lo", "up"), ("-n", ns, "addr", "add", addr + "/24", "dev", dev),
                  ("-n", ns, "link", "set", dev, "up")]
    for step in steps:
        r = _ip(*step)
        if r.returncode != 0:
            return "ip " + " ".join(step) + ": " + (r.stderr.strip() or f"exit {r.returncode}")
    return None


def _in(ns, cmd):
    return ["ip", "netns", "exec", ns] + cmd


def _ndperf(s, exe, args, what, kind, size):
    port = str(next(_ports))
    server = _in(NS[1], [exe, "-s", "-a", ADDR[1], "-p", port])
    client = _in(NS[0], [exe, "-c", ADDR[1], "-p", port, "--json", "--no-progress"] + args)
    s.log("ndperf (" + WHERE + ") " + " ".join(args))
    rc, cout, sout = run_pair(server, client, s.run_timeout * 2)
    start = (cout or "").find("[")
    try:
        rows = json.loads(cout[start:]) if rc == 0 and start >= 0 else None
    except ValueError:
        rows = None
    if not isinstance(rows, list):
        return [record("ndperf", f"OpenND {what} (tcp, {WHERE})", "tcp", what, kind, size,
                       error=f"ndperf failed (exit {rc}): {error_summary(cout, sout)}", command=client)]
    return ndperf_records(rows, client, f"tcp, {WHERE}")


def _ucx(s, exe):
    out = []
    for test, kind, group in ucx_tests(exe):
        if group not in ("tag",):
            continue
        for size in (s.lat_sizes if kind == "latency" else s.bw_sizes):
            n = s.lat_iters if kind == "latency" else s.bw_iters(size)
            args = ["-t", test, "-s", str(size), "-n", str(n), "-w", str(max(n // 10, 2)), "-f"]
            env = dict(os.environ, UCX_WARN_UNUSED_ENV_VARS="n", UCX_TLS="tcp")
            port = str(next(_ports))
            server = _in(NS[1], ["env", f"UCX_NET_DEVICES={VETH[1]}", exe, "-p", port] + args)
            client = _in(NS[0], ["env", f"UCX_NET_DEVICES={VETH[0]}", exe, ADDR[1], "-p", port] + args)
            s.log(f"ucx_perftest ({WHERE}) {test} {size}")
            rc, cout, sout = run_pair(server, client, s.run_timeout, env=env)
            row = parse_ucx(cout) if rc == 0 else None
            label = f"UCX tcp tag ({WHERE})"
            command = "UCX_TLS=tcp " + " ".join(["ucx_perftest"] + args)
            if row is None:
                out.append(record("ucx", label, "tcp", test, kind, size,
                                  error=f"exit {rc}: {error_summary(cout, sout)}", command=command))
                break
            if kind == "latency":
                out.append(record("ucx", label, "tcp", test, kind, size, row[1], "median", command=command))
            else:
                out.append(record("ucx", label, "tcp", test, kind, size, row[5] * UCX_MB / 1e9, "overall",
                                  command=command))
    return out


def netns_runner(s):
    exe = s.bin("ndperf")
    if os.geteuid() != 0 or not shutil.which("ip"):
        s.notes.append(f"rows between {WHERE} left out: they need root and iproute2")
        return []
    why = _setup()
    if why:
        _teardown()
        s.notes.append(f"rows between {WHERE} left out: {why}")
        return []
    out = []
    try:
        if exe and os.access(exe, os.X_OK):
            lat = ",".join(map(str, s.lat_sizes))
            out += _ndperf(s, exe, ["-t", LATENCY_TESTS, "-S", lat] + (["-n", str(s.lat_iters)] if s.quick else []),
                           "latency", "latency", s.lat_sizes[0])
            for size in s.bw_sizes:
                n = str(max(20, s.bw_iters(size) // (8 if s.quick else 4)))
                out += _ndperf(s, exe, ["-t", BANDWIDTH_TESTS, "-S", str(size), "-n", n], "bandwidth", "bandwidth",
                               size)
        ucx = shutil.which("ucx_perftest")
        if ucx:
            out += _ucx(s, ucx)
    finally:
        _teardown()
    return out
