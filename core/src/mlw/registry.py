"""What plugins register: typed, validated specifications of learners, metrics,
thresholding strategies, dataset loaders and generators."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mlw.dataset import Dataset

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

KINDS = ("learner", "threshold", "metric", "loader", "generator")


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
    """What a learner can do, shown by ``mlw list-plugins`` and used by the CLI.

    Attributes
    ----------
    predicts_scores : bool
        ``predict_proba`` returns a per-label score in [0, 1].
    joint : bool
        ``predict`` is the method's own joint label-set decision (not a threshold).
    log_proba : bool
        The learner exposes ``log_proba_of(X, Y)`` (needed for ``cll_loss``).
    sparse_input : bool
        ``fit``/``predict`` take CSR ``X`` without densifying it.
    numeric_only : bool
        Needs numeric features (all mlw loaders give numeric X, so this is informative).
    sparse_output : bool
        Returns CSR from ``predict``/``predict_proba`` when fitted on CSR ``Y``.
    allow_nan : bool
        Accepts NaN in ``X`` as missing values.
    """

    predicts_scores: bool = True
    joint: bool = False
    log_proba: bool = False
    sparse_input: bool = True
    numeric_only: bool = True
    sparse_output: bool = False
    allow_nan: bool = False

    def as_list(self) -> list[str]:
        return [k for k, v in self.__dict__.items() if v]


@dataclass(frozen=True)
class ParamInfo:
    """One constructor parameter of a learner: its default and documentation."""

    name: str
    default: Any
    doc: str


@dataclass(frozen=True)
class LearnerSpec:
    """A learner registration.

    ``factory(**params)`` builds an unfitted estimator. ``param_docs`` documents every
    parameter the factory takes; the defaults are read from the factory's signature,
    so documentation and code cannot drift apart.
    """

    name: str
    factory: Callable[..., Any]
    description: str
    param_docs: Mapping[str, str] = field(default_factory=dict)
    tags: LearnerTags = field(default_factory=LearnerTags)

    def validate(self) -> None:
        _check_name("learner", self.name)
        _check_callable("learner", self.name, "factory", self.factory)
        if not isinstance(self.description, str) or not self.description.strip():
            raise RegistrationError(f"learner {self.name!r}: description is missing")
        if not isinstance(self.tags, LearnerTags):
            raise RegistrationError(f"learner {self.name!r}: tags must be LearnerTags")
        known = set(self.signature_params())
        unknown = sorted(set(self.param_docs) - known)
        if unknown:
            raise RegistrationError(
                f"learner {self.name!r}: param_docs names {unknown} that the factory "
                f"does not take"
            )

    def signature_params(self) -> dict[str, Any]:
        """Constructor parameters and their defaults, read from the factory."""
        target = self.factory.__init__ if inspect.isclass(self.factory) else self.factory
        out: dict[str, Any] = {}
        for p in inspect.signature(target).parameters.values():
            if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            out[p.name] = None if p.default is p.empty else p.default
        return out

    @property
    def params(self) -> tuple[ParamInfo, ...]:
        return tuple(
            ParamInfo(n, d, self.param_docs.get(n, "")) for n, d in self.signature_params().items()
        )


@dataclass(frozen=True)
class ThresholdSpec:
    """A thresholding-strategy registration; ``factory(**options)`` builds one."""

    name: str
    factory: Callable[..., Any]
    description: str
    needs_training_scores: bool = True

    def validate(self) -> None:
        _check_name("threshold", self.name)
        _check_callable("threshold", self.name, "factory", self.factory)
        if not isinstance(self.description, str) or not self.description.strip():
            raise RegistrationError(f"threshold {self.name!r}: description is missing")


MetricNeeds = Literal["labels", "scores", "joint"]


@dataclass(frozen=True)
class MetricSpec:
    """A metric registration. ``compute(ctx: EvalContext) -> float``."""

    name: str
    compute: Callable[[Any], float]
    greater_is_better: bool
    needs: MetricNeeds
    description: str

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


@dataclass(frozen=True)
class LoaderSpec:
    """A dataset-loader registration for one file format."""

    name: str
    suffixes: tuple[str, ...]
    load: Callable[..., Dataset]
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
    """A synthetic-dataset generator registration."""

    name: str
    generate: Callable[..., Dataset]
    description: str
    param_docs: Mapping[str, str] = field(default_factory=dict)

    def validate(self) -> None:
        _check_name("generator", self.name)
        _check_callable("generator", self.name, "generate", self.generate)
        if not isinstance(self.description, str) or not self.description.strip():
            raise RegistrationError(f"generator {self.name!r}: description is missing")


SPEC_TYPES: dict[str, type] = {
    "learner": LearnerSpec,
    "threshold": ThresholdSpec,
    "metric": MetricSpec,
    "loader": LoaderSpec,
    "generator": GeneratorSpec,
}
