"""The typed Python API's listings and generators, re-exported from :mod:`mlw` (learners
and strategies are built by :mod:`mlw.factory`). Importing it imports no estimator."""

from __future__ import annotations

from typing import Any

from mlw._guard import plugin_call
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
    with plugin_call("generator", name, "generate"):
        return get_plugin_manager().generator(name).load()(seed=seed, **params)
