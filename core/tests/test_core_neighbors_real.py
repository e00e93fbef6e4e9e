"""mlw.neighbors on real data: the same neighbours as scikit-learn's brute-force
NearestNeighbors (dense emotions, sparse enron; cosine and Euclidean), and the 0/1
kernel equal to the general kernel on enron and across default-size tiles."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

import mlw
from mlw.neighbors import NeighborIndex


def _agree_with_sklearn(T, Q, metric: str, k: int) -> None:
    idx, val = NeighborIndex(T, metric=metric).query(Q, k=k)
    nn = NearestNeighbors(n_neighbors=k, metric=metric, algorithm="brute").fit(T)
    d_sk, i_sk = nn.kneighbors(Q)
    ours = 1.0 - val if metric == "cosine" else val
    if metric == "cosine":  # ours keeps positive similarities only
        keep = idx >= 0
        assert keep.mean() > 0.9
        np.testing.assert_allclose(ours[keep], d_sk[keep], atol=1e-9)
    else:
        np.testing.assert_allclose(ours, d_sk, atol=1e-6)
    # the same rows wherever the distance is not tied (sklearn's tie order is arbitrary)
    for i in range(idx.shape[0]):
        d = d_sk[i]
        for j in range(k):
            if idx[i, j] < 0:
                continue
            tied = np.abs(d - d[j]) < 1e-9
            if tied.sum() == 1 and d[j] < d[-1] - 1e-9:  # inside the k, untied
                assert idx[i, j] == i_sk[i, j]


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_dense_emotions_agree_with_sklearn(mulan_dir, metric: str) -> None:
    tr = mlw.load_dataset(mulan_dir / "emotions-train.arff")
    te = mlw.load_dataset(mulan_dir / "emotions-test.arff")
    _agree_with_sklearn(tr.X, te.X, metric, 10)
    # the same index over CSR rows: the same neighbours
    a = NeighborIndex(tr.X, metric=metric).query(te.X, k=10)
    b = NeighborIndex(sp.csr_matrix(tr.X), metric=metric).query(te.X, k=10)
    assert np.array_equal(a[0], b[0])
    np.testing.assert_allclose(a[1], b[1], rtol=1e-9)


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_sparse_enron_agrees_with_sklearn(mulan_dir, metric: str) -> None:
    tr = mlw.load_dataset(mulan_dir / "enron-train.arff")
    te = mlw.load_dataset(mulan_dir / "enron-test.arff")
    assert sp.issparse(tr.X)
    _agree_with_sklearn(tr.X, te.X[:300], metric, 10)


def test_binary_kernel_is_the_general_kernel_on_enron(mulan_dir) -> None:
    # enron's 1,001 0/1 word features: leave-one-out kNN of the training set and the
    # test set's kNN, the 0/1 kernel (small tiles, so several) against the general one
    tr = mlw.load_dataset(mulan_dir / "enron-train.arff")
    te = mlw.load_dataset(mulan_dir / "enron-test.arff")
    fast = NeighborIndex(tr.X, tile=256)
    slow = NeighborIndex(tr.X, binary_kernel=False)
    assert fast.binary and not slow.binary
    for Q in (None, te.X):
        a, b = fast.query(Q, k=20), slow.query(Q, k=20)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_binary_kernel_across_default_tiles() -> None:
    rng = np.random.default_rng(9)
    T = sp.random(40000, 60, density=0.08, format="csr", random_state=1)
    T.data[:] = 1.0
    Q = sp.random(300, 60, density=0.08, format="csr", random_state=2)
    Q.data[:] = 1.0
    fast = NeighborIndex(T)
    slow = NeighborIndex(T, binary_kernel=False)
    assert fast.binary and fast._tile_indptr.shape[0] == 3
    a, b = fast.query(Q, k=15), slow.query(Q, k=15)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    allowed = rng.random(40000) < 0.3
    rows = np.arange(200)
    a = fast.query(T[:200], k=4, exclude=rows, allowed=allowed)
    b = slow.query(T[:200], k=4, exclude=rows, allowed=allowed)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
