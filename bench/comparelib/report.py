"""What bench/compare leaves behind besides the tables (tables.py):
results.json and chart.png (latency and bandwidth against message size, one
line per row)."""

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


def draw_chart(results_path, png_path):
    """Draws in this interpreter if it has matplotlib, else with the system
    python3 (Debian's python3-matplotlib lives there). Returns None or why not."""
    if importlib.util.find_spec("matplotlib"):
        _draw(results_path, png_path)
        return None
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compare")
    for python in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.path.realpath(python) == os.path.realpath(sys.executable) or not os.access(python, os.X_OK):
            continue
        p = subprocess.run([python, script, "--chart-only", results_path, png_path],
                           capture_output=True, text=True, timeout=120)
        if p.returncode == 0:
            return None
        last = (p.stderr or p.stdout).strip().splitlines()
        return f"{python}: {last[-1] if last else 'failed'}"
    return "matplotlib is not installed (apt-get install python3-matplotlib)"


SOURCE_STYLE = {"ndbaseline": "-", "ndperf": "-", "libfabric": "--", "ucx": "-."}


def _draw(results_path, png_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    with open(results_path) as f:
        doc = json.load(f)
    ok = [r for r in doc["records"] if r["status"] == "ok"]
    labels = list(dict.fromkeys(r["label"] for r in ok))
    cmap = plt.get_cmap("tab20")
    color = {label: cmap(i % 20) for i, label in enumerate(labels)}  # a row keeps its colour in both plots
    fig, axes = plt.subplots(1, 2, figsize=(15, 8.5))
    for ax, kind, ylabel in ((axes[0], "latency", "latency, half round trip (us)"),
                             (axes[1], "bandwidth", "bandwidth (GB/s)")):
        lines = {}
        for r in ok:
            if r["kind"] == kind:
                lines.setdefault((r["label"], r["source"]), []).append((r["size"], r["value"]))
        for (label, source), pts in lines.items():
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, color=color[label],
                    linestyle=SOURCE_STYLE.get(source, ":"), linewidth=2.5 if source == "ndperf" else 1.5,
                    label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: fmt_size(int(x)) if x >= 1 else ""))
        ax.set_xlabel("message size")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{kind} vs message size ({'lower' if kind == 'latency' else 'higher'} is better)")
        ax.grid(True, which="both", alpha=0.3)
        if lines:
            ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, frameon=False)
    machine = doc.get("machine", {})
    fig.suptitle(f"bench/compare on {machine.get('hostname', '?')}: {machine.get('cpu_model') or '?'}, "
                 f"{machine.get('cpus', '?')} CPUs, Linux {machine.get('kernel', '?')}; "
                 f"{'quick' if doc.get('quick') else 'full'} run {doc.get('generated', '')}; "
                 "solid: raw/OpenND, dashed: libfabric, dash-dot: UCX", fontsize=9)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)


def chart_only_main(argv):
    _draw(argv[0], argv[1])
    return 0
