"""Thresholding strategies: from per-label scores to 0/1 label sets.

Every strategy has ``fit(scores, Y) -> self`` and ``predict(scores) -> Y``. ``scores``
are dense float arrays or CSR matrices (an absent entry is a score of 0); predictions
are dense ``uint8`` for dense scores and CSR ``uint8`` for CSR scores, so sparse stays
sparse. The scores are meant to lie in [0, 1], the range every search covers.

The decision rule, shared by all strategies: label j is predicted for an instance when
its score is ``>= t`` **and positive**. A score of 0 never predicts a label, so an absent
CSR entry and a stored 0 mean the same thing and dense and CSR scores always give the
same predictions (only the threshold 0 is affected: it predicts every label with a
positive score rather than every label).

Registered by the core (see :mod:`mlw._builtin.thresholds`) as ``fixed``, ``pcut``,
``cardinality`` and ``one_threshold``; get one by name with
:func:`mlw.get_threshold`. See ``docs/thresholds.md``.
"""

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


class FixedThreshold(_Strategy):
    """Predict a label when its score is at least ``threshold`` (default 0.5).

    Parameters
    ----------
    threshold : float
        The cut-off in [0, 1].
    top_label : bool or "auto"
        Give an instance with no label its top-scoring label; ``"auto"``: only when the
        training set has (almost) no empty label sets (needs ``Y`` in ``fit``).
    """

    needs_training_scores = False

    def __init__(self, threshold: float = 0.5, *, top_label: bool = False) -> None:
        self.threshold = threshold
        self.top_label = top_label

    def fit(self, scores: Scores | None = None, Y: Any = None) -> FixedThreshold:
        if not 0.0 <= float(self.threshold) <= 1.0:
            raise ValueError(f"fixed threshold must be in [0, 1], got {self.threshold}")
        self.threshold_ = float(self.threshold)
        if self.top_label == "auto" and Y is None:
            raise ValueError("top_label='auto' needs the training labels Y in fit")
        self.top_label_ = resolve_top_label(self.top_label, None if Y is None else check_Y(Y))
        return self

    def predict(self, scores: Scores) -> Any:
        return apply_threshold(check_scores(scores), _fitted(self), top_label=self.top_label_)


class PCut(_Strategy):
    """Pcut: one threshold, chosen on the scored set itself, so that the predicted
    label density equals the training label density (as LaCovaC and MEKA use it).

    ``fit`` records the training label cardinality c (equivalently the density c/L).
    ``predict`` on n instances predicts the ``k = round(c * n)`` largest positive scores
    of the whole set, together with every score tied with the k-th (:meth:`cut` gives
    that k-th largest score for a scored set). With fewer than k positive scores, all of
    them are predicted; with k = 0, none (the cut is ``inf``).

    MEKA's ``ThresholdUtils.calibrateThreshold`` cuts half-way between the k-th and the
    (k+1)-th largest score, which makes the same predictions whenever those differ, and
    floors the cut at 1e-5 where we never predict a score of 0.
    """

    needs_training_scores = False

    def fit(self, scores: Scores | None = None, Y: Any = None) -> PCut:
        if Y is None:
            raise ValueError("pcut needs the training label matrix Y to learn the density")
        Y = check_Y(Y)
        if Y.shape[0] == 0 or Y.shape[1] == 0:
            raise ValueError(f"pcut cannot learn a density from a label matrix of shape "
                             f"{Y.shape}")
        self.label_cardinality_ = float(Y.sum()) / Y.shape[0]
        self.density_ = self.label_cardinality_ / Y.shape[1]
        self.n_labels_ = int(Y.shape[1])
        return self

    def cut(self, scores: Scores) -> float:
        """The threshold Pcut uses on this scored set: the ``k``-th largest positive
        score (``inf`` when nothing is predicted). Depends on the set, so it is not a
        fitted attribute."""
        if not hasattr(self, "label_cardinality_"):
            raise ValueError("PCut is not fitted: call fit(scores, Y) first")
        S = check_scores(scores, n_labels=self.n_labels_)
        k = int(np.floor(self.label_cardinality_ * S.shape[0] + 0.5))  # half rounds up
        values: np.ndarray = np.asarray(S.data if sp.issparse(S) else S.ravel())
        positive = values[values > 0]
        if k <= 0 or positive.size == 0:
            return float(np.inf)
        if k >= positive.size:
            return float(positive.min())
        return float(np.partition(positive, positive.size - k)[positive.size - k])

    def predict(self, scores: Scores) -> Any:
        S = check_scores(scores)
        return apply_threshold(S, self.cut(S))


