"""Dataset loading: Mulan/MEKA ARFF (dense, sparse, .gz/.bz2), the extreme-classification
repository text format, CSV and Parquet, and the bundled ``emotions`` dataset.

:func:`load_dataset` (re-exported as :func:`mlw.load_dataset`) resolves a bundled name
or a path and picks the loader registered for the format (see
:mod:`mlw._builtin.loaders`; plugins can add formats through ``mlw_register_loaders``).
"""

from __future__ import annotations

from mlw.io._common import DataFormatError, DatasetWarning
from mlw.io.arff import load_arff
from mlw.io.bundled import bundled_datasets
from mlw.io.load import load_dataset
from mlw.io.mulan import find_label_xml, read_label_xml

__all__ = [
    "DataFormatError",
    "DatasetWarning",
    "bundled_datasets",
    "find_label_xml",
    "load_arff",
    "load_dataset",
    "read_label_xml",
]
