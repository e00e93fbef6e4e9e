"""LCIF's feature→label neighbourhoods and candidate scoring against the brute-force
references of naive_lcif (the kNN search itself is the core's mlw.neighbors, tested in
core/tests/test_core_neighbors.py)."""

from __future__ import annotations

import naive_lcif as naive
import numpy as np
import pytest
import scipy.sparse as sp

from mlw.neighbors import NeighborIndex
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
    F = P.feature_label_similarities(sp.csr_matrix(X), sp.csr_matrix(Y))
    np.testing.assert_allclose(F.toarray(), naive.feature_label_sims(X, Y), rtol=1e-12)


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("second", [False, True])
@pytest.mark.parametrize("reading", ["all", "neighbours", "neighbour_mean"])
def test_scores_match_transcription(lam: float, second: bool, reading: str) -> None:
    rng = np.random.default_rng(int(lam * 10) + second)
    X = _random_sparse(rng, 45, 10, 0.3, "real")
    Y = (rng.random((45, 6)) < 0.3).astype(np.uint8)
    Q = _random_sparse(rng, 20, 10, 0.3, "real")
    Xs, Ys = sp.csr_matrix(X), sp.csr_matrix(Y)
    votes = P.second_order_scores(Xs, Ys, 4) if second else Ys.astype(float)
    nb = NeighborIndex(Xs).query(sp.csr_matrix(Q), k=4)
    F = P.feature_label_similarities(Xs, Ys)
    fl = P.top_labels(F, 3)
    S = P.score(nb[0], nb[1], 4, votes, sp.csr_matrix(Q), fl[0], fl[1], 3,
                F if reading == "all" else None, lam, 6, mean=reading == "neighbour_mean")
    want = naive.lcif_scores(X, Y, Q, 4, 3, lam, second=second, feature_votes=reading)
    assert S.has_sorted_indices
    assert np.all(S.data > 0)
    np.testing.assert_allclose(S.toarray(), want, rtol=1e-12, atol=1e-15)
