"""The tables bench/compare prints, and writes as Markdown (table.md, which
bench/update-readme puts into README.md): latency and bandwidth by message
size with ratios to the raw shared-memory limit, then message rate, memory
registration and connection setup. A section is (title, header, rows,
footnote); rows are lists of strings, '-' not measured, 'FAIL' failed."""

import re

from .common import fmt_size

REFERENCE = "raw shm memcpy"  # the ratios' denominator: a two-copy shared-memory transport
# One-sided rows are also set against the kernel copy they are made of.
CMA_REFERENCE = {"write": "raw CMA write", "read": "raw CMA read"}


def _cma_reference(label):
    """'raw CMA write' for an OpenND shared-memory write row, and so on; None otherwise."""
    m = re.match(r"OpenND (write|read) \(shm", label)
    return CMA_REFERENCE[m.group(1)] if m else None


def fmt(v):
    if v is None:
        return "-"
    a = abs(v)
    return f"{v:.0f}" if a >= 1000 else f"{v:.1f}" if a >= 100 else f"{v:.2f}" if a >= 10 else \
        f"{v:.3f}" if a >= 0.01 else f"{v:.2g}"


def _values(records, kind):
    """{(label, size): value} of the ok records of one kind, and the failed keys."""
    ok, failed = {}, {}
    for r in records:
        if r["kind"] != kind:
            continue
        if r["status"] == "ok":
            ok[(r["label"], r["size"])] = r
        else:
            failed[r["label"]] = min(r["size"], failed.get(r["label"], r["size"]))
    return ok, failed


def _labels(records, kinds):
    return list(dict.fromkeys(r["label"] for r in records if r["kind"] in kinds))


