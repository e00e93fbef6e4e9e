"""Ranking metrics: how well the scores rank each instance's true labels above the
others. One numba pass per row over dense or CSR scores (an absent CSR score is 0).

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


def ranking_table(Y_true: Any, scores: Any) -> np.ndarray:
    """Per-instance (one_error, coverage, ranking_loss, average_precision), shape (n, 4),
    of a validated label matrix and validated scores of the same shape."""
    from mlw.metrics import _kernels

    n, L = Y_true.shape
    if n == 0 or L == 0:
        raise ValueError(f"cannot evaluate a label matrix of shape {Y_true.shape}: it needs "
                         f"at least one instance and one label")
    T = as_csr_labels(Y_true)
    if sp.issparse(scores):
        return _kernels.ranking_csr_scores(L, scores.indptr, scores.indices, scores.data,
                                           T.indptr, T.indices)
    return _kernels.ranking_dense_scores(scores, T.indptr, T.indices)


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
