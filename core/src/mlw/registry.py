"""What plugins register: typed, validated specifications of learners, metrics,
thresholding strategies, dataset loaders and generators."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from mlw._lazy import LazyModule
from mlw.docstrings import parameter_docs

if TYPE_CHECKING:
    import mlw.dataset as _dataset
else:  # registering imports no numpy; the annotations still resolve at run time
    _dataset = LazyModule("mlw.dataset")

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

KINDS = ("learner", "threshold", "decoder", "metric", "loader", "generator")

class RegistrationError(ValueError):
    """A plugin registered something malformed (bad name, missing field, duplicate)."""


def _check_name(kind: str, name: object) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise RegistrationError(
            f"{kind} name {name!r} is not a lowercase identifier (letters, digits, '_')"
        )


def _check_callable(kind: str, name: str, attr: str, value: object) -> None:
    if not callable(value):
        raise RegistrationError(f"{kind} {name!r}: {attr} must be callable, got {value!r}")


@dataclass(frozen=True)
class LearnerTags:
    """What a learner can do, *derived from its class* (:meth:`of`): a plugin author
    states each fact once, on the class, and ``mlw learners`` and the core's evaluation
    checks read it from here.

    Attributes
    ----------
    predicts_scores : bool
        ``predict_proba`` returns a per-label score in [0, 1] (an
        :class:`mlw.MultiLabelLearner` that implements ``_predict_proba``).
    joint : bool
        ``predict`` is the method's own joint label-set decision, not a threshold
        (class attribute ``_joint_prediction``).
    log_proba : bool
        The learner has ``log_proba_of(X, Y)`` (needed for ``cll_loss``).
    sparse_input : bool
        ``fit``/``predict`` take CSR ``X`` without densifying it (``_sparse_input``).
    sparse_output : bool
        Returns CSR from ``predict``/``predict_proba`` when fitted on CSR ``Y``
        (``_sparse_output``).
    allow_nan : bool
        Accepts NaN in ``X`` as missing values (``_allow_nan``).
    joint_mode : bool
        The learner has ``joint_mode(X) -> (n, L)``: its most probable label vector
        under its joint model, exact or approximate as the learner documents (the
        ``subset`` decoder uses it).
    samples : bool
        The learner has ``sample_labels(X, *, n_samples, random_state) -> (n, S, L)``
        uint8: label vectors drawn from its joint P(y | x) (the ``f1`` and ``jaccard``
        decoders estimate from them when nothing exact is available).
    size_marginals : bool
        The learner has ``size_marginals(X) -> (n, L, L)`` or ``None``: entry
        ``[i, j, s - 1]`` is P(y_j = 1, |y| = s | x_i), exact; ``None`` when the fitted
        model cannot compute them exactly at its size (the ``f1`` decoder then samples).
    """

    predicts_scores: bool = True
    joint: bool = False
    log_proba: bool = False
    sparse_input: bool = True
    sparse_output: bool = False
    allow_nan: bool = False
    joint_mode: bool = False
    samples: bool = False
    size_marginals: bool = False

    def as_list(self) -> list[str]:
        return [k for k, v in self.__dict__.items() if v]

    @classmethod
    def of(cls, learner_class: type) -> LearnerTags:
        """The tags a learner class states: an :class:`mlw.MultiLabelLearner` subclass
        answers through its ``_mlw_tags()``; any other estimator class is read from the
        same class attributes, with ``predict_proba`` deciding ``predicts_scores``."""
        own = getattr(learner_class, "_mlw_tags", None)
        if callable(own):
            tags = own()
            if not isinstance(tags, LearnerTags):
                raise TypeError(f"{learner_class.__name__}._mlw_tags() must return LearnerTags")
            return tags
        return cls(
            predicts_scores=hasattr(learner_class, "predict_proba"),
            joint=bool(getattr(learner_class, "_joint_prediction", False)),
            log_proba=callable(getattr(learner_class, "log_proba_of", None)),
            sparse_input=bool(getattr(learner_class, "_sparse_input", True)),
            sparse_output=bool(getattr(learner_class, "_sparse_output", False)),
            allow_nan=bool(getattr(learner_class, "_allow_nan", False)),
            **inference_tags(learner_class),
        )


def inference_tags(learner_class: type) -> dict[str, bool]:
    """What a learner class gives the decoders, read from its methods: ``joint_mode``,
    ``sample_labels`` and ``size_marginals`` (see :class:`LearnerTags`)."""
    return {
        "joint_mode": callable(getattr(learner_class, "joint_mode", None)),
        "samples": callable(getattr(learner_class, "sample_labels", None)),
        "size_marginals": callable(getattr(learner_class, "size_marginals", None)),
    }


@dataclass(frozen=True)
class ParamInfo:
    """One constructor parameter of a learner: its default and documentation."""

    name: str
    default: Any
    doc: str


def _import_object(path: str) -> Any:
    """The object named by ``"package.module:attribute"``."""
    module_name, _, attr = path.partition(":")
    module = importlib.import_module(module_name)
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


_IMPORT_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class PluginError(RuntimeError):
    """A plugin's own defect found after registration: its factory cannot be imported,
    or what it registered disagrees with the class (the message names the plugin)."""


def _owner(plugin: str | None) -> str:
    return f"plugin {plugin!r}" if plugin else "its plugin"


def _check_factory(kind: str, name: str, factory: object) -> None:
    """A factory is a callable or an import path ``"package.module:attribute"``."""
    if isinstance(factory, str):
        if not _IMPORT_PATH.match(factory):
            raise RegistrationError(f"{kind} {name!r}: factory {factory!r} is not an import "
                                    f"path like 'package.module:Class'")
    else:
        _check_callable(kind, name, "factory", factory)


def _load_factory(kind: str, name: str, factory: Any, plugin: str | None) -> Any:
    """The callable a factory names, importing an import path."""
    if not isinstance(factory, str):
        return factory
    try:
        # what a plugin prints while imported goes to stderr (stdout carries results)
        with contextlib.redirect_stdout(sys.stderr or sys.stdout):
            obj = _import_object(factory)
    except (Exception, SystemExit) as exc:  # a plugin must not exit mlw by importing
        what = (f"SystemExit({exc.code!r}) (it called sys.exit)" if isinstance(exc, SystemExit)
                else f"{type(exc).__name__}: {exc}")
        raise PluginError(f"{kind} {name!r} of {_owner(plugin)}: cannot import {factory!r} "
                          f"({what})") from exc
    if not callable(obj):
        raise PluginError(f"{kind} {name!r} of {_owner(plugin)}: {factory!r} is not callable")
    return obj


@dataclass(frozen=True)
class LearnerSpec:
    """A learner registration.

    ``factory`` is the estimator class (or a callable building one) or, so that
    registering imports nothing heavy, its import path ``"package.module:Class"``,
    imported on first use (:meth:`load`). ``factory(**params)`` builds an unfitted
    estimator. Its parameters are documented once, in the numpydoc ``Parameters``
    section of the class docstring (inherited along the class hierarchy, see
    :func:`mlw.docstrings.parameter_docs`); the defaults are read from the factory's
    signature and the :class:`LearnerTags` from its class, so documentation,
    capabilities and code cannot drift apart.

    ``model_types`` declares the *model state* of the fitted learner: every class (or
    function) other than the learner's own class that its fitted state holds, as import
    paths ``"package.module:Class"`` (or the objects). :func:`mlw.load_model` reconstructs
    nothing else from a model file (numpy arrays, random generators, scipy sparse
    matrices and the registered thresholding strategies are declared by the core); a
    saved model that holds an undeclared type warns with
    :class:`mlw.persistence.ModelTrustWarning`, and
    :func:`mlw.persistence.untrusted_types` lists what is missing.

    ``plugin`` is filled in by the plugin manager with the name of the registering
    plugin.
    """

    name: str
    factory: Callable[..., Any] | str
    description: str
    model_types: tuple[Any, ...] = ()
    plugin: str | None = field(default=None, compare=False)
    _loaded: list[Any] = field(default_factory=list, init=False, repr=False, compare=False)

    def validate(self) -> None:
        """Cheap checks at registration (nothing is imported)."""
        _check_name("learner", self.name)
        _check_factory("learner", self.name, self.factory)
        if not isinstance(self.description, str) or not self.description.strip():
            raise RegistrationError(f"learner {self.name!r}: description is missing")
        _check_model_types(self.name, self.model_types)

    def load(self) -> Callable[..., Any]:
        """The factory, imported on first use. Raises :class:`PluginError` naming the
        plugin."""
        if not self._loaded:
            self._loaded.append(_load_factory("learner", self.name, self.factory,
                                              self.plugin))
        return self._loaded[0]

    def create(self, **params: Any) -> Any:
        """An unfitted estimator built with ``params``."""
        return self.load()(**params)

    def learner_class(self) -> type:
        """The estimator class (for a factory function: the class of what it builds)."""
        factory = self.load()
        return factory if inspect.isclass(factory) else type(factory())

    @property
    def tags(self) -> LearnerTags:
        """What the learner can do, read from its class (imports the factory)."""
        return LearnerTags.of(self.learner_class())

    def signature_params(self) -> dict[str, Any]:
        """Constructor parameters and their defaults, read from the factory."""
        return _signature_params(self.load())

    @property
    def params(self) -> tuple[ParamInfo, ...]:
        """Each constructor parameter with its default and its documentation, read from
        the numpydoc docstrings of the learner's class (``""`` for an undocumented one)."""
        docs = parameter_docs(self.learner_class())
        return tuple(ParamInfo(n, d, docs.get(n, ""))
                     for n, d in self.signature_params().items())


