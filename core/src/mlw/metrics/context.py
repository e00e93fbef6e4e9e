"""The evaluation context handed to every metric's ``compute``."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from mlw.metrics.at_k import _check_inv, check_topk
from mlw.metrics.counts import confusion_counts
from mlw.validation import check_same_shape, check_scores, check_Y

if TYPE_CHECKING:
    from mlw.metrics.counts import ConfusionCounts

T = TypeVar("T")


class EvalContext:
    """True and predicted label sets, optional scores and joint log-probabilities.

    Parameters
    ----------
    Y_true, Y_pred : 0/1 matrices (dense or CSR) of shape (n, L)
    scores : (n, L) float scores, optional (ranking metrics, ``log_loss``)
    log_proba : (n,) log P(y_true | x), optional (``cll_loss``)
    topk : a top-k ranking (:class:`mlw.metrics.at_k.TopK`, an ``(indices, scores)``
        pair or an (n, k) index array), optional: the metrics at k read it instead of
        ranking ``scores``
    inv_propensity : (L,) inverse propensities of the labels for PSP@k and PSnDCG@k,
        optional (default: Jain et al.'s, from ``Y_true``; pass those of the training
        labels, :func:`mlw.metrics.at_k.inverse_propensity`, to follow the
        Extreme Classification Repository's protocol)
    """

    def __init__(self, Y_true: Any, Y_pred: Any = None, *, scores: Any = None,
                 log_proba: Any = None, topk: Any = None,
                 inv_propensity: Any = None) -> None:
        self.Y_true = check_Y(Y_true, what="Y_true")
        self.Y_pred = None if Y_pred is None else check_Y(Y_pred, what="Y_pred")
        if self.Y_pred is not None:
            check_same_shape(self.Y_true, self.Y_pred, "Y_true", "Y_pred")
        self.scores = None if scores is None else check_scores(scores)
        if self.scores is not None:
            check_same_shape(self.Y_true, self.scores, "Y_true", "scores")
        self.log_proba = None
        if log_proba is not None:
            lp = np.asarray(log_proba, dtype=np.float64).ravel()
            if lp.shape[0] != self.Y_true.shape[0]:
                raise ValueError(f"log_proba has {lp.shape[0]} values for "
                                 f"{self.Y_true.shape[0]} instances")
            self.log_proba = lp
        self.topk = None if topk is None else check_topk(
            topk, self.n_labels, n_rows=self.n_instances)
        self.inv_propensity = (None if inv_propensity is None
                               else _check_inv(inv_propensity, self.n_labels))
        self._cache: dict[str, Any] = {}

    @property
    def n_instances(self) -> int:
        return int(self.Y_true.shape[0])

    @property
    def n_labels(self) -> int:
        return int(self.Y_true.shape[1])

    def has(self, needs: str, at_k: int | None = None) -> bool:
        """Whether what a metric ``needs`` ("labels", "scores", "joint") is present; a
        metric at ``at_k`` also accepts a top-k ranking of at least that many labels."""
        if at_k is not None and self.topk is not None:
            return bool(self.topk.indices.shape[1] >= at_k)
        return {"labels": self.Y_pred is not None, "scores": self.scores is not None,
                "joint": self.log_proba is not None}[needs]

    @cached_property
    def counts(self) -> ConfusionCounts:
        """Per-instance and per-label tp/fp/fn counts, computed once in one pass
        (see :func:`mlw.metrics.counts.confusion_counts`)."""
        if self.Y_pred is None:
            raise ValueError("label-set metrics need predicted labels (Y_pred)")
        return confusion_counts(self.Y_true, self.Y_pred)

    def cached(self, key: str, compute: Callable[[EvalContext], T]) -> T:
        """``compute(self)``, computed once per context and kept under ``key``.

        How a family of metrics shares one pass over the data: every metric of the
        family asks for the same key, the first computes, the others reuse (the core's
        ranking metrics keep their per-instance table under ``"mlw.ranking"``). Plugins
        use their own prefix for keys.
        """
        if key not in self._cache:
            self._cache[key] = compute(self)
        value: T = self._cache[key]
        return value
