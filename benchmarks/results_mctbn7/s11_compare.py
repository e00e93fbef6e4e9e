"""Session 11: the quality protocol's mc and ctbn rows before and after the speed levers,
fold by fold. Before: session 10's runs (commit 6a01118), s10f_*.parquet, which were
quality_defaults.parquet's mc and ctbn rows until s11_merge.py replaced them.
After, three tables:

1. the final code: ctbn at c565578 (kernel evaluation + EDGE_TOL edges; ctbn's code is
   the same at 0a4bcd7) from s11_quality_a.parquet, mc at 0a4bcd7 (the kernel, edges
   at TOL) from s11_mc_final_*.parquet (queue_s11f.sh / queue_s11g.sh);
2. mc with its edge models at EDGE_TOL too (c565578; the variant not taken): the mc
   rows of s11_quality_a.parquet (enron, 6 folds) and s11_mc_edgetol1e-3_*.parquet;
3. mc on emotions with the new kernel and edges at TOL run from a snapshot before
   0a4bcd7 (s11_mc_kernel_tol1e-4_emotions.parquet, queue_s11e.sh).

Per dataset and learner: the means of EMA, CLL-loss per fold, micro and macro F1 and
fit CPU s per fold, before and after, the folds that changed and the paired t-test's
p of after - before (EMA, CLL-loss).

    python benchmarks/results_mctbn7/s11_compare.py
"""
from pathlib import Path

import numpy as np
import polars as pl
from scipy.stats import ttest_rel

from mlw.experiments import read_results

R = Path(__file__).resolve().parent
METRICS = ("subset_accuracy", "cll_loss", "f1_micro", "f1_macro")


def rows(names: list[str], learners: tuple[str, ...]) -> dict:
    out = {}
    for name in names:
        if not (R / name).exists() and not (R / f"{name}.parts").exists():
            continue
        df = read_results(R / name).filter(pl.col("status") == "ok")
        for r in df.iter_rows(named=True):
            if r["learner"] in learners:
                out[(r["dataset"], r["learner"], r["fold"])] = r
    return out


def table(title: str, before: dict, after: dict) -> None:
    print(f"\n{title}\n")
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


before = rows(["s10f_rest.parquet", "s10f_ctbn_scene.parquet", "s10f_ctbn_enron.parquet",
               "s10f_scene_mc.parquet", "s10f_enron_mc.parquet"], ("mc", "ctbn"))
final = {**rows(["s11_quality_a.parquet"], ("ctbn",)),
         **rows([p.name.removesuffix(".parts") for p in R.glob("s11_mc_final_*.parquet*")
                 if not p.name.endswith(".lock")], ("mc",))}
table("1. The final code (ctbn: c565578 = 0a4bcd7; mc: 0a4bcd7)", before, final)
tol3 = rows(["s11_quality_a.parquet", "s11_mc_edgetol1e-3_scene.parquet",
             "s11_mc_edgetol1e-3_emotions.parquet"], ("mc",))
table("2. mc with its edge models at EDGE_TOL (c565578; not taken)", before, tol3)
table("3. mc on emotions, the new kernel with edges at TOL (snapshot before 0a4bcd7)",
      before, rows(["s11_mc_kernel_tol1e-4_emotions.parquet"], ("mc",)))
