"""Per-label results from the evaluation functions and fold-level result records
(``mlw fit --per-label`` / ``--out``)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import mlw
from mlw.results import per_label_path, records_frame, write_records


@pytest.fixture(scope="module")
def cv_result() -> mlw.EvaluationResult:
    data = mlw.load_dataset("emotions", split="all")
    return mlw.cross_validate(mlw.get_learner("template_centroid"), data, k=3,
                              metrics=["f1_macro", "precision_macro"], per_label=True)


def test_cross_validation_per_label_is_the_fold_mean_and_matches_macro(cv_result) -> None:
    folds = [f.per_label for f in cv_result.folds]
    assert all(t.height == 6 for t in folds)
    mean = cv_result.per_label
    assert mean["label"].to_list() == folds[0]["label"].to_list()
    for j in range(6):
        values = [t["f1"][j] for t in folds if not math.isnan(t["f1"][j])]
        assert mean["f1"][j] == pytest.approx(np.mean(values))
    # f1_macro of a fold is the mean of its per-label f1 column
    for f in cv_result.folds:
        assert f.metrics["f1_macro"] == pytest.approx(f.per_label["f1"].mean())


def test_holdout_per_label_and_none_by_default() -> None:
    train, test = mlw.load_dataset("emotions"), mlw.load_dataset("emotions", split="test")
    learner = mlw.get_learner("template_centroid")
    with_table = mlw.holdout(learner, train, test, ["f1_micro"], per_label=True)
    assert with_table.per_label["label"].to_list() == list(test.label_names)
    assert with_table.per_label["support"].sum() == int(test.Y.sum())
    assert "per_label" in with_table.as_dict()
    plain = mlw.holdout(learner, train, test, ["f1_micro"])
    assert plain.per_label is None and "per_label" not in plain.as_dict()
    assert plain.per_label_records() == []


def test_records_are_flat_and_typed(cv_result, tmp_path) -> None:
    records = cv_result.records(learner="template_centroid", dataset="emotions",
                                params={"threshold": "pcut"})
    assert [r["fold"] for r in records] == [0, 1, 2]
    assert records[0]["evaluation"] == "cv" and records[0]["n_folds"] == 3
    frame = records_frame(records)
    assert frame.schema["metric_f1_macro"] == pl.Float64
    assert frame.schema["n_train"] == pl.Int64 and frame.schema["params"] == pl.String
    assert frame["params"][0] == '{"threshold": "pcut"}'
    for suffix, read in ((".parquet", pl.read_parquet), (".csv", pl.read_csv)):
        out = write_records(records, tmp_path / f"r{suffix}")
        assert read(out)["metric_f1_macro"].to_list() == pytest.approx(
            [r["metric_f1_macro"] for r in records])
    per_label = cv_result.per_label_records(learner="template_centroid")
    assert len(per_label) == 18 and per_label[0]["fold"] == 0
    assert records_frame(per_label).schema["support"] == pl.Int64
    assert per_label_path(tmp_path / "r.csv") == tmp_path / "r.per_label.csv"


@pytest.mark.parametrize("name", ["", "r.txt", "missing/r.csv"])
def test_bad_results_paths(tmp_path, name) -> None:
    with pytest.raises((ValueError, FileNotFoundError)):
        write_records([{"fold": 0}], str(tmp_path / name) if name else "")
