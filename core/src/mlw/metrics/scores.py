"""Score metrics per label: the area under the ROC curve and average precision of each
label's scores (macro: averaged over labels; micro: of all instance-label pairs
pooled), as scikit-learn's ``roc_auc_score`` and ``average_precision_score`` define
them, and specificity (the recall of the negatives) from the confusion counts.

Where a label's value is undefined (AUC: the label is all 0 or all 1 in ``Y_true``;
average precision: it has no positive), the macro average is over the labels where it
is defined (NaN when there are none; scikit-learn raises or warns there). CSR scores
count an absent entry as a score of 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from mlw.metrics.calibration import ece_per_label
from mlw.metrics.label_set import _f1, _precision, _ratio, _recall

if TYPE_CHECKING:
    from mlw.metrics.context import EvalContext


def _columns(M: Any) -> Any:
    """Column access for dense or CSR: ``column(j)`` -> dense 1-D float array."""
    if sp.issparse(M):
        C = sp.csc_matrix(M)
        n = M.shape[0]

        def column(j: int) -> np.ndarray:
            out = np.zeros(n)
            lo, hi = C.indptr[j], C.indptr[j + 1]
            out[C.indices[lo:hi]] = C.data[lo:hi]
            return out

        return column
    A = np.asarray(M)
    return lambda j: np.asarray(A[:, j], dtype=np.float64)


def auc(y: np.ndarray, s: np.ndarray) -> float:
    """Area under the ROC curve of scores ``s`` for 0/1 targets ``y`` (ties count one
    half, as the trapezoidal ROC of scikit-learn does); NaN unless both classes occur.
    The Mann-Whitney form: (sum of the positives' ranks - P(P+1)/2) / (P N)."""
    pos = y > 0
    P = int(np.count_nonzero(pos))
    N = y.size - P
    if P == 0 or N == 0:
        return float("nan")
    from scipy.stats import rankdata  # scipy.stats is slow to import: only when used

    ranks = rankdata(s, method="average")
    return float((ranks[pos].sum() - P * (P + 1) / 2.0) / (P * N))


def average_precision_of(y: np.ndarray, s: np.ndarray) -> float:
    """scikit-learn's average precision: Σ_k (R_k - R_{k-1}) P_k over the distinct
    score values in decreasing order (no interpolation); NaN without a positive."""
    P = int(np.count_nonzero(y))
    if P == 0:
        return float("nan")
    order = np.argsort(-s, kind="mergesort")
    s_sorted, y_sorted = s[order], y[order] > 0
    tp = np.cumsum(y_sorted)
    # the last index of each group of tied scores: one point of the curve per score value
    last = np.r_[np.flatnonzero(np.diff(s_sorted) != 0), s_sorted.size - 1]
    tps = tp[last].astype(np.float64)
    precision = tps / (last + 1)
    recall = tps / P
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def _per_label(ctx: EvalContext) -> np.ndarray:
    """(L, 2) table of each label's (AUC, average precision), computed once per context
    and shared by the macro metrics."""
    def compute(c: EvalContext) -> np.ndarray:
        if c.scores is None:
            raise ValueError("score metrics need scores")
        truth, score = _columns(c.Y_true), _columns(c.scores)
        out = np.empty((c.n_labels, 2))
        for j in range(c.n_labels):
            y, s = truth(j), score(j)
            out[j] = auc(y, s), average_precision_of(y, s)
        return out

    return ctx.cached("mlw.score_table", compute)


def _pooled(ctx: EvalContext) -> tuple[np.ndarray, np.ndarray]:
    if ctx.scores is None:
        raise ValueError("score metrics need scores")
    y = ctx.Y_true.toarray() if sp.issparse(ctx.Y_true) else np.asarray(ctx.Y_true)
    s = ctx.scores.toarray() if sp.issparse(ctx.scores) else np.asarray(ctx.scores)
    return y.ravel().astype(np.float64), s.ravel().astype(np.float64)


def _mean_defined(values: np.ndarray) -> float:
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else float("nan")


def auc_macro(ctx: EvalContext) -> float:
    """Mean over labels of each label's ROC AUC (labels with both classes in Y_true)."""
    return _mean_defined(_per_label(ctx)[:, 0])


def auc_micro(ctx: EvalContext) -> float:
    """ROC AUC of all instance-label pairs pooled."""
    return auc(*_pooled(ctx))


def average_precision_macro(ctx: EvalContext) -> float:
    """Mean over labels of each label's average precision (MAP; labels with a positive)."""
    return _mean_defined(_per_label(ctx)[:, 1])


def average_precision_micro(ctx: EvalContext) -> float:
    """Average precision of all instance-label pairs pooled."""
    return average_precision_of(*_pooled(ctx))


def _specificity(c: np.ndarray, n: int | np.ndarray) -> np.ndarray:
    tp, fp, fn = c[..., 0], c[..., 1], c[..., 2]
    tn = n - tp - fp - fn
    return _ratio(tn, tn + fp, True)  # no negatives at all: nothing to get wrong


def specificity_macro(ctx: EvalContext) -> float:
    """Mean over labels of TN / (TN + FP) (1 for a label true for every instance)."""
    return float(np.mean(_specificity(ctx.counts.label, ctx.n_instances)))


def specificity_micro(ctx: EvalContext) -> float:
    """ΣTN / (ΣTN + ΣFP) over all instance-label pairs."""
    pooled = ctx.counts.label.sum(axis=0)
    return float(_specificity(pooled, ctx.n_instances * ctx.n_labels))


def per_label_table(ctx: EvalContext) -> dict[str, np.ndarray]:
    """Each label's precision, recall, F1, specificity and support (from the predicted
    label sets), and AUC and average precision (from the scores, when given)."""
    out: dict[str, np.ndarray] = {}
    if ctx.Y_pred is not None:
        c = ctx.counts.label
        out.update(precision=_precision(c), recall=_recall(c), f1=_f1(c),
                   specificity=_specificity(c, ctx.n_instances),
                   predicted=(c[:, 0] + c[:, 1]).astype(np.int64))
    if ctx.scores is not None:
        table = _per_label(ctx)
        out.update(auc=table[:, 0], average_precision=table[:, 1], ece=ece_per_label(ctx))
    truth = ctx.Y_true
    out["support"] = np.asarray(truth.sum(axis=0)).ravel().astype(np.int64)
    return out
