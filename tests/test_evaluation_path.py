"""One evaluation path: a test file whose attributes come in another order than the
training file's is aligned by name by ``mlw fit``, ``mlw bench`` (in this process and
on Dask workers) and ``mlw.holdout`` alike, so all give the metrics of the unswapped
file; a test file with a missing or an extra attribute gets the same one-line error
from all of them."""

from __future__ import annotations

import collections
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import mlw
from mlw_cli.main import app

DATA = Path(mlw.__file__).resolve().parent / "data"
METRICS = ("f1_example", "subset_accuracy", "hamming_loss")
SWAP = (0, 5)  # two feature columns with different values


def _rewrite_test_file(path: Path, *, swap: tuple[int, int] | None = None,
                       drop: int | None = None, add: bool = False) -> None:
    """The bundled emotions test file with two attributes (header and values) swapped,
    one dropped, or one extra numeric attribute added in front."""
    header, data, in_data = [], [], False
    for line in (DATA / "emotions-test.arff").read_text().splitlines():
        if in_data:
            if line.strip():
                data.append(line.split(","))
            continue
        header.append(line)
        in_data = line.strip().lower() == "@data"
    attrs = [i for i, h in enumerate(header) if h.lower().startswith("@attribute")]
    if swap is not None:
        a, b = swap
        ia, ib = attrs[a], attrs[b]
        header[ia], header[ib] = header[ib], header[ia]
        for row in data:
            row[a], row[b] = row[b], row[a]
    if drop is not None:
        del header[attrs[drop]]
        for row in data:
            del row[drop]
    if add:
        header.insert(attrs[0], "@attribute not_in_training numeric")
        for row in data:
            row.insert(0, "0.5")
    path.write_text("\n".join(header + [",".join(r) for r in data]) + "\n")


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("aligned")
    shutil.copy(DATA / "emotions-train.arff", d / "emo-train.arff")
    shutil.copy(DATA / "emotions.xml", d / "emo.xml")
    out = {"train": d / "emo-train.arff"}
    for name, change in (("plain", {}), ("swapped", {"swap": SWAP}),
                         ("missing", {"drop": 3}), ("extra", {"add": True})):
        _rewrite_test_file(d / f"{name}-test.arff", **change)
        shutil.copy(DATA / "emotions.xml", d / f"{name}.xml")
        out[name] = d / f"{name}-test.arff"
    return out


def _fit(files: dict[str, Path], test: str) -> tuple[int, dict]:
    result = CliRunner().invoke(app, ["fit", "--learner", "br", "--data", str(files["train"]),
                                      "--test", str(files[test]), "--metrics",
                                      ",".join(METRICS), "--json"])
    return result.exit_code, json.loads(result.stdout)


def _bench(files: dict[str, Path], test: str, tmp_path: Path, executor: str
           ) -> tuple[int, list[dict], str]:
    config = tmp_path / f"{test}-{executor}.toml"
    config.write_text(
        f'[experiment]\nname = "aligned"\nmetrics = {json.dumps(list(METRICS))}\n'
        f'datasets = [{{name = "emo", source = "{files["train"]}", '
        f'evaluation = "holdout", test = "{files[test]}"}}]\n[learners.br]\n')
    out = tmp_path / f"{test}-{executor}.parquet"
    result = CliRunner().invoke(app, ["bench", "--config", str(config), "--out", str(out),
                                      "--executor", executor, "--jobs", "1", "--json"])
    from mlw.experiments import read_results

    return result.exit_code, read_results(out).to_dicts(), result.stderr


def _holdout(files: dict[str, Path], test: str) -> dict[str, float]:
    train = mlw.load_dataset(str(files["train"]))
    result = mlw.holdout(mlw.get_learner("br", seed=0), train,
                         mlw.load_dataset(str(files[test])), list(METRICS))
    return result.metrics


@pytest.fixture(scope="module")
def reference(files) -> dict[str, float]:
    return _holdout(files, "plain")


def test_the_swapped_file_really_is_a_different_file(files, reference) -> None:
    plain = mlw.load_dataset(str(files["plain"]))
    swapped = mlw.load_dataset(str(files["swapped"]))
    assert plain.feature_names != swapped.feature_names
    assert (plain.X != swapped.X).any()
    # without aligning, a model trained on the training columns scores another number
    model = mlw.get_learner("br", seed=0).fit(*(lambda d: (d.X, d.Y))(
        mlw.load_dataset(str(files["train"]))))
    wrong = mlw.evaluate(swapped.Y, model.predict(swapped.X), metrics=list(METRICS))
    assert wrong != reference


