"""Conformal recall control, calibration wrappers and calibration metrics, against
brute force and scikit-learn."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.calibration import calibration_curve

import mlw
from mlw.calibration import CalibratedLearner, calibration_split
from mlw.conformal import (
    LTT_GRID,
    ConformalRecall,
    crc_cutoff,
    false_negative_rate,
    hoeffding_bentkus_pvalue,
    ltt_cutoff,
    positive_pairs,
)
from mlw.metrics.calibration import reliability_table


def _scored(rng: np.random.Generator, n: int, L: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Labels and noisy scores of them (exchangeable rows)."""
    Y = (rng.random((n, L)) < 0.3).astype(np.uint8)
    S = np.clip(0.35 * Y + 0.65 * rng.random((n, L)), 0, 1)
    return Y, S


def _mean_fnr(Y, S, lam) -> float:
    return float(false_negative_rate(Y, (S >= lam).astype(np.uint8)).mean())


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.3])
def test_crc_cutoff_is_the_largest_that_meets_the_bound(alpha) -> None:
    rng = np.random.default_rng(int(alpha * 100))
    Y, S = _scored(rng, 60)
    Y[0] = 0  # a row without true labels: FNR 0
    S[1, :2] = 0.5  # ties
    lam = crc_cutoff(*positive_pairs(Y, S), 60, alpha)
    n = 60
    ok = [c for c in np.r_[np.unique(S), np.inf]
          if (n * _mean_fnr(Y, S, c) + 1) / (n + 1) <= alpha + 1e-12]
    assert lam == max(ok)


def test_crc_cutoff_edges() -> None:
    Y = np.array([[1, 0], [0, 1]], np.uint8)
    S = np.array([[0.9, 0.1], [0.2, 0.8]])
    assert crc_cutoff(*positive_pairs(Y, S), 2, 0.2) == -math.inf  # (0 + 1) / 3 > 0.2
    Y[1] = 0  # one row without labels: (1 + 1) / 3 <= 0.7 even with empty sets
    assert crc_cutoff(*positive_pairs(Y, S), 2, 0.7) == math.inf


def test_ltt_cutoff_is_fixed_sequence_testing_on_the_grid() -> None:
    rng = np.random.default_rng(1)
    Y, S = _scored(rng, 300)
    lam = ltt_cutoff(*positive_pairs(Y, S), 300, 0.1, 0.1)
    chosen = -math.inf
    for c in LTT_GRID:
        if hoeffding_bentkus_pvalue(_mean_fnr(Y, S, c), 0.1, 300) > 0.1:
            break
        chosen = c
    assert lam == chosen
    assert _mean_fnr(Y, S, lam) <= 0.1


def test_hoeffding_bentkus_pvalue() -> None:
    assert hoeffding_bentkus_pvalue(0.0, 0.1, 50) == pytest.approx(0.9 ** 50)
    ps = [hoeffding_bentkus_pvalue(r, 0.1, 200) for r in (0.0, 0.02, 0.05, 0.08, 0.1)]
    assert ps == sorted(ps) and ps[-1] == 1.0


def test_crc_controls_the_expected_fnr_and_ltt_holds_its_level() -> None:
    """The guarantees, simulated: 400 exchangeable calibration/test draws of fixed
    scores (no learner to fit)."""
    rng = np.random.default_rng(7)
    Y, S = _scored(rng, 4000)
    alpha, delta, n_cal = 0.1, 0.1, 200
    crc, ltt_ok = [], []
    model = ConformalRecall(alpha=alpha, delta=delta)
    for _ in range(400):
        perm = rng.permutation(4000)
        cal, test = perm[:n_cal], perm[n_cal:]
        model.method = "crc"
        model._calibrate(S[cal], Y[cal])
        crc.append(_mean_fnr(Y[test], S[test], model.lambda_))
        model.method = "ltt"
        model._calibrate(S[cal], Y[cal])
        ltt_ok.append(_mean_fnr(Y[test], S[test], model.lambda_) <= alpha)
    assert np.mean(crc) <= alpha + 0.005
    assert np.mean(crc) >= alpha - 0.03  # not trivially conservative
    assert np.mean(ltt_ok) >= 1 - delta


@pytest.mark.pipeline
def test_conformal_recall_wraps_any_learner() -> None:
    train = mlw.load_dataset("emotions")
    model = ConformalRecall("br", alpha=0.2, calibration_size=0.4).fit(train.X, train.Y)
    assert model.n_calibration_ == round(0.4 * train.X.shape[0])
    assert model.calibration_fnr_ <= 0.2
    P = model.predict(train.X)
    np.testing.assert_array_equal(P, model.predict_proba(train.X) >= model.lambda_)
    again = clone(model).fit(train.X, train.Y)
    assert again.lambda_ == model.lambda_
    by_object = ConformalRecall(mlw.get_learner("br"), alpha=0.2,
                                calibration_size=0.4).fit(train.X, train.Y)
    assert by_object.lambda_ == model.lambda_
    with pytest.raises(ValueError, match="alpha"):
        ConformalRecall("br", alpha=1.5).fit(train.X, train.Y)


