"""Session 11: Figure 3's emotions path (mc_path_switching, 10 folds) under three codes,
to tell the edge tolerance's effect on mc from the kernel's last bits: b6fa086 (before
the levers; a pre-rebase name of 543d05e, whose plugin code is de35c04's), c565578 (the
kernel and every edge model at EDGE_TOL = 1e-3) and c565578 with EDGE_TOL set to 1e-4
(the kernel alone; what 0a4bcd7 computes for mc). Prints the mean CLL-loss and EMA at
some stages and the paired t-tests, over the folds, of the per-fold means over the 20
stages.

    python benchmarks/results_mctbn7/s11_paths_compare.py
"""
import json
from pathlib import Path

import numpy as np
from scipy.stats import ttest_rel

from mlw.experiments import read_results

R = Path(__file__).resolve().parent
RUNS = {"b6fa086": "figure3_switching_b6fa086_emotions.parquet",
        "c565578": "figure3_switching_c565578_emotions.parquet",
        "c565578, EDGE_TOL 1e-4": "figure3_switching_c565578_edgetol1e-4_emotions.parquet"}


def path(name: str) -> dict:
    """stage -> fold -> (CLL-loss, EMA)"""
    out: dict = {}
    df = read_results(R / name)
    for r in df.filter(df["learner"] == "mc_path_switching").iter_rows(named=True):
        for s in json.loads(r["stages"]):
            m = s["metrics"]
            out.setdefault(s["stage"], {})[r["fold"]] = (m["cll_loss"], m["subset_accuracy"])
    return out


paths = {k: path(v) for k, v in RUNS.items()}
for k in (1, 2, 5, 10, 15, 20):
    print(f"{k:2d} trees: " + " | ".join(
        f"{n} {np.mean([p[k][f][0] for f in range(10)]):.1f} / "
        f"{np.mean([p[k][f][1] for f in range(10)]):.3f}" for n, p in paths.items()))
for a, b in (("b6fa086", "c565578, EDGE_TOL 1e-4"), ("c565578, EDGE_TOL 1e-4", "c565578")):
    for i, metric in ((1, "EMA"), (0, "CLL-loss")):
        x = np.array([np.mean([paths[a][k][f][i] for k in range(1, 21)]) for f in range(10)])
        y = np.array([np.mean([paths[b][k][f][i] for k in range(1, 21)]) for f in range(10)])
        print(f"{b} - {a}, {metric} averaged over the 20 stages: {(y - x).mean():+.4f}, "
              f"paired p = {ttest_rel(y, x).pvalue:.3f}")
