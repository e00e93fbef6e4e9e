"""Internal plugin: the core's dataset loaders, registered through the same hook as any
third-party format (see :mod:`mlw.io`)."""

from __future__ import annotations

from collections.abc import Callable

from mlw.hookspecs import hookimpl
from mlw.registry import LoaderSpec


@hookimpl
def mlw_register_loaders(register: Callable[[LoaderSpec], None]) -> None:
    from mlw.io.arff import load_arff, sniff_arff
    from mlw.io.svmlight import load_svmlight, sniff_svmlight
    from mlw.io.tabular import load_csv, load_parquet, sniff_parquet
    from mlw.io.xc import load_xc, sniff_xc

    register(LoaderSpec(
        name="arff",
        suffixes=(".arff",),
        load=load_arff,
        description="ARFF, dense or sparse: Mulan (labels from NAME.xml) or MEKA "
                    "(-C N in the relation name)",
        sniff=sniff_arff,
    ))
    register(LoaderSpec(
        name="xc",
        suffixes=(".xc",),
        load=load_xc,
        description="Extreme Classification Repository text: header 'n d L', rows "
                    "'l1,l2 f:v f:v' (streamed into CSR)",
        sniff=sniff_xc,
    ))
    register(LoaderSpec(
        name="svmlight",
        suffixes=(".svm", ".libsvm", ".svmlight"),
        load=load_svmlight,
        description="svmlight / LIBSVM multi-label rows 'l1,l2 f:v f:v' (LibMultiLabel, "
                    "napkinXC, omikuji; also .txt, by content), with or without the XC "
                    "header, zero- or one-based (streamed into CSR)",
        sniff=sniff_svmlight,
    ))
    register(LoaderSpec(
        name="csv",
        suffixes=(".csv", ".tsv"),
        load=load_csv,
        description="CSV with a header row, through polars; label columns given by "
                    "label_columns= or n_labels=",
    ))
    register(LoaderSpec(
        name="parquet",
        suffixes=(".parquet", ".pq"),
        load=load_parquet,
        description="Parquet through polars; label columns given by label_columns= or "
                    "n_labels=",
        sniff=sniff_parquet,
    ))
