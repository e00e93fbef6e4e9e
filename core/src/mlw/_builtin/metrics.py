"""Internal plugin: the core's metrics (filled in by mlw.metrics)."""

from __future__ import annotations

from collections.abc import Callable

from mlw.hookspecs import hookimpl
from mlw.registry import MetricSpec


@hookimpl
def mlw_register_metrics(register: Callable[[MetricSpec], None]) -> None:
    pass
