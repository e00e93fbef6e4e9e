"""Calibration of marginal scores: expected calibration error (ECE) and the reliability
table behind a reliability diagram.

The scores of label j are read as probabilities P(y_j = 1 | x). They are binned into
``N_BINS`` equal-width bins of [0, 1] (bin ``b`` holds scores in [b/B, (b+1)/B), the
last bin includes 1); ECE is the mean over bins, weighted by their counts, of
|mean score - fraction of positives|. ``ece_pooled`` bins all n·L instance-label pairs
together; ``ece_macro`` is the mean over labels of each label's ECE over its n
instances. CSR scores stay sparse: an absent entry is a score of 0, counted in the
first bin without being stored.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.metrics.context import EvalContext

#: Equal-width bins of [0, 1] of the calibration metrics and reliability diagrams.
N_BINS = 10


def _bins(s: np.ndarray, n_bins: int) -> np.ndarray:
    return np.minimum((np.asarray(s) * n_bins).astype(np.int64), n_bins - 1)


def reliability_table(Y_true: Any, scores: Any, *, n_bins: int = N_BINS,
                      by_label: bool = False) -> np.ndarray:
    """Per bin: ``(count, sum of scores, number of positives)``, shape (n_bins, 3), over
    all instance-label pairs; with ``by_label=True`` one such table per label, shape
    (L, n_bins, 3). CSR inputs are never densified.

    Examples
    --------
    >>> import numpy as np
    >>> reliability_table(np.array([[1, 0]]), np.array([[0.95, 0.05]]), n_bins=2)
    array([[1.  , 0.05, 0.  ],
           [1.  , 0.95, 1.  ]])
    """
    S = sp.csr_matrix(scores, dtype=np.float64) if sp.issparse(scores) else None
    n, L = scores.shape
    out = np.zeros((L, n_bins, 3))
    if S is None:
        s = np.asarray(scores, dtype=np.float64)
        y = Y_true.toarray() if sp.issparse(Y_true) else np.asarray(Y_true)
        cols = np.broadcast_to(np.arange(L), (n, L)).ravel()
        b = _bins(s.ravel(), n_bins)
        for k, w in enumerate((np.ones(n * L), s.ravel(), (y.ravel() > 0).astype(float))):
            np.add.at(out[:, :, k], (cols, b), w)
    else:
        S.sum_duplicates()
        rows = np.repeat(np.arange(n), np.diff(S.indptr))
        cols = S.indices
        Yc = sp.csr_matrix(Y_true)
        y_at = np.asarray(Yc[rows, cols]).ravel() > 0 if rows.size else np.zeros(0, bool)
        b = _bins(S.data, n_bins)
        for k, w in enumerate((np.ones(S.data.size), S.data, y_at.astype(float))):
            np.add.at(out[:, :, k], (cols, b), w)
        stored = np.bincount(cols, minlength=L)
        pos = np.asarray(Yc.sum(axis=0)).ravel()
        pos_stored = np.bincount(cols, weights=y_at.astype(float), minlength=L)
        out[:, 0, 0] += n - stored          # absent entries: score 0, bin 0
        out[:, 0, 2] += pos - pos_stored
    return out if by_label else out.sum(axis=0)


def _ece(table: np.ndarray) -> np.ndarray:
    """ECE of reliability tables (..., n_bins, 3)."""
    count, ssum, pos = table[..., 0], table[..., 1], table[..., 2]
    total = count.sum(axis=-1)
    gap = np.abs(ssum - pos)  # = count * |mean score - fraction positive|
    with np.errstate(invalid="ignore", divide="ignore"):
        return gap.sum(axis=-1) / total


def _table(ctx: EvalContext) -> np.ndarray:
    def compute(c: EvalContext) -> np.ndarray:
        if c.scores is None:
            raise ValueError("calibration metrics need scores")
        return reliability_table(c.Y_true, c.scores, by_label=True)

    return ctx.cached("mlw.reliability", compute)


def ece_pooled(ctx: EvalContext) -> float:
    """ECE of all instance-label pairs binned together."""
    return float(_ece(_table(ctx).sum(axis=0)))


def ece_per_label(ctx: EvalContext) -> np.ndarray:
    """Each label's ECE over its n instances, shape (L,)."""
    return _ece(_table(ctx))


def ece_macro(ctx: EvalContext) -> float:
    """Mean over labels of each label's ECE."""
    return float(np.mean(ece_per_label(ctx)))