def _check_model_types(name: str, model_types: Any) -> None:
    """``model_types``: a tuple (or list) of import paths ``"package.module:Class"`` or
    of classes and functions."""
    if isinstance(model_types, (str, bytes)) or not isinstance(model_types, (tuple, list)):
        raise RegistrationError(f"learner {name!r}: model_types must be a tuple of import "
                                f"paths like 'package.module:Class', got {model_types!r}")
    for entry in model_types:
        if isinstance(entry, str):
            if not _IMPORT_PATH.match(entry):
                raise RegistrationError(f"learner {name!r}: model_types entry {entry!r} is "
                                        f"not an import path like 'package.module:Class'")
        elif not (inspect.isclass(entry) or callable(entry)):
            raise RegistrationError(f"learner {name!r}: model_types entry {entry!r} is "
                                    f"neither an import path nor a class")


def _signature_params(factory: Any) -> dict[str, Any]:
    target = factory.__init__ if inspect.isclass(factory) else factory
    out: dict[str, Any] = {}
    for p in inspect.signature(target).parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        out[p.name] = None if p.default is p.empty else p.default
    return out


class _FactoryRegistration:
    """What a thresholding-strategy and a decoder registration share: a named factory,
    imported on first use, that builds the strategy or decoder from its options."""

    _kind: ClassVar[str]
    name: str
    factory: Callable[..., Any] | str
    description: str
    plugin: str | None
    _loaded: list[Any]

    def validate(self) -> None:
        _check_name(self._kind, self.name)
        _check_factory(self._kind, self.name, self.factory)
        if not isinstance(self.description, str) or not self.description.strip():
            raise RegistrationError(f"{self._kind} {self.name!r}: description is missing")

    def load(self) -> Callable[..., Any]:
        """The factory, imported on first use (:class:`PluginError` if it cannot be)."""
        if not self._loaded:
            self._loaded.append(_load_factory(self._kind, self.name, self.factory,
                                              self.plugin))
        return self._loaded[0]

    def create(self, **options: Any) -> Any:
        """An instance built with ``options``."""
        return self.load()(**options)

    def signature_params(self) -> dict[str, Any]:
        """The options and their defaults, read from the factory."""
        return _signature_params(self.load())