def test_sets_from_sparse_scores_stay_sparse() -> None:
    model = ConformalRecall()
    model.lambda_ = 0.4
    S = sp.csr_matrix(np.array([[0.5, 0.0, 0.3], [0.0, 0.9, 0.0]]))
    out = model.sets_from_scores(S)
    assert sp.issparse(out) and out.toarray().tolist() == [[1, 0, 0], [0, 1, 0]]
    model.lambda_ = -math.inf
    assert model.sets_from_scores(S).sum() == 6


def test_calibration_split() -> None:
    fit, cal = calibration_split(10, 0.3, 0)
    assert len(cal) == 3 and sorted(np.r_[fit, cal]) == list(range(10))
    with pytest.raises(ValueError, match="calibration_size"):
        calibration_split(10, 1.0, 0)


# -- calibration metrics and wrappers ------------------------------------------------------


def test_ece_agrees_with_sklearn_calibration_curve() -> None:
    rng = np.random.default_rng(2)
    S = rng.random((300, 4))
    Y = (rng.random((300, 4)) < S ** 2).astype(np.uint8)
    table = reliability_table(Y, S)
    prob_true, prob_pred = calibration_curve(Y.ravel(), S.ravel(), n_bins=10)
    counts = np.histogram(S.ravel(), bins=np.linspace(0, 1, 11))[0]
    expected = np.sum(counts[counts > 0] * np.abs(prob_true - prob_pred)) / S.size
    got = mlw.evaluate(Y, scores=S, metrics=["ece_pooled", "ece_macro"])
    assert got["ece_pooled"] == pytest.approx(expected, abs=1e-12)
    per_label = []
    for j in range(4):
        t, p = calibration_curve(Y[:, j], S[:, j], n_bins=10)
        c = np.histogram(S[:, j], bins=np.linspace(0, 1, 11))[0]
        per_label.append(np.sum(c[c > 0] * np.abs(t - p)) / 300)
    assert got["ece_macro"] == pytest.approx(np.mean(per_label), abs=1e-12)
    assert table[:, 0].sum() == S.size


def test_ece_of_sparse_scores_equals_dense() -> None:
    rng = np.random.default_rng(3)
    S = rng.random((50, 8)) * (rng.random((50, 8)) < 0.3)
    Y = (rng.random((50, 8)) < 0.2).astype(np.uint8)
    dense = mlw.evaluate(Y, scores=S, metrics=["ece_pooled", "ece_macro"])
    sparse = mlw.evaluate(sp.csr_matrix(Y), scores=sp.csr_matrix(S),
                          metrics=["ece_pooled", "ece_macro"])
    assert sparse == pytest.approx(dense, abs=1e-12)
    np.testing.assert_allclose(reliability_table(sp.csr_matrix(Y), sp.csr_matrix(S),
                                                 by_label=True),
                               reliability_table(Y, S, by_label=True), atol=1e-12)


def test_perfectly_calibrated_bins_have_zero_ece() -> None:
    S = np.repeat([[0.25], [0.75]], 4, axis=0)
    Y = np.array([[1], [0], [0], [0], [1], [1], [1], [0]])
    assert mlw.evaluate(Y, scores=S, metrics=["ece_pooled"])["ece_pooled"] == 0.0


@pytest.mark.pipeline
@pytest.mark.parametrize("method", ["isotonic", "platt"])
def test_calibration_wrapper_lowers_the_ece_of_miscalibrated_scores(method) -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1500, 3))
    Y = (X + rng.normal(scale=0.6, size=X.shape) > 0.4).astype(np.uint8)

    class Overconfident(mlw.MultiLabelLearner):
        def __init__(self, threshold="fixed"):
            self.threshold = threshold

        def _fit(self, X, Y):
            pass

        def _predict_proba(self, X):
            return 1.0 / (1.0 + np.exp(-6 * (X - 0.4)))

    raw = Overconfident(threshold="fixed").fit(X[:1000], Y[:1000])
    cal = CalibratedLearner(Overconfident(threshold="fixed"), method=method).fit(
        X[:1000], Y[:1000])
    te_x, te_y = X[1000:], Y[1000:]
    before = mlw.evaluate(te_y, scores=raw.predict_proba(te_x), metrics=["ece_pooled"])
    after = mlw.evaluate(te_y, scores=cal.predict_proba(te_x), metrics=["ece_pooled"])
    assert after["ece_pooled"] < 0.7 * before["ece_pooled"]
    assert cal.predict(te_x).shape == te_y.shape


def test_reliability_diagram_draws_a_png(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from mlw.experiments.plots import reliability_diagram

    rng = np.random.default_rng(8)
    S = rng.random((200, 3))
    Y = (rng.random((200, 3)) < S).astype(np.uint8)
    out = tmp_path / "reliability.png"
    reliability_diagram({"a": reliability_table(Y, S), "b": reliability_table(Y, S ** 2)}, out,
                        title="test")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
