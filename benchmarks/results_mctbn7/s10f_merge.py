"""Session 10 round 2: one store for the quality table at the new default.

quality_defaults.parquet (session 9) held mc and ctbn at factor="feature". This writes
quality_defaults.parquet anew: the session-10 runs of mc and ctbn at the default
factor="switching" (s10f_*.parquet, queue_s10f.sh, commit 6a01118), the session-9
BR, CC, PCC rows unchanged, and session 9's mc and ctbn rows renamed mc_feature and
ctbn_feature (quality_mctbn.py --table prints them with markers against the new mc).

    python benchmarks/results_mctbn7/s10f_merge.py
"""
from pathlib import Path

import polars as pl

from mlw.experiments import read_results

R = Path(__file__).resolve().parent
old = read_results(R / "quality_defaults.parquet")
if {"mc_feature", "ctbn_feature"} & set(old["learner"].to_list()):
    raise SystemExit("quality_defaults.parquet is already merged")
old = old.with_columns(
    pl.when(pl.col("learner").is_in(["mc", "ctbn"]))
    .then(pl.col("learner") + "_feature").otherwise(pl.col("learner")).alias("learner"),
    # the store keeps one record per cell_id, and the new mc / ctbn cells have the same
    # ids (factor is not among the config's params)
    pl.when(pl.col("learner").is_in(["mc", "ctbn"]))
    .then(pl.col("cell_id") + "-feature").otherwise(pl.col("cell_id")).alias("cell_id"))
names = sorted({p.name.removesuffix(".parts") for p in R.glob("s10f_*.parquet*")
                if not p.name.endswith(".lock")})
df = pl.concat([old] + [read_results(R / n) for n in names], how="diagonal_relaxed")
print(df.group_by(["dataset", "learner"]).len().sort(["dataset", "learner"]))
df.write_parquet(R / "quality_defaults.parquet")
