"""ML-XGB (one booster, multi-label leaves) and BR-XGB (one single-label booster per
label), both thresholded by the core's strategies (default: the core's
``mlw.thresholds.DEFAULT_THRESHOLD``; ``threshold="fixed"`` is the 0.5 cut)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import mlw
from mlw.thresholds import DEFAULT_THRESHOLD
from mlw_xdcc._common import dense_labels
from mlw_xdcc._params import BoosterParams
from mlw_xdcc.binning import bin_matrix, cuts_of
from mlw_xdcc.booster import TreeEnsemble, _sigmoid, fit_ensemble


@dataclass(kw_only=True, repr=False, eq=False)
class _ThresholdedBooster(BoosterParams, mlw.MultiLabelLearner):
    """The booster parameters (:class:`BoosterParams`, declared once for every learner
    of the plugin) plus ``threshold``; scores are thresholded by the core.

    Parameters
    ----------
    threshold : str or strategy object
        Thresholding strategy applied to ``predict_proba`` (default: the core's
        ``"cardinality:top_label=auto"``; ``"fixed"`` is the 0.5 cut).
    """

    _allow_nan = True

    threshold: Any = DEFAULT_THRESHOLD

    def staged_predict_proba(self, X: Any, n_estimators: Sequence[int]) -> Iterator[np.ndarray]:
        """``predict_proba`` of the first ``k`` boosting rounds for each ``k`` of the
        increasing ``n_estimators``, from one pass over the trees.  Round ``t`` of boosting
        only depends on rounds ``< t`` (row and column draws come from one generator in
        round order), so each yield equals ``predict_proba`` of a fresh fit with
        ``n_estimators=k`` (tested), which makes the rounds of a grid search a prefix."""
        X = self._validate_X(X, reset=False)
        yield from self._staged_proba(X, n_estimators)

    def staged_predict(self, X: Any, n_estimators: Sequence[int]) -> Iterator[np.ndarray]:
        """The fitted threshold applied to :meth:`staged_predict_proba`.  Equal to a fresh
        fit's ``predict`` when the threshold does not depend on the training scores
        (``"fixed"``, 0.5; the default cardinality matching is tuned on the full model's
        training scores)."""
        for P in self.staged_predict_proba(X, n_estimators):
            yield self._thresholded(P)

    def _staged_proba(self, X: Any, n_estimators: Sequence[int]) -> Iterator[np.ndarray]:
        raise NotImplementedError  # pragma: no cover - overridden


@dataclass(kw_only=True, repr=False, eq=False)
class MLXGB(_ThresholdedBooster):
    """Gradient-boosted trees whose leaves hold one weight per label (ML-XGB).

    Logistic loss per label; second-order boosting with histogram split finding on at
    most ``max_bin`` quantile bins; ``split`` selects one of the six criteria of the
    paper's Table 1.  NaN in dense ``X`` and absent entries of CSR ``X`` are missing
    values and go to the side learned at each split.  ``fit(X, Y, sample_weight=w)``
    weighs the rows' gradients, hessians, label priors and quantile cuts (see
    :func:`mlw_xdcc.booster.fit_ensemble`); BR-XGB passes ``w`` to each label's booster.

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_xdcc import MLXGB
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); Y = np.c_[X[:, 0] > 0, X[:, 1] > 0].astype(np.uint8)
    >>> MLXGB(n_estimators=20, max_depth=2).fit(X, Y).predict(X).shape
    (60, 2)
    """

    def _fit(self, X: Any, Y: Any, sample_weight: np.ndarray | None = None) -> None:
        params = self.booster_params()
        Yd = dense_labels(Y)
        edges, edge_off = cuts_of(X, params.max_bin, sample_weight)
        self.ensemble_: TreeEnsemble
        self.ensemble_, margin = fit_ensemble(bin_matrix(X, edges, edge_off), Yd, params,
                                              seed=params.random_state,
                                              sample_weight=sample_weight)
        self._fit_scores = _sigmoid(margin)  # the threshold's scores, without a new pass

    def _predict_proba(self, X: Any) -> np.ndarray:
        return self.ensemble_.predict_proba(X)

    def _staged_proba(self, X: Any, n_estimators: Sequence[int]) -> Iterator[np.ndarray]:
        for m in self.ensemble_.staged_decision_function(X, n_estimators):
            yield _sigmoid(m)

    def decision_function(self, X: Any) -> np.ndarray:
        """Per-label margins (log-odds), shape (n, L)."""
        return self.ensemble_.decision_function(self._validate_X(X, reset=False))


@dataclass(kw_only=True, repr=False, eq=False)
class BRXGB(_ThresholdedBooster):
    """Binary relevance with the same booster: one single-label ensemble per label."""

    def _fit(self, X: Any, Y: Any, sample_weight: np.ndarray | None = None) -> None:
        params = self.booster_params()
        Yd = dense_labels(Y)
        edges, edge_off = cuts_of(X, params.max_bin, sample_weight)
        B = bin_matrix(X, edges, edge_off)
        self.ensembles_: list[TreeEnsemble] = []
        margins = []
        for j in range(Yd.shape[1]):
            ens, m = fit_ensemble(B, Yd[:, j:j + 1], params, seed=params.random_state + j,
                                  sample_weight=sample_weight)
            self.ensembles_.append(ens)
            margins.append(m)
        self._fit_scores = _sigmoid(np.hstack(margins))  # the threshold's scores

    def _predict_proba(self, X: Any) -> np.ndarray:
        return np.hstack([e.predict_proba(X) for e in self.ensembles_])

    def _staged_proba(self, X: Any, n_estimators: Sequence[int]) -> Iterator[np.ndarray]:
        per_label = [e.staged_decision_function(X, n_estimators) for e in self.ensembles_]
        for margins in zip(*per_label, strict=True):
            yield _sigmoid(np.hstack(margins))
