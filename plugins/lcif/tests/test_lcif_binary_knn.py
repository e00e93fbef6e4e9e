"""The binary kNN kernel (integer overlap counts, tiled rows sorted by length, block
pruning) gives exactly what the general kernel and the brute force give: neighbours,
order, ties and similarities."""

from __future__ import annotations

import naive_lcif as naive
import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw_lcif import _prep as P


def _binary(rng: np.random.Generator, n: int, d: int, density: float) -> np.ndarray:
    M = (rng.random((n, d)) < density).astype(float)
    M[rng.integers(0, n)] = 0.0  # an all-zero row
    return M


def _lists(idx: np.ndarray, sim: np.ndarray) -> list[list[tuple[int, float]]]:
    return [[(int(r), float(s)) for r, s in zip(ri, si, strict=True) if r >= 0]
            for ri, si in zip(idx, sim, strict=True)]


def _general(index: P.InvertedIndex) -> P.InvertedIndex:
    """The same index with the binary path switched off."""
    index.binary = False
    return index


@pytest.mark.parametrize("k", [1, 3, 8])
@pytest.mark.parametrize("tile", [64, 128, 16384])
def test_binary_knn_matches_brute_force(k: int, tile: int) -> None:
    rng = np.random.default_rng(k * 7 + tile)
    T = _binary(rng, 230, 14, 0.25)  # few features: many exact ties
    Q = _binary(rng, 30, 14, 0.25)
    index = P.InvertedIndex(sp.csr_matrix(T), tile=tile)
    assert index.binary
    idx, sim = P.knn(sp.csr_matrix(Q), index, k, q_block=7)
    assert _lists(idx, sim) == naive.knn(Q, T, k)


def test_binary_knn_leave_one_out_and_mask_match_brute_force() -> None:
    rng = np.random.default_rng(5)
    T = _binary(rng, 150, 12, 0.3)
    M = sp.csr_matrix(T)
    index = P.InvertedIndex(M, tile=64)
    idx, sim = P.knn(M, index, 5, self_offset=0, block=40)
    assert _lists(idx, sim) == naive.knn(T, T, 5, exclude_self=True)
    allowed = (rng.random(150) < 0.5).astype(np.uint8)
    idx, sim = P.knn(M, index, 5, allowed=allowed)
    assert _lists(idx, sim) == naive.knn(T, T, 5, allowed=allowed)


def test_binary_knn_long_queries_and_sparse_tiles() -> None:
    # queries with more than 127 (no word-parallel test) and more than 255 non-zeros
    # (general kernel) next to short ones; a training set whose tiles are mostly empty
    # for most queries (the touched-rows mode)
    rng = np.random.default_rng(2)
    d = 400
    T = _binary(rng, 300, d, 0.02)
    T[:40] = (rng.random((40, d)) < 0.7)
    Q = _binary(rng, 12, d, 0.02)
    Q[0] = rng.random(d) < 0.4   # ~160 non-zeros
    Q[1] = rng.random(d) < 0.8   # ~320 non-zeros
    Q[2, :] = 0.0
    Q[2, 5] = 1.0
    M, Qs = sp.csr_matrix(T), sp.csr_matrix(Q)
    assert np.diff(Qs.indptr)[0] > 127 and np.diff(Qs.indptr)[1] > 255
    idx, sim = P.knn(Qs, P.InvertedIndex(M, tile=64), 6)
    assert _lists(idx, sim) == naive.knn(Q, T, 6)


def test_binary_and_general_paths_agree_across_tiles() -> None:
    # several tiles of the default size, against the general (float) kernel
    rng = np.random.default_rng(9)
    T = sp.random(40000, 60, density=0.08, format="csr", random_state=1)
    T.data[:] = 1.0
    Q = sp.random(300, 60, density=0.08, format="csr", random_state=2)
    Q.data[:] = 1.0
    fast = P.InvertedIndex(T)
    assert fast.binary and fast.tile_indptr.shape[0] == 3
    a = P.knn(Q, fast, 15)
    b = P.knn(Q, _general(P.InvertedIndex(T)), 15)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    allowed = (rng.random(40000) < 0.3).astype(np.uint8)
    a = P.knn(T[:200], fast, 4, self_offset=0, allowed=allowed)
    b = P.knn(T[:200], _general(P.InvertedIndex(T)), 4, self_offset=0, allowed=allowed)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_real_valued_data_takes_the_general_path() -> None:
    rng = np.random.default_rng(4)
    T = _binary(rng, 50, 8, 0.4)
    T[3, 2] = 0.5
    index = P.InvertedIndex(sp.csr_matrix(T))
    assert not index.binary
    Q = _binary(rng, 6, 8, 0.4)
    idx, sim = P.knn(sp.csr_matrix(Q), index, 4)
    assert _lists(idx, sim) == naive.knn(Q, T, 4)
    # binary index, real-valued queries: the general kernel, same result as brute force
    Tb = _binary(rng, 50, 8, 0.4)
    Q[0, 1] = 0.25
    idx, sim = P.knn(sp.csr_matrix(Q), P.InvertedIndex(sp.csr_matrix(Tb), tile=64), 4)
    assert _lists(idx, sim) == naive.knn(Q, Tb, 4)


def test_binary_path_on_real_data_is_the_general_path(mulan_dir) -> None:
    # enron's 1,001 binary word features: leave-one-out kNN of the training set and the
    # test set's kNN, binary kernel (small tiles, so several) against the general kernel
    tr = mlw.load_dataset(mulan_dir / "enron-train.arff")
    te = mlw.load_dataset(mulan_dir / "enron-test.arff")
    scaler = P.FeatureScaler().fit(tr.X)
    Xs, Qs = scaler.transform(tr.X), scaler.transform(te.X)
    fast = P.InvertedIndex(Xs, tile=256)
    assert fast.binary
    slow = _general(P.InvertedIndex(Xs))
    for Q, off in ((Xs, 0), (Qs, -1)):
        a = P.knn(Q, fast, 20, self_offset=off)
        b = P.knn(Q, slow, 20, self_offset=off)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
