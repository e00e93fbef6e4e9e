"""LCIF for rankings: the sim_power vote, the idf weighting, predict_topk, and the
cross-validated choice for a metric at k, each against a direct computation."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw_lcif import LCIF, InstanceKNN
from mlw_lcif.search import _folds, search_ranking


def _data(seed: int = 0, n: int = 150, d: int = 25, L: int = 7):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.3).astype(float)
    Y = ((X @ (rng.random((d, L)) < 0.2)) + rng.random((n, L)) > 1.5).astype(np.uint8)
    return X, Y


def _cos(A, B):
    A = A / np.maximum(np.linalg.norm(A, axis=1, keepdims=True), 1e-300)
    B = B / np.maximum(np.linalg.norm(B, axis=1, keepdims=True), 1e-300)
    return A @ B.T


@pytest.mark.parametrize("power", [1.0, 2.0, 3.5])
def test_sim_power_weighs_each_neighbour_by_its_powered_cosine(power):
    X, Y = _data()
    Xq = np.maximum(X[:10], np.arange(25) % 3 == 0)  # 0/1, as the scaler keeps them
    m = InstanceKNN(k_ins=7, sim_power=power, threshold="fixed").fit(X, Y)
    S = _cos(Xq, X)
    want = np.zeros((10, Y.shape[1]))
    for i in range(10):
        nb = np.lexsort((np.arange(X.shape[0]), -S[i]))[:7]
        w = S[i, nb] ** power
        want[i] = w @ Y[nb] / w.sum()
    np.testing.assert_allclose(m.predict_proba(Xq), want, atol=1e-12)


def test_idf_weighting():
    X, Y = _data(1)
    m = InstanceKNN(feature_norm="idf", threshold="fixed").fit(X, Y)
    df = (X > 0).sum(axis=0)
    idf = np.log((X.shape[0] + 1) / (df + 1)) + 1
    np.testing.assert_allclose(m.scaler_.transform(X).toarray(), X * idf)


def test_ranking_search_scores_are_the_folds_mean_metric():
    """Every grid point's score is what fitting that LCIF on each fold's training part
    and ranking its held-out part gives, averaged over the folds."""
    X, Y = _data(2)
    Ycsr = sp.csr_matrix(Y)
    res = search_ranking(X, Ycsr, norms=("max", "idf"), kind="lcif",
                         metric="precision_at_2", n_folds=3, seed=0)
    fold = _folds(Ycsr, 3, 0)
    for key in [("max", 5, 1.0, 5, 0.5), ("idf", 20, 4.0, 7, 0.3), (res["feature_norm"],
                res["k_ins"], res["sim_power"], res["k_feat"], res["lam"])]:
        norm, k, p, kf, lam = key
        got = []
        for f in range(3):
            tr, va = fold != f, fold == f
            m = LCIF(k_ins=k, k_feat=kf, lam=lam, sim_power=p, feature_norm=norm,
                     threshold="fixed").fit(X[tr], Y[tr])
            got.append(mlw.metrics.precision_at_k(Y[va], m.predict_topk(X[va], 2), k=2))
        assert res["scores"][key] == pytest.approx(np.mean(got), abs=1e-12)
    assert res["score"] == max(res["scores"].values())


def test_cv_for_a_metric_at_k_sets_the_chosen_parameters():
    X, Y = _data(3)
    m = LCIF(cv=2, cv_metric="precision_at_1").fit(X, Y)
    r = m.cv_results_
    assert (m.k_ins_, m.k_feat_, m.lam_, m.feature_norm_, m.sim_power_) == (
        r["k_ins"], r["k_feat"], r["lam"], r["feature_norm"], r["sim_power"])
    assert m.predict_topk(X[:5], 3).indices.shape == (5, 3)
    with pytest.raises(ValueError, match="not a metric at k"):
        LCIF(cv=2, cv_metric="recall_at_x").fit(X, Y)
