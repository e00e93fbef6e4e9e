"""Figures of a report, drawn with matplotlib (the ``report`` extra): critical-difference
diagrams (Demšar 2006, Fig. 1(a)) and staged curves (a metric after each stage of a
learner: chain length, mixture size, boosting rounds)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np


def require_matplotlib() -> Any:
    """matplotlib, or a ``ValueError`` saying which extra installs it: a report checks
    this before it writes anything."""
    try:
        import matplotlib
    except ImportError:
        raise ValueError("figures need matplotlib: pip install 'mlw-core[report]'") from None
    return matplotlib


def _pyplot() -> Any:
    matplotlib = require_matplotlib()
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def cliques(avg_ranks: Sequence[float], cd: float) -> list[tuple[int, int]]:
    """Groups of learners whose average ranks differ by less than ``cd``, as
    ``(first, last)`` positions in the rank order (best first), maximal and of two or
    more learners: the thick bars of a CD diagram."""
    r = np.sort(np.asarray(avg_ranks, dtype=float))
    groups: list[tuple[int, int]] = []
    for i in range(r.size):
        j = i
        while j + 1 < r.size and r[j + 1] - r[i] < cd:
            j += 1
        if j > i and not any(a <= i and j <= b for a, b in groups):
            groups.append((i, j))
    return groups


def cd_diagram(names: Sequence[str], avg_ranks: Sequence[float], cd: float | None,
               path: str | Path | BinaryIO, *, title: str = "") -> None:
    """A critical-difference diagram: the rank axis (best, rank 1, on the right), every
    learner at its average rank, learners not significantly different (Nemenyi, the
    ``cd`` given) joined by a bar, and the CD interval above the axis."""
    plt = _pyplot()
    ranks = np.asarray(avg_ranks, dtype=float)
    k = ranks.size
    order = np.argsort(ranks, kind="stable")  # best first
    lo, hi = 1, max(k, 2)
    groups = cliques(ranks, cd) if cd is not None else []
    step = 0.3
    label_top = -0.3 - 0.13 * len(groups)
    n_rows = k - k // 2
    bottom = label_top - step * (n_rows - 1) - 0.25
    top = 0.85 if cd is not None else 0.4
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 1.1 * (top - bottom)))
    ax.set_xlim(hi + 1.2, lo - 1.2)  # reversed: best on the right
    ax.set_ylim(bottom, top)
    ax.axis("off")
    ax.plot([lo, hi], [0, 0], color="black", lw=1)
    for t in range(lo, hi + 1):
        ax.plot([t, t], [0, 0.08], color="black", lw=1)
        ax.text(t, 0.12, str(t), ha="center", va="bottom", fontsize=9)
    if cd is not None and np.isfinite(cd):
        ax.plot([hi, hi - cd], [0.6, 0.6], color="black", lw=1)
        for x in (hi, hi - cd):
            ax.plot([x, x], [0.55, 0.65], color="black", lw=1)
        ax.text(hi - cd / 2, 0.67, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=9)
    worse = list(order[::-1][:n_rows])  # worst first, labelled on the left
    better = list(order[:k // 2])       # best first, labelled on the right
    for row, idx in enumerate(worse):
        y = label_top - row * step
        ax.plot([ranks[idx], ranks[idx], hi + 0.15], [0, y, y], color="black", lw=0.8)
        ax.text(hi + 0.2, y, f"{names[idx]} ({ranks[idx]:.2f})", ha="right", va="center",
                fontsize=9)
    for row, idx in enumerate(better):
        y = label_top - row * step
        ax.plot([ranks[idx], ranks[idx], lo - 0.15], [0, y, y], color="black", lw=0.8)
        ax.text(lo - 0.2, y, f"({ranks[idx]:.2f}) {names[idx]}", ha="left", va="center",
                fontsize=9)
    sorted_ranks = ranks[order]
    for g, (a, b) in enumerate(groups):
        y = -0.18 - g * 0.13
        ax.plot([sorted_ranks[a] - 0.04, sorted_ranks[b] + 0.04], [y, y], color="black",
                lw=4, solid_capstyle="butt", zorder=3)
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)


def staged_curves(curves: dict[str, dict[str, list[tuple[int, float]]]],
                  path: str | Path | BinaryIO, *, title: str = "",
                  stage_label: str = "stage") -> None:
    """One panel per metric (``curves[metric][dataset] = [(stage, mean value), ...]``),
    one line per dataset."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    metrics = list(curves)
    cols = min(3, len(metrics))
    rows = (len(metrics) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for ax, metric in zip(axes.flat, metrics, strict=False):
        for dataset, points in curves[metric].items():
            xs = [p[0] for p in points]
            ys = [p[1] for p in points]
            ax.plot(xs, ys, marker="o", ms=3, lw=1.2, label=dataset)
        ax.set_title(metric, fontsize=10)
        ax.set_xlabel(stage_label, fontsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(metrics):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=8,
                   frameon=False)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.07 if handles else 0, 1, 1))
    fig.savefig(path, dpi=100, format="png")
    plt.close(fig)


def reliability_diagram(tables: dict[str, Any], path: str | Path | BinaryIO, *,
                        title: str = "") -> None:
    """A reliability diagram: per learner (``tables[name]``, an (n_bins, 3) table of
    ``(count, sum of scores, positives)`` per equal-width score bin, pooled over labels,
    :func:`mlw.metrics.calibration.reliability_table`), the fraction of positives
    against the mean score of every non-empty bin, beside the diagonal of perfect
    calibration, with each learner's pooled ECE in the legend; below, the share of
    scores in each bin."""
    plt = _pyplot()
    fig, (ax, hist) = plt.subplots(2, 1, figsize=(5.2, 6.0), sharex=True,
                                   gridspec_kw={"height_ratios": [3, 1]})
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--", label="calibrated")
    n_bins = next(iter(tables.values())).shape[0] if tables else 10
    centers = (np.arange(n_bins) + 0.5) / n_bins
    width = 0.8 / n_bins / max(len(tables), 1)
    for k, (name, table) in enumerate(tables.items()):
        t = np.asarray(table, dtype=float)
        count, ssum, pos = t[:, 0], t[:, 1], t[:, 2]
        seen = count > 0
        ece = float(np.abs(ssum - pos).sum() / count.sum()) if count.sum() else float("nan")
        ax.plot(ssum[seen] / count[seen], pos[seen] / count[seen], marker="o", ms=3.5,
                lw=1.2, label=f"{name} (ECE {ece:.3f})")
        hist.bar(centers - 0.4 / n_bins + (k + 0.5) * width, count / max(count.sum(), 1),
                 width=width)
    ax.set_ylabel("fraction of positives", fontsize=9)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    hist.set_xlabel("mean score in the bin", fontsize=9)
    hist.set_ylabel("share of scores", fontsize=9)
    hist.grid(True, alpha=0.3)
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    fig.tight_layout()
    fig.savefig(path, dpi=100, format="png")
    plt.close(fig)
