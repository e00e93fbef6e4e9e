"""Session 11: the quality protocol's mc and ctbn rows before and after the speed levers
(commit c565578: the kernel's cheaper evaluation and the structure search's EDGE_TOL),
fold by fold. Before: quality_defaults.parquet as session 10 left it (commit 6a01118);
after: s11_quality_*.parquet (queue_s11b.sh / queue_s11c.sh). Per dataset and learner:
the means of EMA, CLL-loss per fold, micro and macro F1 and fit CPU s per fold, before
and after, the folds that changed and the paired t-test's p of after - before.

    python benchmarks/results_mctbn7/s11_compare.py
"""
from pathlib import Path

import numpy as np
import polars as pl
from scipy.stats import ttest_rel

from mlw.experiments import read_results

R = Path(__file__).resolve().parent
METRICS = ("subset_accuracy", "cll_loss", "f1_micro", "f1_macro")


def rows(df: pl.DataFrame) -> dict:
    out = {}
    for r in df.filter(pl.col("status") == "ok").iter_rows(named=True):
        if r["learner"] in ("mc", "ctbn"):
            out[(r["dataset"], r["learner"], r["fold"])] = r
    return out


before = rows(read_results(R / "quality_defaults.parquet"))
after = {}
for p in sorted(R.glob("s11_quality_*.parquet")):
    if "tol" in p.name:  # s11_quality_tol4: the EDGE_TOL = 1e-4 check, not the default
        continue
    after.update(rows(read_results(p)))
print("| dataset | learner | folds | EMA before → after | CLL-loss per fold | micro F1 | "
      "macro F1 | folds changed (EMA / CLL) | p (EMA, CLL) | fit CPU s per fold |")
print("|---|---|---|---|---|---|---|---|---|---|")
for ds in ("emotions", "yeast", "scene", "enron"):
    for learner in ("mc", "ctbn"):
        folds = sorted(f for (d, lr, f) in after if d == ds and lr == learner
                       and (d, lr, f) in before)
        if not folds:
            continue
        b = [before[(ds, learner, f)] for f in folds]
        a = [after[(ds, learner, f)] for f in folds]
        cells, ps = [], []
        for m in METRICS:
            x = np.array([r[f"metric_{m}"] for r in b])
            y = np.array([r[f"metric_{m}"] for r in a])
            fmt = ".1f" if m == "cll_loss" else ".3f"
            cells.append(f"{x.mean():{fmt}} → {y.mean():{fmt}}")
            if m in ("subset_accuracy", "cll_loss"):
                ps.append("-" if np.allclose(x, y) else f"{ttest_rel(y, x).pvalue:.2f}")
        changed = [sum(not np.isclose(rb[f"metric_{m}"], ra[f"metric_{m}"])
                       for rb, ra in zip(b, a, strict=True))
                   for m in ("subset_accuracy", "cll_loss")]
        cpu = (np.mean([r["fit_cpu_seconds"] for r in b]),
               np.mean([r["fit_cpu_seconds"] for r in a]))
        print(f"| {ds} | {learner} | {len(folds)} | {' | '.join(cells)} | "
              f"{changed[0]} / {changed[1]} | {', '.join(ps)} | "
              f"{cpu[0]:.1f} → {cpu[1]:.1f} |")