class CardinalityMatching(_Strategy):
    """One threshold whose predicted label cardinality on the training scores is
    closest to the training label cardinality (LCIF).

    The search is :func:`two_pass_search` (0..1 in steps of 0.1, then ±0.05 in steps of
    0.01) minimising ``|predicted cardinality - training cardinality|``. With the
    top-label rule (BRkNN-a's) an instance with no label above the threshold gets its
    top-scoring label, both while searching and when predicting.

    Parameters
    ----------
    top_label : bool or "auto", default True
        The top-label rule: on, off, or (``"auto"``) on only when at most
        :data:`EMPTY_SET_TOLERANCE` of the training instances have no label, so that a
        learner never predicts the empty set where it does not occur, and can where it
        does (see :func:`resolve_top_label`).

    After ``fit``: ``threshold_``, ``top_label_`` (the rule in force),
    ``target_cardinality_``, ``search_`` (every (threshold, cardinality) evaluated) and
    ``cardinality_`` (at ``threshold_``).
    """

    def __init__(self, *, top_label: bool | str = True) -> None:
        self.top_label = top_label

    def fit(self, scores: Scores, Y: Any) -> CardinalityMatching:
        if scores is None or Y is None:
            raise ValueError("cardinality thresholding needs training scores and labels")
        S, Y = _check_training(scores, Y)
        if Y.shape[0] == 0:
            raise ValueError("cardinality thresholding needs at least one training instance")
        self.top_label_ = resolve_top_label(self.top_label, Y)
        return self._search(_CardinalityCurve(S, self.top_label_),
                            float(Y.sum()) / Y.shape[0])

    def fit_blocks(self, blocks: Any, *, n_rows: int, n_positive: int,
                   n_empty: int | None = None) -> CardinalityMatching:
        """Fit from the training scores given block by block (each block a dense or CSR
        score matrix for consecutive training rows), with ``n_rows`` training instances
        holding ``n_positive`` labels in all, ``n_empty`` of them with no label (needed
        by ``top_label="auto"``). Decides exactly what :meth:`fit` decides on the
        stacked scores, without ever holding them all (learners at extreme scale)."""
        if n_rows <= 0:
            raise ValueError("cardinality thresholding needs at least one training instance")
        if self.top_label == "auto":
            if n_empty is None:
                raise ValueError("top_label='auto' needs n_empty, the number of training "
                                 "instances without a label")
            self.top_label_ = n_empty / n_rows <= EMPTY_SET_TOLERANCE
        else:
            self.top_label_ = resolve_top_label(self.top_label, None)
        return self._search(_BlockedCardinalityCurve(blocks, n_rows, self.top_label_),
                            float(n_positive) / n_rows)

    def _search(self, curve: _CardinalityCurve, target: float) -> CardinalityMatching:
        trace: list[tuple[float, float]] = []
        self.target_cardinality_ = target
        self.threshold_ = two_pass_search(lambda t: -abs(curve(t) - target), trace)
        self.search_ = [(t, curve(t)) for t, _ in trace]
        self.cardinality_ = curve(self.threshold_)
        return self

    def predict(self, scores: Scores) -> Any:
        return apply_threshold(check_scores(scores), _fitted(self), top_label=self.top_label_)


class OneThreshold(_Strategy):
    """Mulan's OneThreshold: the single threshold that maximises a metric (default
    micro-F1) on the training scores, by :func:`two_pass_search`.

    Parameters
    ----------
    metric : str
        A registered label-set metric; for a lower-is-better metric its negation is
        maximised.
    top_label : bool or "auto"
        Apply the top-label rule while searching and predicting (``"auto"``: only when
        the training set has (almost) no empty label sets).

    After ``fit``: ``threshold_``, ``score_`` (the metric there) and ``search_`` (every
    (threshold, metric value) evaluated).
    """

    def __init__(self, metric: str = "f1_micro", *, top_label: bool | str = False) -> None:
        self.metric = metric
        self.top_label = top_label

    def fit(self, scores: Scores, Y: Any) -> OneThreshold:
        from mlw.metrics.context import EvalContext
        from mlw.plugins import get_plugin_manager

        if scores is None or Y is None:
            raise ValueError("one_threshold needs training scores and labels")
        spec = get_plugin_manager().metric(self.metric)
        if spec.needs != "labels":
            raise ValueError(f"one_threshold needs a label-set metric; {self.metric!r} needs "
                             f"{spec.needs}")
        S, Y = _check_training(scores, Y)
        sign = 1.0 if spec.greater_is_better else -1.0
        top_label = self.top_label_ = resolve_top_label(self.top_label, Y)

        def objective(t: float) -> float:
            P = apply_threshold(S, t, top_label=top_label)
            return sign * float(spec.compute(EvalContext(Y, P)))

        trace: list[tuple[float, float]] = []
        self.threshold_ = two_pass_search(objective, trace)
        self.search_ = [(t, sign * v) for t, v in trace]
        self.score_ = dict(self.search_)[self.threshold_]
        return self

    def predict(self, scores: Scores) -> Any:
        return apply_threshold(check_scores(scores), _fitted(self), top_label=self.top_label_)
