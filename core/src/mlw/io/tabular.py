"""CSV and Parquet through polars; the user names the label columns.

Label columns: ``label_columns=[...]`` (in that order) or ``n_labels=N`` (the first N
columns, or with ``-N`` the last N, MEKA's convention). Every other column is a
feature:

* numeric columns -> float64 (null -> NaN); boolean -> 0/1;
* text/categorical columns follow the ARFF nominal policy over their sorted distinct
  values: two values -> one 0/1 column (the value reading as true is 1, else the second
  in sorted order), three or more -> one-hot ``name=value`` columns, identifier-like
  ones (more than 20 distinct values and more than half the rows) dropped with a
  warning; null -> NaN;
* other types (dates, lists, ...) are dropped with a warning.

Labels must be 0/1 (or boolean) without nulls; the error names the column and the
line (CSV: data row + 1 for the header). X and Y are dense.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mlw.dataset import Dataset
from mlw.io._common import DataFormatError, DatasetWarning, base_name, read_bytes
from mlw.io.arff import IDENTIFIER_MIN_VALUES, binary_one_index


def _label_names(columns: list[str], path: Path, n_labels: int | None,
                 label_columns: Sequence[str] | None) -> list[str]:
    if label_columns is not None:
        missing = [c for c in label_columns if c not in columns]
        if missing:
            raise DataFormatError(path, 1, f"label column {missing[0]!r} is not a column "
                                           f"(columns: {', '.join(columns[:10])}"
                                           f"{', ...' if len(columns) > 10 else ''})")
        if len(set(label_columns)) != len(label_columns):
            raise ValueError("label_columns names a column twice")
        return list(label_columns)
    if n_labels is not None:
        c = int(n_labels)
        if c == 0 or abs(c) >= len(columns) + 1:
            raise DataFormatError(path, 1, f"n_labels={c} but the file has {len(columns)} "
                                           f"columns")
        return columns[:c] if c > 0 else columns[c:]
    raise ValueError(f"{path.name}: say which columns are labels: pass label_columns=[...] "
                     f"or n_labels=N")


def frame_to_dataset(df: Any, path: Path, *, fmt: str, n_labels: int | None = None,
                     label_columns: Sequence[str] | None = None, line_offset: int = 2,
                     drop_identifiers: bool = True, name: str | None = None) -> Dataset:
    """A polars DataFrame -> Dataset, by the policies of this module."""
    import polars as pl

    columns = list(df.columns)
    labels = _label_names(columns, path, n_labels, label_columns)
    n = df.height
    Y = np.zeros((n, len(labels)), dtype=np.uint8)
    for j, col in enumerate(labels):
        s = df.get_column(col)
        if n == 0:
            continue
        if s.null_count():
            row = int(np.flatnonzero(s.is_null().to_numpy())[0])
            raise DataFormatError(path, row + line_offset, f"missing value for label {col!r}")
        if s.dtype == pl.Boolean:
            Y[:, j] = s.to_numpy().astype(np.uint8)
            continue
        if not s.dtype.is_numeric():
            raise DataFormatError(path, None, f"label column {col!r} has type {s.dtype}; "
                                              f"labels must be 0/1")
        v = s.cast(pl.Float64).to_numpy()
        bad = np.flatnonzero((v != 0) & (v != 1))
        if bad.size:
            raise DataFormatError(path, int(bad[0]) + line_offset,
                                  f"label {col!r} has value {v[bad[0]]:g}; labels must be 0 "
                                  f"or 1")
        Y[:, j] = v.astype(np.uint8)
    blocks: list[np.ndarray] = []
    feature_names: list[str] = []
    dropped: list[dict[str, str]] = []
    one_hot: list[str] = []
    label_set = set(labels)
    for col in columns:
        if col in label_set:
            continue
        s = df.get_column(col)
        if s.dtype == pl.Null or s.null_count() == n:  # no value at all (or no row)
            blocks.append(np.full((n, 1), np.nan))
            feature_names.append(col)
        elif s.dtype == pl.Boolean:
            blocks.append(s.cast(pl.Float64).fill_null(np.nan).to_numpy().reshape(-1, 1))
            feature_names.append(col)
        elif s.dtype.is_numeric():
            blocks.append(s.cast(pl.Float64).fill_null(np.nan).to_numpy().reshape(-1, 1))
            feature_names.append(col)
        elif s.dtype in (pl.Utf8, pl.Categorical) or isinstance(s.dtype, pl.Enum):
            strs = s.cast(pl.Utf8)
            values = sorted(strs.drop_nulls().unique().to_list())
            missing = strs.is_null().to_numpy()
            if drop_identifiers and len(values) > IDENTIFIER_MIN_VALUES and len(values) > n / 2:
                dropped.append({"attribute": col, "reason": f"identifier-like text column "
                                                            f"({len(values)} distinct values in "
                                                            f"{n} rows)"})
                continue
            codes = np.searchsorted(np.array(values, dtype=object),
                                    strs.fill_null(values[0] if values else "").to_numpy())
            if len(values) <= 2:
                one = binary_one_index(values) if len(values) == 2 else 1
                col_v = (codes == one).astype(np.float64)
                col_v[missing] = np.nan
                blocks.append(col_v.reshape(-1, 1))
                feature_names.append(col)
            else:
                block = np.zeros((n, len(values)), dtype=np.float64)
                block[np.arange(n), codes] = 1.0
                block[missing] = np.nan
                blocks.append(block)
                feature_names.extend(f"{col}={v}" for v in values)
                one_hot.append(col)
        else:
            dropped.append({"attribute": col, "reason": f"unsupported column type {s.dtype}"})
    X = np.hstack(blocks) if blocks else np.zeros((n, 0), dtype=np.float64)
    warn = [f"dropped column {d['attribute']!r}: {d['reason']}" for d in dropped]
    for w in warn:
        warnings.warn(f"{path.name}: {w}", DatasetWarning, stacklevel=3)
    provenance = {"path": str(path), "format": fmt, "label_source": "label_columns"
                  if label_columns is not None else "n_labels", "dropped": dropped,
                  "one_hot": one_hot, "missing_values": int(np.isnan(X).sum()),
                  "warnings": warn}
    return Dataset(X, Y, feature_names, labels, name or base_name(path), provenance)


def load_csv(path: str | Path, *, n_labels: int | None = None,
             label_columns: Sequence[str] | None = None, separator: str | None = None,
             drop_identifiers: bool = True, name: str | None = None) -> Dataset:
    """Load a CSV file with a header row (optionally .gz/.bz2) through polars.

    ``separator`` defaults to a tab for ``.tsv`` files and a comma otherwise.
    """
    import polars as pl

    path = Path(path)
    raw = read_bytes(path)
    if separator is None:
        separator = "\t" if path.name.lower().split(".")[1:2] == ["tsv"] else ","
    try:
        df = pl.read_csv(raw, separator=separator, infer_schema_length=None)
    except (pl.exceptions.PolarsError, ValueError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataFormatError(path, None, f"cannot read as CSV: {msg}") from None
    return frame_to_dataset(df, path, fmt="csv", n_labels=n_labels, label_columns=label_columns,
                            line_offset=2, drop_identifiers=drop_identifiers, name=name)


def load_parquet(path: str | Path, *, n_labels: int | None = None,
                 label_columns: Sequence[str] | None = None, drop_identifiers: bool = True,
                 name: str | None = None) -> Dataset:
    """Load a Parquet file through polars (row numbers in errors are 0-based)."""
    import polars as pl

    path = Path(path)
    try:
        df = pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataFormatError(path, None, f"cannot read as Parquet: {msg}") from None
    return frame_to_dataset(df, path, fmt="parquet", n_labels=n_labels,
                            label_columns=label_columns, line_offset=0,
                            drop_identifiers=drop_identifiers, name=name)


def sniff_parquet(head: bytes) -> bool:
    return head[:4] == b"PAR1"