@dataclass(frozen=True)
class ThresholdSpec(_FactoryRegistration):
    """A thresholding-strategy registration.

    ``factory`` is the strategy class (or a callable building one) or its import path
    ``"package.module:Class"``, imported on first use; ``factory(**options)`` builds an
    unfitted strategy. Whether ``fit`` needs the learner's training scores is read from
    the strategy's class attribute ``needs_training_scores`` (default True).
    """

    _kind: ClassVar[str] = "threshold"
    name: str
    factory: Callable[..., Any] | str
    description: str
    plugin: str | None = field(default=None, compare=False)
    _loaded: list[Any] = field(default_factory=list, init=False, repr=False, compare=False)

    @property
    def needs_training_scores(self) -> bool:
        return bool(getattr(self.load(), "needs_training_scores", True))


@dataclass(frozen=True)
class DecoderSpec(_FactoryRegistration):
    """A decoder registration: a rule turning what a learner gives (marginals, its
    joint mode, exact size marginals, samples from its joint) into the label sets that
    are optimal, or close to it, for one measure.

    ``factory`` is the decoder class (or a callable building one) or its import path
    ``"package.module:Class"``, imported on first use; ``factory(**options)`` builds a
    decoder, an object with ``decode(learner, X) -> Y`` (0/1, shape (n, L)) for a fitted
    learner and ``route(learner) -> str`` naming how it decodes for that learner.
    ``measure`` is the metric the decoder optimises (a registered metric name).
    """

    _kind: ClassVar[str] = "decoder"
    name: str
    factory: Callable[..., Any] | str
    description: str
    measure: str = ""
    plugin: str | None = field(default=None, compare=False)
    _loaded: list[Any] = field(default_factory=list, init=False, repr=False, compare=False)

    def validate(self) -> None:
        super().validate()
        if not isinstance(self.measure, str):
            raise RegistrationError(f"decoder {self.name!r}: measure must be a metric name")


