"""Calibrated marginals for any learner with scores: isotonic regression or Platt
scaling per label, fitted on a held-out calibration split.

:class:`CalibratedLearner` wraps a learner (an estimator or a registered name): it
fits the learner on part of the training data and, per label, a monotone map from the
learner's score to the frequency of the label on the rest (the calibration split).
``predict_proba`` gives the mapped scores; ``predict`` thresholds them like any
learner's (``threshold``, default 0.5 on calibrated marginals: the Hamming-optimal
cut-off when they are calibrated). The calibration metrics ``ece_pooled`` and
``ece_macro`` (:mod:`mlw.metrics.calibration`) measure what it gains, and
``mlw report`` draws the reliability diagram.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.factory import get_learner
from mlw.learner import MultiLabelLearner
from mlw.validation import check_param, dense_labels


def resolve_estimator(estimator: Any, random_state: int | None) -> Any:
    """An unfitted copy of ``estimator``: a registered learner name (built with the
    seed) or an estimator object (cloned)."""
    if isinstance(estimator, str):
        return get_learner(estimator, seed=random_state)
    from sklearn.base import clone

    if not hasattr(estimator, "fit") or not hasattr(estimator, "predict_proba"):
        raise ValueError(f"estimator must be a registered learner name or an estimator with "
                         f"fit and predict_proba, got {estimator!r}")
    return clone(estimator)


def calibration_split(n: int, size: float, random_state: int | None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``(fit rows, calibration rows)``: a seeded random split with ``round(size * n)``
    calibration rows (at least 1, leaving at least 1 to fit on)."""
    check_param("calibration_size", size, float, low=0.0, high=1.0, low_open=True,
                high_open=True)
    if n < 2:
        raise ValueError(f"a calibration split needs at least 2 instances, got {n}")
    n_cal = min(max(int(round(size * n)), 1), n - 1)
    perm = np.random.default_rng(0 if random_state is None else random_state).permutation(n)
    return np.sort(perm[n_cal:]), np.sort(perm[:n_cal])


def dense_scores(S: Any) -> np.ndarray:
    return np.asarray(S.toarray() if sp.issparse(S) else S, dtype=np.float64)


class CalibratedLearner(MultiLabelLearner):
    """Any learner with scores, its marginals calibrated per label on a held-out split.

    Parameters
    ----------
    estimator : str or estimator
        The learner: a registered name (``"br"``) or an unfitted estimator with
        ``fit`` and ``predict_proba`` (cloned).
    method : {"isotonic", "platt"}
        Isotonic regression (monotone, piecewise constant; needs a few hundred
        calibration rows) or Platt scaling (a logistic regression on the score).
    calibration_size : float
        Fraction of the training rows held out to calibrate on (the learner is fitted
        on the rest).
    threshold : str or strategy object
        The thresholding strategy applied to the calibrated marginals.
    random_state : int or None
        Seed of the split and of a learner given by name.

    Attributes
    ----------
    estimator_ : the fitted learner
    calibrators_ : list
        Per label, the fitted map (``None`` for a label with one class only in the
        calibration split: its score is kept as is).

    Examples
    --------
    >>> import mlw
    >>> from mlw.calibration import CalibratedLearner
    >>> train = mlw.load_dataset("emotions")
    >>> model = CalibratedLearner("br", method="platt").fit(train.X, train.Y)
    >>> model.predict_proba(train.X[:2]).shape
    (2, 6)
    """

    def __init__(self, estimator: Any = "br", *, method: str = "isotonic",
                 calibration_size: float = 0.3, threshold: Any = "fixed",
                 random_state: int | None = 0) -> None:
        self.estimator = estimator
        self.method = method
        self.calibration_size = calibration_size
        self.threshold = threshold
        self.random_state = random_state

    def _fit(self, X: Any, Y: Any) -> None:
        check_param("method", self.method, str, choices=("isotonic", "platt"))
        fit_rows, cal_rows = calibration_split(X.shape[0], self.calibration_size,
                                               self.random_state)
        self.estimator_ = resolve_estimator(self.estimator, self.random_state)
        self.estimator_.fit(X[fit_rows], Y[fit_rows])
        S = dense_scores(self.estimator_.predict_proba(X[cal_rows]))
        Yc = dense_labels(Y[cal_rows])
        self.calibrators_ = [self._fit_one(S[:, j], Yc[:, j]) for j in range(Y.shape[1])]

    def _fit_one(self, s: np.ndarray, y: np.ndarray) -> Any:
        if y.min() == y.max():
            return None
        if self.method == "isotonic":
            from sklearn.isotonic import IsotonicRegression

            return IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(s, y)
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=1e6).fit(s.reshape(-1, 1), y)

    def _predict_proba(self, X: Any) -> np.ndarray:
        S = dense_scores(self.estimator_.predict_proba(X))
        out = np.empty_like(S)
        for j, cal in enumerate(self.calibrators_):
            if cal is None:
                out[:, j] = S[:, j]
            elif self.method == "isotonic":
                out[:, j] = cal.predict(S[:, j])
            else:
                out[:, j] = cal.predict_proba(S[:, j].reshape(-1, 1))[:, 1]
        return np.clip(out, 0.0, 1.0)
