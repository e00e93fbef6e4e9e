"""One evaluation path: a test file whose attributes come in another order than the
training file's is aligned by name by ``mlw fit``, ``mlw bench`` (in this process and
on Dask workers) and ``mlw.holdout`` alike, so all give the metrics of the unswapped
file; a test file with a missing or an extra attribute gets the same one-line error
from all of them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

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
