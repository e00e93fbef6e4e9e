"""Internal plugin: the core's metrics (defined in :mod:`mlw.metrics`)."""

from __future__ import annotations

from collections.abc import Callable

from mlw.hookspecs import hookimpl
from mlw.registry import MetricSpec


@hookimpl
def mlw_register_metrics(register: Callable[[MetricSpec], None]) -> None:
    from mlw.metrics import BUILTIN_METRICS

    for spec in BUILTIN_METRICS:
        register(spec)
