"""Learners, thresholding strategies and decoders built from their registered names
(importing this module imports scikit-learn; :mod:`mlw.api` lists without it): the one
place a learner is made from a name, parameters and a seed (:func:`build_learner`),
for the Python API, ``mlw fit`` and every ``mlw bench`` cell and grid point."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlw.decoders import make_decoder
from mlw.learner import MultiLabelLearner, parse_threshold_choice
from mlw.plugins import UnknownNameError, get_plugin_manager
from mlw.registry import LearnerSpec

__all__ = ["SEED_PARAMS", "build_learner", "get_decoder", "get_learner", "get_threshold"]

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
    return build_learner(get_plugin_manager().learner(name), seed=seed, params=params)


def build_learner(spec: LearnerSpec, *, seed: int | None = None,
                  params: Mapping[str, Any] | None = None) -> MultiLabelLearner:
    """The unfitted learner of the registration ``spec`` (as :func:`get_learner`,
    without looking the name up again): the one place a learner is built from a name,
    parameters and a seed, for the Python API, ``mlw fit`` and every ``mlw bench``
    cell and grid point."""
    params = dict(params or {})
    known = spec.signature_params()
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ValueError(f"learner {spec.name!r} has no parameter "
                         f"{', '.join(map(repr, unknown))} "
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
    built again, fresh, by every fit, from the one reading of the text:
    :func:`mlw.learner.parse_threshold_choice`). The string ``"none"`` is refused with
    a hint, since the learner's own decision is the Python value ``None``."""
    try:
        parse_threshold_choice(text)
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
    if options:
        return make_decoder(name, **options)
    return make_decoder(name)
