"""The one logistic-regression solver every factor of every tree is fitted with.

A :class:`Design` wraps the training matrix once (dense or CSR, never densified, never
copied) with its max-abs column scaling; :func:`fit` solves one L2-regularised,
instance-weighted logistic regression on x (and optionally one parent label column)
by the numba L-BFGS of :mod:`mlw_mctbn._kernels`, warm-started from the ``theta`` it is
given. Parameters live in the scaled space: ``theta = [w (m), v, b]`` with
``logit = sum_j x_j scale_j w_j + v y_parent + b``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw_mctbn import _kernels

#: L-BFGS settings: stop when max |gradient| <= TOL * sum of the weights (as
#: scikit-learn's lbfgs, whose loss is averaged), or after MAX_ITER iterations.
TOL = 1e-4
#: The looser tolerance of ``ctbn``'s structure search's edge models (Sec. 5.3.1), which
#: only score edges on the hold-out and are then dropped (its self-loop models and the
#: chosen tree's factors keep TOL). At TOL the edge weights are already this far from
#: converged that enron's tree (C = 1) differs from the tree of converged edge models in
#: 8 of 53 parents; at EDGE_TOL in 10, with 2.4x fewer L-BFGS iterations, and the
#: quality table's ctbn rows do not move beyond noise. ``mc`` keeps TOL for its edge
#: models: at EDGE_TOL its emotions EMA fell 0.351 -> 0.336 (paired p = 0.03).
EDGE_TOL = 1e-3
MAX_ITER = 200
HISTORY = 10


@dataclass
class Design:
    """The training matrix as the kernels read it."""

    sparse: bool
    Xd: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    scale: np.ndarray
    n: int
    m: int

    @classmethod
    def from_matrix(cls, X: Any) -> Design:
        n, m = X.shape
        empty_i = np.zeros(1, dtype=np.int64)
        if sp.issparse(X):
            X = X.tocsr()
            absmax = np.asarray(abs(X).max(axis=0).todense()).ravel() if X.nnz else np.zeros(m)
            return cls(True, np.zeros((1, 1)), X.indptr.astype(np.int64),
                       X.indices.astype(np.int64), np.asarray(X.data, dtype=np.float64),
                       _scale(absmax), n, m)
        Xd = np.ascontiguousarray(X, dtype=np.float64)
        absmax = np.abs(Xd).max(axis=0) if n else np.zeros(m)
        return cls(False, Xd, empty_i, empty_i, np.zeros(1), _scale(absmax), n, m)

    def args(self) -> tuple[Any, ...]:
        return (self.sparse, self.Xd, self.indptr, self.indices, self.data, self.scale)


def _scale(absmax: np.ndarray) -> np.ndarray:
    absmax = np.asarray(absmax, dtype=np.float64)
    return np.where(absmax > 0, 1.0 / np.where(absmax > 0, absmax, 1.0), 1.0)


def new_theta(m: int) -> np.ndarray:
    return np.zeros(m + 2)


def constant_theta(m: int, y: np.ndarray, s: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The stand-in for a label that is constant on ``rows``: no weights, intercept
    the logit of the Laplace-smoothed weighted prior (k + 1) / (n + 2)."""
    w = s[rows]
    n = float(w.sum())
    k = float((w * y[rows]).sum())
    p1 = (k + 1.0) / (n + 2.0)
    theta = np.zeros(m + 2)
    theta[m + 1] = np.log(p1) - np.log1p(-p1)
    return theta


def is_constant(y: np.ndarray, s: np.ndarray, rows: np.ndarray) -> bool:
    w = s[rows]
    yr = y[rows]
    return not (np.any((yr == 1) & (w > 0)) and np.any((yr == 0) & (w > 0)))


def fit(design: Design, y: np.ndarray, s: np.ndarray, p: np.ndarray | None,
        rows: np.ndarray, lam: float, theta: np.ndarray,
        max_iter: int = MAX_ITER, tol: float = TOL) -> np.ndarray:
    """Fit in place from the warm start ``theta`` and return it. A target constant on
    the weighted ``rows`` gets :func:`constant_theta` instead. ``tol``: the L-BFGS stop
    (max |gradient| <= tol * sum of the weights)."""
    if is_constant(y, s, rows):
        theta[:] = constant_theta(design.m, y, s, rows)
        return theta
    use_parent = p is not None
    pp = p if p is not None else y
    _kernels.fit_logistic(theta, *design.args(), y, s, pp, use_parent, rows, float(lam),
                          int(max_iter), float(tol), HISTORY)
    if not use_parent:
        theta[design.m] = 0.0
    return theta


def log_lik(design: Design, theta: np.ndarray, y: np.ndarray, s: np.ndarray,
            p: np.ndarray | None, rows: np.ndarray) -> float:
    """sum over ``rows`` of s_r log P(y_r | x_r, p_r)."""
    use_parent = p is not None
    pp = p if p is not None else y
    return float(_kernels.log_lik_rows(theta, *design.args(), y, s, pp, use_parent, rows))
