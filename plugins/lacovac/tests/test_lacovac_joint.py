"""The trees' joint P(y | x) for the decoders: size marginals equal to enumeration of
``log_proba_of`` over all label vectors, draws that follow it, and the ``f1``
decoder's GFM equal to brute-force maximisation of the expected F1."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw_lacovac import MLC45, LaCova, LaCovaC, LaCovaCForest
from mlw_lacovac import model as lacovac_model

L = 6
VECTORS = np.array(list(itertools.product((0, 1), repeat=L)), dtype=np.uint8)


def _data(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two correlated pairs and two labels of their own, so trees split vertically."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    Z = X @ rng.normal(size=(4, L)) + rng.normal(scale=1.5, size=(n, L))
    Y = (Z > 0.8).astype(np.uint8)
    Y[:, 1] |= Y[:, 0]
    Y[:, 3] = Y[:, 2] ^ (rng.random(n) < 0.1)
    return X, Y


def _table(model, x: np.ndarray) -> np.ndarray:
    """The model's joint over all 2**L vectors for one row, from ``log_proba_of``."""
    return np.exp(model.log_proba_of(np.repeat(x[None], len(VECTORS), axis=0), VECTORS))


def _size_marginals(table: np.ndarray) -> np.ndarray:
    out = np.zeros((L, L))
    for p, y in zip(table, VECTORS, strict=True):
        for j in np.flatnonzero(y):
            out[j, y.sum() - 1] += p
    return out


def _expected_f1(table: np.ndarray) -> np.ndarray:
    """The expected F1 of every candidate set (rows of VECTORS) under ``table``."""
    V = VECTORS.astype(float)
    den = V.sum(1)[:, None] + V.sum(1)[None, :]
    with np.errstate(invalid="ignore"):
        F = np.where(den == 0, 1.0, 2 * (V @ V.T) / den)
    return table @ F


MODELS = {
    "lacovac": lambda a: LaCovaC(alpha=a),
    "lacova": lambda a: LaCova(alpha=a),
    "ml_c45": lambda a: MLC45(alpha=a),
    "forest": lambda a: LaCovaCForest(n_estimators=4, alpha=a),
}


@pytest.fixture(scope="module")
def data():
    return _data()


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("alpha", [0.0, 1.0, 3.0])
def test_size_marginals_equal_enumeration_of_the_joint(data, name, alpha):
    X, Y = data
    model = MODELS[name](alpha).fit(X, Y)
    P = model.size_marginals(X[:12])
    assert P.shape == (12, L, L) and P.dtype == np.float64
    for i in range(12):
        np.testing.assert_allclose(P[i], _size_marginals(_table(model, X[i])), rtol=0,
                                   atol=1e-12)


def test_rows_reach_several_independent_blocks(data):
    """The convolution of blocks is exercised: rows reach up to one leaf per label."""
    X, Y = data
    reached = (LaCovaC().fit(X, Y).tree_.route(X[:12]) >= 0).sum(axis=1)
    assert reached.min() >= 2 and reached.max() >= 5
    assert (MLC45().fit(X, Y).tree_.route(X[:12]) >= 0).sum(axis=1).max() == 1


def test_sparse_rows_give_the_same_size_marginals(data):
    X, Y = data
    X = np.where(X > 0.3, X, 0.0)
    model = LaCovaC().fit(X, Y)
    np.testing.assert_array_equal(model.size_marginals(sp.csr_matrix(X[:20])),
                                  model.size_marginals(X[:20]))


@pytest.mark.parametrize("name", ["lacovac", "forest"])
def test_f1_decoder_is_the_exact_expected_f1_optimum(data, name):
    X, Y = data
    model = MODELS[name](1.0).fit(X, Y)
    result = mlw.get_decoder("f1").decode_detailed(model, X[:10])
    assert result.route == "exact GFM"
    for i in range(10):
        exp = _expected_f1(_table(model, X[i]))
        chosen = int(result.labels[i] @ (1 << np.arange(L)[::-1]))
        assert result.expected[i] == pytest.approx(exp.max(), abs=1e-9)
        assert exp[chosen] == pytest.approx(exp.max(), abs=1e-9)


@pytest.mark.parametrize("name", ["lacovac", "forest"])
def test_samples_follow_the_joint(data, name):
    X, Y = data
    model = MODELS[name](1.0).fit(X, Y)
    S = model.sample_labels(X[:2], n_samples=20000, random_state=5)
    assert S.shape == (2, 20000, L) and S.dtype == np.uint8
    for i in range(2):
        freq = np.bincount(S[i].astype(np.int64) @ (1 << np.arange(L)[::-1]),
                           minlength=2 ** L) / 20000
        np.testing.assert_allclose(freq, _table(model, X[i]), rtol=0, atol=0.015)
    np.testing.assert_array_equal(S, model.sample_labels(X[:2], n_samples=20000,
                                                         random_state=5))


def test_raw_frequencies_draw_only_observed_subsets(data):
    """With alpha = 0 the joint lives on the leaves' observed subsets."""
    X, Y = data
    model = MLC45(alpha=0.0).fit(X, Y)
    S = model.sample_labels(X[:3], n_samples=500, random_state=0)
    leaf = model.tree_.leaf
    for i, lid in enumerate(model.tree_.route(X[:3])[:, 0]):
        seen = {tuple(s) for s in leaf(int(lid)).subsets}
        assert {tuple(v) for v in S[i]} <= seen


def test_above_the_exact_size_the_f1_decoder_samples(data, monkeypatch):
    X, Y = data
    model = LaCovaC().fit(X, Y)
    monkeypatch.setattr(lacovac_model, "EXACT_SIZE_LABELS", L - 1)
    assert model.size_marginals(X[:3]) is None
    result = mlw.get_decoder("f1", n_samples=4000).decode_detailed(model, X[:5])
    assert result.route == "sampled GFM"
    for i in range(5):
        exp = _expected_f1(_table(model, X[i]))
        chosen = int(result.labels[i] @ (1 << np.arange(L)[::-1]))
        assert exp[chosen] >= exp.max() - 0.01


def test_bad_n_samples_is_refused(data):
    X, Y = data
    with pytest.raises(ValueError, match="n_samples"):
        LaCovaC().fit(X, Y).sample_labels(X[:2], n_samples=0)


def test_forest_log_proba_of_an_unseen_vector_is_minus_infinity(data):
    """With alpha = 0 a vector no tree's leaves observed has probability 0: log P is
    -inf (it was NaN)."""
    X, Y = data
    forest = LaCovaCForest(n_estimators=3, alpha=0.0).fit(X, Y)
    lp = forest.log_proba_of(np.repeat(X[:1], len(VECTORS), axis=0), VECTORS)
    assert not np.isnan(lp).any()
    assert np.isneginf(lp).any() and np.exp(lp).sum() == pytest.approx(1.0, abs=1e-12)
