"""Internal plugin: the core's thresholding strategies."""

from __future__ import annotations

from collections.abc import Callable

from mlw.hookspecs import hookimpl
from mlw.registry import ThresholdSpec
from mlw.thresholds import CardinalityMatching, FixedThreshold, OneThreshold, PCut


@hookimpl
def mlw_register_thresholds(register: Callable[[ThresholdSpec], None]) -> None:
    register(ThresholdSpec("fixed", FixedThreshold,
                           "score >= 0.5 (or a given cut-off)", needs_training_scores=False))
    register(ThresholdSpec("pcut", PCut,
                           "one cut-off on the scored set matching the training label density",
                           needs_training_scores=False))
    register(ThresholdSpec("cardinality", CardinalityMatching,
                           "one cut-off matching the training label cardinality on training "
                           "scores; top label if none passes (LCIF)"))
    register(ThresholdSpec("one_threshold", OneThreshold,
                           "one cut-off maximising a metric (default micro-F1) on training "
                           "scores (Mulan's OneThreshold)"))
