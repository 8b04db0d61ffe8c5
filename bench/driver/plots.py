"""PNG plots (matplotlib, Agg backend): bandwidth per case and implementation as grouped bars
with min–max error bars, one figure per directory and rank count; the hidden fraction of the
nonblocking cases, one figure per directory; and weft's time breakdown from WEFT_STATS as
stacked bars when the runs printed it."""
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402


def _slug(s):
    return re.sub(r"[^A-Za-z0-9]+", "_", s).strip("_") or "x"


def make_plots(results, rows, out_dir):
    paths = []
    groups = {}
    for r in rows:
        groups.setdefault((r["dir"], r["ranks"]), []).append(r)
    for (d, ranks), rs in groups.items():
        paths.append(_bandwidth_plot(d, ranks, rs, out_dir))
    nb = [r for r in rows if r.get("nb")]
    for d in dict.fromkeys(r["dir"] for r in nb):
        paths.append(_hidden_plot(d, [r for r in nb if r["dir"] == d], out_dir))
    p = _stats_plot(rows, out_dir)
    if p:
        paths.append(p)
    return paths


def _bandwidth_plot(d, ranks, rows, out_dir):
    cases = list(dict.fromkeys(r["case"] for r in rows))
    impls = list(dict.fromkeys(r["impl"] for r in rows))
    by = {(r["case"], r["impl"]): r for r in rows}
    fig, axes = plt.subplots(2, 1, figsize=(min(24, max(8, 0.3 * len(cases) * len(impls) + 2)), 7),
                             sharex=True)
    width = 0.8 / max(1, len(impls))
    cmap = plt.get_cmap("tab20" if len(impls) > 10 else "tab10")
    for ax, metric in zip(axes, ("write", "read")):
        for j, impl in enumerate(impls):
            xs, ys, lo, hi, failed_x = [], [], [], [], []
            for i, c in enumerate(cases):
                r = by.get((c, impl))
                if not r:
                    continue
                x = i - 0.4 + width * (j + 0.5)
                s = r[metric]
                if s["median"] is not None:
                    xs.append(x)
                    ys.append(s["median"])
                    lo.append(s["median"] - s["min"])
                    hi.append(s["max"] - s["median"])
                if r["failed"]:
                    failed_x.append(x)
            color = cmap(j % cmap.N)
            if xs:
                ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, color=color,
                       edgecolor="black", linewidth=0.3)
            for x in failed_x:
                ax.annotate("✗", (x, 0), xycoords=("data", "axes fraction"), ha="center",
                            va="bottom", color="red", fontsize=12, fontweight="bold")
        ax.set_yscale("log")
        ax.set_ylabel(f"{metric} MiB/s")
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[1].set_xticks(range(len(cases)))
    axes[1].set_xticklabels(cases, rotation=30, ha="right")
    handles = [Patch(facecolor=cmap(j % cmap.N), edgecolor="black", linewidth=0.3, label=impl)
               for j, impl in enumerate(impls)]
    fig.suptitle(f"weft-bench: {d}, {ranks} ranks (median, min–max; red ✗ = failed runs)")
    fig.legend(handles=handles, loc="upper center", ncol=min(6, len(impls)), fontsize=8,
               bbox_to_anchor=(0.5, 0.95))
    fig.tight_layout(rect=(0, 0, 1, 0.91))
    path = os.path.join(out_dir, f"bandwidth_{_slug(d)}_np{ranks}.png")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def _hidden_plot(d, rows, out_dir):
    """Hidden fraction of the nonblocking cases: groups of bars per (case, rank count), one bar
    per implementation (median, min–max), the issue's goal as a dashed line over each group."""
    from .report import NB_GOALS
    groups = list(dict.fromkeys((r["case"], r["ranks"]) for r in sorted(rows, key=lambda r: r["ranks"])))
    impls = list(dict.fromkeys(r["impl"] for r in rows))
    by = {(r["case"], r["ranks"], r["impl"]): r for r in rows}
    fig, ax = plt.subplots(figsize=(min(24, max(8, 0.35 * len(groups) * len(impls) + 2)), 5))
    width = 0.8 / max(1, len(impls))
    cmap = plt.get_cmap("tab20" if len(impls) > 10 else "tab10")
    for j, impl in enumerate(impls):
        xs, ys, lo, hi, failed_x = [], [], [], [], []
        for i, g in enumerate(groups):
            r = by.get(g + (impl,))
            if not r:
                continue
            x = i - 0.4 + width * (j + 0.5)
            s = r["nb"]["hidden"]
            if s["median"] is not None:
                xs.append(x)
                ys.append(s["median"])
                lo.append(s["median"] - s["min"])
                hi.append(s["max"] - s["median"])
            if r["failed"]:
                failed_x.append(x)
        if xs:
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, color=cmap(j % cmap.N),
                   edgecolor="black", linewidth=0.3)
        for x in failed_x:
            ax.annotate("✗", (x, 0), xycoords=("data", "axes fraction"), ha="center",
                        va="bottom", color="red", fontsize=12, fontweight="bold")
    for i, (case, ranks) in enumerate(groups):
        g = NB_GOALS.get(ranks)
        if g is not None:
            ax.hlines(g, i - 0.45, i + 0.45, colors="black", linestyles="dashed", linewidth=1)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("fraction of I/O time hidden")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{c}\nnp{n}" for c, n in groups], rotation=30, ha="right")
    ax.grid(axis="y", alpha=0.3)
    handles = [Patch(facecolor=cmap(j % cmap.N), edgecolor="black", linewidth=0.3, label=impl)
               for j, impl in enumerate(impls)]
    ax.legend(handles=handles, fontsize=8, loc="upper right")
    ax.set_title(f"nonblocking collective writes: {d} (median, min–max; dashed = goal; red ✗ = failed)")
    fig.tight_layout()
    path = os.path.join(out_dir, f"hidden_{_slug(d)}.png")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def _stats_plot(rows, out_dir):
    """Stacked bars of weft's *_seconds (except open_seconds, the file's lifetime)."""
    rs = [r for r in rows if r.get("weft_stats")]
    if not rs:
        return None
    keys = []
    for r in rs:
        for k in r["weft_stats"]:
            if k != "open_seconds" and k not in keys:
                keys.append(k)
    if not keys:
        return None
    labels = [f"{r['case']}\n{r['impl']} {os.path.basename(r['dir'].rstrip('/')) or r['dir']} np{r['ranks']}"
              for r in rs]
    fig, ax = plt.subplots(figsize=(max(8, 0.8 * len(rs)), 5))
    bottom = [0.0] * len(rs)
    for k in keys:
        vals = [float(r["weft_stats"].get(k) or 0.0) for r in rs]
        ax.bar(range(len(rs)), vals, 0.6, bottom=bottom, label=k.replace("_seconds", ""))
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(len(rs)))
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("seconds (median over reps, summed over the run's files)")
    ax.set_title("weft time breakdown (WEFT_STATS)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "weft_phases.png")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
