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
                           "scores; top label if none passes, unless the training data has empty "
                           "label sets (LCIF)"))
    register(ThresholdSpec("one_threshold", "mlw.thresholds:OneThreshold",
                           "one cut-off maximising a metric (default micro-F1) on training "
                           "scores (Mulan's OneThreshold)"))
    register(ThresholdSpec("pcut_per_label", "mlw.thresholds:PCutPerLabel",
                           "a cut-off per label matching each label's training frequency "
                           "on the scored set (MEKA's PCutL)"))
    register(ThresholdSpec("scut", "mlw.thresholds:SCut",
                           "a cut-off per label maximising that label's F-beta on training "
                           "scores (Yang 2001)"))
    register(ThresholdSpec("fixed_per_label", "mlw.thresholds:FixedPerLabel",
                           "given cut-offs, one per label (a list, or a file of numbers)"))
    register(ThresholdSpec("rcut", "mlw.thresholds:RCut",
                           "the k top-scoring labels of every instance (k: the training "
                           "cardinality, rounded; Yang 2001)"))
    register(ThresholdSpec("metalabeler", "mlw.thresholds:MetaLabeler",
                           "each instance's number of labels predicted from its scores by "
                           "ridge regression, then its top-scoring labels (Tang et al. "
                           "2009)"))
