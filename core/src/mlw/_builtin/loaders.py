"""Internal plugin: the core's dataset loaders, registered through the same hook as any
third-party format (see :mod:`mlw.io`)."""

from __future__ import annotations

from collections.abc import Callable

from mlw.hookspecs import hookimpl
from mlw.registry import LoaderSpec


@hookimpl
def mlw_register_loaders(register: Callable[[LoaderSpec], None]) -> None:
    from mlw.io.arff import load_arff, sniff_arff

    register(LoaderSpec(
        name="arff",
        suffixes=(".arff",),
        load=load_arff,
        description="ARFF, dense or sparse: Mulan (labels from NAME.xml) or MEKA "
                    "(-C N in the relation name)",
        sniff=sniff_arff,
    ))
