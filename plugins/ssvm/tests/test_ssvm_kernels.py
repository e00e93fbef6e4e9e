"""Joint-constraint sums and the constraint cache against plain numpy."""

from __future__ import annotations

import naive_ssvm as naive
import numpy as np
import pytest
import scipy.sparse as sp

from mlw_ssvm import _kernels as K
from mlw_ssvm._cutting_plane import constraint_sum, scores


def _data(seed: int, n: int = 30, p: int = 7, L: int = 5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * (rng.random((n, p)) < 0.4)
    Y = (rng.random((n, L)) < 0.3).astype(np.uint8)
    Ybar = (rng.random((n, L)) < 0.3).astype(np.uint8)
    return X, Y, Ybar


@pytest.mark.parametrize("bias", [1.0, 0.0, 2.5])
def test_constraint_sum_dense_and_csr_match_numpy(bias):
    for seed in range(5):
        X, Y, Ybar = _data(seed)
        want = naive.constraint_sum(X, bias, Y, Ybar)
        assert np.allclose(constraint_sum(X, bias, Y, Ybar), want)
        assert np.allclose(constraint_sum(sp.csr_matrix(X), bias, Y, Ybar), want)


def test_margin_gap_is_the_inner_product_with_the_constraint():
    X, Y, Ybar = _data(7)
    W = np.random.default_rng(7).normal(size=(X.shape[1] + 1, Y.shape[1]))
    S = scores(X, W, 1.5)
    g = naive.constraint_sum(X, 1.5, Y, Ybar)
    assert K.margin_gap(S, Y, Ybar) == pytest.approx(float((W * g).sum()))
    assert np.allclose(scores(sp.csr_matrix(X), W, 1.5), S)


def test_cache_returns_the_most_violated_cached_vector_or_y():
    n, L, m = 3, 4, 2
    S = np.array([[0.5, -0.5, 0.2, 0.0], [2.0, 2.0, -2.0, -2.0], [0.0, 0.0, 0.0, 0.0]])
    Y = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]], np.uint8)
    cY = np.zeros((n, m, L), np.uint8)
    closs = np.zeros((n, m))
    count = np.zeros(n, np.int64)
    cand = np.array([[0, 0, 0, 0], [1, 1, 0, 0], [1, 0, 0, 0]], np.uint8)
    lo = K.losses(K.LOSS_HAMMING, 1.0, Y, cand)
    assert K.cache_insert(S, Y, cand, lo, cY, closs, count) == 2  # row 1: cand == y
    assert count.tolist() == [1, 0, 1]
    assert K.cache_insert(S, Y, cand, lo, cY, closs, count) == 0  # duplicates
    Ybar, got = K.cache_best(S, Y, cY, closs, count)
    # row 0: loss 1 - 0.5 = 0.5 > 0 -> the cached vector; row 1: nothing cached -> y;
    # row 2: loss 1 + 0 = 1 -> cached
    assert Ybar.tolist() == [[0, 0, 0, 0], [1, 1, 0, 0], [1, 0, 0, 0]]
    assert got.tolist() == [1.0, 0.0, 1.0]
    # a full cache drops its least violated entry
    more = np.array([[1, 0, 1, 0], [1, 1, 0, 0], [0, 1, 0, 0]], np.uint8)
    K.cache_insert(S, Y, more, K.losses(K.LOSS_HAMMING, 1.0, Y, more), cY, closs, count)
    last = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0]], np.uint8)
    K.cache_insert(S, Y, last, K.losses(K.LOSS_HAMMING, 1.0, Y, last), cY, closs, count)
    assert count.tolist() == [2, 0, 2]
    # row 0 held [0,0,0,0] (violation 0.5) and [1,0,1,0] (1 + 0.2 = 1.2); the new
    # [1,1,0,0] (1 - 0.5 = 0.5) replaced the less violated of the two
    rows0 = {tuple(v) for v in cY[0]}
    assert (1, 0, 1, 0) in rows0 and (1, 1, 0, 0) in rows0
