"""Decoders and conformal sets through the one evaluation path: ``mlw.holdout``,
``mlw fit --decode/--conformal`` and ``mlw bench`` configs give the metrics of the
decoded label sets, and the report draws the reliability diagram."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import mlw
from mlw_cli.main import app

METRICS = ["f1_example", "subset_accuracy", "hamming_loss"]


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def emotions():
    return mlw.load_dataset("emotions"), mlw.load_dataset("emotions", split="test")


@pytest.mark.pipeline
def test_holdout_scores_each_metric_on_its_decoders_label_sets(emotions) -> None:
    train, test = emotions
    result = mlw.holdout(mlw.get_learner("pcc"), train, test, METRICS, decode="matched")
    model = mlw.get_learner("pcc").fit(train.X, train.Y)
    for metric, decoder in (("f1_example", "f1"), ("subset_accuracy", "subset"),
                            ("hamming_loss", "hamming")):
        labels = mlw.get_decoder(decoder).decode(model, test.X)
        expected = mlw.evaluate(test.Y, labels, metrics=[metric])[metric]
        assert result.metrics[metric] == pytest.approx(expected, abs=1e-12)
    assert "decoded: f1 for f1_example; subset for subset_accuracy" in result.decision
    plain = mlw.holdout(mlw.get_learner("pcc"), train, test, METRICS)
    assert result.metrics["f1_example"] > plain.metrics["f1_example"]
    assert result.folds[0].reliability.shape == (10, 3)


@pytest.mark.pipeline
@pytest.mark.parametrize("spec, control, metric, loss", [
    ("recall:0.8", "recall", "fnr_example", "false_negative_rate"),
    ("precision:0.4", "precision", "precision_example", "precision_loss"),
])
def test_holdout_with_a_conformal_target(emotions, spec, control, metric, loss) -> None:
    train, test = emotions
    result = mlw.holdout(mlw.get_learner("br"), train, test, ["f1_example"],
                         conformal=spec)
    assert set(result.metrics) == {"f1_example", metric}
    target = float(spec.split(":")[1])
    model = mlw.ConformalLabelSets(mlw.get_learner("br"), control=control,
                                   alpha=round(1 - target, 12)).fit(train.X, train.Y)
    value = getattr(mlw.conformal, loss)(test.Y, model.predict(test.X)).mean()
    assert result.metrics[metric] == pytest.approx(
        value if control == "recall" else 1 - value, abs=1e-12)


def test_bad_conformal_choices_fail_before_any_fit() -> None:
    with pytest.raises(ValueError, match="not both"):
        mlw.prepare_evaluation(mlw.get_learner("br"), None, "pcut", conformal="recall:0.9")
    with pytest.raises(ValueError, match="only recall or precision"):
        mlw.prepare_evaluation(mlw.get_learner("br"), conformal="f1:0.9")
    with pytest.raises(ValueError, match="cannot control precision"):
        mlw.prepare_evaluation(mlw.get_learner("br"), conformal="precision:0.9:crc")


@pytest.mark.pipeline
def test_mlw_fit_decode_and_conformal() -> None:
    out = _invoke("fit", "--learner", "pcc", "--data", "emotions", "--decode", "f1",
                  "--metrics", "f1_example", "--json")
    assert out.exit_code == 0
    obj = json.loads(out.stdout)
    assert "decoded: f1 for f1_example" in obj["threshold"]
    out = _invoke("fit", "--learner", "br", "--data", "emotions", "--conformal",
                  "recall:0.9", "--json")
    obj = json.loads(out.stdout)
    assert obj["conformal"]["target_recall"] == 0.9
    assert obj["conformal"]["achieved_recall"] == pytest.approx(
        1 - obj["metrics"]["fnr_example"])
    table = _invoke("fit", "--learner", "br", "--data", "emotions", "--conformal",
                    "recall:0.9")
    assert "conformal recall: achieved" in table.stdout and "target 0.9" in table.stdout
    out = _invoke("fit", "--learner", "br", "--data", "emotions", "--conformal",
                  "precision:0.4", "--json")
    obj = json.loads(out.stdout)
    assert obj["conformal"] == {"target_precision": 0.4, "method": "ltt", "certified": True,
                                "achieved_precision": obj["metrics"]["precision_example"]}
    table = _invoke("fit", "--learner", "br", "--data", "emotions", "--conformal",
                    "precision:0.4")
    assert "conformal precision: achieved" in table.stdout
    assert "target 0.4 (ltt, guaranteed with probability >= 0.9" in table.stdout
    # a precision no cut-off certifies on emotions' calibration rows: every set is empty,
    # and the line says there is no guarantee instead of claiming one
    table = _invoke("fit", "--learner", "br", "--data", "emotions", "--conformal",
                    "precision:0.95")
    assert table.exit_code == 0
    assert "no cut-off certified" in table.stdout and "guaranteed" not in table.stdout
    out = _invoke("fit", "--learner", "br", "--data", "emotions", "--conformal",
                  "precision:0.95", "--json")
    assert json.loads(out.stdout)["conformal"]["certified"] is False
    for spec, message in (("precision:0.9:crc", "cannot control precision"),
                          ("f1:0.9", "only recall or precision")):
        bad = _invoke("fit", "--learner", "br", "--data", "emotions", "--conformal", spec)
        assert bad.exit_code == 2 and message in bad.output
        assert len(bad.output.strip().splitlines()) == 1
    bad = _invoke("fit", "--learner", "br", "--data", "emotions", "--decode", "f9")
    assert bad.exit_code == 2 and "unknown decoder 'f9'" in bad.output


@pytest.mark.pipeline
def test_bench_config_decodes_per_learner_and_reports_reliability(tmp_path) -> None:
    config = tmp_path / "exp.toml"
    config.write_text("""
[experiment]
name = "decoding"
metrics = ["f1_example", "subset_accuracy"]
folds = 2
datasets = [{name = "emotions", source = "emotions"}]

[learners.pcc]
learner = "pcc"

[learners.pcc_f1]
learner = "pcc"
decode = {f1_example = "f1"}
""")
    store = tmp_path / "res.parquet"
    assert _invoke("bench", "--config", str(config), "--out", str(store)).exit_code == 0
    df = mlw.experiments.read_results(store)
    rows = {(r["learner"], r["fold"]): r for r in df.iter_rows(named=True)}
    assert "decoded: f1 for f1_example" in rows[("pcc_f1", 0)]["decision"]
    assert rows[("pcc", 0)]["metric_subset_accuracy"] == rows[("pcc_f1", 0)][
        "metric_subset_accuracy"]  # not decoded: the same fit, the same label sets
    assert np.asarray(json.loads(rows[("pcc", 0)]["reliability"])).shape == (10, 3)
    assert rows[("pcc", 0)]["cell_id"] != rows[("pcc_f1", 0)]["cell_id"]
    report = tmp_path / "rep"
    assert _invoke("report", str(store), "--out", str(report)).exit_code == 0
    assert (report / "reliability-emotions.png").exists()
    assert "Reliability diagram: emotions" in (report / "report.md").read_text()
