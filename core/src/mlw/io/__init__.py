"""Dataset loading: Mulan/MEKA ARFF (dense, sparse, .gz/.bz2), the extreme-classification
repository text format, svmlight / LIBSVM multi-label files, CSV and Parquet, and the
bundled ``emotions`` dataset.

:func:`load_dataset` (re-exported as :func:`mlw.load_dataset`) resolves a bundled name
or a path and picks the loader registered for the format (see
:mod:`mlw._builtin.loaders`; plugins can add formats through ``mlw_register_loaders``).
The format-specific functions below are the registered loaders themselves, plus writers
for ARFF (with a Mulan XML), XC and svmlight. See ``docs/guide/datasets.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlw.lazy import attach

#: Public name -> defining module, imported on first use (PEP 562): importing
#: ``mlw.io`` (or one of its light modules, such as ``mlw.io.bundled``) loads no
#: reader, numpy or scipy until a name is used.
_LAZY = {
    "DataFormatError": "mlw.io._common",
    "DataPlan": "mlw.io.plan",
    "DatasetNotFoundError": "mlw.io.load",
    "DatasetWarning": "mlw.io._common",
    "LimitError": "mlw.io._limits",
    "LoadLimits": "mlw.io._limits",
    "align": "mlw.io.alignment",
    "align_test": "mlw.io.alignment",
    "bundled_datasets": "mlw.io.bundled",
    "find_label_xml": "mlw.io.mulan",
    "get_limits": "mlw.io._limits",
    "limits": "mlw.io._limits",
    "load_arff": "mlw.io.arff",
    "load_csv": "mlw.io.tabular",
    "load_dataset": "mlw.io.load",
    "load_parquet": "mlw.io.tabular",
    "load_svmlight": "mlw.io.svmlight",
    "load_xc": "mlw.io.xc",
    "loads_arff": "mlw.io.arff",
    "plan_data": "mlw.io.plan",
    "read_label_xml": "mlw.io.mulan",
    "reference_of": "mlw.io.alignment",
    "set_limits": "mlw.io._limits",
    "source_files": "mlw.io._common",
    "write_arff": "mlw.io.arff_writer",
    "write_label_xml": "mlw.io.mulan",
    "write_mulan_splits": "mlw.io.arff_writer",
    "write_svmlight": "mlw.io.svmlight",
    "write_xc": "mlw.io.xc",
}

__all__ = [
    "DataFormatError",
    "DataPlan",
    "DatasetNotFoundError",
    "DatasetWarning",
    "LimitError",
    "LoadLimits",
    "align",
    "align_test",
    "bundled_datasets",
    "find_label_xml",
    "get_limits",
    "limits",
    "load_arff",
    "load_csv",
    "load_dataset",
    "load_parquet",
    "load_svmlight",
    "load_xc",
    "loads_arff",
    "plan_data",
    "read_label_xml",
    "reference_of",
    "set_limits",
    "source_files",
    "write_arff",
    "write_label_xml",
    "write_mulan_splits",
    "write_svmlight",
    "write_xc",
]


__getattr__, __dir__ = attach(__name__, _LAZY)


if TYPE_CHECKING:
    from mlw.io._common import DataFormatError, DatasetWarning, source_files
    from mlw.io._limits import LimitError, LoadLimits, get_limits, limits, set_limits
    from mlw.io.alignment import align, align_test, reference_of
    from mlw.io.arff import load_arff, loads_arff
    from mlw.io.arff_writer import write_arff, write_mulan_splits
    from mlw.io.bundled import bundled_datasets
    from mlw.io.load import DatasetNotFoundError, load_dataset
    from mlw.io.mulan import find_label_xml, read_label_xml, write_label_xml
    from mlw.io.plan import DataPlan, plan_data
    from mlw.io.svmlight import load_svmlight, write_svmlight
    from mlw.io.tabular import load_csv, load_parquet
    from mlw.io.xc import load_xc, write_xc
