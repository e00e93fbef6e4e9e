"""Internal plugin: the core's dataset loaders (filled in by mlw.io)."""

from __future__ import annotations

from collections.abc import Callable

from mlw.hookspecs import hookimpl
from mlw.registry import LoaderSpec


@hookimpl
def mlw_register_loaders(register: Callable[[LoaderSpec], None]) -> None:
    pass
