"""The base class of mlw learners, following scikit-learn's estimator conventions."""

from __future__ import annotations

import copy
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

if TYPE_CHECKING:
    # scikit-learn ships no type information, so to a type checker its classes are
    # ``Any``, and a class deriving from ``Any`` accepts any attribute: ``mypy --strict``
    # let ``mlw.get_learner("br").fitt(X, Y)`` through. Type checkers see instead the
    # public methods the two base classes give every learner.
    from typing_extensions import Self

    class ClassifierMixin:
        def score(self, X: Any, y: Any, sample_weight: Any = None) -> float: ...

    class BaseEstimator:
        def get_params(self, deep: bool = True) -> dict[str, Any]: ...
        def set_params(self, **params: Any) -> Self: ...
        def __sklearn_tags__(self) -> Any: ...
else:
    from sklearn.base import BaseEstimator, ClassifierMixin

from mlw._guard import check_outputs, threshold_call
from mlw.metrics.at_k import check_k, stack_topk, top_k
from mlw.params import Spec
from mlw.plugins import get_plugin_manager
from mlw.registry import LearnerTags, ThresholdSpec, inference_tags
from mlw.thresholds import apply_threshold, parse_threshold, resolve_top_label
from mlw.validation import check_X, check_Y

#: Scores one block of :meth:`MultiLabelLearner.predict_topk` holds (rows x labels).
TOPK_BLOCK_ENTRIES = 1 << 22


