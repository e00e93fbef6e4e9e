"""Ranking metrics: how well the scores rank each instance's true labels above the
others. Dense scores: numpy, a block of rows at a time, comparing each true label's
score with the row's scores (O(n L r) for r true labels a row, nothing for numba to
compile on a fresh install: ~0.7 s CPU of the first ``mlw fit``). CSR scores
(an absent score is 0): one numba pass per row, O(L log L), which stays fast when rows
have many labels.

Ties and degenerate rows follow scikit-learn: the rank of label j is
#{k : s_k >= s_j} (ties counted against the prediction); an instance with no true label
has coverage 0, ranking loss 0 and average precision 1, and one with every label true
has ranking loss 0 and average precision 1. Such instances stay in the averages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from mlw.metrics.counts import as_csr_labels

if TYPE_CHECKING:
    from mlw.metrics.context import EvalContext

#: Columns of :func:`ranking_table`.
RANKING_COLUMNS = ("one_error", "coverage", "ranking_loss", "average_precision")


#: Comparisons (rows x true labels x labels) one numpy block of dense scores makes.
BLOCK_COMPARISONS = 1 << 22


def ranking_table(Y_true: Any, scores: Any) -> np.ndarray:
    """Per-instance (one_error, coverage, ranking_loss, average_precision), shape (n, 4),
    of a validated label matrix and validated (finite) scores of the same shape."""
    n, L = Y_true.shape
    if n == 0 or L == 0:
        raise ValueError(f"cannot evaluate a label matrix of shape {Y_true.shape}: it needs "
                         f"at least one instance and one label")
    T = as_csr_labels(Y_true)
    if sp.issparse(scores):
        from mlw.metrics import _kernels

        return _kernels.ranking_csr_scores(L, scores.indptr, scores.indices, scores.data,
                                           T.indptr, T.indices)
    n_true = np.diff(T.indptr)
    out = np.empty((n, 4), dtype=np.float64)
    a = 0
    while a < n:
        b = min(n, a + max(1, BLOCK_COMPARISONS // L))
        r = max(1, int(n_true[a:b].max()))
        b = min(b, a + max(1, BLOCK_COMPARISONS // (L * r)))
        out[a:b] = _rank_block(np.asarray(scores[a:b], dtype=np.float64),
                               T[a:b].toarray().astype(bool))
        a = b
    return out


def _rank_block(S: np.ndarray, R: np.ndarray) -> np.ndarray:
    """The four ranking quantities of a block of dense scores ``S`` and relevance ``R``.

    The rank of a true label j is #{k : s_k >= s_j} among all labels and among the true
    ones (ties counted against the prediction). Every value is an integer count or a
    ratio of two, and average precision adds its ratios in label order (a cumulative
    sum), so each row's figures are those of a loop over its labels, bit for bit."""
    m, L = S.shape
    n_true = R.sum(axis=1)
    r = max(1, int(n_true.max()))
    # each row's true-label scores in label order, padded with NaN (never >= anything)
    cols = np.argsort(~R, axis=1, kind="stable")[:, :r]
    padded = np.arange(r)[None, :] >= n_true[:, None]
    Q = np.where(padded, np.nan, np.take_along_axis(S, cols, axis=1))
    rank = (S[:, None, :] >= Q[:, :, None]).sum(axis=2)
    rank_true = (Q[:, None, :] >= Q[:, :, None]).sum(axis=2)
    out = np.empty((m, 4), dtype=np.float64)
    # one-error: some false label scores at least as high as the best true one
    best_true = np.where(R, S, -np.inf).max(axis=1)
    best_false = np.where(R, -np.inf, S).max(axis=1)
    out[:, 0] = best_false >= best_true
    out[:, 1] = np.where(padded, 0, rank).max(axis=1)
    pairs = np.where(padded, 0, rank - rank_true).sum(axis=1)
    ap = np.cumsum(np.where(padded, 0.0, rank_true / np.maximum(rank, 1)), axis=1)[:, -1]
    partial = (n_true > 0) & (n_true < L)
    out[:, 2] = np.where(partial, pairs / np.where(partial, n_true * (L - n_true), 1), 0.0)
    out[:, 3] = np.where(partial, ap / np.maximum(n_true, 1), 1.0)
    # no true label: the ranking has no meaning (scikit-learn: coverage 0, ranking loss 0,
    # LRAP 1); one-error 0 likewise
    none = n_true == 0
    out[none, 0] = 0.0
    out[none, 1] = 0.0
    return out


def _table(ctx: EvalContext) -> np.ndarray:
    """The per-instance ranking table of a context, computed once and shared by the four
    ranking metrics (kept in the context's cache: the family owns its cache)."""
    def compute(c: EvalContext) -> np.ndarray:
        if c.scores is None:
            raise ValueError("ranking metrics need scores")
        return ranking_table(c.Y_true, c.scores)

    return ctx.cached("mlw.ranking", compute)


def one_error(ctx: EvalContext) -> float:
    """Fraction of instances whose top-ranked label is not relevant (with ties, an
    irrelevant label scoring as high as the best relevant one counts as an error;
    an instance without true labels counts as no error)."""
    return float(np.mean(_table(ctx)[:, 0]))


def coverage(ctx: EvalContext) -> float:
    """Mean number of labels one must go down the ranking to cover every true label
    (scikit-learn's ``coverage_error``; Mulan's coverage is this minus 1)."""
    return float(np.mean(_table(ctx)[:, 1]))


def ranking_loss(ctx: EvalContext) -> float:
    """Mean fraction of (true, false) label pairs ordered wrongly (ties count as wrong)."""
    return float(np.mean(_table(ctx)[:, 2]))


def average_precision(ctx: EvalContext) -> float:
    """Label-ranking average precision (scikit-learn's LRAP)."""
    return float(np.mean(_table(ctx)[:, 3]))
