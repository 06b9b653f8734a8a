"""libfabric's one-sided rows: bin/fi_rma_bw from the build (bench/fabric,
built when libfabric-dev is installed), RMA Write and RMA Read bandwidth
over the tcp;ofi_rxm provider between two forked processes, at every
bandwidth size; and libfabric's 8 B Send message rate over shm and
tcp;ofi_rxm (--op send), next to ndperf's and UCX's. Debian 12 has no
fabtests, so this is our own tool.

fi_rma_bw --json prints one object: {"tool": "fi_rma_bw", "provider", "op",
"size", "iters", "window", "gbps" (overall), "gbps_median" (median over
windows: the figure), "mmsgps" (overall), "windows", "seconds", "mr_mode"}."""

import json

from .common import error_summary, record, run

OPS = ("write", "read")
RATE_PROVIDERS = (("shm", "shm"), ("tcp", "tcp;ofi_rxm"))  # (row name, libfabric provider)


def label_of(op):
    return f"libfabric tcp {op}"


def parse_fi_rma_bw(text):
    """fi_rma_bw's JSON object (the last line that is one), or None."""
    for line in reversed((text or "").splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict) and doc.get("tool") == "fi_rma_bw":
            return doc
    return None


def record_of(doc, command):
    """The record of one fi_rma_bw run: the median over windows, the overall rate beside it."""
    op = doc["op"]
    return record("libfabric", label_of(op), "tcp", f"fi_{op}", "bandwidth", doc["size"], doc["gbps_median"],
                  "median", command=command, overall=doc["gbps"], iterations=doc["iters"], window=doc["window"],
                  provider=doc.get("provider"))


def libfabric_msgrate(s, exe, size=8):
    """8 B Sends, 32 in flight, into posted receives: messages per second overall."""
    out = []
    for name, prov in RATE_PROVIDERS:
        label = f"libfabric {name} send"
        cmd = [exe, "--op", "send", "--provider", prov, "--size", str(size),
               "--iters", str(50000 if s.quick else 200000), "--timeout", str(s.run_timeout), "--json"]
        s.log("fi_rma_bw " + " ".join(cmd[1:]))
        rc, stdout, stderr = run(cmd, s.run_timeout + 10)
        doc = parse_fi_rma_bw(stdout) if rc == 0 else None
        if doc is None or "mmsgps" not in doc:
            why = error_summary(stderr, stdout) if rc is not None else stderr
            out.append(record("libfabric", label, name, "fi_send", "msgrate", size,
                              error=f"fi_rma_bw failed (exit {rc}): {why}", command=cmd))
            continue
        out.append(record("libfabric", label, name, "fi_send", "msgrate", size, doc["mmsgps"], "overall",
                          command=cmd, iterations=doc["iters"], window=doc["window"], provider=doc.get("provider")))
    return out


def libfabric_rma_runner(s):
    from .runners import find_tool  # runners imports this module
    exe = find_tool(s, "fi_rma_bw")
    if not exe:
        return [record("libfabric", label_of(op), "tcp", f"fi_{op}", "bandwidth", s.bw_sizes[0],
                       error="fi_rma_bw not found: install libfabric-dev, build it (cmake --build BUILD "
                             "--target fi_rma_bw) and pass --build BUILD") for op in OPS]
    out = []
    for op in OPS:
        for size in s.bw_sizes:
            iters = max(20, s.bw_iters(size) // (2 if s.quick else 1))
            cmd = [exe, "--op", op, "--size", str(size), "--iters", str(iters), "--timeout", str(s.run_timeout),
                   "--json"]
            s.log("fi_rma_bw " + " ".join(cmd[1:]))
            rc, stdout, stderr = run(cmd, s.run_timeout + 10)
            doc = parse_fi_rma_bw(stdout) if rc == 0 else None
            if doc is None:
                why = error_summary(stderr, stdout) if rc is not None else stderr
                out.append(record("libfabric", label_of(op), "tcp", f"fi_{op}", "bandwidth", size,
                                  error=f"fi_rma_bw failed (exit {rc}): {why}", command=cmd))
                break  # the larger sizes would fail the same way
            out.append(record_of(doc, cmd))
    return out + libfabric_msgrate(s, exe)
