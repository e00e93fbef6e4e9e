"""The mixture-of-CTBNs paper's protocol (Hong, Batal and Hauskrecht, CIKM 2014, Sec. 6):
a thin wrapper over ``mlw bench --config examples/papers/mctbn.toml`` (the protocol is
in that file: 10-fold CV on each dataset's train and test files joined; mc, ctbn, BR,
CC, PCC with L2-regularised logistic regression whose C is chosen the same way for all;
EMA, CLL-loss, micro and macro F1; CC's CLL-loss also read as the paper does, greedy
prefix, as ``cll_loss_marginals``; Figure 3 as the ``mc_path`` stages).

    nice -n 10 python benchmarks/bench_mctbn_quality.py [--datasets emotions,...]
        [--learners mc,ctbn,br,cc,pcc,mc_path,mc_path_switching] [--folds 0,1] [--jobs 2]
        [--out mctbn.parquet] [--table]

The same as ``mlw bench --config examples/papers/mctbn.toml --out mctbn.parquet`` plus
``--table``: the paper's layout (ours and, in brackets, the paper's Tables 2-5; markers
* / @ where mc is significantly better / worse, paired t-test over the folds every
learner finished, two-sided, 0.05, as the paper's * and ⊗), CC's CLL-loss read both
ways, the C and trees mc chose per fold, and the Figure 3 curve. Checked against the
former standalone script value for value on emotions, folds 0-1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from _paper_config import config_arguments, run_config

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "examples" / "papers" / "mctbn.toml"
#: mc_feature / ctbn_feature: mc and ctbn with factor="feature" (one logistic regression
#: on x and the parent's value), beside the default switching factors
LEARNERS = ("mc", "mc_feature", "ctbn", "ctbn_feature", "br", "cc", "pcc")
#: The paper's Tables 2-5 (10-fold CV on the full data): EMA, CLL-loss (per fold sum),
#: micro F1, macro F1 for BR, CC, PCC, SC (our ctbn) and MC.
PAPER = {
    "emotions": {"br": (0.265, 153.5, 0.645, 0.632), "cc": (0.268, 169.6, 0.621, 0.620),
                 "pcc": (0.317, 134.9, 0.664, 0.659), "ctbn": (0.322, 147.4, 0.678, 0.670),
                 "mc": (0.346, 128.8, 0.693, 0.686)},
    "yeast": {"br": (0.151, 1500.3, 0.635, 0.457), "cc": (0.193, 2303.8, 0.628, 0.467),
              "pcc": (0.230, 932.1, 0.645, 0.486), "ctbn": (0.192, 1097.0, 0.631, 0.467),
              "mc": (0.235, 1000.0, 0.640, 0.477)},
    "scene": {"br": (0.541, 344.7, 0.696, 0.703), "cc": (0.632, 395.0, 0.697, 0.709),
              "pcc": (0.666, 258.9, 0.722, 0.729), "ctbn": (0.625, 306.3, 0.717, 0.728),
              "mc": (0.680, 260.1, 0.745, 0.755)},
    "enron": {"br": (0.164, 1287.3, 0.551, 0.478), "cc": (0.173, 1293.5, 0.577, 0.484),
              "pcc": (None, None, None, None), "ctbn": (0.167, 1437.9, 0.552, 0.470),
              "mc": (0.187, 1224.4, 0.556, 0.470)},
}
#: metric -> True if larger is better (the paper's marked columns)
MARKED = {"subset_accuracy": True, "cll_loss": False, "f1_micro": True, "f1_macro": True}


def _versus_mc(folds: dict, name: str, key: str, mc_key: str | None = None) -> str:
    """" *" if mc (on ``mc_key``, default ``key``) is significantly better than ``name``
    on ``key``, " @" if worse."""
    if name == "mc":
        return ""
    from scipy.stats import ttest_rel

    a, b = folds.get(("mc", mc_key or key), {}), folds.get((name, key), {})
    common = sorted(set(a) & set(b))
    if len(common) < 2:
        return ""
    x, y = np.array([a[f] for f in common]), np.array([b[f] for f in common])
    if np.allclose(x, y) or not ttest_rel(x, y).pvalue < 0.05:
        return ""
    higher = MARKED[key.removeprefix("metric_").removesuffix("_marginals")]
    return " *" if (x.mean() > y.mean()) == higher else " @"


def table(path: Path) -> str:
    import polars as pl

    from mlw.experiments import read_results

    df = read_results(path).filter(pl.col("status") == "ok")
    out = ["Markers: * mc significantly better, @ mc significantly worse (paired t-test over "
           "the folds every learner finished, 0.05), like the paper's * and ⊗.\n",
           "| dataset | learner | folds | EMA (paper) | CLL-loss per fold (paper) | CLL per "
           "instance | micro F1 (paper) | macro F1 (paper) | CPU s/fold |",
           "|---|---|---|---|---|---|---|---|---|"]
    path_rows, chosen, greedy = [], [], []
    for ds in dict.fromkeys(df["dataset"].to_list()):
        part = df.filter(pl.col("dataset") == ds)
        main = part.filter(pl.col("learner").is_in(LEARNERS))
        names = set(main["learner"].to_list())
        complete = [f for f, g in main.group_by("fold") for f in [f[0]]
                    if set(g["learner"].to_list()) == names]
        main = main.filter(pl.col("fold").is_in(complete))
        folds = {(r["learner"], k): {} for r in main.iter_rows(named=True) for k in r}
        for r in main.iter_rows(named=True):
            for k, v in r.items():
                if k.startswith("metric_") and v is not None:
                    folds[(r["learner"], k)][r["fold"]] = v
        paper = PAPER.get(ds, {})
        for name in LEARNERS:
            g = main.filter(pl.col("learner") == name)
            if g.height == 0:
                continue
            p = paper.get(name, (None,) * 4)

            def col(key: str, i: int, fmt: str, g=g, p=p, name=name, folds=folds) -> str:
                mark = _versus_mc(folds, name, f"metric_{key}")
                ref = format(p[i], fmt) if p[i] is not None else "-"
                return f"{format(g[f'metric_{key}'].mean(), fmt)}{mark} ({ref})"

            per_inst = (g["metric_cll_loss"] / g["n_test"]).mean()
            out.append(f"| {ds} | {name} | {g.height} | {col('subset_accuracy', 0, '.3f')} | "
                       f"{col('cll_loss', 1, '.1f')} | {per_inst:.3f} | "
                       f"{col('f1_micro', 2, '.3f')} | {col('f1_macro', 3, '.3f')} | "
                       f"{g['cpu_seconds'].mean():.1f} |")
            if name == "cc" and "metric_cll_loss_marginals" in g.columns:
                mc = main.filter(pl.col("learner") == "mc")["metric_cll_loss"].mean()
                greedy.append(
                    f"| {ds} | {g.height} | {g['metric_cll_loss'].mean():.1f} | "
                    f"{g['metric_cll_loss_marginals'].mean():.1f}"
                    f"{_versus_mc(folds, 'cc', 'metric_cll_loss_marginals', 'metric_cll_loss')} "
                    f"({p[1]}) | {'-' if mc is None else f'{mc:.1f}'} |")
            if g["attributes"].drop_nulls().len():
                attrs = [json.loads(a) for a in g.sort("fold")["attributes"]]
                chosen.append(f"- {ds} {name}: " + ", ".join(
                    f"{k.rstrip('_')} {[a[k] for a in attrs]}" for k in attrs[0]))
            if g["chosen_params"].drop_nulls().len():
                cs = [json.loads(c)["base_params"]["C"] for c in g.sort("fold")["chosen_params"]]
                chosen.append(f"- {ds} {name}: C {cs}")
        for r in part.filter(pl.col("learner").str.starts_with("mc_path")).iter_rows(
                named=True):
            for s in json.loads(r["stages"]):
                path_rows.append((r["learner"], ds, s["stage"], r["fold"], s["metrics"]))
    if greedy:
        out += ["\nCC's CLL-loss per fold read two ways (the paper's CC column in brackets; "
                "mc's on the same folds beside it)",
                "| dataset | folds | chain rule (cll_loss) | greedy prefix "
                "(cll_loss_marginals; paper) | mc |", "|---|---|---|---|---|", *greedy]
    if chosen:
        out += ["\nC (and mc's trees) chosen per fold, in fold order", *chosen]
    # Figure 3: one table per path learner (mc_path: factor "feature"; mc_path_switching)
    for name in sorted({r[0] for r in path_rows}):
        rows = [r[1:] for r in path_rows if r[0] == name]
        out += [f"\nFigure 3 ({name}): mc grown to 20 trees (mean over the folds run)",
                "| dataset | trees | CLL-loss per fold | EMA | folds |", "|---|---|---|---|---|"]
        for ds in dict.fromkeys(r[0] for r in rows):
            for k in sorted({r[1] for r in rows if r[0] == ds}):
                ms = [r[3] for r in rows if r[0] == ds and r[1] == k]
                out.append(f"| {ds} | {k} | {np.mean([m['cll_loss'] for m in ms]):.1f} | "
                           f"{np.mean([m['subset_accuracy'] for m in ms]):.3f} | {len(ms)} |")
    return "\n".join(out)


def main() -> int:
    from mlw.experiments import load_config

    args = config_arguments(__doc__, "mctbn.parquet").parse_args()
    return run_config(load_config(CONFIG), args, table)

if __name__ == "__main__":
    sys.exit(main())
