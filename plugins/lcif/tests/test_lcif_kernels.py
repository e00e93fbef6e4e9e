"""The numba kernels against the brute-force references of naive_lcif."""

from __future__ import annotations

import naive_lcif as naive
import numpy as np
import pytest
import scipy.sparse as sp

from mlw_lcif import _prep as P


def _random_sparse(rng: np.random.Generator, n: int, d: int, density: float,
                   kind: str) -> np.ndarray:
    mask = rng.random((n, d)) < density
    if kind == "binary":
        vals = np.ones((n, d))
    elif kind == "integer":
        vals = rng.integers(1, 4, size=(n, d)).astype(float)
    else:
        vals = rng.random((n, d))
    M = np.where(mask, vals, 0.0)
    M[rng.integers(0, n)] = 0.0  # an all-zero row
    return M


def _as_lists(idx: np.ndarray, sim: np.ndarray) -> list[list[tuple[int, float]]]:
    return [[(int(r), float(s)) for r, s in zip(ri, si, strict=True) if r >= 0]
            for ri, si in zip(idx, sim, strict=True)]


@pytest.mark.parametrize("kind", ["binary", "integer", "real"])
@pytest.mark.parametrize("k", [1, 4, 9])
def test_knn_matches_brute_force(kind: str, k: int) -> None:
    rng = np.random.default_rng(k + len(kind))
    T = _random_sparse(rng, 40, 12, 0.25, kind)
    Q = _random_sparse(rng, 25, 12, 0.25, kind)
    idx, sim = P.knn(sp.csr_matrix(Q), P.InvertedIndex(sp.csr_matrix(T)), k)
    got = _as_lists(idx, sim)
    want = naive.knn(Q, T, k)
    assert got == want  # identical neighbours, order, ties and similarities


def test_knn_ties_break_on_lower_index() -> None:
    T = np.array([[1, 0], [0, 1], [1, 0], [1, 0], [1, 1]], dtype=float)
    idx, sim = P.knn(sp.csr_matrix(np.array([[1.0, 0.0]])), P.InvertedIndex(sp.csr_matrix(T)), 3)
    assert idx[0].tolist() == [0, 2, 3]
    assert np.allclose(sim[0], 1.0)


def test_knn_leave_one_out_and_mask_match_brute_force() -> None:
    rng = np.random.default_rng(7)
    T = _random_sparse(rng, 50, 10, 0.3, "integer")
    M = sp.csr_matrix(T)
    idx, sim = P.knn(M, P.InvertedIndex(M), 5, self_offset=0)
    assert _as_lists(idx, sim) == naive.knn(T, T, 5, exclude_self=True)
    allowed = (rng.random(50) < 0.6).astype(np.uint8)
    idx, sim = P.knn(M, P.InvertedIndex(M), 5, allowed=allowed)
    assert _as_lists(idx, sim) == naive.knn(T, T, 5, allowed=allowed)


def test_knn_blocks_give_the_same_result() -> None:
    rng = np.random.default_rng(3)
    T = sp.csr_matrix(_random_sparse(rng, 60, 15, 0.2, "real"))
    Q = sp.csr_matrix(_random_sparse(rng, 33, 15, 0.2, "real"))
    index = P.InvertedIndex(T)
    a = P.knn(Q, index, 6)
    b = P.knn(Q, index, 6, block=5)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_knn_dense_and_sparse_modes_agree() -> None:
    # one query touches almost every row (dense mode), another only a few (sparse mode)
    rng = np.random.default_rng(11)
    T = _random_sparse(rng, 80, 30, 0.1, "real")
    T[:, 0] = rng.random(80) + 0.1
    Q = np.zeros((2, 30))
    Q[0, 0], Q[0, 5] = 1.0, 0.5
    Q[1, 7] = 1.0
    idx, sim = P.knn(sp.csr_matrix(Q), P.InvertedIndex(sp.csr_matrix(T)), 7)
    assert _as_lists(idx, sim) == naive.knn(Q, T, 7)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_feature_label_neighbours_match_brute_force(k: int) -> None:
    rng = np.random.default_rng(k)
    X = _random_sparse(rng, 40, 9, 0.3, "real")
    X[:, 4] = 0.0  # a feature never seen
    Y = (rng.random((40, 5)) < 0.3).astype(np.uint8)
    Y[:, 2] = 0  # a label never present
    idx, sim = P.feature_label_neighbours(sp.csr_matrix(X), sp.csr_matrix(Y), k)
    assert _as_lists(idx, sim) == naive.feature_label_neighbours(X, Y, k)
    assert (idx[4] == -1).all()


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("second", [False, True])
def test_scores_match_transcription(lam: float, second: bool) -> None:
    rng = np.random.default_rng(int(lam * 10) + second)
    X = _random_sparse(rng, 45, 10, 0.3, "real")
    Y = (rng.random((45, 6)) < 0.3).astype(np.uint8)
    Q = _random_sparse(rng, 20, 10, 0.3, "real")
    Xs, Ys = sp.csr_matrix(X), sp.csr_matrix(Y)
    votes = P.second_order_scores(Xs, Ys, 4) if second else Ys.astype(float)
    nb = P.knn(sp.csr_matrix(Q), P.InvertedIndex(Xs), 4)
    fl = P.feature_label_neighbours(Xs, Ys, 3)
    S = P.score(nb[0], nb[1], 4, votes, sp.csr_matrix(Q), fl[0], fl[1], 3, lam, 6)
    want = naive.lcif_scores(X, Y, Q, 4, 3, lam, second=second)
    assert S.has_sorted_indices
    assert np.all(S.data > 0)
    np.testing.assert_allclose(S.toarray(), want, rtol=1e-12, atol=1e-15)
