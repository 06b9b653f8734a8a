"""What bench/compare leaves behind besides the tables (tables.py):
results.json and the charts (chart-*.png: one per question, a few lines
each)."""

import glob
import importlib.util
import json
import os
import subprocess
import sys

from .common import fmt_size


def write_json(path, doc):
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)


def draw_charts(results_path, out_dir):
    """Draws the charts (CHARTS, BARS) into out_dir as chart-NAME.png, in
    this interpreter if it has matplotlib, else with the system python3
    (Debian's python3-matplotlib lives there). Returns (paths written, None)
    or ([], why not)."""
    if importlib.util.find_spec("matplotlib"):
        return _draw(results_path, out_dir), None
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compare")
    for python in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.path.realpath(python) == os.path.realpath(sys.executable) or not os.access(python, os.X_OK):
            continue
        p = subprocess.run([python, script, "--chart-only", results_path, out_dir],
                           capture_output=True, text=True, timeout=120)
        if p.returncode == 0:
            return [line for line in p.stdout.splitlines() if line.endswith(".png")], None
        last = (p.stderr or p.stdout).strip().splitlines()
        return [], f"{python}: {last[-1] if last else 'failed'}"
    return [], "matplotlib is not installed (apt-get install python3-matplotlib)"


# One chart per question, each with a few lines: OpenND's own (bold), the
# libraries people would use instead, and ndbaseline's raw loop of the same
# machine (grey, dotted). A series a run did not measure is left out.
CHARTS = [
    ("shm-latency", "latency", "One host, shared memory: latency by size (lower is better)",
     "half round trip (us)",
     ["OpenND send (shm)", "UCX posix tag", "Open MPI sm (vader)", "libfabric shm (rdm)"], "raw shm memcpy"),
    ("shm-bandwidth", "bandwidth", "One host, shared memory: bandwidth by size (higher is better)",
     "GB/s, one connection",
     ["OpenND send (shm)", "OpenND write (shm)", "UCX cma+posix tag", "Open MPI sm (vader)"], "raw CMA write"),
    ("tcp-latency", "latency", "TCP on loopback: latency by size (lower is better)", "half round trip (us)",
     ["OpenND send (tcp)", "UCX tcp tag", "libfabric tcp (msg)"], "raw TCP busy-poll"),
    ("tcp-bandwidth", "bandwidth", "TCP on loopback: bandwidth by size (higher is better)", "GB/s, one connection",
     ["OpenND send (tcp)", "OpenND write (tcp)", "UCX tcp tag"], "raw TCP blocking"),
]
# Paired rounds (every contender measured in each round, alternating): the
# median as a bar, the range of the rounds as its whisker.
BARS = [
    ("paired-latency", "paired_latency", "8 B ping-pong, paired rounds (lower is better)",
     "half round trip (us): median, whisker = range", None, False),
    ("paired-rate", "paired_rate", "8 B messages, 32 in flight, paired rounds (higher is better)",
     "million messages/s: median, whisker = range", None, True),
    ("paired-onesided", "paired_onesided", "8 B RDMA Write (half round trip) and Read, paired rounds "
     "(lower is better)", "us: median, whisker = range", None, False),
    ("paired-cma", "ratio", "Paired rounds: x one raw process_vm_writev/readv (higher is better)",
     "x raw CMA (dotted: the kernel copy alone): median, whisker = range", 1.0, True),
]
PRODUCT_COLOR = {"OpenND": "tab:blue", "UCX": "tab:orange", "Open MPI": "tab:green", "libfabric": "tab:red"}


def _color(label):
    return next((c for p, c in PRODUCT_COLOR.items() if label.startswith(p)), "tab:gray")


def chart_plan(doc):
    """What each chart shows, from a results document (no drawing): a list
    of dicts with name, title, ylabel and either `lines` [(label, [(size,
    value)], raw)] or `bars` [(label, median, low, high)] (best on top) with
    `reference` and `rounds`. A chart with nothing of OpenND's or the
    libraries' to show is left out."""
    ok = [r for r in doc["records"] if r["status"] == "ok"]
    plan = []
    for name, kind, title, ylabel, series, floor in CHARTS:
        lines = []
        for label in series + [floor]:
            pts = sorted((r["size"], r["value"]) for r in ok if r["kind"] == kind and r["label"] == label)
            if pts:
                lines.append((label, pts, label == floor))
        if any(not raw for _, _, raw in lines):
            plan.append({"name": name, "title": title, "ylabel": ylabel, "lines": lines})
    for name, kind, title, ylabel, reference, higher_better in BARS:
        rows = sorted((r for r in ok if r["kind"] == kind), key=lambda r: r["value"], reverse=higher_better)
        if rows:
            plan.append({"name": name, "title": title, "ylabel": ylabel, "reference": reference,
                         "rounds": max(r.get("rounds", 0) for r in rows),
                         "bars": [(r["label"].replace(" ×CMA, paired", ""), r["value"], r.get("low", r["value"]),
                                   r.get("high", r["value"])) for r in rows]})
    return plan


def _draw(results_path, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    with open(results_path) as f:
        doc = json.load(f)
    for old in glob.glob(os.path.join(out_dir, "chart-*.png")):  # an earlier run's, in a reused --out
        os.remove(old)
    machine = doc.get("machine", {})
    where = (f"bench/compare{' --quick' if doc.get('quick') else ''}, {doc.get('generated', '')[:10]}: "
             f"{machine.get('cpu_model') or '?'}, {machine.get('cpus', '?')} CPUs, Linux {machine.get('kernel', '?')}")
    written = []
    for chart in chart_plan(doc):
        if "lines" in chart:
            fig, ax = plt.subplots(figsize=(8, 5))
            for label, pts, raw in chart["lines"]:
                style = dict(color="gray", linestyle=":", linewidth=1.5) if raw else dict(
                    color=_color(label), linewidth=2.5 if label.startswith("OpenND") else 1.8,
                    linestyle="--" if label.startswith("OpenND") and "write" in label else "-")
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                        label=label + (" (ndbaseline)" if raw else ""), **style)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: fmt_size(int(x)) if x >= 1 else ""))
            ax.set_xlabel("message size")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=9)
            ax.set_ylabel(chart["ylabel"])
        else:
            bars = chart["bars"]
            labels = [b[0] for b in bars]
            values = [b[1] for b in bars]
            fig, ax = plt.subplots(figsize=(8, 0.6 * len(bars) + 1.6))
            ax.barh(labels, values, xerr=[[max(0.0, v - lo) for _, v, lo, _ in bars],
                                          [max(0.0, hi - v) for _, v, _, hi in bars]],
                    capsize=4, color=[_color(lb) for lb in labels], alpha=0.85)
            ax.invert_yaxis()  # the first (best) bar on top
            for y, v in enumerate(values):
                ax.annotate(f"{v:.3g}", (v, y), xytext=(4, 6), textcoords="offset points", fontsize=8)
            if chart["reference"] is not None:
                ax.axvline(chart["reference"], color="gray", linestyle=":", linewidth=1.5)
            ax.set_xlabel(f"{chart['ylabel']} ({chart['rounds']} rounds)" if chart["rounds"] else chart["ylabel"])
            ax.grid(True, axis="x", alpha=0.3)
        ax.set_title(chart["title"], fontsize=10)
        fig.text(0.01, 0.01, where, fontsize=7, color="dimgray")
        fig.tight_layout(rect=(0, 0.03, 1, 1))
        path = os.path.join(out_dir, f"chart-{chart['name']}.png")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written


def chart_only_main(argv):
    for path in _draw(argv[0], argv[1]):
        print(path)
    return 0
