"""The scikit-learn classifiers under the baselines: resolving ``base_estimator``,
fitting one binary or multi-class model, and reading probabilities from it.

Conventions shared by every baseline learner:

- ``base_estimator=None`` is :data:`DEFAULT_SHORTCUT` (``MaxAbsScaler`` then logistic
  regression: the scaler keeps CSR sparse and 0/1 features unchanged); a string
  names a shortcut of :data:`SHORTCUTS` (usable from the CLI as
  ``--param base_estimator=decision_tree``); any other object with ``fit`` is cloned
  with :func:`sklearn.base.clone` for every model, so the given object is never fitted.
- A classifier without ``predict_proba`` (``LinearSVC``, ``RidgeClassifier``, ...)
  scores with the logistic sigmoid of ``decision_function`` (binary) or its softmax
  (multi-class): ``predict`` of the learner then reproduces the classifier's own
  decisions at threshold 0.5, but the "probabilities" are not calibrated.
- A label that is constant in the training data (all 0 or all 1) gets no classifier:
  :class:`ConstantModel` predicts the Laplace-smoothed prior ``(k + 1) / (n + 2)`` for
  ``k`` positives out of ``n``, which is on the side of the constant (so a 0.5
  threshold predicts the constant) and keeps log-probabilities finite.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import (
    LogisticRegression,
    RidgeClassifier,
    RidgeClassifierCV,
    SGDClassifier,
)
from sklearn.naive_bayes import BernoulliNB
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import MaxAbsScaler, StandardScaler
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

#: Probabilities below this are raised to it before taking logarithms
#: (``log_proba_of`` of CC, PCC and LP; LP's unseen label sets).
PROBA_FLOOR = 1e-12
LOG_PROBA_FLOOR = float(np.log(PROBA_FLOOR))


def _logistic_regression(random_state: int | None) -> Any:
    # MaxAbsScaler keeps CSR sparse and leaves 0/1 word features as they are, but brings
    # unscaled dense features (emotions ranges over [-99, 237]) to [-1, 1]: without it
    # lbfgs does not converge in 1000 iterations there and is ten times slower.
    return make_pipeline(MaxAbsScaler(),
                         LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000))


def _logistic_regression_unpenalised(random_state: int | None) -> Any:
    # maximum likelihood, as Weka's Logistic (ridge 1e-8), which Mulan's IBLR_ML fits:
    # IBLR's default (its features, neighbours' label shares, are few and in [0, 1]);
    # C = inf is scikit-learn's spelling of no penalty (penalty=None is deprecated)
    return make_pipeline(MaxAbsScaler(),
                         LogisticRegression(C=np.inf, solver="lbfgs", max_iter=1000))


def _decision_tree(random_state: int | None) -> Any:
    return DecisionTreeClassifier(random_state=random_state)


def _random_forest(random_state: int | None) -> Any:
    return RandomForestClassifier(n_estimators=100, random_state=random_state)


def _linear_svc(random_state: int | None) -> Any:
    return make_pipeline(MaxAbsScaler(), LinearSVC(C=1.0, random_state=random_state))


def _bernoulli_nb(random_state: int | None) -> Any:
    return BernoulliNB()


#: ``base_estimator`` strings and what they build (``random_state`` is the learner's).
SHORTCUTS: dict[str, Callable[[int | None], Any]] = {
    "logistic_regression": _logistic_regression,
    "decision_tree": _decision_tree,
    "random_forest": _random_forest,
    "linear_svc": _linear_svc,
    "bernoulli_nb": _bernoulli_nb,
    "logistic_regression_unpenalised": _logistic_regression_unpenalised,
}
DEFAULT_SHORTCUT = "logistic_regression"



def _import_classifier(path: str) -> Any:
    """The class a dotted path names (``"sklearn.svm.LinearSVC"``), checked to be a
    scikit-learn classifier. Only paths given by the user (a parameter, the command
    line) come here: a model file stores the fitted classifiers, never a path to import
    when it is loaded."""
    import importlib
    import inspect

    from sklearn.base import is_classifier, is_regressor

    module_name, _, attr = path.rpartition(".")
    if not module_name or not all(p.isidentifier() for p in path.split(".")):
        raise ValueError(f"base_estimator {path!r} is neither a shortcut ("
                         f"{', '.join(SHORTCUTS)}) nor a dotted path such as "
                         f"sklearn.svm.LinearSVC")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"base_estimator {path!r}: cannot import {module_name} "
                         f"({type(exc).__name__}: {exc})") from None
    cls = getattr(module, attr, None)
    if cls is None:
        import difflib

        close = difflib.get_close_matches(attr, [n for n in dir(module)
                                                 if not n.startswith("_")], n=3)
        hint = f"; did you mean {', '.join(f'{module_name}.{c}' for c in close)}?" \
            if close else ""
        raise ValueError(f"base_estimator {path!r}: module {module_name} has no "
                         f"{attr}{hint}")
    if not inspect.isclass(cls):
        raise ValueError(f"base_estimator {path!r} is not a class but a "
                         f"{type(cls).__name__}; give a scikit-learn classifier class")
    try:
        instance = cls()
    except Exception as exc:
        raise ValueError(f"base_estimator {path!r} cannot be built without arguments "
                         f"({type(exc).__name__}: {exc})") from None
    if not (hasattr(instance, "fit") and hasattr(instance, "get_params")
            and is_classifier(instance)):
        if not (hasattr(instance, "fit") and hasattr(instance, "get_params")):
            what = "not a scikit-learn estimator"
        elif is_regressor(instance):
            what = "a regressor"
        elif hasattr(instance, "transform"):
            what = "a transformer"
        else:
            what = "not tagged as a classifier"
        raise ValueError(f"base_estimator {path!r} is not a classifier ({what}); give a "
                         f"scikit-learn classifier such as sklearn.svm.LinearSVC")
    return instance


def _set_base_params(estimator: Any, params: dict[str, Any], where: str) -> Any:
    """``estimator.set_params(**params)``, where a name the estimator lacks goes to the
    last step of a pipeline (``C`` of the ``logistic_regression`` shortcut is its
    ``LogisticRegression``'s); an unknown name is a one-line ``ValueError``."""
    if not params:
        return estimator
    valid = estimator.get_params(deep=True)
    routed: dict[str, Any] = {}
    for name, value in params.items():
        if name in valid:
            routed[name] = value
            continue
        if isinstance(estimator, Pipeline):
            last, step = estimator.steps[-1]
            if name in step.get_params(deep=True):
                routed[f"{last}__{name}"] = value
                continue
            valid = step.get_params(deep=False)
        else:
            valid = estimator.get_params(deep=False)
        import difflib

        close = difflib.get_close_matches(name, list(valid), n=3)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise ValueError(f"base_params: {where} has no parameter {name!r} ({hint}"
                         f"parameters: {', '.join(sorted(valid))})")
    return estimator.set_params(**routed)


def resolve_base_estimator(spec: Any, random_state: int | None,
                           params: dict[str, Any] | None = None) -> Any:
    """An unfitted estimator from a ``base_estimator`` parameter value, with the
    learner's ``base_params`` set on it.

    ``spec``: ``None`` (the default shortcut), a shortcut name, a dotted path to a
    scikit-learn classifier class (``"sklearn.svm.LinearSVC"``, built without
    arguments, given ``random_state`` when it takes one and ``params`` do not set it),
    or an estimator object (cloned). ``params``: parameters of the classifier
    (``{"C": 10}``), set with ``set_params``; on a pipeline, a name the pipeline lacks
    goes to its last step.

    Raises ``ValueError`` (one line) for an unknown shortcut, a path that does not
    import or names no classifier, an object without ``fit``, or an unknown parameter.
    """
    if params is not None and not isinstance(params, dict):
        raise ValueError(f"base_params must be a dict of the base classifier's "
                         f"parameters, got {type(params).__name__}")
    params = dict(params or {})
    if spec is None:
        spec = DEFAULT_SHORTCUT
    if isinstance(spec, str):
        key = spec.strip().lower().replace("-", "_")
        if key in SHORTCUTS:
            return _set_base_params(SHORTCUTS[key](random_state), params,
                                    f"shortcut {key!r}")
        if "." not in spec:
            raise ValueError(f"base_estimator {spec!r} is not a known shortcut; use one of "
                             f"{', '.join(SHORTCUTS)}, a dotted path to a scikit-learn "
                             f"classifier (sklearn.svm.LinearSVC) or a classifier object")
        estimator = _import_classifier(spec.strip())
        if "random_state" in estimator.get_params(deep=False) and \
                "random_state" not in params:
            params["random_state"] = random_state
        return _set_base_params(estimator, params, spec.strip())
    if not hasattr(spec, "fit"):
        raise ValueError(f"base_estimator must be None, a shortcut name, a dotted path or "
                         f"a scikit-learn classifier, got {type(spec).__name__}")
    return _set_base_params(clone(spec), params, type(spec).__name__)


class ConstantModel:
    """The stand-in for a classifier whose target was constant in training."""

    def __init__(self, proba: np.ndarray) -> None:
        self.proba = np.asarray(proba, dtype=np.float64)

    @classmethod
    def binary(cls, y: np.ndarray) -> ConstantModel:
        n = y.shape[0]
        k = float(np.count_nonzero(y))
        p1 = (k + 1.0) / (n + 2.0)
        return cls(np.array([1.0 - p1, p1]))

    def __repr__(self) -> str:
        return f"ConstantModel(proba={self.proba.tolist()})"


def check_weighted_base(template: Any) -> None:
    """Refuse, before anything is fitted, a base classifier (or the last step of a
    pipeline) whose ``fit`` takes no ``sample_weight``."""
    from sklearn.utils.validation import has_fit_parameter

    last = template.steps[-1][1] if isinstance(template, Pipeline) else template
    if not has_fit_parameter(last, "sample_weight"):
        raise ValueError(f"sample_weight: the base classifier {type(last).__name__} "
                         f"does not take sample_weight in fit")


def _fit(model: Any, X: Any, y: np.ndarray, sample_weight: np.ndarray | None) -> None:
    if sample_weight is None:
        model.fit(X, y)
    elif isinstance(model, Pipeline):  # routed to the classifier, the last step
        model.fit(X, y, **{f"{model.steps[-1][0]}__sample_weight": sample_weight})
    else:
        model.fit(X, y, sample_weight=sample_weight)


def fit_binary(template: Any, X: Any, y: np.ndarray,
               sample_weight: np.ndarray | None = None) -> Any:
    """A fitted clone of ``template`` on 0/1 targets ``y`` (weighted by
    ``sample_weight`` if given), or a :class:`ConstantModel` when ``y`` is constant
    (weights do not change a constant target's prior)."""
    y = np.asarray(y, dtype=np.int64).ravel()
    if y.size == 0 or np.all(y == y[0]):
        return ConstantModel.binary(y)
    model = clone(template)
    _fit(model, X, y, sample_weight)
    return model


def fit_multiclass(template: Any, X: Any, y: np.ndarray,
                   sample_weight: np.ndarray | None = None) -> Any:
    """A fitted clone on class ids ``0..K-1`` (all present), or a constant for K = 1."""
    y = np.asarray(y, dtype=np.int64).ravel()
    if np.all(y == y[0]):
        return ConstantModel(np.array([1.0]))
    model = clone(template)
    _fit(model, X, y, sample_weight)
    return model


def proba_positive(model: Any, X: Any) -> np.ndarray:
    """P(y = 1 | x) for every row of ``X`` from a :func:`fit_binary` model."""
    n = X.shape[0]
    if isinstance(model, ConstantModel):
        return np.full(n, model.proba[1])
    classes = list(model.classes_)
    if hasattr(model, "predict_proba"):
        P = np.asarray(model.predict_proba(X), dtype=np.float64)
        return np.ascontiguousarray(P[:, classes.index(1)])
    z = np.asarray(model.decision_function(X), dtype=np.float64).ravel()
    # decision_function is positive for classes_[1]
    return expit(z) if classes[1] == 1 else expit(-z)


def proba_classes(model: Any, X: Any, n_classes: int) -> np.ndarray:
    """P(class k | x), shape (n, n_classes), from a :func:`fit_multiclass` model."""
    n = X.shape[0]
    if isinstance(model, ConstantModel):
        return np.ones((n, 1))
    out = np.zeros((n, n_classes))
    cols = np.asarray(model.classes_, dtype=np.int64)
    if hasattr(model, "predict_proba"):
        out[:, cols] = model.predict_proba(X)
        return out
    D = np.asarray(model.decision_function(X), dtype=np.float64)
    if D.ndim == 1:  # two classes: positive for classes_[1]
        p1 = expit(D)
        out[:, cols[0]] = 1.0 - p1
        out[:, cols[1]] = p1
        return out
    D = D - D.max(axis=1, keepdims=True)
    E = np.exp(D)
    out[:, cols] = E / E.sum(axis=1, keepdims=True)
    return out


_LINEAR_MARGIN = (LinearSVC, RidgeClassifier, RidgeClassifierCV, SGDClassifier)


def _scaler_affine(step: Any, n_features: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``(s, m)`` with ``step.transform(x) = (x - m) * s`` for the linear scalers."""
    if isinstance(step, MaxAbsScaler):
        return 1.0 / np.asarray(step.scale_, dtype=np.float64), np.zeros(n_features)
    if isinstance(step, StandardScaler):
        scale = (np.ones(n_features) if step.scale_ is None
                 else np.asarray(step.scale_, dtype=np.float64))
        mean = (np.zeros(n_features) if step.mean_ is None
                else np.asarray(step.mean_, dtype=np.float64))
        return 1.0 / scale, mean
    return None


def linear_logit(model: Any, n_features: int) -> tuple[np.ndarray, float] | None:
    """``(w, b)`` with P(y = 1 | x) = sigmoid(w·x + b) exactly as :func:`proba_positive`
    computes it, when the model is linear in that sense; ``None`` otherwise.

    Logistic regression is sigmoid(decision_function) by definition; the margin
    classifiers without ``predict_proba`` are so by the convention above. A pipeline
    of ``MaxAbsScaler``/``StandardScaler`` steps and such a classifier is folded into
    one ``(w, b)``.
    """
    if isinstance(model, ConstantModel):
        p1 = float(model.proba[1])
        return np.zeros(n_features), float(np.log(p1) - np.log1p(-p1))
    if isinstance(model, Pipeline):
        steps = [s for _, s in model.steps if s is not None and s != "passthrough"]
        if not steps:
            return None
        inner = linear_logit(steps[-1], n_features)
        if inner is None:
            return None
        w, b = inner
        for step in reversed(steps[:-1]):
            affine = _scaler_affine(step, n_features)
            if affine is None:
                return None
            s, m = affine
            # w·((x - m) * s) + b = (w * s)·x + b - (w * s)·m
            w = w * s
            b = b - float(w @ m)
        return w, b
    if isinstance(model, LogisticRegression):
        pass
    elif isinstance(model, _LINEAR_MARGIN) and not hasattr(model, "predict_proba"):
        pass
    elif isinstance(model, SGDClassifier) and model.loss == "log_loss":
        pass
    else:
        return None
    coef = np.asarray(model.coef_, dtype=np.float64)
    intercept = np.atleast_1d(np.asarray(model.intercept_, dtype=np.float64))
    if coef.shape != (1, n_features) or intercept.shape != (1,):
        return None
    w, b = coef[0].copy(), float(intercept[0])
    if list(model.classes_) != [0, 1]:  # pragma: no cover - sklearn sorts classes
        return None
    return w, b
