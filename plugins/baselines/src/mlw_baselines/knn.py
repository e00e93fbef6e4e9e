"""The instance-based baselines: ML-kNN (Zhang and Zhou, 2007), BRkNN-a/-b (Spyromitros,
Tsoumakas and Vlahavas, 2008) and IBLR-ML (Cheng and Hüllermeier, 2009).

All three start from the same statistic: for an instance and a label, how many of its
``k`` nearest training instances have the label. The neighbours come from
:mod:`mlw.neighbors` (mlw's one exact kNN: dense or CSR, cosine or Euclidean, numba
kernels; CSR is never densified); for training instances they are found
leave-one-out (an instance is never its own neighbour), as the papers define them.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from mlw import MultiLabelLearner
from mlw.validation import check_param

_METRICS = ("euclidean", "cosine")

#: The default decision of ML-kNN and IBLR-ML: their papers' 0.5 cut on the posterior
#: (maximum a posteriori), with the core's adaptive top-label rule (a row left empty gets
#: its most probable label, only when at most 1% of the training label sets are empty).
#: The cut alone left 14-27% of emotions' and scene's test rows empty where none is
#: (``docs/guide/thresholds.md``).
MAP_THRESHOLD = "fixed:top_label=auto"

#: IBLR's regressions: logistic regression by maximum likelihood, as the paper's and
#: Mulan's (Weka's Logistic, ridge 1e-8). With the other learners' L2 penalty (C = 1) on
#: features in [0, 1], the rare labels' probabilities stayed under 1/2: on birds 93.8% of
#: the test rows were predicted empty (47% truly are), 71.8% without it.
IBLR_BASE_ESTIMATOR = "logistic_regression_unpenalised"


def neighbour_label_counts(idx: np.ndarray, Y: Any) -> tuple[np.ndarray, np.ndarray]:
    """``C[i, j]``: how many of the neighbours ``idx[i]`` (-1 = none) have label ``j``,
    as float64 (n, L), and the number of neighbours found per row."""
    n_q, k = idx.shape
    valid = idx >= 0
    found = valid.sum(axis=1)
    rows = np.repeat(np.arange(n_q), k)[valid.ravel()]
    N = sp.csr_matrix((np.ones(rows.size), (rows, idx.ravel()[valid.ravel()])),
                      shape=(n_q, Y.shape[0]))
    C = N @ Y
    C = C.toarray() if sp.issparse(C) else np.asarray(C)
    return np.ascontiguousarray(C, dtype=np.float64), found


class _NeighbourLearner(MultiLabelLearner):
    """Index the training rows; find neighbours of training rows (leave-one-out) and of
    new rows."""

    def _build_index(self, X: Any, Y: Any) -> None:
        from mlw.neighbors import NeighborIndex

        k = check_param("k", self.k, int, low=1)
        metric = check_param("metric", self.metric, str, choices=_METRICS)
        self.index_ = NeighborIndex(X, metric=metric)
        self.k_ = min(k, X.shape[0])
        self._Y_train = Y.tocsr() if sp.issparse(Y) else np.ascontiguousarray(Y)

    def _loo_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Neighbour label counts of the training rows, each row left out of its own
        neighbours (so at most ``n - 1`` neighbours)."""
        n = self.index_.n_rows
        if n == 1:  # no other row to be a neighbour
            return (np.zeros(self._Y_train.shape, dtype=np.float64),
                    np.zeros(1, dtype=np.int64))
        idx, _ = self.index_.query(None, k=min(self.k_, n - 1))
        return neighbour_label_counts(idx, self._Y_train)

    def fit(self, X: Any, Y: Any, sample_weight: Any = None) -> Any:
        super().fit(X, Y, sample_weight)  # weights: refused by the core (no support)
        self.__dict__.pop("_train_scores", None)  # only needed while fitting
        return self

    def _counts(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        idx, _ = self.index_.query(X, k=self.k_)
        return neighbour_label_counts(idx, self._Y_train)

    def kneighbors(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The training rows (indices, -1 padded) nearest to each row of ``X`` and their
        cosine similarities or Euclidean distances, as :meth:`mlw.neighbors.NeighborIndex.query`."""
        check_is_fitted(self, "index_")
        return self.index_.query(self._validate_X(X, reset=False), k=self.k_)


class MLkNN(_NeighbourLearner):
    """ML-kNN (Zhang and Zhou, "ML-KNN: A lazy learning approach to multi-label
    learning", Pattern Recognition 40(7), 2007).

    For label ``j``, with ``C_j(x)`` the number of the ``k`` nearest training instances
    of ``x`` that have it, ML-kNN estimates by counting on the training set (each
    instance's neighbours found leave-one-out), with smoothing ``s``:

    - the prior ``P(H1_j) = (s + #instances with j) / (2s + n)``;
    - the likelihoods ``P(C_j = c | H1_j) = (s + a_j[c]) / (s (k + 1) + sum_c' a_j[c'])``
      where ``a_j[c]`` counts the training instances *with* label ``j`` whose
      neighbourhood holds ``c`` instances with ``j`` (and ``b_j[c]``, those without, for
      ``H0_j``).

    ``predict_proba`` is the posterior ``P(H1_j | C_j(x))``; ``predict`` applies the
    ``threshold`` strategy (default :data:`MAP_THRESHOLD`: the paper's maximum a
    posteriori decision, ``P(H1) P(C|H1) >= P(H0) P(C|H0)``, with the adaptive top-label
    rule; ``"fixed"`` is the paper's decision alone).

    Parameters
    ----------
    k : int
        Number of neighbours (default 10, the paper's).
    s : float
        Smoothing (default 1: Laplace).
    metric : {"euclidean", "cosine"}
        Euclidean distance (the paper's) or cosine similarity (for text: only rows
        sharing a feature with the query are neighbours, so a row may have fewer than
        ``k``; the counts are over the neighbours found).
    threshold : str or strategy object
        The thresholding strategy, tuned in ``fit``.

    Attributes
    ----------
    prior_ : ndarray, shape (n_labels,)
        ``P(H1_j)``.
    likelihood_ : ndarray, shape (2, n_labels, k + 1)
        ``likelihood_[b, j, c] = P(C_j = c | H_b_j)``.
    index_ : mlw.neighbors.NeighborIndex
        The training rows.

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_baselines import MLkNN
    >>> X = np.array([[0.0], [0.1], [0.2], [1.0], [1.1], [1.2]])
    >>> Y = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 1]])
    >>> mlknn = MLkNN(k=2).fit(X, Y)
    >>> mlknn.predict([[0.05], [1.15]]).tolist()
    [[1, 0], [0, 1]]
    """

    def __init__(self, *, k: int = 10, s: float = 1.0, metric: str = "euclidean",
                 threshold: Any = MAP_THRESHOLD) -> None:
        self.k = k
        self.s = s
        self.metric = metric
        self.threshold = threshold

    def _fit(self, X: Any, Y: Any) -> None:
        s = check_param("s", self.s, float, low=0, low_open=True)
        self._build_index(X, Y)
        C, _ = self._loo_counts()
        n, L = Y.shape
        k = self.k_
        Yd = Y.toarray() if sp.issparse(Y) else Y
        positives = np.asarray(Yd.sum(axis=0), dtype=np.float64).ravel()
        self.prior_ = (s + positives) / (2.0 * s + n)
        # a[j, c] / b[j, c]: instances with / without label j whose neighbourhood has c
        Ci = C.astype(np.int64)
        cols = np.broadcast_to(np.arange(L), Ci.shape)
        has = Yd.astype(bool)
        a = np.bincount((cols[has] * (k + 1) + Ci[has]), minlength=L * (k + 1))
        b = np.bincount((cols[~has] * (k + 1) + Ci[~has]), minlength=L * (k + 1))
        counts = np.stack([b.reshape(L, k + 1), a.reshape(L, k + 1)]).astype(np.float64)
        self.counts_ = counts
        self.likelihood_ = (s + counts) / (s * (k + 1) + counts.sum(axis=2, keepdims=True))
        # P(H1_j | C_j = c) for every label and count: a prediction is one lookup
        on = self.prior_[:, None] * self.likelihood_[1]
        off = (1.0 - self.prior_[:, None]) * self.likelihood_[0]
        self._posterior_table = (on / (on + off)).ravel()
        self._train_scores = self._posterior(C)

    def _posterior(self, C: np.ndarray) -> np.ndarray:
        cols = np.arange(self.n_labels_) * (self.k_ + 1)
        return self._posterior_table[C.astype(np.int64) + cols[None, :]]

    def _predict_proba(self, X: Any) -> np.ndarray:
        return self._posterior(self._counts(X)[0])

    def _training_scores(self, X: Any, Y: Any) -> np.ndarray:
        # leave-one-out posteriors: a training row is not its own neighbour
        return self._train_scores


class BRkNN(_NeighbourLearner):
    """BRkNN-a and BRkNN-b (Spyromitros, Tsoumakas and Vlahavas, "An empirical study of
    lazy multilabel classification algorithms", SETN 2008): binary relevance with a
    kNN per label, computed with one neighbour search.

    A label's confidence is the fraction of the ``k`` neighbours that have it
    (``predict_proba``). ``predict``:

    - ``variant="a"``: the labels with confidence ``>= 0.5``; when there is none, the
      most confident label (ties: the lowest label index) if the top-label rule is on
      (``top_label``). That extension is the core's top-label rule on a joint
      decision (:class:`mlw.MultiLabelLearner`, ``docs/guide/thresholds.md``), not a copy of
      it, so a row none of whose neighbours has any label stays empty;
    - ``variant="b"``: the ``s`` most confident labels, ``s`` the neighbours' mean
      number of labels rounded half up (ties: the lowest label index).

    The papers' and Mulan's ties are broken at random; here they are deterministic.

    Parameters
    ----------
    k : int
        Number of neighbours (default 10).
    variant : {"a", "b"}
        BRkNN-a or BRkNN-b.
    metric : {"euclidean", "cosine"}
        As for :class:`MLkNN`.
    top_label : bool or "auto"
        BRkNN-a's extension, the most confident label for a row with none: ``True``
        always (the paper's), ``"auto"`` (default) only when at most 1% of the training
        label sets are empty (:func:`mlw.thresholds.resolve_top_label`, the core's
        adaptive rule). The paper adds it because "an instance always has a label"; on
        birds (44% of the training rows unlabelled) it forced a label on every row and
        BRkNN-a fell to subset accuracy 0.037. With ``variant="b"`` the rule
        gives a row whose ``s`` rounds to 0 its top label.

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_baselines import BRkNN
    >>> X = np.array([[0.0], [0.1], [0.2], [1.0], [1.1], [1.2]])
    >>> Y = np.array([[1, 0], [1, 0], [1, 1], [0, 1], [0, 1], [0, 1]])
    >>> BRkNN(k=3, variant="b").fit(X, Y).predict([[0.05]]).tolist()
    [[1, 0]]
    """

    _joint_prediction: ClassVar[bool] = True

    def __init__(self, *, k: int = 10, variant: str = "a", metric: str = "euclidean",
                 top_label: bool | str = "auto") -> None:
        self.k = k
        self.variant = variant
        self.metric = metric
        self.top_label = top_label

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A model saved before ``top_label`` existed always applied BRkNN-a's
        # extension, and only to variant a: it keeps doing so, now by the core's rule.
        if "n_labels_" in state and "top_label_" not in state:
            on = state.get("variant", "a") == "a"
            state = {**state, "top_label": on, "top_label_": on}
        super().__setstate__(state)

    def _fit(self, X: Any, Y: Any) -> None:
        check_param("variant", self.variant, str, choices=("a", "b"))
        self._build_index(X, Y)

    def _decide(self, conf: np.ndarray, C: np.ndarray, found: np.ndarray) -> np.ndarray:
        n, L = conf.shape
        out = np.zeros((n, L), dtype=np.uint8)
        if self.variant == "a":  # the extension is the core's top-label rule (top_label_)
            out[conf >= 0.5] = 1
            return out
        size = np.floor(C.sum(axis=1) / np.maximum(found, 1) + 0.5).astype(np.int64)
        ranks = np.argsort(-conf, axis=1, kind="stable")
        top = np.arange(L)[None, :] < size[:, None]
        rows = np.repeat(np.arange(n), L).reshape(n, L)
        out[rows[top], ranks[top]] = 1
        return out

    def _predict_with_scores(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        C, found = self._counts(X)
        conf = C / np.maximum(found, 1)[:, None]
        return self._decide(conf, C, found), conf

    def _predict(self, X: Any) -> np.ndarray:
        return self._predict_with_scores(X)[0]

    def _predict_proba(self, X: Any) -> np.ndarray:
        return self._predict_with_scores(X)[1]


class IBLR(_NeighbourLearner):
    """IBLR-ML (Cheng and Hüllermeier, "Combining instance-based learning and logistic
    regression for multilabel classification", Machine Learning 76(2-3), 2009).

    Every instance is described by its neighbourhood's label fractions
    ``phi_l(x) = (#neighbours with label l) / k`` for all labels ``l`` (training
    instances leave-one-out); label ``j`` is then predicted by a logistic regression
    on ``phi(x)``, so a label's evidence comes from the neighbours' labels *and* the
    correlations between labels that the regression learns. With ``add_features=True``
    (IBLR-ML+) the regressions also see the original features (CSR ``X`` stays CSR).

    The regressions are a :class:`BinaryRelevance` (``base_estimator`` as there, default
    :data:`IBLR_BASE_ESTIMATOR`: MaxAbsScaler + logistic regression by maximum
    likelihood, the paper's and Mulan's); ``predict`` applies its ``threshold`` (default
    :data:`MAP_THRESHOLD`: the paper's 0.5 cut with the adaptive top-label rule).

    Parameters
    ----------
    k : int
        Number of neighbours (default 10).
    metric : {"euclidean", "cosine"}
        As for :class:`MLkNN`.
    add_features : bool
        IBLR-ML+: the original features next to the neighbourhood's.
    base_estimator : None, str or scikit-learn classifier
        The per-label classifier (default ``"logistic_regression_unpenalised"``; ``None``
        is the other learners' L2 logistic regression, C = 1).
    base_params : dict or None
        Parameters of the base classifier, set on it with ``set_params``
        (``{"C": 10}``; on a pipeline shortcut, names its last step lacks go to
        the classifier); ``--param base__C=10`` on the command line.
    threshold : str or strategy object
        The thresholding strategy, tuned in ``fit``.
    n_jobs : int or None
        Labels fitted in parallel by joblib.

    Attributes
    ----------
    estimator_ : BinaryRelevance
        The regressions, over the columns ``[X,] phi``.

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_baselines import IBLR
    >>> X = np.array([[0.0], [0.1], [0.2], [1.0], [1.1], [1.2]] * 3)
    >>> Y = np.array([[1, 0], [1, 0], [1, 1], [0, 1], [0, 1], [0, 1]] * 3)
    >>> IBLR(k=3).fit(X, Y).predict([[0.05], [1.15]]).tolist()
    [[1, 0], [0, 1]]
    """

    def __init__(self, *, k: int = 10, metric: str = "euclidean", add_features: bool = False,
                 base_estimator: Any = IBLR_BASE_ESTIMATOR, base_params: dict | None = None,
                 threshold: Any = MAP_THRESHOLD, n_jobs: int | None = None) -> None:
        self.k = k
        self.metric = metric
        self.add_features = add_features
        self.base_estimator = base_estimator
        self.base_params = base_params
        self.threshold = threshold
        self.n_jobs = n_jobs

    def _features(self, X: Any, C: np.ndarray, found: np.ndarray) -> Any:
        phi = C / max(self.k_, 1)
        if not self.add_features:
            return phi
        if sp.issparse(X):
            return sp.hstack([X, sp.csr_matrix(phi)], format="csr")
        return np.hstack([X, phi])

    def _fit(self, X: Any, Y: Any) -> None:
        from mlw_baselines.binary_relevance import BinaryRelevance

        check_param("add_features", self.add_features, bool)
        self._build_index(X, Y)
        features = self._features(X, *self._loo_counts())
        self.estimator_ = BinaryRelevance(base_estimator=self.base_estimator,
                                          base_params=self.base_params,
                                          n_jobs=self.n_jobs).fit(features, Y)
        self._train_scores = self.estimator_._predict_proba(features)

    def _training_scores(self, X: Any, Y: Any) -> np.ndarray:
        return self._train_scores

    def _predict_proba(self, X: Any) -> np.ndarray:
        C, found = self._counts(X)
        return self.estimator_._predict_proba(self._features(X, C, found))