def ratio_size(bw_sizes):
    return 1024 * 1024 if 1024 * 1024 in bw_sizes else bw_sizes[len(bw_sizes) // 2]


def main_section(records, lat_sizes, bw_sizes):
    lat, lat_failed = _values(records, "latency")
    bw, bw_failed = _values(records, "bandwidth")
    rs = ratio_size(bw_sizes)
    header = [""] + [f"lat {fmt_size(s)}" for s in lat_sizes] + [f"bw {fmt_size(s)}" for s in bw_sizes] + \
        [f"lat {fmt_size(lat_sizes[0])} ×raw", f"bw {fmt_size(rs)} ×raw", f"bw {fmt_size(rs)} ×CMA"]
    ref_lat, ref_bw = lat.get((REFERENCE, lat_sizes[0])), bw.get((REFERENCE, rs))
    rows = []
    for label in _labels(records, ("latency", "bandwidth")):
        def cell(values, failed, size):
            r = values.get((label, size))
            if r:
                return fmt(r["value"])
            return "FAIL" if label in failed and size >= failed[label] else "-"
        row = [cell(lat, lat_failed, s) for s in lat_sizes] + [cell(bw, bw_failed, s) for s in bw_sizes]
        if all(c == "-" for c in row):
            continue
        a, b = lat.get((label, lat_sizes[0])), bw.get((label, rs))
        row.append(fmt(a["value"] / ref_lat["value"]) if a and ref_lat and label != REFERENCE else "-")
        row.append(fmt(b["value"] / ref_bw["value"]) if b and ref_bw and label != REFERENCE else "-")
        cma = bw.get((_cma_reference(label), rs))
        row.append(fmt(b["value"] / cma["value"]) if b and cma else "-")
        rows.append([label] + row)
    note = ("latency: µs, half a round trip, median (libfabric: mean, fi_pingpong reports no median; OpenND read: "
            "one RDMA Read, a full round trip); bandwidth: GB/s = 1e9 B/s (ndbaseline, Open MPI and ndperf on one "
            "connection: median of samples; ndperf on several connections and UCX: overall rate; every side cycles through "
            f"1 MiB of buffer or one message); ×raw: the row's figure over {REFERENCE}'s (latency: higher is slower; "
            "bandwidth: lower is slower); ×CMA: OpenND's shared-memory Write (Read) over raw CMA write (read), "
            "the kernel copy it is made of")
    return ("Latency and bandwidth", header, rows, note)


def rate_section(records):
    vals, failed = _values(records, "msgrate")
    sizes = sorted({size for _, size in vals})
    header = [""] + [f"{fmt_size(s)} Mmsg/s" for s in sizes]
    rows = [[label] + [fmt(vals[(label, s)]["value"]) if (label, s) in vals else
                       ("FAIL" if label in failed else "-") for s in sizes]
            for label in _labels(records, ("msgrate",))]
    return ("Message rate", header, rows,
            "million messages per second with 32 requests in flight per connection (UCX: tag_bw; libfabric: "
            "fi_send into posted receives, bench/fabric/fi_rma_bw --op send; Open MPI: MPI_Isend into posted "
            "MPI_Irecv, bench/mpi/mpi_bench.c)")


def mr_section(records):
    vals, failed = _values(records, "registration")
    sizes = sorted({size for _, size in vals}) or sorted(set(failed.values()))
    if not sizes:
        return ("Memory registration", [""], [], "")
    rate_sizes = sorted({sizes[0], sizes[-1]})
    header = [""] + [f"Register {fmt_size(s)} µs" for s in sizes] + [f"Deregister {fmt_size(sizes[0])} µs"] + \
        [f"pairs/s {fmt_size(s)}" for s in rate_sizes]
    rows = []
    for label in _labels(records, ("registration",)):
        def cell(size, key=None):
            r = vals.get((label, size))
            if not r:
                return "FAIL" if label in failed and size >= failed[label] else "-"
            return fmt(r["value"] if key is None else r.get(key))
        rows.append([label] + [cell(s) for s in sizes] + [cell(sizes[0], "dereg_median")] +
                    [cell(s, "rate_per_s") for s in rate_sizes])
    return ("Memory registration", header, rows,
            "median latency of Register and of Deregister of one buffer, repeated; pairs/s: Register+Deregister "
            "per second over all threads")


def connect_section(records):
    rows = []
    for r in records:
        if r["kind"] != "connect":
            continue
        if r["status"] == "ok":
            rows.append([r["label"], fmt(r["value"]), fmt(r.get("median_us")), fmt(r.get("p99_us"))])
        else:
            rows.append([r["label"], "FAIL", "-", "-"])
    return ("Connection setup", ["", "connections/s", "setup median µs", "setup p99 µs"], rows,
            "each connection: CreateQueuePair, CreateConnector, Connect, CompleteConnect, Disconnect, Release; "
            "setup: Connect to CompleteConnect done")


def _ahead(r):
    """'18/21 UCX, 19/21 Open MPI': the rounds a paired OpenND row beat each library, or '-'."""
    got = ", ".join(f"{r['ahead_of_' + k]}/{r['paired_with_' + k]} {name}"
                    for k, name in (("ucx", "UCX"), ("mpi", "Open MPI")) if "ahead_of_" + k in r)
    return got or "-"


def paired_section(records):
    rows = []
    for r in records:
        if r["kind"] != "ratio":
            continue
        if r["status"] != "ok":
            rows.append([r["label"], "FAIL", "-", "-", "-", "-", "-"])
            continue
        rows.append([r["label"], fmt(r["value"]), f"{fmt(r['low'])}-{fmt(r['high'])}", str(r["rounds"]),
                     fmt(r.get("gbps")), fmt(r.get("cma_gbps")), _ahead(r)])
    return ("Against raw CMA, paired rounds",
            ["", "×CMA median", "range", "rounds", "GB/s", "raw CMA GB/s", "rounds ahead"], rows,
            "Write and Read at 4 KiB, 64 KiB and 1 MiB, the rest at 1 MiB; each round runs ndbaseline's raw "
            "process_vm_writev/readv (one call per message, one buffer), ndperf's write_bw/read_bw/send_bw (32 in "
            "flight, cycling through one message's worth of buffer as the raw copy does), "
            "ucx_perftest tag_bw (UCX_TLS=cma,posix) and Open MPI's MPI_Isend/MPI_Irecv (vader) back to back; "
            "Write is set against raw CMA write, the others against raw CMA read (a Send's receiver pulls); ×CMA: "
            "the median of the rounds' ratios of throughputs (bytes over the time they took; the figures: medians "
            "of each side); rounds ahead: OpenND's Send faster than that library in the same round")


def _paired_rows(records, kind, extra):
    """Rows of one kind of paired record: label, median, range, rounds, then
    extra(r)'s cells, ÷UCX with its range and the rounds ahead."""
    rows = []
    for r in records:
        if r["kind"] != kind:
            continue
        if r["status"] != "ok":
            rows.append([r["label"], "FAIL", "-", "-"] + ["-"] * (len(extra(r)) + 2))
            continue
        ratio = "-"
        if "ratio_to_ucx" in r:
            ratio = f"{fmt(r['ratio_to_ucx'])} ({fmt(r['ratio_low'])}-{fmt(r['ratio_high'])})"
        rows.append([r["label"], fmt(r["value"]), f"{fmt(r['low'])}-{fmt(r['high'])}", str(r["rounds"])] +
                    extra(r) + [ratio, _ahead(r)])
    return rows


def paired_latency_section(records):
    rows = _paired_rows(records, "paired_latency", lambda r: [fmt(r.get("above_cacheline"))])
    return ("8 B ping-pong, paired rounds",
            ["", "median µs", "range", "rounds", "above cache line µs", "÷UCX (range)", "rounds ahead"], rows,
            "half a round trip; each round runs ndbaseline's cache-line ping-pong, ndperf send_lat (shm; also with "
            "--recv-first, perftest's order of posting), ucx_perftest tag_lat (UCX_TLS=posix) and an MPI_Send/"
            "MPI_Recv ping-pong on Open MPI's shared memory (pml ob1, btl vader) back to back, so all share the "
            "round's core placement; above cache line and ÷UCX: medians of the per-round differences and ratios")


def paired_onesided_section(records):
    def times(r, name):
        if name not in r:
            return "-"
        return f"{fmt(r[name])} ({fmt(r[name + '_low'])}-{fmt(r[name + '_high'])})"

    rows = []
    for r in records:
        if r["kind"] != "paired_onesided":
            continue
        if r["status"] != "ok":
            rows.append([r["label"], "FAIL", "-", "-", "-", "-"])
            continue
        rows.append([r["label"], fmt(r["value"]), f"{fmt(r['low'])}-{fmt(r['high'])}", str(r["rounds"]),
                     times(r, "over_floor"), times(r, "over_send")])
    return ("8 B RDMA Write and Read, paired rounds",
            ["", "median µs", "range", "rounds", "×one-call floor (range)", "×OpenND send (range)"], rows,
            "in the 8 B ping-pong rounds above: ndperf write_lat (half a round trip, silent Writes, each side "
            "spinning on its memory) and read_lat (one Read, polled), and the floor one system call sets: "
            "ndbaseline's cma-write-pingpong (process_vm_writev each way) and cma-read-lat (one process_vm_readv); "
            "×: medians of the per-round ratios (×OpenND send: to ndperf send_lat in the same round)")


def paired_rate_section(records):
    rows = _paired_rows(records, "paired_rate", lambda r: [])
    return ("8 B message rate, paired rounds",
            ["", "median Mmsg/s", "range", "rounds", "÷UCX (range)", "rounds ahead"], rows,
            "one connection, 32 in flight; in the 8 B ping-pong rounds above: ndperf send_bw, ucx_perftest tag_bw "
            "(UCX_TLS=posix) and Open MPI's MPI_Isend/MPI_Irecv (vader); ÷UCX: the median of the per-round ratios "
            "(higher is faster)")


def verbs_section(records):
    rows = []
    for r in records:
        if r["kind"] != "verbs_paired":
            continue
        if r["status"] != "ok":
            rows.append([r["label"], "FAIL", "-", "-", "-", "-", "-"])
            continue
        rows.append([r["label"], fmt(r["value"]), f"{fmt(r['low'])}-{fmt(r['high'])}", str(r["rounds"]),
                     fmt(r["nd"]), fmt(r["perftest"]), r["figure_unit"]])
    return ("ndverbs against perftest on one device in a VM, paired rounds",
            ["", "×perftest median", "range", "rounds", "ndverbs", "perftest", "unit"], rows,
            "ndperf over ndverbs and perftest (rdma_cm) on rxe0 and siw0 in the rdma-vm VM (emulated: figures are "
            "far below a host's), both back to back in each round; ×perftest: the median of the per-round ratios, "
            "higher is better (perftest's latency over ours, our bandwidth over perftest's); latency at 8 B "
            "(Send, Write: half a round trip, Read: a whole one), bandwidth at 64 KiB with 32 in flight")


def sections(records, lat_sizes, bw_sizes):
    out = [main_section(records, lat_sizes, bw_sizes), paired_latency_section(records),
           paired_rate_section(records), paired_onesided_section(records), paired_section(records),
           rate_section(records),
           mr_section(records), connect_section(records), verbs_section(records)]
    return [s for s in out if s[2]]


def failures(records):
    return [f"{r['label']} / {r['operation']} at {fmt_size(r['size'])}: {r['error']}"
            for r in records if r["status"] != "ok"]


def text(records, lat_sizes, bw_sizes, notes=()):
    lines = []
    for title, header, rows, note in sections(records, lat_sizes, bw_sizes):
        width = [max(len(str(row[i])) for row in [header] + rows) for i in range(len(header))]
        lines += ["", f"{title} ({note})" if len(note) < 60 else title]
        for row in [header] + rows:
            lines.append(f"{row[0]:{width[0]}}  " + " ".join(f"{c:>{max(width[i + 1], 9)}}"
                                                             for i, c in enumerate(row[1:])))
        if len(note) >= 60:
            lines.append(f"({note})")
    fails = failures(records)
    if fails:
        lines += ["", "failures:"] + [f"  {f}" for f in fails]
    if notes:
        lines += ["", "notes:"] + [f"  {n}" for n in notes]
    return "\n".join(lines).lstrip("\n")


def _version(text):
    m = re.search(r"\d+\.\d+(\.\d+)?", text or "")
    return m.group(0) if m else "-"


def markdown(doc):
    """table.md: a heading line saying where and when, then each section."""
    m, tools = doc.get("machine", {}), doc.get("tools", {})
    lines = [f"`bench/compare{' --quick' if doc.get('quick') else ''}` on {m.get('cpu_model') or '?'}, "
             f"{m.get('cpus', '?')} CPUs, Linux {m.get('kernel', '?')}, {doc.get('generated', '?')[:10]} "
             f"(load average at the start {m.get('loadavg_start', 0):.2f}; TCP congestion control "
             f"{m.get('tcp_congestion_control', '?')}; libfabric {_version(tools.get('libfabric'))}, "
             f"UCX {_version(tools.get('ucx'))}); one run, so compare rows of the same run."]
    # The charts of the run, where bench/update-readme puts them (docs/bench/).
    charts = doc.get("charts") or []
    if charts:
        lines += [""] + [f"![{c[len('chart-'):-len('.png')]}](docs/bench/{c})" for c in charts]
    for title, header, rows, note in sections(doc["records"], doc["lat_sizes"], doc["bw_sizes"]):
        lines += ["", f"**{title}** ({note})", "", "| " + " | ".join(header) + " |",
                  "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
    fails = failures(doc["records"])
    notes = doc.get("notes") or []
    if fails or notes:
        lines += [""] + [f"- failed: {f[:200]}" for f in fails] + [f"- {n[:200]}" for n in notes]
    return "\n".join(lines) + "\n"
