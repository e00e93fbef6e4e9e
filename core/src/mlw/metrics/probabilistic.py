"""Probabilistic metrics: ``log_loss`` and ``cll_loss_marginals`` on marginal scores,
``cll_loss`` on joint log-probabilities."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from mlw.metrics.counts import as_csr_labels

if TYPE_CHECKING:
    from mlw.metrics.context import EvalContext


def capped_log_loss(Y_true: Any, scores: Any, cap: float | None = None) -> float:
    """MEKA's "log loss (lim. D)" of validated labels and scores.

    The mean over all n·L instance-label terms of ``min(-ln p, cap)``, where ``p`` is
    the score of a true label and ``1 - score`` of a false one and ``cap`` defaults to
    ``ln n`` for n scored instances (so a single instance scores 0).
    """
    from mlw.metrics import _kernels

    n, L = Y_true.shape
    if n == 0 or L == 0:
        raise ValueError(f"cannot evaluate a label matrix of shape {Y_true.shape}: it needs "
                         f"at least one instance and one label")
    values = scores.data if sp.issparse(scores) else scores
    if values.size and (values.min() < 0.0 or values.max() > 1.0):
        raise ValueError("log_loss needs scores that are probabilities in [0, 1]")
    cap = math.log(n) if cap is None else float(cap)
    T = as_csr_labels(Y_true)
    if sp.issparse(scores):
        total = _kernels.capped_log_loss_csr(L, scores.indptr, scores.indices, scores.data,
                                             T.indptr, T.indices, cap)
    else:
        total = _kernels.capped_log_loss_dense(scores, T.indptr, T.indices, cap)
    return float(total / (n * L))


def log_loss(ctx: EvalContext) -> float:
    assert ctx.scores is not None
    return capped_log_loss(ctx.Y_true, ctx.scores)


def cll_loss(ctx: EvalContext) -> float:
    """Conditional log-likelihood loss: ``-Σ_i log P(y_i | x_i)``, a sum over the
    evaluated instances (not a mean), as in DESIGN.md and the papers reporting it."""
    assert ctx.log_proba is not None
    lp = ctx.log_proba
    if np.isnan(lp).any():
        raise ValueError("log_proba contains NaN")
    if (lp > 1e-9).any():
        raise ValueError("log_proba holds a log-probability above 0")
    return float(-lp.sum())


#: Probabilities below this are raised to it before taking logarithms in
#: ``cll_loss_marginals`` (the floor of the baselines' ``log_proba_of``).
PROBA_FLOOR = 1e-12


def cll_loss_marginals(ctx: EvalContext) -> float:
    """``-Σ_i Σ_j log q_ij`` with ``q_ij`` the score of label j when it is true and
    ``1 - score`` when it is false, each logarithm floored at ``ln 1e-12``: the CLL-loss
    of the product of the marginal scores (the labels independent given x), a sum over
    instances like ``cll_loss``. CSR scores in O(nnz): an absent score is 0."""
    assert ctx.scores is not None
    S = ctx.scores
    values = np.asarray(S.data if sp.issparse(S) else S)
    if values.size and (values.min() < 0.0 or values.max() > 1.0):
        raise ValueError("cll_loss_marginals needs scores that are probabilities in [0, 1]")
    floor = math.log(PROBA_FLOOR)
    T = as_csr_labels(ctx.Y_true)

    def log_true(p: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.maximum(np.log(p), floor)

    def log_false(p: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.maximum(np.log1p(-p), floor)

    if not sp.issparse(S):
        P = np.asarray(S, dtype=np.float64)
        total = log_false(P).sum()
        rows = np.repeat(np.arange(T.shape[0]), np.diff(T.indptr))
        p_true = P[rows, T.indices]
        total += (log_true(p_true) - log_false(p_true)).sum()
        return float(-total)
    S = sp.csr_matrix(S, dtype=np.float64)
    # every stored score as if its label were false, then the true labels corrected
    total = log_false(S.data).sum()
    hit = S.multiply(T.astype(np.float64)).tocsr()
    total += (log_true(hit.data) - log_false(hit.data)).sum()
    total += (T.nnz - hit.nnz) * floor  # true labels with no stored score: q = 0
    return float(-total)
