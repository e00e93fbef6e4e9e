"""Thresholding strategies: from per-label scores to 0/1 label sets.

Every strategy has ``fit(scores, Y) -> self`` and ``predict(scores) -> Y``. ``scores``
are dense float arrays or CSR matrices (an absent entry is a score of 0); predictions
are dense ``uint8`` for dense scores and CSR ``uint8`` for CSR scores, so sparse stays
sparse. A label is predicted when its score is ``>=`` the threshold.

Registered by the core (see :mod:`mlw._builtin.thresholds`) as ``fixed``, ``pcut``,
``cardinality`` and ``one_threshold``; get one by name with
:func:`mlw.get_threshold`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.validation import check_scores, check_Y

Scores = Any  # ndarray (n, L) float or CSR


def _row_max(S: Scores) -> np.ndarray:
    if sp.issparse(S):
        out = np.zeros(S.shape[0])
        nz = np.diff(S.indptr) > 0
        if S.nnz:
            out[nz] = np.maximum.reduceat(S.data, S.indptr[:-1][nz])
        return out
    return S.max(axis=1) if S.shape[1] else np.zeros(S.shape[0])


def apply_threshold(S: Scores, t: float, *, top_label: bool = False) -> Any:
    """Predict every label whose score is ``>= t``.

    With ``top_label``, an instance that gets no label this way gets its
    highest-scoring label instead (the first one on ties); an instance whose scores are
    all zero (or, for CSR, that has no stored score) still gets none.
    """
    if sp.issparse(S):
        keep = S.data >= t
        counts = np.zeros(S.shape[0], dtype=np.int64)
        rows = np.repeat(np.arange(S.shape[0]), np.diff(S.indptr))
        np.add.at(counts, rows[keep], 1)
        P = sp.csr_matrix((np.ones(int(keep.sum()), dtype=np.uint8), S.indices[keep],
                           np.concatenate([[0], np.cumsum(counts)])), shape=S.shape)
        if top_label:
            empty = np.flatnonzero((counts == 0) & (np.diff(S.indptr) > 0))
            if empty.size:
                best = np.array([S.indices[S.indptr[i]
                                           + np.argmax(S.data[S.indptr[i]:S.indptr[i + 1]])]
                                 for i in empty])
                extra = sp.csr_matrix((np.ones(empty.size, dtype=np.uint8), (empty, best)),
                                      shape=S.shape)
                P = (P + extra).tocsr()
        return P
    P = (S >= t).astype(np.uint8)
    if top_label and S.shape[1]:
        empty = np.flatnonzero(~P.any(axis=1) & (S.max(axis=1) > 0))
        P[empty, np.argmax(S[empty], axis=1)] = 1
    return P


def _cardinality_at(S: Scores, t: float, top_label: bool, row_max: np.ndarray) -> float:
    n = S.shape[0]
    if n == 0:
        return 0.0
    values = S.data if sp.issparse(S) else S
    count = int(np.count_nonzero(values >= t))
    if top_label:
        count += int(np.count_nonzero((row_max < t) & (row_max > 0)))
    return count / n


def two_pass_search(objective: Callable[[float], float]) -> float:
    """Mulan/LCIF threshold search: maximise ``objective(t)`` over t = 0, 0.1, ..., 1,
    then over t ± 0.05 in steps of 0.01 around the best. The first best wins ties."""
    coarse = np.round(np.arange(11) * 0.1, 10)
    best_t, best_v = _argmax_over(coarse, objective)
    fine = np.round(best_t + np.arange(-5, 6) * 0.01, 10)
    fine = fine[(fine >= 0) & (fine <= 1)]
    t2, v2 = _argmax_over(fine, objective)
    return float(t2 if v2 > best_v else best_t)


def _argmax_over(ts: np.ndarray, objective: Callable[[float], float]) -> tuple[float, float]:
    best_t, best_v = float(ts[0]), -np.inf
    for t in ts:
        v = objective(float(t))
        if v > best_v:
            best_t, best_v = float(t), v
    return best_t, best_v


class FixedThreshold:
    """Predict a label when its score is at least ``threshold`` (default 0.5).

    Parameters
    ----------
    threshold : float
        The cut-off in [0, 1].
    top_label : bool
        Give an instance with no label its top-scoring label.
    """

    def __init__(self, threshold: float = 0.5, *, top_label: bool = False) -> None:
        self.threshold = threshold
        self.top_label = top_label

    def fit(self, scores: Scores | None = None, Y: Any = None) -> FixedThreshold:
        if not 0.0 <= float(self.threshold) <= 1.0:
            raise ValueError(f"fixed threshold must be in [0, 1], got {self.threshold}")
        self.threshold_ = float(self.threshold)
        return self

    def predict(self, scores: Scores) -> Any:
        return apply_threshold(check_scores(scores), self.threshold_, top_label=self.top_label)


class PCut:
    """Pcut: one threshold, chosen on the scored set itself, so that the predicted
    label density equals the training label density (as LaCovaC and MEKA use it).

    ``fit`` only records the training density. ``predict`` ranks all n·L scores of the
    set it is given and predicts the ``round(density · n · L)`` largest (all scores tied
    with the last one included); ``threshold_`` is then the score it cut at.
    """

    def __init__(self) -> None:
        pass

    def fit(self, scores: Scores | None = None, Y: Any = None) -> PCut:
        if Y is None:
            raise ValueError("pcut needs the training label matrix Y to learn the density")
        Y = check_Y(Y)
        size = Y.shape[0] * Y.shape[1]
        self.density_ = float(Y.sum()) / size if size else 0.0
        self.threshold_ = np.nan
        return self

    def predict(self, scores: Scores) -> Any:
        S = check_scores(scores)
        k = int(round(self.density_ * S.shape[0] * S.shape[1]))
        values = S.data if sp.issparse(S) else S.ravel()
        if k <= 0 or values.size == 0:
            t = np.inf
        elif k >= values.size:
            t = float(values.min()) if not sp.issparse(S) else float(max(values.min(), 1e-300))
        else:
            t = float(np.partition(values, values.size - k)[values.size - k])
        if sp.issparse(S) and t <= 0:
            t = 1e-300  # absent entries stay negative
        self.threshold_ = t
        return apply_threshold(S, t)


class CardinalityMatching:
    """One threshold whose predicted label cardinality on the training scores is
    closest to the training label cardinality (LCIF).

    The search is :func:`two_pass_search` (0..1 in steps of 0.1, then ±0.05 in steps of
    0.01). With ``top_label`` (BRkNN-a's rule, on by default) an instance with no label
    above the threshold gets its top-scoring label, both while searching and when
    predicting.
    """

    def __init__(self, *, top_label: bool = True) -> None:
        self.top_label = top_label

    def fit(self, scores: Scores, Y: Any) -> CardinalityMatching:
        if scores is None or Y is None:
            raise ValueError("cardinality thresholding needs training scores and labels")
        S = check_scores(scores)
        Y = check_Y(Y, n_rows=S.shape[0], n_labels=S.shape[1])
        target = float(Y.sum()) / max(Y.shape[0], 1)
        row_max = _row_max(S)
        self.target_cardinality_ = target
        self.threshold_ = two_pass_search(
            lambda t: -abs(_cardinality_at(S, t, self.top_label, row_max) - target))
        return self

    def predict(self, scores: Scores) -> Any:
        return apply_threshold(check_scores(scores), self.threshold_, top_label=self.top_label)


class OneThreshold:
    """Mulan's OneThreshold: the single threshold that maximises a metric (default
    micro-F1) on the training scores, by :func:`two_pass_search`.

    Parameters
    ----------
    metric : str
        A registered label-set metric; for a lower-is-better metric its negation is
        maximised.
    top_label : bool
        Apply the top-label rule while searching and predicting.
    """

    def __init__(self, metric: str = "f1_micro", *, top_label: bool = False) -> None:
        self.metric = metric
        self.top_label = top_label

    def fit(self, scores: Scores, Y: Any) -> OneThreshold:
        from mlw.evaluation import evaluate
        from mlw.plugins import get_plugin_manager

        spec = get_plugin_manager().metric(self.metric)
        if spec.needs != "labels":
            raise ValueError(f"one_threshold needs a label-set metric; {self.metric!r} needs "
                             f"{spec.needs}")
        S = check_scores(scores)
        Y = check_Y(Y, n_rows=S.shape[0], n_labels=S.shape[1])
        sign = 1.0 if spec.greater_is_better else -1.0

        def objective(t: float) -> float:
            P = apply_threshold(S, t, top_label=self.top_label)
            return sign * evaluate(Y, P, metrics=[self.metric])[self.metric]

        self.threshold_ = two_pass_search(objective)
        return self

    def predict(self, scores: Scores) -> Any:
        return apply_threshold(check_scores(scores), self.threshold_, top_label=self.top_label)
