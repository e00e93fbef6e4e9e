"""The CLI a MEKA user expects: label columns of files without label metadata
(--labels, --n-labels), a base classifier by dotted path with its parameters
(--param base__C=10), -h, shell completion, learner names in `mlw fit --help`, fold-level
results (--out .parquet/.csv) and per-label metrics (--per-label)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

import mlw
from mlw_cli.main import app


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    """emotions as CSV and Parquet, label columns last (no label metadata)."""
    ds = mlw.load_dataset("emotions", split="all")
    columns = {n: ds.X[:, i] for i, n in enumerate(ds.feature_names)}
    columns.update({n: np.asarray(ds.Y[:, j]).ravel() for j, n in enumerate(ds.label_names)})
    folder = tmp_path_factory.mktemp("tables")
    frame = pl.DataFrame(columns)
    frame.write_csv(folder / "emo.csv")
    frame.write_parquet(folder / "emo.parquet")
    return {"csv": folder / "emo.csv", "parquet": folder / "emo.parquet",
            "labels": list(ds.label_names)}


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_label_columns_by_count_or_name(tables, kind) -> None:
    last = invoke("fit", "-l", "br", "-d", str(tables[kind]), "--n-labels", "-6", "--cv",
                  "2", "-m", "f1_micro", "--json")
    assert last.exit_code == 0, last.stderr
    out = json.loads(last.stdout)
    assert (out["n_labels"], out["n_features"]) == (6, 72)
    named = invoke("fit", "-l", "br", "-d", str(tables[kind]), "--labels",
                   ",".join(tables["labels"][:2]), "--cv", "2", "-m", "f1_micro", "--json")
    assert named.exit_code == 0, named.stderr
    assert json.loads(named.stdout)["n_labels"] == 2
    assert json.loads(named.stdout)["n_features"] == 76  # the other labels are features


def test_label_options_on_arff_override_the_xml(mulan_dir) -> None:
    res = invoke("fit", "-l", "br", "-d", str(mulan_dir / "emotions-train.arff"), "--test",
                 str(mulan_dir / "emotions-test.arff"), "--n-labels", "-2", "-m",
                 "hamming_loss", "--json")
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    assert (out["n_labels"], out["n_features"], out["n_test"]) == (2, 76, 202)


def test_label_option_errors_are_one_line(tables) -> None:
    missing = invoke("fit", "-l", "br", "-d", str(tables["csv"]), "--cv", "2")
    assert missing.exit_code == 2 and "--labels NAME,... or --n-labels N" in missing.stderr
    both = invoke("fit", "-l", "br", "--labels", "a", "--n-labels", "2")
    assert both.exit_code == 2 and "not both" in both.stderr
    unknown = invoke("fit", "-l", "br", "-d", str(tables["csv"]), "--labels", "nope")
    assert unknown.exit_code == 2 and "label column 'nope' is not a column" in unknown.stderr
    generated = invoke("fit", "-l", "br", "-d", "synthetic:labels=4", "--n-labels", "2")
    assert generated.exit_code == 2 and "generated dataset" in generated.stderr
    for res in (missing, both, unknown, generated):
        assert res.stderr.count("\n") == 1


def test_base_classifier_by_dotted_path_with_its_parameters() -> None:
    res = invoke("fit", "-l", "br", "-p", "base_estimator=sklearn.svm.LinearSVC", "-p",
                 "base__C=0.5", "-p", "base__max_iter=2000", "-m", "hamming_loss", "--json")
    assert res.exit_code == 0, res.stderr
    params = json.loads(res.stdout)["params"]
    assert params["base_estimator"] == "sklearn.svm.LinearSVC"
    assert params["base_params"] == {"C": 0.5, "max_iter": 2000}
    # the same parameters reach the classifier of every label
    model = mlw.get_learner("br", base_estimator="sklearn.svm.LinearSVC",
                            base_params={"C": 0.5}).fit(*_small())
    assert {type(m).__name__ for m in model.estimators_} == {"LinearSVC"}
    assert {m.C for m in model.estimators_} == {0.5}


@pytest.mark.parametrize(("args", "message"), [
    (("base_estimator=sklearn.svm.LinearSVR",), "is not a classifier (a regressor)"),
    (("base_estimator=sklearn.preprocessing.StandardScaler",), "(a transformer)"),
    (("base_estimator=sklearn.svm.LinearSVx",), "sklearn.svm.LinearSVC?"),
    (("base_estimator=nosuchmodule.Thing",), "cannot import nosuchmodule"),
    (("base_estimator=sklearn.svm.LinearSVC", "base__Cx=1"), "has no parameter 'Cx'"),
    (("base_estimator=fancy",), "is not a known shortcut"),
])
def test_base_classifier_errors_are_one_line(args, message) -> None:
    items = [x for a in args for x in ("-p", a)]
    res = invoke("fit", "-l", "cc", *items, "-m", "hamming_loss")
    assert res.exit_code == 2, res.stderr
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1
    assert message in res.stderr


def _small() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(np.int64)


def test_base_params_work_for_the_ensembles_and_survive_clone() -> None:
    from sklearn.base import clone

    for name in ("ecc", "rakel", "homer", "epcc"):
        learner = clone(mlw.get_learner(name, base_estimator="decision_tree",
                                        base_params={"max_depth": 1}))
        assert learner.get_params()["base_params"] == {"max_depth": 1}
        learner.fit(*_small())
    ecc = mlw.get_learner("ecc", base_estimator="decision_tree",
                          base_params={"max_depth": 1}, n_estimators=2).fit(*_small())
    assert {link.max_depth for chain in ecc.estimators_ for link in chain.estimators_
            if hasattr(link, "max_depth")} == {1}


def test_dash_h_and_completion_and_learner_names_in_fit_help() -> None:
    top = invoke("-h")
    assert top.exit_code == 0 and "--install-completion" in top.stdout
    fit_help = invoke("fit", "-h")
    assert fit_help.exit_code == 0
    text = " ".join(fit_help.stdout.split())
    for name in ("br", "xdcc", "lacovac", "template_centroid"):
        assert f" {name}," in text or f" {name}." in text, name
    assert "[default: emotions]" in text and "Choices:" in text
    from mlw_cli.help import complete

    assert complete("learner")("lac") == ["lacova", "lacovac", "lacovac_forest"]
    assert complete("metric", comma_separated=True)("f1_micro,hamm") == [
        "f1_micro,hamming_loss"]


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_out_writes_fold_level_records_and_per_label_beside(tmp_path, suffix) -> None:
    out = tmp_path / f"results{suffix}"
    res = invoke("fit", "-l", "br", "--cv", "3", "-m", "f1_micro,auc_macro", "--per-label",
                 "--out", str(out), "--json")
    assert res.exit_code == 0, res.stderr
    read = pl.read_parquet if suffix == ".parquet" else pl.read_csv
    folds = read(out)
    assert folds["fold"].to_list() == [0, 1, 2]
    assert {"learner", "dataset", "evaluation", "n_folds", "seed", "params", "decision",
            "n_train", "n_test", "n_features", "n_labels", "fit_seconds",
            "predict_seconds", "compile_seconds", "metric_f1_micro",
            "metric_auc_macro"} <= set(folds.columns)
    obj = json.loads(res.stdout)
    assert folds["metric_f1_micro"].mean() == pytest.approx(obj["metrics"]["f1_micro"])
    per_label = read(tmp_path / f"results.per_label{suffix}")
    assert per_label.height == 3 * 6 and {"fold", "label", "support", "f1",
                                          "auc"} <= set(per_label.columns)
    # the JSON carries the fold means per label, and each fold's table
    assert [r["label"] for r in obj["per_label"]] == per_label["label"].to_list()[:6]
    assert len(obj["folds"][0]["per_label"]) == 6


def test_per_label_table_and_out_errors(tmp_path) -> None:
    res = invoke("fit", "-l", "br", "--per-label", "-m", "f1_micro")
    assert res.exit_code == 0, res.stderr
    assert "per label" in res.stdout and "amazed-suprised" in res.stdout
    bad = invoke("fit", "-l", "br", "--out", str(tmp_path / "r.txt"))
    assert bad.exit_code == 2 and "give a .parquet or .csv file name" in bad.stderr
    gone = invoke("fit", "-l", "br", "--out", str(tmp_path / "no" / "r.csv"))
    assert gone.exit_code == 2 and "does not exist" in gone.stderr


def test_warmup_reports_progress_on_stderr_and_json_on_stdout() -> None:
    result = CliRunner().invoke(app, ["warmup", "--learner", "br", "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    pieces = json.loads(result.stdout)
    assert [p["name"] for p in pieces] == ["loaders", "metrics", "thresholds", "br"]
    assert all(p["error"] is None for p in pieces)
    assert "[1/4] loaders ..." in result.stderr and "warmed up 4 of 4" in result.stderr


def test_warmup_unknown_learner_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["warmup", "--learner", "no_such_learner"])
    assert result.exit_code == 2
    assert "no_such_learner" in result.stderr


def test_learner_predictions_pass_sklearn_multilabel_output_checks() -> None:
    """Predictions take the training labels' dtype (scikit-learn's two multi-label
    output checks); a learner refuses X with 0 features. The multioutput check also
    compares predict with predict_proba rounded at 0.5, which holds only for learners
    thresholding at 0.5 (not for joint decisions or fitted thresholds)."""
    from sklearn.utils.estimator_checks import (
        check_classifier_multioutput,
        check_classifiers_multilabel_output_format_predict,
    )

    for name in ("br", "cc", "lp", "xdcc"):
        check_classifiers_multilabel_output_format_predict(name, mlw.get_learner(name, seed=0))
        with pytest.raises(ValueError, match="0 features"):
            mlw.get_learner(name).fit(np.zeros((4, 0)), np.eye(4, 2, dtype=int))
    for name in ("br", "cc", "xdcc"):   # at 0.5: the defaults tune a threshold
        check_classifier_multioutput(name, mlw.get_learner(name, seed=0, threshold="fixed"))
    Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]] * 3)
    X = np.arange(24.0).reshape(12, 2)
    for dtype in (np.int64, np.uint8, bool, np.float64):
        pred = mlw.get_learner("br").fit(X, Y.astype(dtype)).predict(X)
        assert pred.dtype == np.dtype(dtype)
