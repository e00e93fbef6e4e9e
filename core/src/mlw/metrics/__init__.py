"""Multi-label evaluation metrics.

Metrics are registered through the ``mlw_register_metrics`` hook (the core's own in
:mod:`mlw._builtin.metrics`). Each receives an :class:`EvalContext`, which validates
the inputs once and caches the per-instance and per-label confusion counts, so that
computing every label-set metric together costs one pass over the label matrices.
"""

from mlw.metrics.context import EvalContext

__all__ = ["EvalContext"]
