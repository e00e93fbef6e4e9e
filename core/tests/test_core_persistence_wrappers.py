"""Model files of the core's wrappers (conformal label sets, calibrated marginals): saved
and loaded like any learner, trusted for the wrapper and its wrapped learner only."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

import mlw
from mlw.persistence import (
    ModelTrustWarning,
    UntrustedModelError,
    load_model,
    read_header,
    save_model,
)
from mlw_cli.main import app


@pytest.fixture(scope="module")
def emotions():
    return mlw.load_dataset("emotions"), mlw.load_dataset("emotions", split="test")


@pytest.mark.parametrize("make", [
    lambda: mlw.ConformalRecall("br", alpha=0.1),
    lambda: mlw.ConformalRecall("cc", alpha=0.2, method="ltt"),
    lambda: mlw.ConformalLabelSets("br", control="precision", alpha=0.6),
    lambda: mlw.CalibratedLearner("br", method="isotonic"),
    lambda: mlw.CalibratedLearner("br", method="platt"),
], ids=["conformal-crc", "conformal-ltt", "conformal-precision", "isotonic", "platt"])
def test_a_wrapper_saves_without_a_trust_warning_and_loads_as_it_was(make, emotions, tmp_path):
    train, test = emotions
    model = make().fit(train.X, train.Y)
    path = tmp_path / "m.mlw"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelTrustWarning)
        save_model(model, path)
    header = read_header(path)
    assert header["learner"] is None
    assert header["wrapped_learner"] == model.estimator
    back = load_model(path)
    assert type(back) is type(model)
    np.testing.assert_array_equal(back.predict(test.X), model.predict(test.X))
    np.testing.assert_array_equal(back.predict_proba(test.X), model.predict_proba(test.X))


def test_a_wrapper_does_not_trust_what_its_learner_does_not_declare(emotions, tmp_path):
    """The wrapper widens trust by its own types and its learner's declarations only:
    any other type in the file still needs ``trusted=``."""
    import collections

    train, _ = emotions
    model = mlw.ConformalRecall("br", alpha=0.1).fit(train.X, train.Y)
    model.estimator_.note_ = collections.Counter("abc")  # declared by nobody
    path = tmp_path / "m.mlw"
    with pytest.warns(ModelTrustWarning, match="collections.Counter"):
        save_model(model, path)
    with pytest.raises(UntrustedModelError, match="collections.Counter"):
        load_model(path)
    assert load_model(path, trusted=["collections:Counter"]).estimator_.note_["a"] == 1


def test_mlw_predict_reads_the_model_mlw_fit_conformal_saved(tmp_path):
    runner = CliRunner()
    model, out = tmp_path / "c.mlw", tmp_path / "pred.csv"
    result = runner.invoke(app, ["fit", "--learner", "br", "--conformal", "recall:0.9",
                                 "--save", str(model)])
    assert result.exit_code == 0, result.output
    assert "ModelTrustWarning" not in result.output
    result = runner.invoke(app, ["predict", "--model", str(model), "--data", "emotions",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().strip()
