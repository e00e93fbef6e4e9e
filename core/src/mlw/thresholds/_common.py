"""What every thresholding strategy shares: the decision rule, the two-pass threshold
search, the cardinality curve, the estimator base class and the top-label rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from mlw.validation import check_same_shape, check_scores, check_Y

Scores = Any  # ndarray (n, L) float or CSR

#: The coarse pass of :func:`two_pass_search`: 0, 0.1, ..., 1.
COARSE_GRID = np.round(np.arange(11) * 0.1, 10)
#: Offsets of the fine pass around the coarse winner: -0.05, -0.04, ..., 0.05.
FINE_OFFSETS = np.round(np.arange(-5, 6) * 0.01, 10)


def _row_max(S: Scores) -> np.ndarray:
    """Per-row maximum score, clipped below at 0 (only whether it is positive and how
    it compares with positive thresholds matters)."""
    n = S.shape[0]
    if sp.issparse(S):
        out = np.zeros(n)
        nz = np.diff(S.indptr) > 0
        if S.nnz:
            out[nz] = np.maximum.reduceat(S.data, S.indptr[:-1][nz])
        return np.maximum(out, 0.0)
    if S.shape[1] == 0:
        return np.zeros(n)
    return np.maximum(S.max(axis=1), 0.0)


def apply_threshold(S: Scores, t: float, *, top_label: bool = False) -> Any:
    """Predict every label whose score is ``>= t`` and positive.

    With ``top_label``, an instance that gets no label this way gets its
    highest-scoring label instead (the lowest label index on ties); an instance whose
    scores are all zero (for CSR: no positive stored score) still gets none. ``S``
    must be validated (:func:`mlw.validation.check_scores`: CSR canonical).
    """
    if sp.issparse(S):
        n = S.shape[0]
        mask = (S.data >= t) & (S.data > 0)
        rows = np.repeat(np.arange(n), np.diff(S.indptr))
        if top_label and S.nnz:
            has = np.zeros(n, dtype=bool)
            has[rows[mask]] = True
            row_max = _row_max(S)
            need = ~has & (row_max > 0)
            cand = np.flatnonzero(need[rows] & (S.data == row_max[rows]))
            if cand.size:
                # indices are sorted within a row: the first candidate is the lowest label
                _, first = np.unique(rows[cand], return_index=True)
                mask[cand[first]] = True
        counts = np.bincount(rows[mask], minlength=n)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return sp.csr_matrix((np.ones(int(mask.sum()), dtype=np.uint8), S.indices[mask],
                              indptr), shape=S.shape)
    P = ((S >= t) & (S > 0)).astype(np.uint8)
    if top_label and S.shape[1]:
        empty = np.flatnonzero(~P.any(axis=1) & (S.max(axis=1) > 0))
        P[empty, np.argmax(S[empty], axis=1)] = 1
    return P


class _CardinalityCurve:
    """Predicted label cardinality as a function of the threshold, for fixed scores:
    sorting once makes every evaluation a binary search."""

    def __init__(self, S: Scores, top_label: bool) -> None:
        values = S.data if sp.issparse(S) else S.ravel()
        self.positive = np.sort(values[values > 0])
        rm = _row_max(S)
        self.row_max = np.sort(rm[rm > 0])
        self.top_label = top_label
        self.n = S.shape[0]

    def count(self, t: float) -> int:
        """Number of predicted (instance, label) pairs at threshold ``t``."""
        c = self.positive.size - int(np.searchsorted(self.positive, t, side="left"))
        if self.top_label:  # rows with a positive maximum below t get their top label
            c += int(np.searchsorted(self.row_max, t, side="left"))
        return c

    def __call__(self, t: float) -> float:
        return self.count(t) / self.n if self.n else 0.0


class _BlockedCardinalityCurve(_CardinalityCurve):
    """The same curve accumulated from score blocks (rows split across blocks), exact on
    every threshold :func:`two_pass_search` can visit (0, 0.01, ..., 1), so the scores
    of all instances never have to be held at once."""

    GRID = np.round(np.arange(101) * 0.01, 10)

    def __init__(self, blocks: Any, n_rows: int, top_label: bool) -> None:
        grid = self.GRID
        hist = np.zeros(grid.size, dtype=np.int64)
        top = np.zeros(grid.size, dtype=np.int64)
        for block in blocks:
            S = check_scores(block)
            values = np.asarray(S.data if sp.issparse(S) else S.ravel())
            values = values[values > 0]
            hist += np.bincount(np.searchsorted(grid, values, side="right") - 1,
                                minlength=grid.size)
            rm = _row_max(S)
            rm = rm[rm > 0]
            top += np.bincount(np.searchsorted(grid, rm, side="right") - 1,
                               minlength=grid.size)
        self._count_ge = np.cumsum(hist[::-1])[::-1]          # scores >= grid[m]
        self._max_below = np.concatenate([[0], np.cumsum(top)[:-1]])  # row max < grid[m]
        self._position = {float(t): m for m, t in enumerate(grid)}
        self.top_label = top_label
        self.n = n_rows

    def count(self, t: float) -> int:
        m = self._position.get(float(t))
        if m is None:
            raise ValueError(f"a blocked cardinality curve is exact only on the 0.01 grid, "
                             f"not at t={t}")
        return int(self._count_ge[m]) + (int(self._max_below[m]) if self.top_label else 0)


def two_pass_search(objective: Callable[[float], float],
                    trace: list[tuple[float, float]] | None = None) -> float:
    """Mulan/LCIF threshold search: maximise ``objective(t)`` over t = 0, 0.1, ..., 1,
    then over t - 0.05, ..., t + 0.05 in steps of 0.01 (inside [0, 1]) around the coarse
    winner t. The first best wins ties, and the fine pass must strictly improve on the
    coarse winner to replace it.

    ``trace``, when given, receives every (threshold, objective) evaluated, in order.
    """
    def evaluate(ts: np.ndarray) -> tuple[float, float]:
        best_t, best_v = float(ts[0]), -np.inf
        for t in ts:
            v = float(objective(float(t)))
            if trace is not None:
                trace.append((float(t), v))
            if v > best_v:
                best_t, best_v = float(t), v
        return best_t, best_v

    best_t, best_v = evaluate(COARSE_GRID)
    fine = np.round(best_t + FINE_OFFSETS, 10)
    fine = fine[(fine >= 0) & (fine <= 1)]
    t2, v2 = evaluate(fine)
    return float(t2 if v2 > best_v else best_t)


class _Strategy(BaseEstimator):
    """Shared plumbing: every strategy is a scikit-learn estimator (``get_params``,
    ``set_params``, ``clone``, a repr showing the options that differ from the
    defaults); ``fit`` sets the fitted attributes (ending in ``_``) and ``predict``
    only reads them.

    ``needs_training_scores`` says whether ``fit`` uses the training scores (read by
    the strategy's :class:`mlw.ThresholdSpec`), so a learner given a strategy can skip
    scoring its training data.
    """

    needs_training_scores: bool = True


#: Training sets with at most this fraction of empty label sets count as having
#: "(almost) none" for the adaptive top-label rule (``top_label="auto"``).
EMPTY_SET_TOLERANCE = 0.01

#: The default decision of learners that score labels and whose method prescribes none
#: (BR, ML-XGB, BR-XGB): cardinality matching (one threshold whose predicted label
#: cardinality on the training scores is closest to the training cardinality) with the
#: adaptive top-label rule. A 0.5 cut left 14-62% of rows empty on sparse, low-density
#: text where no row is truly empty (figures in ``docs/guide/thresholds.md``);
#: ``"fixed"`` is the 0.5 cut, one parameter away.
DEFAULT_THRESHOLD = "cardinality:top_label=auto"


def resolve_top_label(top_label: bool | str, Y: Any) -> bool:
    """The top-label rule for a training label matrix: ``True``/``False`` as given;
    ``"auto"`` turns it on only when at most :data:`EMPTY_SET_TOLERANCE` of the
    training instances have an empty label set (an instance then always has a label,
    so forcing one is right; on data where empty sets are real, forcing a label costs
    subset accuracy)."""
    if top_label == "auto":
        n = Y.shape[0]
        per_row = np.diff(Y.indptr) if sp.issparse(Y) else np.count_nonzero(Y, axis=1)
        empty = float(np.count_nonzero(per_row == 0)) / n if n else 0.0
        return empty <= EMPTY_SET_TOLERANCE
    if isinstance(top_label, (bool, np.bool_)):
        return bool(top_label)
    raise ValueError(f"parameter 'top_label' must be True, False or 'auto', got {top_label!r}")


def _check_training(scores: Scores, Y: Any) -> tuple[Scores, Any]:
    S = check_scores(scores, what="training scores")
    Y = check_Y(Y)
    check_same_shape(Y, S, "Y", "the training scores")
    return S, Y


def _fitted(strategy: Any) -> float:
    t = getattr(strategy, "threshold_", None)
    if t is None:
        raise ValueError(f"{type(strategy).__name__} is not fitted: call fit(scores, Y) first")
    return float(t)


