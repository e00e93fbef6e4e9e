"""The typed Python API, re-exported from :mod:`mlw`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mlw.dataset import Dataset
from mlw.plugins import PluginInfo, get_plugin_manager
from mlw.registry import (
    DecoderSpec,
    GeneratorSpec,
    LearnerSpec,
    LoaderSpec,
    MetricSpec,
    ThresholdSpec,
)

if TYPE_CHECKING:
    from mlw.learner import MultiLabelLearner


#: Constructor parameters that seed a learner's randomness, in order of preference.
SEED_PARAMS = ("random_state", "seed")


def get_learner(name: str, *, seed: int | None = None, **params: Any) -> MultiLabelLearner:
    """An unfitted learner registered under ``name``, built with ``params``.

    ``seed`` seeds the learner's randomness: it is passed as the learner's
    ``random_state`` (or ``seed``) parameter unless ``params`` sets that parameter;
    a learner without either ignores it. (A learner whose parameter is itself named
    ``seed`` gets the value either way.)

    Raises :class:`mlw.UnknownNameError` (suggesting close names) for an unknown name
    and ``ValueError`` naming the parameter for one the learner does not take.

    Examples
    --------
    >>> import mlw
    >>> mlw.get_learner("br")
    BinaryRelevance()
    >>> mlw.get_learner("cc", seed=3).random_state
    3
    """
    spec = get_plugin_manager().learner(name)
    known = spec.signature_params()
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ValueError(f"learner {name!r} has no parameter {', '.join(map(repr, unknown))} "
                         f"(parameters: {', '.join(known) or 'none'})")
    if isinstance(params.get("threshold"), str):
        _check_threshold_name(params["threshold"])
    if seed is not None:
        target = next((p for p in SEED_PARAMS if p in known), None)
        if target is not None and target not in params:
            params[target] = seed
    learner: MultiLabelLearner = spec.create(**params)
    return learner


def _check_threshold_name(text: str) -> None:
    """A threshold given by name is checked when the learner is built, not at its
    first ``fit``: an unknown name or option raises there and then (the strategy is
    built again, fresh, by every fit). The string ``"none"`` is refused with a hint,
    since the learner's own decision is the Python value ``None``."""
    from mlw.learner import make_threshold
    from mlw.plugins import UnknownNameError

    try:
        make_threshold(text)
    except UnknownNameError as err:
        if text.strip().lower() == "none":
            raise UnknownNameError(f"unknown threshold {text!r}: for the learner's own "
                                   f"decision pass threshold=None, not a string") from None
        raise err from None


def get_threshold(name: str, **options: Any) -> Any:
    """An unfitted thresholding strategy registered under ``name``."""
    return get_plugin_manager().threshold(name).create(**options)


def get_decoder(name: str, **options: Any) -> Any:
    """A decoder registered under ``name`` (``"f1"``, ``"subset"``, ...), built with
    ``options``; also ``"f1:beta=2"`` (options after a colon, as for thresholds).

    Examples
    --------
    >>> import mlw
    >>> mlw.get_decoder("f1", n_samples=200)
    F1Decoder(n_samples=200)
    """
    from mlw.decoders import make_decoder

    if options:
        return make_decoder(name, **options)
    return make_decoder(name)


def list_decoders() -> dict[str, DecoderSpec]:
    """Every registered decoder, by name."""
    return get_plugin_manager().decoders()


def list_learners() -> dict[str, LearnerSpec]:
    """Every registered learner, by name."""
    return get_plugin_manager().learners()


def list_metrics() -> dict[str, MetricSpec]:
    """Every registered metric, by name."""
    return get_plugin_manager().metrics()


def list_thresholds() -> dict[str, ThresholdSpec]:
    """Every registered thresholding strategy, by name."""
    return get_plugin_manager().thresholds()


def list_loaders() -> dict[str, LoaderSpec]:
    """Every registered dataset loader (file format), by name."""
    return get_plugin_manager().loaders()


def list_generators() -> dict[str, GeneratorSpec]:
    """Every registered synthetic-dataset generator, by name."""
    return get_plugin_manager().generators()


def list_plugins() -> list[PluginInfo]:
    """Every plugin, built-in and installed, with status and registrations."""
    return get_plugin_manager().plugins()


def generate_dataset(name: str, *, seed: int = 0, **params: Any) -> Dataset:
    """A synthetic dataset from the generator registered under ``name``."""
    from mlw._guard import plugin_call

    with plugin_call("generator", name, "generate"):
        return get_plugin_manager().generator(name).load()(seed=seed, **params)
