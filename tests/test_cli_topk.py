"""``mlw predict --top-k``: ranked label lists from a saved model, on a svmlight file."""

from __future__ import annotations

import csv
import io

import numpy as np
import scipy.sparse as sp
from typer.testing import CliRunner

import mlw
from mlw.io import write_svmlight
from mlw_cli.main import app


def _invoke(*args):
    return CliRunner().invoke(app, list(args))


def test_predict_top_k_writes_ranked_lists(tmp_path) -> None:
    train = mlw.load_dataset("emotions")
    test = mlw.load_dataset("emotions", split="test")
    tr, te = tmp_path / "train.svm", tmp_path / "test.svm"
    write_svmlight(train, tr)
    write_svmlight(test, te)
    model = tmp_path / "m.mlw"
    r = _invoke("fit", "--learner", "lcif", "--data", str(tr), "--save", str(model))
    assert r.exit_code == 0, r.output
    out = tmp_path / "top.csv"
    r = _invoke("predict", "--model", str(model), "--data", str(te), "--top-k", "3",
                "--out", str(out))
    assert r.exit_code == 0, r.output
    rows = list(csv.reader(io.StringIO(out.read_text())))
    assert rows[0] == ["label_1", "score_1", "label_2", "score_2", "label_3", "score_3"]
    fitted = mlw.load_model(model)
    ds = mlw.load_dataset(te, n_features=fitted.n_features_in_)
    want = fitted.predict_topk(ds.X, 3)
    assert len(rows) == 1 + test.n_instances
    for row, idx, sc in zip(rows[1:], want.indices, want.scores, strict=True):
        assert row[0::2] == [f"label_{j}" if j >= 0 else "" for j in idx]
        assert [float(v) for v in row[1::2] if v] == sc[idx >= 0].tolist()
    # scores decrease along every row
    S = np.array([[float(v or 0) for v in row[1::2]] for row in rows[1:]])
    assert (np.diff(S, axis=1) <= 0).all()
    assert sp.issparse(ds.X)


def test_predict_top_k_refuses_zero(tmp_path) -> None:
    model = tmp_path / "m.mlw"
    assert _invoke("fit", "--learner", "br", "--save", str(model)).exit_code == 0
    r = _invoke("predict", "--model", str(model), "--data", "emotions", "--top-k", "0")
    assert r.exit_code == 2 and "--top-k must be a positive integer" in r.output
