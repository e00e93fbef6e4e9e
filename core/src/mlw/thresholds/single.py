"""Strategies with one threshold for every label and instance: ``fixed``, ``pcut``,
``cardinality``, ``one_threshold``."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.metrics.context import EvalContext
from mlw.plugins import get_plugin_manager
from mlw.thresholds._common import (
    EMPTY_SET_TOLERANCE,
    Scores,
    _BlockedCardinalityCurve,
    _CardinalityCurve,
    _check_training,
    _fitted,
    _Strategy,
    apply_threshold,
    resolve_top_label,
    two_pass_search,
)
from mlw.validation import check_scores, check_Y


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

    Parameters
    ----------
    top_label : bool or "auto", default False
        The top-label rule of :class:`CardinalityMatching`, applied after the cut: a row
        left with no label gets its top-scoring one; ``"auto"``: only when the training
        set has (almost) no empty label sets (:func:`resolve_top_label`). Off by
        default: plain Pcut, as LaCovaC's paper and MEKA use it. Pcut matches the label
        density over all pairs, not per row, so it leaves rows empty where none is
        (1-15% of LaCovaC's test rows on five shared datasets).
    """

    needs_training_scores = False

    def __init__(self, *, top_label: bool | str = False) -> None:
        self.top_label = top_label

    def fit(self, scores: Scores | None = None, Y: Any = None) -> PCut:
        if Y is None:
            raise ValueError("pcut needs the training label matrix Y to learn the density")
        Y = check_Y(Y)
        if Y.shape[0] == 0 or Y.shape[1] == 0:
            raise ValueError(f"pcut cannot learn a density from a label matrix of shape "
                             f"{Y.shape}")
        self.top_label_ = resolve_top_label(self.top_label, Y)
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
        # a PCut fitted before top_label existed (a model file) keeps plain Pcut
        return apply_threshold(S, self.cut(S), top_label=getattr(self, "top_label_", False))


class CardinalityMatching(_Strategy):
    """One threshold whose predicted label cardinality on the training scores is
    closest to the training label cardinality (LCIF).

    The search is :func:`two_pass_search` (0..1 in steps of 0.1, then ±0.05 in steps of
    0.01) minimising ``|predicted cardinality - training cardinality|``. With the
    top-label rule (BRkNN-a's) an instance with no label above the threshold gets its
    top-scoring label, both while searching and when predicting.

    Parameters
    ----------
    top_label : bool or "auto", default "auto"
        The top-label rule: on, off, or (``"auto"``, the default) on only when at most
        :data:`EMPTY_SET_TOLERANCE` of the training instances have no label, so that a
        learner never predicts the empty set where it does not occur, and can where it
        does (see :func:`resolve_top_label`). LCIF's paper keeps the rule always on
        because its benchmarks "very rarely (or even never)" have an empty label set:
        ``"auto"`` is that rule wherever the premise holds.

    Notes
    -----
    After ``fit``: ``threshold_``, ``top_label_`` (the rule in force),
    ``target_cardinality_``, ``search_`` (every (threshold, cardinality) evaluated) and
    ``cardinality_`` (at ``threshold_``).
    """

    def __init__(self, *, top_label: bool | str = "auto") -> None:
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

    Notes
    -----
    After ``fit``: ``threshold_``, ``score_`` (the metric there) and ``search_`` (every
    (threshold, metric value) evaluated).
    """

    def __init__(self, metric: str = "f1_micro", *, top_label: bool | str = False) -> None:
        self.metric = metric
        self.top_label = top_label

    def fit(self, scores: Scores, Y: Any) -> OneThreshold:
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