def test_fit_holdout_and_bench_align_the_swapped_test_file(files, reference,
                                                            tmp_path) -> None:
    assert _holdout(files, "swapped") == reference
    code, fitted = _fit(files, "swapped")
    assert code == 0 and fitted["metrics"] == reference
    for executor in ("local", "dask"):
        if executor == "dask":
            pytest.importorskip("distributed")
        code, records, stderr = _bench(files, "swapped", tmp_path, executor)
        assert code == 0, stderr
        (record,) = records
        assert {m: record[f"metric_{m}"] for m in METRICS} == reference, executor


@pytest.mark.parametrize(("test", "message"), [
    ("missing", "missing-test: column 'Mean_Acc1298_Mean_Mem40_MFCC_0' of the training "
                "data is missing"),
    ("extra", "extra-test: column(s) the training data does not have: "
              "'not_in_training'"),
])
def test_a_missing_or_extra_attribute_is_the_same_error_everywhere(files, tmp_path, test,
                                                                   message) -> None:
    with pytest.raises(ValueError) as caught:
        _holdout(files, test)
    assert str(caught.value) == message
    code, fitted = _fit(files, test)
    assert code == 2 and fitted["error"]["message"] == message
    code, records, stderr = _bench(files, test, tmp_path, "local")
    (record,) = records
    assert code == 1 and record["status"] == "error"
    assert record["error"] == f"ValueError: {message}"


# --- every learner: mlw fit --cv, mlw bench and mlw.cross_validate run the same fold ------
K, FOLD = 5, 2
#: Parameters that make a learner fit emotions quickly (its defaults where it is fast).
FAST = {
    "br_xgb": "n_estimators=5,max_depth=3", "cc_xgb": "n_estimators=5,max_depth=3",
    "ml_xgb": "n_estimators=5,max_depth=3", "xdcc": "n_estimators=5,max_depth=3",
    "ctbn": "C=1.0", "mc": "C=1.0,n_trees=2,em_max_iter=5,n_anneal_iter=10",
    "epcc": "n_estimators=2", "ecc": "n_estimators=2", "rakel": "n_estimators=2",
    "lacova": "min_samples=60,max_bins=8", "feature_knn": "k_feat=5",
    "struct_f1": "C=1.0,max_iter=50", "struct_hamming": "C=1.0,max_iter=50",
    "struct_subset": "C=1.0,max_iter=50",
}


@pytest.fixture
def fold_only(monkeypatch, tmp_path) -> Path:
    """A test double around the one fit-and-score step: fold ``FOLD`` is fitted and
    scored as usual and its test rows' labels and predictions saved to a file of the
    returned folder (whichever process runs it: ``mlw fit --cv`` and ``mlw bench`` run
    folds in supervised child processes); the other folds return an empty result
    without fitting (so each path fits one fold)."""
    import itertools

    import mlw.evaluation as evaluation
    from mlw.fold_results import FoldResult

    real = evaluation.fit_and_evaluate
    folder = tmp_path / "folds"
    folder.mkdir()
    counter = itertools.count()

    def one_fold(plan, train, test, *, fold=None):
        if fold is not None and fold != FOLD:
            return FoldResult({}, 0.0, 0.0, train.n_instances, test.n_instances, fold), None
        result, model = real(plan, train, test, fold=fold)
        np.savez(folder / f"{os.getpid()}-{next(counter)}.npz", Y=_dense(test.Y),
                 predicted=_dense(model.predict(test.X)))
        return result, model

    monkeypatch.setattr(evaluation, "fit_and_evaluate", one_fold)
    return folder


def _dense(M) -> np.ndarray:
    return M.toarray() if hasattr(M, "toarray") else np.asarray(M)


