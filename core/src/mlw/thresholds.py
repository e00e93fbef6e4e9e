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


class _Strategy:
    """Shared plumbing: a repr showing the constructor options, like scikit-learn's.

    ``needs_training_scores`` says whether ``fit`` uses the training scores (the same
    flag as the strategy's :class:`mlw.ThresholdSpec`), so a learner given a strategy
    object can skip scoring its training data.
    """

    needs_training_scores: bool = True

    def __repr__(self) -> str:
        import inspect

        params = [p for p in inspect.signature(type(self).__init__).parameters.values()
                  if p.name != "self"]
        shown = [f"{p.name}={getattr(self, p.name)!r}" for p in params
                 if getattr(self, p.name) != p.default]
        return f"{type(self).__name__}({', '.join(shown)})"


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
    top_label : bool
        Give an instance with no label its top-scoring label.
    """

    needs_training_scores = False

    def __init__(self, threshold: float = 0.5, *, top_label: bool = False) -> None:
        self.threshold = threshold
        self.top_label = top_label

    def fit(self, scores: Scores | None = None, Y: Any = None) -> FixedThreshold:
        if not 0.0 <= float(self.threshold) <= 1.0:
            raise ValueError(f"fixed threshold must be in [0, 1], got {self.threshold}")
        self.threshold_ = float(self.threshold)
        return self

    def predict(self, scores: Scores) -> Any:
        return apply_threshold(check_scores(scores), _fitted(self), top_label=self.top_label)


class PCut(_Strategy):
    """Pcut: one threshold, chosen on the scored set itself, so that the predicted
    label density equals the training label density (as LaCovaC and MEKA use it).

    ``fit`` records the training label cardinality c (equivalently the density c/L).
    ``predict`` on n instances predicts the ``k = round(c * n)`` largest positive scores
    of the whole set, together with every score tied with the k-th (``threshold_`` is
    then that k-th largest score). With fewer than k positive scores, all of them are
    predicted; with k = 0, none (``threshold_`` is ``inf``).

    MEKA's ``ThresholdUtils.calibrateThreshold`` cuts half-way between the k-th and the
    (k+1)-th largest score, which makes the same predictions whenever those differ, and
    floors the cut at 1e-5 where we never predict a score of 0.
    """

    needs_training_scores = False

    def __init__(self) -> None:
        pass

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
        self.threshold_ = np.nan
        return self

    def predict(self, scores: Scores) -> Any:
        if not hasattr(self, "label_cardinality_"):
            raise ValueError("PCut is not fitted: call fit(scores, Y) first")
        S = check_scores(scores, n_labels=self.n_labels_)
        k = int(np.floor(self.label_cardinality_ * S.shape[0] + 0.5))  # half rounds up
        values: np.ndarray = np.asarray(S.data if sp.issparse(S) else S.ravel())
        positive = values[values > 0]
        if k <= 0 or positive.size == 0:
            t = np.inf
        elif k >= positive.size:
            t = float(positive.min())
        else:
            t = float(np.partition(positive, positive.size - k)[positive.size - k])
        self.threshold_ = t
        return apply_threshold(S, t)


class CardinalityMatching(_Strategy):
    """One threshold whose predicted label cardinality on the training scores is
    closest to the training label cardinality (LCIF).

    The search is :func:`two_pass_search` (0..1 in steps of 0.1, then ±0.05 in steps of
    0.01) minimising ``|predicted cardinality - training cardinality|``. With
    ``top_label`` (BRkNN-a's rule, on by default) an instance with no label above the
    threshold gets its top-scoring label, both while searching and when predicting.

    After ``fit``: ``threshold_``, ``target_cardinality_``, ``search_`` (every
    (threshold, cardinality) evaluated) and ``cardinality_`` (at ``threshold_``).
    """

    def __init__(self, *, top_label: bool = True) -> None:
        self.top_label = top_label

    def fit(self, scores: Scores, Y: Any) -> CardinalityMatching:
        if scores is None or Y is None:
            raise ValueError("cardinality thresholding needs training scores and labels")
        S, Y = _check_training(scores, Y)
        if Y.shape[0] == 0:
            raise ValueError("cardinality thresholding needs at least one training instance")
        return self._search(_CardinalityCurve(S, self.top_label),
                            float(Y.sum()) / Y.shape[0])

    def fit_blocks(self, blocks: Any, *, n_rows: int, n_positive: int) -> CardinalityMatching:
        """Fit from the training scores given block by block (each block a dense or CSR
        score matrix for consecutive training rows), with ``n_rows`` training instances
        holding ``n_positive`` labels in all. Decides exactly what :meth:`fit` decides on
        the stacked scores, without ever holding them all (learners at extreme scale)."""
        if n_rows <= 0:
            raise ValueError("cardinality thresholding needs at least one training instance")
        return self._search(_BlockedCardinalityCurve(blocks, n_rows, self.top_label),
                            float(n_positive) / n_rows)

    def _search(self, curve: _CardinalityCurve, target: float) -> CardinalityMatching:
        trace: list[tuple[float, float]] = []
        self.target_cardinality_ = target
        self.threshold_ = two_pass_search(lambda t: -abs(curve(t) - target), trace)
        self.search_ = [(t, curve(t)) for t, _ in trace]
        self.cardinality_ = curve(self.threshold_)
        return self

    def predict(self, scores: Scores) -> Any:
        return apply_threshold(check_scores(scores), _fitted(self), top_label=self.top_label)


class OneThreshold(_Strategy):
    """Mulan's OneThreshold: the single threshold that maximises a metric (default
    micro-F1) on the training scores, by :func:`two_pass_search`.

    Parameters
    ----------
    metric : str
        A registered label-set metric; for a lower-is-better metric its negation is
        maximised.
    top_label : bool
        Apply the top-label rule while searching and predicting.

    After ``fit``: ``threshold_``, ``score_`` (the metric there) and ``search_`` (every
    (threshold, metric value) evaluated).
    """

    def __init__(self, metric: str = "f1_micro", *, top_label: bool = False) -> None:
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

        def objective(t: float) -> float:
            P = apply_threshold(S, t, top_label=self.top_label)
            return sign * float(spec.compute(EvalContext(Y, P)))

        trace: list[tuple[float, float]] = []
        self.threshold_ = two_pass_search(objective, trace)
        self.search_ = [(t, sign * v) for t, v in trace]
        self.score_ = dict(self.search_)[self.threshold_]
        return self

    def predict(self, scores: Scores) -> Any:
        return apply_threshold(check_scores(scores), _fitted(self), top_label=self.top_label)
