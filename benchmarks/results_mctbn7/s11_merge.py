"""Session 11: the quality table's store at the session's code. quality_defaults.parquet
(session 10's merge, s10f_merge.py) keeps its BR, CC, PCC, mc_feature and ctbn_feature
rows; its mc and ctbn rows (session 10, commit 6a01118; still in s10f_*.parquet) are
replaced by this session's: ctbn from s11_quality_a.parquet (commit c565578, whose ctbn
code 0a4bcd7 keeps), mc from s11_mc_final_*.parquet (commit 0a4bcd7). Refuses to run
when an mc or ctbn row of the store is already a session-11 one.

    python benchmarks/results_mctbn7/s11_merge.py
"""
from pathlib import Path

import polars as pl

from mlw.experiments import read_results

R = Path(__file__).resolve().parent
store = read_results(R / "quality_defaults.parquet")
mine = store.filter(pl.col("learner").is_in(["mc", "ctbn"]))
if mine["started"].cast(pl.Utf8).str.contains("^2026-11-24T0[123]").any():
    raise SystemExit("quality_defaults.parquet already holds session 11's rows")
ctbn = read_results(R / "s11_quality_a.parquet").filter(pl.col("learner") == "ctbn")
mc = pl.concat([read_results(R / n) for n in ("s11_mc_final_p.parquet",
                                               "s11_mc_final_q.parquet")],
               how="diagonal_relaxed").filter(pl.col("learner") == "mc")
df = pl.concat([store.filter(~pl.col("learner").is_in(["mc", "ctbn"])), ctbn, mc],
               how="diagonal_relaxed")
print(df.group_by(["dataset", "learner"]).len().sort(["dataset", "learner"]))
df.write_parquet(R / "quality_defaults.parquet")