MetricNeeds = Literal["labels", "scores", "joint"]


@dataclass(frozen=True)
class MetricSpec:
    """A metric registration. ``compute(ctx: EvalContext) -> float``.

    ``at_k`` (a positive int, optional) marks a metric of the top k ranked labels
    (``precision_at_5``): it needs ``"scores"`` or, instead, a top-k ranking of at least
    ``at_k`` labels (:class:`mlw.metrics.at_k.TopK`, ``EvalContext.topk``).
    """

    name: str
    compute: Callable[[Any], float]
    greater_is_better: bool
    needs: MetricNeeds
    description: str
    at_k: int | None = None

    def validate(self) -> None:
        _check_name("metric", self.name)
        _check_callable("metric", self.name, "compute", self.compute)
        if not isinstance(self.greater_is_better, bool):
            raise RegistrationError(f"metric {self.name!r}: greater_is_better must be a bool")
        if self.needs not in ("labels", "scores", "joint"):
            raise RegistrationError(
                f"metric {self.name!r}: needs must be 'labels', 'scores' or 'joint', "
                f"got {self.needs!r}"
            )
        if not isinstance(self.description, str) or not self.description.strip():
            raise RegistrationError(f"metric {self.name!r}: description is missing")
        if self.at_k is not None and (
                isinstance(self.at_k, bool) or not isinstance(self.at_k, int)
                or self.at_k < 1 or self.needs != "scores"):
            raise RegistrationError(f"metric {self.name!r}: at_k must be a positive int "
                                    f"on a metric that needs 'scores'")


@dataclass(frozen=True)
class LoaderSpec:
    """A dataset-loader registration for one file format."""

    name: str
    suffixes: tuple[str, ...]
    load: Callable[..., _dataset.Dataset]
    description: str
    sniff: Callable[[bytes], bool] | None = None

    def validate(self) -> None:
        _check_name("loader", self.name)
        _check_callable("loader", self.name, "load", self.load)
        if not isinstance(self.suffixes, tuple) or not all(
            isinstance(s, str) and s.startswith(".") for s in self.suffixes
        ):
            raise RegistrationError(
                f"loader {self.name!r}: suffixes must be a tuple of strings like '.arff'"
            )
        if self.sniff is not None:
            _check_callable("loader", self.name, "sniff", self.sniff)
        if not isinstance(self.description, str) or not self.description.strip():
            raise RegistrationError(f"loader {self.name!r}: description is missing")


@dataclass(frozen=True)
class GeneratorSpec:
    """A synthetic-dataset generator registration.

    ``generate`` is the generating function or, so that registering imports nothing
    heavy, its import path ``"package.module:function"``, imported on first use
    (:meth:`load`). Its parameters are documented in the numpydoc ``Parameters``
    section of its docstring (:attr:`params`).
    """

    name: str
    generate: Callable[..., _dataset.Dataset] | str
    description: str
    plugin: str | None = field(default=None, compare=False)
    _loaded: list[Any] = field(default_factory=list, init=False, repr=False, compare=False)

    def load(self) -> Callable[..., Any]:
        """The generating function, imported on first use (:class:`PluginError` naming
        the plugin if it cannot be)."""
        if not self._loaded:
            self._loaded.append(_load_factory("generator", self.name, self.generate,
                                              self.plugin))
        return self._loaded[0]

    def signature_params(self) -> dict[str, Any]:
        """The generator's parameters (besides ``seed``) and their defaults."""
        params = _signature_params(self.load())
        params.pop("seed", None)
        return params

    @property
    def params(self) -> tuple[ParamInfo, ...]:
        """Each parameter (besides ``seed``) with its default and its documentation,
        read from the generating function's numpydoc docstring."""
        docs = parameter_docs(self.load())
        return tuple(ParamInfo(n, d, docs.get(n, ""))
                     for n, d in self.signature_params().items())

    def validate(self) -> None:
        _check_name("generator", self.name)
        _check_factory("generator", self.name, self.generate)
        if not isinstance(self.description, str) or not self.description.strip():
            raise RegistrationError(f"generator {self.name!r}: description is missing")


SPEC_TYPES: dict[str, type] = {
    "learner": LearnerSpec,
    "threshold": ThresholdSpec,
    "decoder": DecoderSpec,
    "metric": MetricSpec,
    "loader": LoaderSpec,
    "generator": GeneratorSpec,
}
