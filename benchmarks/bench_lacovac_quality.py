"""10-fold cross-validated quality of LaCovaC, LaCova, ML-C4.5 and BR/LP/CC with decision
trees, in the protocol of Al-Otaibi, Kull and Flach (ECAI 2016): a thin wrapper over
``mlw bench --config examples/papers/lacovac.toml`` (the protocol is in that file).

    python benchmarks/bench_lacovac_quality.py [--datasets flags,emotions,...] [--learners ...]
        [--folds 0,1] [--jobs 2] [--out lacovac.parquet] [--table]
        [--param key=value ...] [--tag NAME]

The same as ``mlw bench --config examples/papers/lacovac.toml --out lacovac.parquet``
plus two things the command has no option for: ``--param key=value`` (repeatable)
changes the parameters of the LaCovaC-family learners (lacovac, lacova, ml_c45 and the
joint-mode row) and ``--tag`` names such a variant (its rows are ``lacovac[TAG]``, so
an ablation lands next to the defaults in the same results file); ``--table`` prints
per-dataset tables (fold means, the paper's LaCovaC figures below) for
docs/methods/lacovac.md. The config reproduces this script's former records (flags and
emotions checked value for value).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from _paper_config import config_arguments, run_config

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "examples" / "papers" / "lacovac.toml"
FAMILY = ("lacovac", "lacova", "ml_c45", "lacovac_joint")
COLUMNS = [("accuracy", "accuracy"), ("exact match", "subset_accuracy"),
           ("Hamming loss", "hamming_loss"), ("log-loss", "log_loss"),
           ("micro F1", "f1_micro"), ("macro F1 (label)", "f1_macro"),
           ("macro F1 (example)", "f1_example")]


def table(path: Path) -> str:
    import polars as pl

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_core_paper_tables import lacovac_paper

    from mlw.experiments import read_results

    df = read_results(path).filter(pl.col("status") == "ok")
    paper = lacovac_paper()
    lines = []
    for ds in dict.fromkeys(df["dataset"].to_list()):
        part = df.filter(pl.col("dataset") == ds)
        folds = part["n_folds"][0]
        lines += [f"\n**{ds}** ({folds} fold{'s' if folds > 1 else ''})\n",
                  "| learner | " + " | ".join(c for c, _ in COLUMNS) + " | exact match (joint) "
                  "| fit s |", "|---" * (len(COLUMNS) + 3) + "|"]
        joint = {str(k).removesuffix("_joint"): g["metric_subset_accuracy"].mean()
                 for (k,), g in part.filter(pl.col("learner").str.contains("_joint"))
                 .group_by(["learner"])}
        for (learner,), g in part.filter(~pl.col("learner").str.contains("_joint")).group_by(
                ["learner"], maintain_order=True):
            cells = [f"{g[f'metric_{m}'].mean():.3f}" for _, m in COLUMNS]
            j = joint.get(str(learner))
            lines.append(f"| {learner} | " + " | ".join(cells) +
                         f" | {'-' if j is None else f'{j:.3f}'} | {g['fit_seconds'].sum():.1f} |")
        ref = [paper.get(m, {}).get(ds, {}).get("lacovac") for _, m in COLUMNS]
        lines.append("| paper LaCovaC | " + " | ".join("" if v is None else f"{v:.3f}"
                                                     for v in ref) + " | | |")
    return "\n".join(lines)


def main() -> int:
    from mlw.experiments import load_config
    from mlw.experiments.config import learner_from_spec

    ap = config_arguments(__doc__, "lacovac.parquet")
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    exp = load_config(CONFIG)
    if args.param or args.tag:
        entries = []
        for e in exp.learners:
            if e.key in FAMILY:
                extra = learner_from_spec(f"{e.learner}:{','.join(args.param)}") \
                    if args.param else None
                params = {**e.params, **(extra.params if extra else {})}
                key = f"{e.key}[{args.tag}]" if args.tag else e.key
                e = replace(e, key=key, params=params, label=key)
            entries.append(e)
        exp = replace(exp, learners=tuple(entries))
    return run_config(exp, args, table)

if __name__ == "__main__":
    sys.exit(main())
