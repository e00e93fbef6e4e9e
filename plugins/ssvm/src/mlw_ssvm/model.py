"""Structured SVMs that optimise an example-based loss directly (Díez, Luaces, del Coz
and Bahamonde, "Optimizing Different Loss Functions in Multilabel Classifications").

The joint feature map is the tensor product Psi(x, y) = x (x) y with a constant bias
feature (Eq. 5), so f(x, y) = sum_l <w_l, x> y_l and the prediction is
h(x) = argmax_y f(x, y) = {l : <w_l, x> > 0}. What differs between the learners is the
loss Delta in the margin-rescaling constraints of training (Eq. 6): Hamming, subset
0/1, or a contingency-table loss (F-beta, Jaccard, precision, recall).
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from mlw import MultiLabelLearner
from mlw.validation import check_param, dense_labels
from mlw_ssvm import _kernels as K
from mlw_ssvm._cutting_plane import scores, solve

#: Loss names accepted by :class:`StructuredSVM` and their kernel codes.
LOSSES = {
    "hamming": K.LOSS_HAMMING,
    "subset": K.LOSS_SUBSET,
    "f_beta": K.LOSS_FBETA,
    "jaccard": K.LOSS_JACCARD,
    "precision": K.LOSS_PRECISION,
    "recall": K.LOSS_RECALL,
}


def _checksum(X: Any, Y: np.ndarray) -> tuple:
    """Identifies the training data of a warm start."""
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    if hasattr(X, "indptr"):
        for a in (X.indptr, X.indices, X.data):
            h.update(np.ascontiguousarray(a).tobytes())
    else:
        h.update(np.ascontiguousarray(X).tobytes())
    h.update(Y.tobytes())
    return (X.shape, Y.shape, h.hexdigest())


class StructuredSVM(MultiLabelLearner):
    """1-slack margin-rescaling structural SVM on the tensor feature map x (x) y.

    Trained by the cutting-plane algorithm of Joachims, Finley and Yu (2009) with a
    per-example constraint cache; the working-set dual QP is solved exactly
    (:mod:`mlw_ssvm._qp`). The loss-augmented argmax of each loss is exact: per label
    for Hamming, the thresholded vector or one flip for subset 0/1, Algorithm 2 (over
    contingency tables, O(L log L) per example) for the others.

    Parameters
    ----------
    loss : str
        ``"hamming"`` ((b + c) / L), ``"subset"`` (0/1), ``"f_beta"``
        (1 - F_beta), ``"jaccard"`` (1 - a / (a + b + c)), ``"precision"`` or
        ``"recall"``: each in [0, 1] as the paper defines it (Sections 2.1, 4.3), and
        trained as ``loss_scale`` times that.
    C : float
        Weight of the slack in 1/2 |w|^2 + C xi (Eq. 6; the same scale as SVM-struct's
        ``-c`` for the 1-slack algorithms). The paper searched {1e4, 1e5, 1e6} on
        noise-free and {1e2, ..., 1e5} on noisy data.
    beta : float
        beta of the F-beta loss (``loss="f_beta"``); ignored otherwise.
    epsilon : float
        Stop when the most violated joint constraint is violated by at most
        xi + epsilon (in the units of the scaled loss; the paper used 0.1).
    loss_scale : float or "auto"
        Train with loss_scale x Delta. ``"auto"`` (default): L for Hamming (the count
        b + c of wrong labels) and 1 for the others; 100 is SVM-struct's own
        convention (losses in percent). The paper does not state its scale, and with
        epsilon = 0.1 it matters: training with lambda x Delta at (C, epsilon) is the
        unit-loss problem at (C / lambda, epsilon / lambda), solved that way, with w
        multiplied by lambda (``docs/methods/ssvm.md``, "Loss scale and epsilon").
    bias : float
        Value of the constant feature appended to x (its weight is regularised like the
        others, as in the paper); 0 for no intercept.
    cache_size : int
        Label vectors cached per example (SVM-struct's ``-f``; SVM-struct's and the
        paper's default is 5). 0 (the default here) calls the oracle on all examples
        every iteration: the oracles are cheap next to a QP solve, and constraints
        taken from the cache are weaker, so on the paper's data the cache doubled the
        iterations of struct_hamming and struct_subset and did not help struct_f1
        (``benchmarks/bench_ssvm_speed.py``). Both reach the same optimum within epsilon.
    max_iter : int
        Most cutting-plane iterations (QP solves); a ``ConvergenceWarning`` is issued
        when it is reached before the epsilon criterion.
    warm_start : bool
        Refitting on the same data (typically for another ``C``) starts from the
        previous fit's working set and constraint cache, which stay valid cutting
        planes for any C: a C grid costs about as much as its hardest C. The previous
        data must be the same (checked by shape and a checksum of X and Y).
    top_label : bool or "auto"
        The core's top-label rule on the decision (see Notes); ``False``: the paper's.

    Attributes
    ----------
    coef_ : ndarray of shape (n_labels, n_features)
        w_l of each label.
    intercept_ : ndarray of shape (n_labels,)
        bias * (the bias weight of each label).
    n_iter_ : int
        Cutting-plane iterations (constraints added, QP solves).
    n_oracle_passes_ : int
        Passes of the argmax oracle over all training examples.
    converged_ : bool
        Whether the epsilon criterion was met within ``max_iter``.
    objective_ : float
        1/2 |w|^2 + C xi at the solution (xi over the final working set).
    slack_ : float
        xi of the final working set (in the units of the scaled loss).
    loss_scale_ : float
        The scale the loss was trained with (``loss_scale`` resolved).

    Notes
    -----
    ``predict`` is the joint decision {l : <w_l, x> > 0}, with the core's top-label rule
    (``top_label``, default ``"auto"``: on only when at most 1% of the training label
    sets are empty, a row with no positive margin gets its label of largest margin;
    ``False`` is the paper's decision alone, which left 2-17% of the test rows empty on
    emotions and scene, where none is: ``docs/guide/thresholds.md``; the Table 2
    configs pin it). ``decision_function`` gives
    the margins <w_l, x>; ``predict_proba`` is their logistic sigmoid: a score in
    (0, 1) that is 0.5 on the decision boundary and orders instances like the margins,
    not a calibrated probability (margins of the Hamming learner are of the order of
    1/L, so its scores stay close to 0.5).

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_ssvm import StructuredSVM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((80, 3))
    >>> Y = np.column_stack([X[:, 0] > 0.5, X[:, 1] + X[:, 2] > 1.0]).astype(np.uint8)
    >>> model = StructuredSVM(loss="f_beta", C=100.0).fit(X, Y)
    >>> bool((model.predict(X) == Y).mean() > 0.9)
    True
    """

    _joint_prediction: ClassVar[bool] = True

    def __init__(self, loss: str = "hamming", *, C: float = 1e4, beta: float = 1.0,
                 epsilon: float = 0.1, loss_scale: float | str = "auto", bias: float = 1.0,
                 cache_size: int = 0, max_iter: int = 10000, warm_start: bool = False,
                 top_label: bool | str = "auto") -> None:
        self.top_label = top_label
        self.loss = loss
        self.C = C
        self.beta = beta
        self.epsilon = epsilon
        self.loss_scale = loss_scale
        self.bias = bias
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.warm_start = warm_start

    # -- the loss of each learner ------------------------------------------------------------
    def _loss(self) -> tuple[int, float]:
        """(kernel loss code, beta squared)."""
        loss = check_param("loss", self.loss, str, choices=tuple(LOSSES))
        beta = check_param("beta", self.beta, float, low=0.0, high=1e6)
        return LOSSES[loss], beta * beta

    # -- fitting ----------------------------------------------------------------------------------
    def _fit(self, X: Any, Y: Any) -> None:
        code, beta2 = self._loss()
        C = check_param("C", self.C, float, low=0.0, low_open=True, high=1e12)
        epsilon = check_param("epsilon", self.epsilon, float, low=0.0, low_open=True,
                              high=1e6)
        bias = check_param("bias", self.bias, float, low=0.0, high=1e6)
        cache_size = check_param("cache_size", self.cache_size, int, low=0)
        max_iter = check_param("max_iter", self.max_iter, int, low=1)
        # the oracles work on a row's dense label vector (their argmax is over all L
        # labels), so Y is densified: n x L bytes
        Yd = dense_labels(Y)
        warm_start = check_param("warm_start", self.warm_start, bool)
        # the data checksum copies and hashes X: only a warm start needs it
        key = (code, beta2, bias, _checksum(X, Yd)) if warm_start else None
        state = None
        if warm_start:
            previous = getattr(self, "_warm_state", None)
            if previous is not None and previous[0] == key:
                state = previous[1]
        # The kernels compute Delta in their own units: the Hamming count b + c (L times
        # the paper's (b + c) / L), the others in [0, 1]. Training with
        # loss_scale * (the paper's loss) is the kernel-unit problem at C / r and
        # epsilon / r with w multiplied by r, r = loss_scale / units: the 1-slack problem
        # and its cutting-plane path are invariant under that change of variables.
        units = float(Yd.shape[1]) if code == K.LOSS_HAMMING else 1.0
        if isinstance(self.loss_scale, str) and self.loss_scale == "auto":
            scale = units
        else:
            scale = check_param("loss_scale", self.loss_scale, float, low=0.0,
                                low_open=True, high=1e6)
        r = scale / units
        self.loss_scale_ = scale
        res = solve(X, Yd, loss_code=code, beta2=beta2, C=C / r, epsilon=epsilon / r,
                    bias=bias, cache_size=cache_size, max_iter=max_iter, state=state)
        self._warm_state = (key, res.state) if warm_start else None
        p = X.shape[1]
        self.W_ = r * res.W  # (p + 1, L): the learner's whole state, bias row last
        self.coef_ = np.ascontiguousarray(self.W_[:p].T)
        self.intercept_ = bias * self.W_[p]
        self.n_iter_ = res.n_iter
        self.n_oracle_passes_ = res.n_oracle_passes
        self.n_cached_constraints_ = res.n_cached
        self.n_constraints_ = res.n_constraints
        self.converged_ = res.converged
        self.objective_ = r * r * res.primal
        self.dual_objective_ = r * r * res.dual
        self.slack_ = r * res.slack
        self.violation_ = r * res.violation
        if not res.converged:
            warnings.warn(f"{type(self).__name__}: the cutting-plane algorithm stopped at "
                          f"max_iter={max_iter} with the most violated constraint "
                          f"{self.violation_:.3g} beyond the slack (epsilon={epsilon:g})",
                          ConvergenceWarning, stacklevel=3)

    # -- prediction -------------------------------------------------------------------------------
    def _margins(self, X: Any) -> np.ndarray:
        return scores(X, self.W_, float(self.bias))

    def decision_function(self, X: Any) -> np.ndarray:
        """The margins <w_l, x> (bias included), shape (n, L); predict is margin > 0."""
        check_is_fitted(self, "W_")
        return self._margins(self._validate_X(X, reset=False))

    def _labels(self, M: np.ndarray) -> np.ndarray:
        # dense like the margins they come from (the learner is not _sparse_output)
        return (M > 0).astype(np.uint8)

    def _predict(self, X: Any) -> Any:
        return self._labels(self._margins(X))

    def _predict_proba(self, X: Any) -> np.ndarray:
        return expit(self._margins(X))

    def _predict_with_scores(self, X: Any) -> tuple[Any, np.ndarray]:
        M = self._margins(X)  # one pass: the decision and the scores from one product
        return self._labels(M), expit(M)


class StructHamming(StructuredSVM):
    """Struct(Hl): the structural SVM trained with the Hamming loss (b + c) / L (times
    ``loss_scale``: by default L, the count b + c).

    Its argmax decomposes over labels (Section 4.3), so it is a binary-relevance model
    whose L linear classifiers share one regularisation. Parameters and attributes as
    :class:`StructuredSVM` (without ``loss`` and ``beta``).
    """

    def __init__(self, *, C: float = 1e4, epsilon: float = 0.1,
                 loss_scale: float | str = "auto", bias: float = 1.0, cache_size: int = 0,
                 max_iter: int = 10000, warm_start: bool = False,
                 top_label: bool | str = "auto") -> None:
        self.top_label = top_label
        self.C = C
        self.epsilon = epsilon
        self.loss_scale = loss_scale
        self.bias = bias
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.warm_start = warm_start

    def _loss(self) -> tuple[int, float]:
        return K.LOSS_HAMMING, 1.0


class StructSubset(StructuredSVM):
    """Struct(01): the structural SVM trained with the subset 0/1 loss (Section 4.2).
    Parameters and attributes as :class:`StructuredSVM` (without ``loss`` and
    ``beta``)."""

    def __init__(self, *, C: float = 1e4, epsilon: float = 0.1,
                 loss_scale: float | str = "auto", bias: float = 1.0, cache_size: int = 0,
                 max_iter: int = 10000, warm_start: bool = False,
                 top_label: bool | str = "auto") -> None:
        self.top_label = top_label
        self.C = C
        self.epsilon = epsilon
        self.loss_scale = loss_scale
        self.bias = bias
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.warm_start = warm_start

    def _loss(self) -> tuple[int, float]:
        return K.LOSS_SUBSET, 1.0


#: ``measure`` values of :class:`StructF1` and the loss each one trains with.
MEASURES = ("f_beta", "jaccard", "precision", "recall")


class StructF1(StructuredSVM):
    """Struct(F1): the structural SVM trained with 1 - F_beta (``beta=1``: the paper's
    F1), or with 1 - Jaccard, 1 - precision or 1 - recall (``measure``), all through
    Algorithm 2. Other parameters and attributes as :class:`StructuredSVM`.

    Parameters
    ----------
    measure : {"f_beta", "jaccard", "precision", "recall"}
        The training loss: 1 - F_beta (with ``beta``), 1 - Jaccard, 1 - precision or
        1 - recall.
    """

    def __init__(self, *, C: float = 1e4, beta: float = 1.0, measure: str = "f_beta",
                 epsilon: float = 0.1, loss_scale: float | str = "auto", bias: float = 1.0,
                 cache_size: int = 0, max_iter: int = 10000, warm_start: bool = False,
                 top_label: bool | str = "auto") -> None:
        self.top_label = top_label
        self.C = C
        self.beta = beta
        self.measure = measure
        self.epsilon = epsilon
        self.loss_scale = loss_scale
        self.bias = bias
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.warm_start = warm_start

    def _loss(self) -> tuple[int, float]:
        measure = check_param("measure", self.measure, str, choices=MEASURES)
        beta = check_param("beta", self.beta, float, low=0.0, high=1e6)
        return LOSSES[measure], beta * beta
