"""Classifier chains (Read et al., 2009/2011): link ``j`` of the chain sees the features
and the labels of the links before it.

:class:`ChainModel` holds what CC and PCC share (training, the link oracle, the chain
rule); :class:`ClassifierChain` adds CC's greedy inference.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from joblib import Parallel, delayed

from mlw import MultiLabelLearner
from mlw.thresholds import DEFAULT_THRESHOLD
from mlw_baselines import _inference, _kernels
from mlw_baselines._base_estimator import (
    LOG_PROBA_FLOOR,
    ConstantModel,
    check_weighted_base,
    fit_binary,
    linear_logit,
    proba_positive,
    resolve_base_estimator,
)
from mlw_baselines._common import (
    chain_features,
    dense_labels,
    log_sigmoid,
    resolve_order,
    single_blas_thread,
    validate_joint_query,
)


def _fit_link(template: Any, X: Any, Yc: np.ndarray, j: int,
              sample_weight: np.ndarray | None = None) -> Any:
    return fit_binary(template, chain_features(X, Yc[:, :j]), Yc[:, j], sample_weight)


class ChainModel(MultiLabelLearner):
    """The trained chain shared by :class:`ClassifierChain` and
    :class:`~mlw_baselines.ProbabilisticClassifierChain`.

    Link ``j`` (chain position) predicts label ``order_[j]`` from
    ``[X, y_order_[0], ..., y_order_[j-1]]``, trained on the true labels (so the links
    are independent and fitted in parallel with ``n_jobs``). CSR ``X`` stays CSR: the
    label columns are appended as a sparse block.
    """

    _joint_prediction: ClassVar[bool] = True

    def __init__(self, *, base_estimator: Any = None, base_params: dict | None = None,
                 order: Any = None, random_state: int | None = 0,
                 n_jobs: int | None = None, threshold: Any = DEFAULT_THRESHOLD) -> None:
        self.base_estimator = base_estimator
        self.base_params = base_params
        self.order = order
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.threshold = threshold

    # -- training ----------------------------------------------------------------------
    @single_blas_thread
    def _fit(self, X: Any, Y: Any, sample_weight: np.ndarray | None = None) -> None:
        L = Y.shape[1]
        order = resolve_order(self.order, L, self.random_state)
        template = resolve_base_estimator(self.base_estimator, self.random_state,
                                          self.base_params)
        if sample_weight is not None:
            check_weighted_base(template)
        Yc = np.ascontiguousarray(dense_labels(Y)[:, order])
        if self.n_jobs in (None, 1):
            models = [_fit_link(template, X, Yc, j, sample_weight) for j in range(L)]
        else:
            models = Parallel(n_jobs=self.n_jobs)(
                delayed(_fit_link)(template, X, Yc, j, sample_weight) for j in range(L))
        self.order_ = order
        self.estimators_ = list(models)
        self.constant_labels_ = np.sort(order[[j for j, m in enumerate(models)
                                              if isinstance(m, ConstantModel)]])
        d = X.shape[1]
        lin = [linear_logit(m, d + j) for j, m in enumerate(models)]
        self.linear_coef_: np.ndarray | None = None
        self.linear_chain_weights_: np.ndarray | None = None
        self.linear_intercept_: np.ndarray | None = None
        if all(v is not None for v in lin):
            coef = np.zeros((L, d))
            W = np.zeros((L, L))
            b = np.zeros(L)
            for j, v in enumerate(lin):
                assert v is not None
                coef[j], W[j, :j], b[j] = v[0][:d], v[0][d:], v[1]
            self.linear_coef_, self.linear_chain_weights_, self.linear_intercept_ = coef, W, b

    # -- the links ---------------------------------------------------------------------
    def _feature_logits(self, X: Any) -> np.ndarray:
        """``A[i, j] = w_j · x_i + b_j`` of the linear links, chain positions."""
        assert self.linear_coef_ is not None
        return np.ascontiguousarray(np.asarray(X @ self.linear_coef_.T) + self.linear_intercept_)

    def _oracle(self, X: Any) -> _inference.Oracle:
        """``P(y_d = 1 | x_rows, prefix)`` for the link at chain position ``d``."""
        models = self.estimators_
        n = X.shape[0]

        def oracle(d: int, rows: np.ndarray, prefix: np.ndarray) -> np.ndarray:
            Xr = X if rows.size == n and np.array_equal(rows, np.arange(n)) else X[rows]
            return proba_positive(models[d], chain_features(Xr, prefix))

        return oracle

    def _to_labels(self, M: np.ndarray) -> np.ndarray:
        """Columns in chain positions -> columns in label order."""
        out = np.empty_like(M)
        out[:, self.order_] = M
        return out

    # -- the joint model ---------------------------------------------------------------
    def log_proba_of(self, X: Any, Y: Any) -> np.ndarray:
        """log P(Y | X) by the chain rule, shape (n,).

        Each factor P(y_j | x, y_<j) is floored at 1e-12 (``PROBA_FLOOR``) before
        the logarithm, so a link that is certain and wrong (a decision tree) costs
        about 27.6 nats instead of infinity.
        """
        X, Yd = validate_joint_query(self, X, Y)
        return self._log_proba_of(X, Yd)

    @single_blas_thread
    def _log_proba_of(self, X: Any, Y: Any) -> np.ndarray:
        Yc = np.ascontiguousarray(dense_labels(Y)[:, self.order_])
        if self.linear_chain_weights_ is not None:
            Z = self._feature_logits(X) + Yc @ self.linear_chain_weights_.T
            terms = np.where(Yc == 1, log_sigmoid(Z), log_sigmoid(-Z))
            return np.maximum(terms, LOG_PROBA_FLOOR).sum(axis=1)
        return _inference.chain_log_proba(self._oracle(X), Yc)


class ClassifierChain(ChainModel):
    """Classifier chain (CC, Read et al. 2011) with greedy inference.

    The chain's own joint decision (``threshold=None``): link by link in chain order,
    ``ŷ_j = 1`` iff ``P(y_j = 1 | x, ŷ_<j) >= 0.5``, each link seeing the previous
    *predictions*. ``predict_proba`` gives those link probabilities along the greedy
    path (so thresholding it at 0.5, ``threshold="fixed"``, reproduces the chain's
    decision). By default ``predict`` thresholds them with the core's
    ``mlw.thresholds.DEFAULT_THRESHOLD`` (the 0.5 chain left 10-40% of the
    rows of medical, slashdot empty where none truly is). ``log_proba_of`` is the
    chain-rule product for the given label vectors.

    Parameters
    ----------
    base_estimator : None, str or scikit-learn classifier
        ``None`` is MaxAbsScaler + logistic regression (lbfgs, C=1, max_iter=1000); strings are the
        shortcuts of :data:`mlw_baselines.SHORTCUTS`; objects are cloned per link.
    base_params : dict or None
        Parameters of the base classifier, set on it with ``set_params``
        (``{"C": 10}``; on a pipeline shortcut, names its last step lacks go to
        the classifier); ``--param base__C=10`` on the command line.
    order : None, "random" or sequence of int
        The chain order: the labels' own order, a permutation drawn with
        ``random_state``, or the label indices in chain order.
    random_state : int or None
        Seed of the random order and of the randomised shortcut classifiers.
    n_jobs : int or None
        Links trained in parallel by joblib (they are independent in training).
    threshold : None, str or strategy object
        ``None``: the chain's own greedy decision; otherwise a thresholding strategy
        tuned in ``fit`` on the training link probabilities and applied to
        ``predict_proba`` (default: ``mlw.thresholds.DEFAULT_THRESHOLD``).

    Attributes
    ----------
    order_ : ndarray of int
        Label indices in chain order.
    estimators_ : list
        The fitted link classifiers in chain order (``ConstantModel`` for a label that
        was constant in training).
    linear_coef_, linear_chain_weights_, linear_intercept_ : ndarray or None
        When every link is linear: feature weights (L, n_features), chained-label
        weights (L, L, strictly lower triangular) and intercepts, in chain positions;
        inference then runs in numba kernels.

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_baselines import ClassifierChain
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 3))
    >>> Y = np.column_stack([X[:, 0] > 0, X[:, 0] + X[:, 1] > 0]).astype(int)
    >>> cc = ClassifierChain(order=[1, 0]).fit(X, Y)
    >>> cc.order_.tolist(), bool((cc.predict(X) == Y).mean() > 0.9)
    ([1, 0], True)
    """

    def _greedy(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        if self.linear_coef_ is not None:
            Yhat, P = _kernels.chain_greedy_linear(self._feature_logits(X),
                                                   self.linear_chain_weights_)
        else:
            Yhat, P = _inference.greedy(self._oracle(X), X.shape[0], self.n_labels_)
        return self._to_labels(Yhat), self._to_labels(P)

    @single_blas_thread
    def _predict(self, X: Any) -> np.ndarray:
        return self._greedy(X)[0]

    @single_blas_thread
    def _predict_proba(self, X: Any) -> np.ndarray:
        return self._greedy(X)[1]

    @single_blas_thread
    def _predict_with_scores(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The greedy decision and its link probabilities from one pass of the chain."""
        return self._greedy(X)
