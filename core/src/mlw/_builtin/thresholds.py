"""Internal plugin: the core's thresholding strategies (defined in :mod:`mlw.thresholds`,
imported on first use)."""

from __future__ import annotations

from collections.abc import Callable

from mlw.hookspecs import hookimpl
from mlw.registry import ThresholdSpec


@hookimpl
def mlw_register_thresholds(register: Callable[[ThresholdSpec], None]) -> None:
    register(ThresholdSpec("fixed", "mlw.thresholds:FixedThreshold",
                           "score >= 0.5 (or a given cut-off)"))
    register(ThresholdSpec("pcut", "mlw.thresholds:PCut",
                           "one cut-off on the scored set matching the training label density"))
    register(ThresholdSpec("cardinality", "mlw.thresholds:CardinalityMatching",
                           "one cut-off matching the training label cardinality on training "
                           "scores; top label if none passes (LCIF)"))
    register(ThresholdSpec("one_threshold", "mlw.thresholds:OneThreshold",
                           "one cut-off maximising a metric (default micro-F1) on training "
                           "scores (Mulan's OneThreshold)"))
