"""Dataset loading: Mulan/MEKA ARFF (dense, sparse, .gz/.bz2), the extreme-classification
repository text format, CSV and Parquet, and the bundled ``emotions`` dataset.

:func:`load_dataset` (re-exported as :func:`mlw.load_dataset`) resolves a bundled name
or a path and picks the loader registered for the format (see
:mod:`mlw._builtin.loaders`; plugins can add formats through ``mlw_register_loaders``).
The format-specific functions below are the registered loaders themselves, plus writers
for ARFF (with a Mulan XML) and XC. See ``docs/datasets.md``.
"""

from __future__ import annotations

from mlw.io._common import DataFormatError, DatasetWarning
from mlw.io.arff import load_arff, loads_arff
from mlw.io.arff_writer import write_arff
from mlw.io.bundled import bundled_datasets
from mlw.io.load import load_dataset
from mlw.io.mulan import find_label_xml, read_label_xml, write_label_xml
from mlw.io.tabular import load_csv, load_parquet
from mlw.io.xc import load_xc, write_xc

__all__ = [
    "DataFormatError",
    "DatasetWarning",
    "bundled_datasets",
    "find_label_xml",
    "load_arff",
    "load_csv",
    "load_dataset",
    "load_parquet",
    "load_xc",
    "loads_arff",
    "read_label_xml",
    "write_arff",
    "write_label_xml",
    "write_xc",
]