@pytest.mark.parametrize("name", sorted(mlw.list_learners()))
def test_fit_bench_and_cross_validate_give_the_same_fold(name, fold_only, tmp_path) -> None:
    from mlw.params import Spec

    options = FAST.get(name, "")
    spec_text = f"{name}:{options}" if options else name
    params = Spec.parse(spec_text, "learner").params(
        mlw.list_learners()[name].signature_params())
    api = mlw.cross_validate(mlw.get_learner(name, seed=0, **params),
                             mlw.load_dataset("emotions", split="all"), k=K, seed=0)
    fit = CliRunner().invoke(app, ["fit", "--learner", name, "--cv", str(K), "--seed", "0",
                                   "--json", *[a for item in Spec.parse(spec_text, "learner")
                                               .items for a in ("--param", item)]])
    assert fit.exit_code == 0, fit.output
    bench = CliRunner().invoke(app, ["bench", "--learners", spec_text, "--datasets",
                                     "emotions", "--cv", str(K), "--folds", str(FOLD),
                                     "--seed", "0", "--out", str(tmp_path / "r.parquet"),
                                     "--json"])
    assert bench.exit_code == 0, bench.output
    from mlw.experiments import read_results

    (record,) = read_results(tmp_path / "r.parquet").to_dicts()
    expected = api.folds[FOLD].metrics
    assert json.loads(fit.stdout)["folds"][FOLD]["metrics"] == expected
    assert {k[len("metric_"):]: v for k, v in record.items()
            if k.startswith("metric_") and v is not None} == expected
    first, *others = [np.load(f) for f in sorted(fold_only.iterdir())]
    assert len(others) == 2  # one fold fitted by each path
    for other in others:
        np.testing.assert_array_equal(other["Y"], first["Y"])
        np.testing.assert_array_equal(other["predicted"], first["predicted"])


def test_fast_parameters_name_registered_learners() -> None:
    assert set(FAST) <= set(mlw.list_learners())


# --- one lookup per learner per cell, one parse per threshold text per run ---------------
@pytest.fixture
def counted(monkeypatch, tmp_path) -> Callable[[], dict[str, collections.Counter]]:
    """Test doubles counting registry lookups of learners by name and readings of a
    threshold text (with a fresh parse cache), in this process and in the child
    processes that run folds and cells (each call appends a line to a file); returns
    a function reading the counts so far."""
    import weakref

    import mlw.learner
    from mlw.plugins import PluginManager

    log = tmp_path / "calls.txt"
    lookup, parse = PluginManager.learner, mlw.learner.parse_threshold

    def note(kind: str, name: str) -> None:
        with open(log, "a") as fh:
            fh.write(f"{kind}\t{name}\n")

    def counting_lookup(self, name):
        note("learner", name)
        return lookup(self, name)

    def counting_parse(text):
        note("threshold", text)
        return parse(text)

    monkeypatch.setattr(PluginManager, "learner", counting_lookup)
    monkeypatch.setattr(mlw.learner, "parse_threshold", counting_parse)
    monkeypatch.setattr(mlw.learner, "_PARSED", weakref.WeakKeyDictionary())

    def counts() -> dict[str, collections.Counter]:
        out = {"learner": collections.Counter(), "threshold": collections.Counter()}
        lines = log.read_text().splitlines() if log.exists() else []
        for kind, name in (line.split("\t") for line in lines):
            out[kind][name] += 1
        return out

    return counts


def test_fit_looks_its_learner_up_once_and_reads_its_threshold_once(counted) -> None:
    result = CliRunner().invoke(app, ["fit", "--learner", "br", "--cv", "5", "--threshold",
                                      "fixed:0.4", "--metrics", "f1_micro", "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["folds"]) == 5
    assert counted()["learner"] == {"br": 1}
    assert counted()["threshold"] == {"fixed:0.4": 1}  # 5 folds, 5 fits: one reading


def test_bench_looks_each_learner_up_once_per_cell(counted, tmp_path) -> None:
    from mlw.experiments import parse_config, run_experiment

    experiment = parse_config({
        "experiment": {"datasets": ["emotions"], "folds": 3, "metrics": ["f1_micro"]},
        "learners": {"br": {"threshold": "fixed:0.4"},
                     "cc": {"threshold": "fixed:0.4"},
                     "centroid": {"learner": "template_centroid"}}})
    summary = run_experiment(experiment, tmp_path / "r.parquet")
    assert (summary.ran, summary.errors) == (9, [])
    counts = counted()
    # one when the experiment is checked, then one in each of its 3 cells
    assert counts["learner"] == {"br": 4, "cc": 4, "template_centroid": 4}
    # every text (ours, and a learner's default such as the centroid's) read once
    assert counts["threshold"]["fixed:0.4"] == 1
    assert set(counts["threshold"].values()) == {1}