class MultiLabelLearner(ClassifierMixin, BaseEstimator):
    """Base class for multi-label learners.

    Subclasses define ``__init__`` (only storing parameters, as scikit-learn requires)
    and implement

    - ``_fit(X, Y)``: learn from validated ``X`` (float64 ndarray or canonical CSR) and
      ``Y`` (uint8 ndarray or CSR, shape (n, L));
    - ``_predict_proba(X)``: marginal probability (or a score in [0, 1]) per label;
      a learner without scores leaves it out;
    - ``_predict(X)``, only when the class sets ``_joint_prediction = True``: the
      method's own joint label-set decision;
    - ``_predict_with_scores(X) -> (Y_pred, scores)``, for joint learners with scores:
      the decision and the marginals from ONE pass (the default runs ``_predict`` and
      ``_predict_proba``, two passes; evaluation calls this once per test set);
    - joint models also define a public ``log_proba_of(X, Y) -> (n,)`` (log P(y|x));
      learners without a joint model must not have that attribute, since evaluation
      uses it to decide whether ``cll_loss`` applies;
    - optionally ``_training_scores(X, Y)``: the scores a threshold is tuned on
      (default: ``_predict_proba`` on the training data, or what ``_fit`` left in
      ``self._fit_scores``: the training rows' scores it computed anyway, such as a
      booster's final training margins, which saves a second pass; ``fit`` drops the
      attribute after tuning the threshold).

    Learners without a joint decision have a ``threshold`` parameter naming a
    registered thresholding strategy (or holding a strategy object); ``fit`` tunes it
    and ``predict`` applies it to ``predict_proba``. A joint learner with scores may
    have one too (default ``None``: its own decision): set, it decides the label sets
    the same way, on the learner's marginals (how CC and PCC take the core's
    :data:`mlw.thresholds.DEFAULT_THRESHOLD`). A joint learner with scores
    may also declare a ``top_label`` parameter (``True``, ``False`` or ``"auto"``): at
    its own decision, a row the decision leaves empty then gets its top-scoring label,
    applied here once for every such learner (``top_label_``; see
    ``docs/guide/thresholds.md``, "The top-label rule on a joint decision").

    What a learner can do is stated once, here on the class, and read by
    :class:`mlw.LearnerTags` (``mlw learners``, the evaluation's checks) and by
    scikit-learn's ``__sklearn_tags__``:

    Class attributes
    ----------------
    _joint_prediction : bool
        ``predict`` calls ``_predict`` instead of thresholding scores (unless the
        learner's ``threshold`` parameter is set, see above).
    _allow_nan : bool
        NaN in ``X`` is accepted as a missing value.
    _sparse_input : bool
        CSR ``X`` is used as is, never densified (default True).
    _sparse_output : bool
        CSR ``Y`` in ``fit`` gives CSR predictions and scores.
    """

    _joint_prediction: ClassVar[bool] = False
    _allow_nan: ClassVar[bool] = False
    _sparse_input: ClassVar[bool] = True
    _sparse_output: ClassVar[bool] = False

    @classmethod
    def _mlw_tags(cls) -> LearnerTags:
        """The class's capabilities (see :class:`mlw.LearnerTags`)."""
        return LearnerTags(
            predicts_scores=cls._predict_proba is not MultiLabelLearner._predict_proba,
            joint=cls._joint_prediction,
            log_proba=callable(getattr(cls, "log_proba_of", None)),
            sparse_input=cls._sparse_input,
            sparse_output=cls._sparse_output,
            allow_nan=cls._allow_nan,
            **inference_tags(cls),
        )

    # -- scikit-learn plumbing ----------------------------------------------------------
    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        tags.input_tags.sparse = self._sparse_input
        tags.input_tags.allow_nan = self._allow_nan
        return tags

    # -- validation ------------------------------------------------------------------------
    def _validate_X(self, X: Any, *, reset: bool) -> Any:
        X = check_X(X, allow_nan=self._allow_nan,
                    n_features=None if reset else self.n_features_in_)
        return X

    # -- public API --------------------------------------------------------------------------
    def fit(self, X: Any, Y: Any, sample_weight: Any = None) -> MultiLabelLearner:
        """Fit the learner.

        Parameters
        ----------
        X : array-like or CSR of shape (n_instances, n_features)
        Y : array-like or CSR of 0/1, shape (n_instances, n_labels)
        sample_weight : array-like of shape (n_instances,), optional
            Non-negative finite weights of the instances, for learners whose ``_fit``
            takes a ``sample_weight`` parameter (others raise ``ValueError``). The
            threshold is fitted unweighted.

        Returns
        -------
        self
        """
        X = self._validate_X(X, reset=True)
        label_dtype = _label_dtype(Y)
        Y = check_Y(Y, n_rows=X.shape[0])
        if X.shape[0] == 0:
            raise ValueError("cannot fit on an empty dataset (0 instances)")
        if X.shape[1] == 0:
            raise ValueError("cannot fit on 0 features (X has shape "
                             f"{X.shape[0]}x0)")
        if Y.shape[1] == 0:
            raise ValueError("cannot fit with 0 labels")
        self.n_features_in_ = int(X.shape[1])
        self.n_labels_ = int(Y.shape[1])
        self.classes_ = [np.array([0, 1])] * self.n_labels_
        self.label_cardinality_ = float(Y.sum()) / X.shape[0]
        self.sparse_labels_ = bool(sp.issparse(Y))
        # predictions take the training labels' dtype, as scikit-learn's classifiers do
        # (int64 labels in, int64 label sets out); kept as a string for model files
        self.label_dtype_ = label_dtype
        if sample_weight is None:
            self._fit(X, Y)
        else:
            if not takes_sample_weight(type(self)):
                raise ValueError(f"{type(self).__name__} does not support sample_weight")
            self._fit(X, Y, sample_weight=check_sample_weight(sample_weight, X.shape[0]))
        try:
            self._fit_threshold(X, Y)
        finally:  # the training scores are fit's working state, not part of the model
            self.__dict__.pop("_fit_scores", None)
        return self

    def predict_proba(self, X: Any) -> Any:
        """Marginal probability (or score in [0, 1]) of each label, shape (n, L)."""
        check_is_fitted(self, "n_labels_")
        return self._checked_scores(self._validate_X(X, reset=False), "predict_proba")

    def predict_topk(self, X: Any, k: int = 5) -> Any:
        """The ``k`` best-scored labels of each row, best first.

        Returns a :class:`mlw.metrics.TopK` ``(indices, scores)``, two (n, k) arrays:
        label indices (int64; -1 where fewer than k labels have a positive score) and
        their scores, ranked by decreasing score, equal scores by increasing label
        index (:func:`mlw.metrics.top_k`). Computed a block of rows at a time, so the
        (n, L) score matrix is never held whole; learners with sparse scores (LCIF)
        rank each block's CSR scores without densifying them. Feed it to
        ``mlw.evaluate(Y, topk=...)`` for the metrics at k.
        """
        check_is_fitted(self, "n_labels_")
        k = check_k(k)
        if not self._mlw_tags().predicts_scores:
            raise ValueError(f"{type(self).__name__} predicts no label scores, so it "
                             f"cannot rank labels (predict_topk)")
        return self._predict_topk(self._validate_X(X, reset=False), k)

    def _predict_topk(self, X: Any, k: int) -> Any:
        """Validated ``X``: the top-k of ``_predict_proba`` over blocks of rows holding
        about :data:`TOPK_BLOCK_ENTRIES` scores each. Override it where the method can
        rank without the block's scores."""
        n = X.shape[0]
        step = max(1, TOPK_BLOCK_ENTRIES // max(self.n_labels_, 1))
        parts = [top_k(self._checked_scores(X[a:a + step], "predict_topk"), k)
                 for a in range(0, n, step)]
        return stack_topk(parts, k)

    def predict(self, X: Any) -> Any:
        """0/1 label sets, shape (n, L): the joint decision of the method where it has
        one, otherwise the fitted threshold applied to :meth:`predict_proba`."""
        check_is_fitted(self, "n_labels_")
        X = self._validate_X(X, reset=False)
        if self._own_decision():
            Y = self._predict(X)
            check_outputs(self, X.shape[0], self.n_labels_, Y_pred=Y, step="predict")
            return self._as_label_dtype(self._with_top_label(X, Y, None))
        return self._thresholded(self._checked_scores(X, "predict"))

    def predict_with_scores(self, X: Any) -> tuple[Any, Any]:
        """``(predict(X), predict_proba(X))`` from one pass over ``X`` (evaluation uses
        this). The scores are ``None`` for a learner that has none."""
        check_is_fitted(self, "n_labels_")
        X = self._validate_X(X, reset=False)
        if not self._own_decision():
            scores = self._checked_scores(X, "predict")
            return self._thresholded(scores), scores
        Y, scores = self._predict_with_scores(X)
        check_outputs(self, X.shape[0], self.n_labels_, Y_pred=Y, scores=scores,
                      step="predict")
        return self._as_label_dtype(self._with_top_label(X, Y, scores)), scores

    def _with_top_label(self, X: Any, Y: Any, scores: Any) -> Any:
        """The joint decision ``Y`` with the top-label rule applied when it is in force
        (``top_label_``, fitted from the ``top_label`` parameter): a row the method left
        empty gets its top-scoring label by the marginal ``scores`` (computed here for
        those rows alone when not given), as :func:`mlw.thresholds.apply_threshold`'s
        rule does; a row whose scores are all 0 stays empty. Rows with a label are
        never changed."""
        if not getattr(self, "top_label_", False):
            return Y

        empty = np.flatnonzero(np.diff(Y.indptr) == 0) if sp.issparse(Y) \
            else np.flatnonzero(~np.asarray(Y).any(axis=1))
        if empty.size == 0:
            return Y
        if scores is None:
            S = self._checked_scores(X[empty], "predict")
        else:
            S = scores[empty]
        top = apply_threshold(S, np.inf, top_label=True)
        rows, cols = top.nonzero()
        if sp.issparse(Y):
            add = sp.csr_matrix((np.ones(rows.size, dtype=Y.dtype), (empty[rows], cols)),
                                shape=Y.shape)
            return (Y + add).tocsr()
        Y = np.array(Y, copy=True)
        Y[empty[rows], cols] = 1
        return Y

    def _thresholded(self, scores: Any) -> Any:
        """The fitted threshold applied to ``scores`` (a strategy's bug named as its
        plugin's), in the training labels' dtype: ``predict`` and every staged
        prediction of a learner deciding by threshold go through here."""
        with threshold_call(self.threshold_, "predict"):
            return self._as_label_dtype(self.threshold_.predict(scores))

    def _as_label_dtype(self, Y: Any) -> Any:
        """Label sets in the dtype of the training labels (a model fitted before
        ``label_dtype_`` existed keeps uint8)."""
        dtype = getattr(self, "label_dtype_", "uint8")
        if Y.dtype == dtype:
            return Y
        return Y.astype(dtype)

    def _checked_scores(self, X: Any, step: str) -> Any:
        """``_predict_proba(X)``, held to the contract: shape (n, L), no NaN, in [0, 1]
        (else a :class:`mlw.PluginError` naming the learner's plugin)."""
        scores = self._predict_proba(X)
        check_outputs(self, X.shape[0], self.n_labels_, scores=scores, step=step)
        return scores

    # -- hooks for subclasses ------------------------------------------------------------------
    def _fit(self, X: Any, Y: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _predict_proba(self, X: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} does not predict scores")

    def _predict(self, X: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _predict_with_scores(self, X: Any) -> tuple[Any, Any]:
        """Joint learners: ``(_predict(X), _predict_proba(X))``. Override it to compute
        both in one pass; this default makes two (or one, without scores)."""
        if not self._mlw_tags().predicts_scores:
            return self._predict(X), None
        return self._predict(X), self._predict_proba(X)

    def _training_scores(self, X: Any, Y: Any) -> Any:
        scores = self.__dict__.pop("_fit_scores", None)
        if scores is None:
            return self._checked_scores(X, "fit")
        check_outputs(self, X.shape[0], self.n_labels_, scores=scores, step="fit")
        return scores

    def _own_decision(self) -> bool:
        """Whether ``predict`` is the joint learner's own decision: a joint learner
        without a ``threshold`` parameter, or with it set to ``None``."""
        return self._joint_prediction and getattr(self, "threshold", None) is None

    def _fit_threshold(self, X: Any, Y: Any) -> None:
        choice = getattr(self, "threshold", None)
        if choice is None:
            self._fit_top_label(Y)
            return
        if self._joint_prediction and not self._mlw_tags().predicts_scores:
            raise ValueError(f"{type(self).__name__} predicts no label scores, so its "
                             f"threshold must be None (its own joint decision)")
        self.threshold_ = fit_threshold(choice, lambda: self._training_scores(X, Y), Y)


    def _fit_top_label(self, Y: Any) -> None:
        """A joint learner with a ``top_label`` parameter, at its own decision: whether
        the top-label rule is in force (``top_label_``,
        :func:`mlw.thresholds.resolve_top_label`: ``"auto"`` is on only when the training
        set has (almost) no empty label sets)."""
        if not (self._joint_prediction and hasattr(self, "top_label")):
            return

        on = resolve_top_label(self.top_label, Y)
        if on and not self._mlw_tags().predicts_scores:
            raise ValueError(f"{type(self).__name__} predicts no label scores, so its "
                             f"top_label must be False")
        self.top_label_ = on


def takes_sample_weight(learner_class: type) -> bool:
    """Whether the learner class's ``_fit`` takes a ``sample_weight`` parameter."""
    import inspect

    fit = getattr(learner_class, "_fit", None)
    return fit is not None and "sample_weight" in inspect.signature(fit).parameters


def check_sample_weight(sample_weight: Any, n: int) -> np.ndarray:
    """``sample_weight`` as a float64 vector of length ``n``: finite, non-negative and
    not all zero, else a one-line ``ValueError``."""
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(f"sample_weight must have shape ({n},), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sample_weight must be finite and non-negative")
    if not np.any(w > 0):
        raise ValueError("sample_weight must not be all zero")
    return w


def _label_dtype(Y: Any) -> str:
    """The dtype name of training labels as given (before ``check_Y`` makes them
    uint8): numeric and boolean dtypes are kept, anything else gives uint8."""
    dtype = Y.dtype if hasattr(Y, "dtype") else np.asarray(Y).dtype
    dtype = np.dtype(dtype) if not isinstance(dtype, np.dtype) else dtype
    return dtype.name if dtype.kind in "biuf" else "uint8"


@dataclass(frozen=True)
class ThresholdChoice:
    """A strategy named in text, parsed and checked: its registration and typed
    options (:func:`parse_threshold_choice`); :meth:`create` builds a fresh strategy."""

    spec: ThresholdSpec
    options: Mapping[str, Any]

    def create(self) -> Any:
        return self.spec.create(**self.options)


#: texts parsed per plugin manager (a strategy named in text is parsed once per run)
_PARSED: weakref.WeakKeyDictionary[Any, dict[str, ThresholdChoice]] = \
    weakref.WeakKeyDictionary()


def parse_threshold_choice(text: str) -> ThresholdChoice:
    """The strategy ``text`` names (``"pcut"``, ``"fixed:0.3"``,
    ``"one_threshold:metric=f1_example"``; see :func:`mlw.thresholds.parse_threshold`),
    its name looked up and its options typed. A text is read once per plugin manager
    (every fold of a run, and every fit of a learner whose ``threshold`` is this text,
    reuse the reading); an unknown name or a bad option raises every time."""
    pm = get_plugin_manager()
    parsed = _PARSED.setdefault(pm, {})
    choice = parsed.get(text)
    if choice is None:
        name, items = parse_threshold(text)
        spec = pm.threshold(name)
        options = Spec("threshold", name, tuple(items)).params(spec.signature_params())
        choice = parsed[text] = ThresholdChoice(spec, options)
    return choice


def make_threshold(choice: Any) -> tuple[Any, bool]:
    """A fresh strategy object from a registered name with optional options
    (``"pcut"``, ``"fixed:0.3"``, ``"one_threshold:metric=f1_example"``; see
    :func:`parse_threshold_choice`) or a strategy object, and whether it needs
    training scores."""
    if isinstance(choice, str):
        parsed = parse_threshold_choice(choice)
        return parsed.create(), parsed.spec.needs_training_scores
    if hasattr(choice, "fit") and hasattr(choice, "predict"):
        # an unfitted copy: a strategy estimator is cloned, any other object copied
        fresh = clone(choice) if hasattr(choice, "get_params") else copy.deepcopy(choice)
        return fresh, bool(getattr(choice, "needs_training_scores", True))
    raise ValueError(f"threshold must be a registered strategy name or an object with "
                     f"fit/predict, got {choice!r}")


def fit_threshold(choice: Any, training_scores: Any, Y: Any) -> Any:
    """Build the strategy ``choice`` and fit it; ``training_scores`` is a zero-argument
    callable, called only when the strategy needs scores."""
    strategy, needs_scores = make_threshold(choice)
    S = training_scores() if needs_scores else None
    with threshold_call(strategy, "fit"):
        return strategy.fit(S, Y)
