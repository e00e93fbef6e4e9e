"""The issue's acceptance command and the model file, in process."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

import mlw
from mlw_cli.main import app


def test_mlw_fit_mc_prints_cll_loss(mulan_dir):
    result = CliRunner().invoke(app, [
        "fit", "--learner", "mc", "--data", str(mulan_dir / "emotions-train.arff"),
        "--test", str(mulan_dir / "emotions-test.arff"), "--param", "C=1.0",
        "--param", "max_trees=3", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["learner"] == "mc" and out["n_test"] == 202
    metrics = out["metrics"]
    # measured at the default factor="switching": cll_loss 489 on the 202
    # test instances (2.4 nats each), EMA 0.34 (factor=feature: 496, 0.29)
    assert 350 < metrics["cll_loss"] < 650
    assert 0.2 < metrics["subset_accuracy"] < 0.45


def test_model_file_round_trip(tmp_path, mulan_dir):
    tr = mlw.load_dataset(mulan_dir / "emotions-train.arff")
    model = mlw.get_learner("ctbn", C=1.0).fit(tr.X, tr.Y)
    path = mlw.save_model(model, tmp_path / "ctbn.mlw")
    assert mlw.read_header(path)["learner_distribution"] == "mlw-mctbn"
    back = mlw.load_model(path)
    np.testing.assert_allclose(back.log_proba_of(tr.X[:20], tr.Y[:20]),
                               model.log_proba_of(tr.X[:20], tr.Y[:20]))
