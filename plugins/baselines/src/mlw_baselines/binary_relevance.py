"""Binary relevance: one independent binary classifier per label."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from scipy.special import expit

from mlw import MultiLabelLearner
from mlw.thresholds import DEFAULT_THRESHOLD
from mlw_baselines._base_estimator import (
    PROBA_FLOOR,
    ConstantModel,
    check_weighted_base,
    fit_binary,
    linear_logit,
    proba_positive,
    resolve_base_estimator,
)
from mlw_baselines._common import dense_labels, single_blas_thread, validate_joint_query


def _fit_column(template: Any, X: Any, Y: Any, j: int,
                sample_weight: np.ndarray | None = None) -> Any:
    y = Y[:, j].toarray().ravel() if sp.issparse(Y) else Y[:, j]
    return fit_binary(template, X, y, sample_weight)


class BinaryRelevance(MultiLabelLearner):
    """Binary relevance (BR): label ``j`` is predicted by its own classifier trained on
    ``(X, Y[:, j])``, ignoring the other labels.

    ``predict_proba`` gives each classifier's probability of its label; ``predict``
    applies the ``threshold`` strategy to them (default: 0.5). A label constant in the
    training data gets the Laplace-smoothed prior instead of a classifier.
    ``log_proba_of`` reads BR as the joint model that assumes the labels independent
    given x: log P(y | x) = sum_j log P(y_j | x), so its ``cll_loss`` is comparable with
    the joint learners' (the CLL-loss column of the mixture-of-CTBNs paper).

    Parameters
    ----------
    base_estimator : None, str or scikit-learn classifier
        ``None`` is MaxAbsScaler + logistic regression (lbfgs, C=1, max_iter=1000); a string is a
        shortcut (``"logistic_regression"``, ``"decision_tree"``, ``"random_forest"``,
        ``"linear_svc"``, ``"bernoulli_nb"``); a dotted path names any scikit-learn
        classifier class (``"sklearn.svm.LinearSVC"``, built without arguments); an
        object is cloned for every label.
    base_params : dict or None
        Parameters of the base classifier, set on it with ``set_params``
        (``{"C": 10}``; on a pipeline shortcut, names its last step lacks go to
        the classifier); ``--param base__C=10`` on the command line.
    threshold : str or strategy object
        A registered thresholding strategy (``"fixed"``, ``"pcut"``,
        ``"cardinality"``, ``"one_threshold"``), tuned in ``fit``. Default: the core's
        ``mlw.thresholds.DEFAULT_THRESHOLD`` (cardinality matching with the adaptive
        top-label rule; BR's papers prescribe no decision); ``"fixed"`` is the 0.5 cut.
    random_state : int or None
        Seed of the shortcut classifiers that are randomised (trees, forests, SVC).
    n_jobs : int or None
        Labels fitted in parallel by joblib (``None``: one at a time, ``-1``: all cores).

    Attributes
    ----------
    estimators_ : list
        One fitted classifier (or ``ConstantModel``) per label.
    constant_labels_ : ndarray of int
        Indices of the labels that were constant in training.
    linear_coef_, linear_intercept_ : ndarray or None
        When every classifier is linear (logistic regression, or a margin classifier
        scored by the sigmoid of its margin): the stacked weights, shape (L, n_features)
        and (L,), used to score all labels with one matrix product; otherwise ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_baselines import BinaryRelevance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int)
    >>> br = BinaryRelevance().fit(X, Y)
    >>> br.predict(X).shape, bool((br.predict(X) == Y).mean() > 0.9)
    ((60, 2), True)
    """

    def __init__(self, *, base_estimator: Any = None, base_params: dict | None = None,
                 threshold: Any = DEFAULT_THRESHOLD, random_state: int | None = 0,
                 n_jobs: int | None = None) -> None:
        self.base_estimator = base_estimator
        self.base_params = base_params
        self.threshold = threshold
        self.random_state = random_state
        self.n_jobs = n_jobs

    @single_blas_thread
    def _fit(self, X: Any, Y: Any, sample_weight: np.ndarray | None = None) -> None:
        template = resolve_base_estimator(self.base_estimator, self.random_state,
                                          self.base_params)
        if sample_weight is not None:
            check_weighted_base(template)
        Yc = Y.tocsc() if sp.issparse(Y) else Y
        L = Y.shape[1]
        if self.n_jobs in (None, 1):
            models = [_fit_column(template, X, Yc, j, sample_weight) for j in range(L)]
        else:
            models = Parallel(n_jobs=self.n_jobs)(
                delayed(_fit_column)(template, X, Yc, j, sample_weight) for j in range(L))
        self.estimators_ = list(models)
        self.constant_labels_ = np.array(
            [j for j, m in enumerate(models) if isinstance(m, ConstantModel)],
            dtype=np.int64)
        lin = [linear_logit(m, X.shape[1]) for m in models]
        self.linear_coef_: np.ndarray | None = None
        self.linear_intercept_: np.ndarray | None = None
        if all(v is not None for v in lin):
            self.linear_coef_ = np.vstack([v[0] for v in lin if v is not None])
            self.linear_intercept_ = np.array([v[1] for v in lin if v is not None])

    @single_blas_thread
    def _predict_proba(self, X: Any) -> np.ndarray:
        if self.linear_coef_ is not None:  # every link linear: one matrix product
            Z = np.asarray(X @ self.linear_coef_.T) + self.linear_intercept_
            return np.ascontiguousarray(expit(Z))
        return np.column_stack([proba_positive(m, X) for m in self.estimators_])

    def log_proba_of(self, X: Any, Y: Any) -> np.ndarray:
        """log P(Y | X) under label independence, sum_j log P(y_j | x), shape (n,).

        Each factor is floored at 1e-12 (``PROBA_FLOOR``) before the logarithm, as in
        the chains' ``log_proba_of``.
        """
        X, Yd = validate_joint_query(self, X, Y)
        P = self._predict_proba(X)
        F = np.where(dense_labels(Yd) == 1, P, 1.0 - P)
        return np.log(np.maximum(F, PROBA_FLOOR)).sum(axis=1)
