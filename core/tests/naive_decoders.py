"""Brute-force references for the decoders: every candidate label set scored against
every label vector of a joint distribution given as a full table (pure Python/NumPy,
no kernels)."""

from __future__ import annotations

import functools
import itertools

import numpy as np


def all_vectors(L: int) -> np.ndarray:
    """All ``2**L`` 0/1 vectors, shape (2**L, L)."""
    return np.array(list(itertools.product((0, 1), repeat=L)), dtype=np.uint8).reshape(-1, L)


def f_beta(y: np.ndarray, h: np.ndarray, beta: float = 1.0) -> float:
    """F-beta of one prediction; both sets empty scores 1."""
    tp, ny, nh = float(np.sum(y & h)), float(y.sum()), float(h.sum())
    if ny == 0 and nh == 0:
        return 1.0
    return (1 + beta ** 2) * tp / (beta ** 2 * ny + nh)


def jaccard(y: np.ndarray, h: np.ndarray) -> float:
    """|y & h| / |y | h|; both sets empty scores 1."""
    union = float(np.sum(y | h))
    return 1.0 if union == 0 else float(np.sum(y & h)) / union


def measure_matrix(L: int, measure, **kw) -> np.ndarray:
    """``M[a, b] = measure(vector a, vector b)`` over all vectors (truth a, prediction b)."""
    V = all_vectors(L)
    return np.array([[measure(y, h, **kw) for h in V] for y in V])


@functools.cache
def f_beta_matrix(L: int, beta: float = 1.0) -> np.ndarray:
    """:func:`measure_matrix` of :func:`f_beta`, by broadcasting (same values)."""
    V = all_vectors(L).astype(np.float64)
    tp = V @ V.T
    ny, nh = V.sum(axis=1)[:, None], V.sum(axis=1)[None, :]
    den = beta ** 2 * ny + nh
    with np.errstate(invalid="ignore", divide="ignore"):
        M = (1 + beta ** 2) * tp / den
    M[(ny + nh) == 0] = 1.0
    return M


def expected_measures(table: np.ndarray, M: np.ndarray) -> np.ndarray:
    """The expected measure of every candidate set under the joint ``table`` (2**L,)."""
    return table @ M


def size_marginals(table: np.ndarray) -> np.ndarray:
    """P(y_j = 1, |y| = s) from a joint table, shape (L, L), entry ``[j, s - 1]``."""
    L = int(np.log2(table.size))
    V = all_vectors(L)
    out = np.zeros((L, L))
    for p, y in zip(table, V, strict=True):
        s = int(y.sum())
        for j in range(L):
            if y[j] and s:
                out[j, s - 1] += p
    return out


def independent_table(p: np.ndarray) -> np.ndarray:
    """The joint table of independent labels with marginals ``p``."""
    V = all_vectors(p.size)
    return np.prod(np.where(V == 1, p, 1.0 - p), axis=1)


def table_of(learner, x_row, L: int) -> np.ndarray:
    """A learner's joint table for one row, from ``log_proba_of`` on all vectors."""
    V = all_vectors(L)
    X = np.repeat(np.asarray(x_row).reshape(1, -1), V.shape[0], axis=0)
    lp = learner.log_proba_of(X, V)
    t = np.exp(lp - lp.max())
    return t / t.sum()


def index_of(h: np.ndarray) -> int:
    """The row of :func:`all_vectors` equal to ``h``."""
    return int(sum(int(b) << (h.size - 1 - j) for j, b in enumerate(h)))
