"""CSV and Parquet through polars; the user names the label columns.

Label columns: ``label_columns=[...]`` (in that order) or ``n_labels=N`` (the first N
columns, or with ``-N`` the last N, MEKA's convention). Every other column is a
feature:

* numeric columns -> float64 (null -> NaN); boolean -> 0/1;
* a text column whose values are mostly numbers is numeric: its other values must be
  missing markers (empty, ``?``, ``NA``, ``null``, ... -> NaN); any other text in it is
  an error naming the line and the column (a typo must not silently turn a numeric
  feature into an identifier that is dropped); ``categorical=[names]`` keeps such
  columns as text;
* text/categorical columns follow the ARFF nominal policy over their sorted distinct
  values: two values -> one 0/1 column (the value reading as true is 1, else the second
  in sorted order), three or more -> one-hot ``name=value`` columns, identifier-like
  ones (more than 20 distinct values and more than half the rows) dropped with a
  warning; null -> NaN;
* other types (dates, binary, nested columns: lists, structs, arrays) are dropped with
  a warning naming the column and its type.

Labels must be 0/1 (or boolean) without nulls; the error names the column and the
line (CSV: data row + 1 for the header). X and Y are dense.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mlw.dataset import Dataset
from mlw.io._common import DataFormatError, DatasetWarning, base_name, read_bytes
from mlw.io._limits import LimitError, check_columns, check_memory, get_limits, guarded
from mlw.io._parquet_pages import check_parquet
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
                     f"or n_labels=N (mlw fit: --labels NAME,... or --n-labels N)")


def frame_to_dataset(df: Any, path: Path, *, fmt: str, n_labels: int | None = None,
                     label_columns: Sequence[str] | None = None, line_offset: int = 2,
                     drop_identifiers: bool = True, name: str | None = None,
                     categorical: Sequence[str] | None = None) -> Dataset:
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
    limits = get_limits()
    blocks: list[np.ndarray] = []
    feature_names: list[str] = []
    dropped: list[dict[str, str]] = []
    one_hot: list[str] = []
    schema: list[dict[str, Any]] = []
    label_set = set(labels)
    categorical_set = set(categorical or ())
    unknown = sorted(categorical_set - set(columns))
    if unknown:
        raise ValueError(f"categorical names {unknown[0]!r}, which is not a column of "
                         f"{path.name}")
    n_cols = 0

    def add(block: np.ndarray, names: list[str], entry: dict[str, Any]) -> None:
        blocks.append(block)
        feature_names.extend(names)
        schema.append(entry)

    for col in columns:
        if col in label_set:
            continue
        s = df.get_column(col)
        width = 1
        strs = None
        if not _readable_type(s.dtype):
            kind = "nested column type" if s.dtype.is_nested() else "column type"
            dropped.append({"attribute": col, "reason": f"unsupported {kind} {s.dtype}"})
            schema.append({"name": col, "encoding": "dropped"})
            continue
        if s.dtype in (pl.Utf8, pl.Categorical) or isinstance(s.dtype, pl.Enum):
            strs = s.cast(pl.Utf8)
            if col not in categorical_set:
                numbers = _numeric_text(strs, path, col, line_offset)
                if numbers is not None:
                    s, strs = numbers, None
            if strs is not None:
                values = sorted(strs.drop_nulls().unique().to_list())
                width = len(values) if len(values) > 2 else 1
        n_cols += width
        check_columns(path, n_cols, "features after one-hot expansion")
        check_memory(path, 8.0 * n * n_cols, f"a dense X of {n:,} rows x {n_cols:,} columns")
        if s.dtype == pl.Null or s.null_count() == n:  # no value at all (or no row)
            add(np.full((n, 1), np.nan), [col], {"name": col, "encoding": "numeric"})
        elif s.dtype == pl.Boolean or s.dtype.is_numeric():
            values_f = s.cast(pl.Float64).fill_null(np.nan).to_numpy()
            infinite = np.flatnonzero(np.isinf(values_f))
            if infinite.size:
                row = int(infinite[0])
                where = f"data row {row + 1}" if line_offset else f"row {row} (0-based)"
                raise DataFormatError(path, row + line_offset if line_offset else None,
                                      f"column {col!r}, {where}: {values_f[row]} is not a "
                                      f"finite number (too large for a float64, or 'inf')")
            add(values_f.reshape(-1, 1), [col], {"name": col, "encoding": "numeric"})
        else:  # text
            missing = strs.is_null().to_numpy()
            if drop_identifiers and len(values) > IDENTIFIER_MIN_VALUES and len(values) > n / 2:
                n_cols -= width
                dropped.append({"attribute": col, "reason": f"identifier-like text column "
                                                            f"({len(values)} distinct values in "
                                                            f"{n} rows)"})
                schema.append({"name": col, "encoding": "dropped"})
                continue
            if len(values) > limits.max_onehot:
                raise LimitError(path, None, f"text column {col!r} has {len(values):,} distinct "
                                             f"values, more than the {limits.max_onehot:,} "
                                             f"one-hot columns one column may expand to "
                                             f"({limits.advice('max_onehot')})")
            codes = np.searchsorted(np.array(values, dtype=object),
                                    strs.fill_null(values[0] if values else "").to_numpy())
            if len(values) <= 2:
                one = binary_one_index(values) if len(values) == 2 else 1
                col_v = (codes == one).astype(np.float64)
                col_v[missing] = np.nan
                add(col_v.reshape(-1, 1), [col],
                    {"name": col, "encoding": "binary", "values": values,
                     "one": values[one] if one < len(values) else None})
            else:
                block = np.zeros((n, len(values)), dtype=np.float64)
                block[np.arange(n), codes] = 1.0
                block[missing] = np.nan
                add(block, [f"{col}={v}" for v in values],
                    {"name": col, "encoding": "onehot", "values": values})
                one_hot.append(col)
    X = np.hstack(blocks) if blocks else np.zeros((n, 0), dtype=np.float64)
    warn = [f"dropped column {d['attribute']!r}: {d['reason']}" for d in dropped]
    for w in warn:
        warnings.warn(f"{path.name}: {w}", DatasetWarning, stacklevel=3)
    provenance = {"path": str(path), "format": fmt, "label_source": "label_columns"
                  if label_columns is not None else "n_labels", "dropped": dropped,
                  "one_hot": one_hot, "missing_values": int(np.isnan(X).sum()),
                  "warnings": warn, "schema": schema}
    return Dataset(X, Y, feature_names, labels, name or base_name(path), provenance)


def _readable_type(dtype: Any) -> bool:
    """Numbers, booleans, text, categories and all-null columns become features; any
    other type (lists, structs, arrays, dates, binary) is dropped with a warning."""
    import polars as pl

    return dtype == pl.Null or dtype == pl.Boolean or dtype.is_numeric() or \
        dtype in (pl.Utf8, pl.Categorical) or isinstance(dtype, pl.Enum)


#: Texts read as a missing value in a column whose other values are numbers.
MISSING_MARKERS = ("", "?", "NA", "N/A", "n/a", "NaN", "nan", "null", "NULL", "None", "-")


def _numeric_text(strs: Any, path: Path, col: str, line_offset: int) -> Any:
    """A text column whose values are mostly numbers: the numbers as Float64 (missing
    markers -> null), or an error naming the first value that is not a number. ``None``
    when the column is text (no more numbers than other values)."""
    import polars as pl

    stripped = strs.str.strip_chars()
    marker = stripped.is_in(list(MISSING_MARKERS)).fill_null(True)
    numbers = stripped.cast(pl.Float64, strict=False)
    is_number = numbers.is_not_null()
    n_numbers = int(is_number.sum())
    text = (~marker & ~is_number).to_numpy()
    n_text = int(text.sum())
    if n_numbers == 0 or n_numbers <= n_text:
        return None
    if n_text:
        row = int(np.flatnonzero(text)[0])
        where = f"data row {row + 1}" if line_offset else f"row {row} (0-based)"
        raise DataFormatError(path, row + line_offset if line_offset else None,
                              f"column {col!r}, {where}: {strs[row]!r} is not a number, "
                              f"though {n_numbers} of the column's values are (a typo? mark a "
                              f"missing value as empty, ?, NA or null; or pass "
                              f"categorical=[{col!r}] if the column is text)")
    return numbers


#: The start of what Rust's default panic hook writes ("\nthread 'x' (123) panicked at").
_PANIC_LINE = re.compile(rb"^\n?thread '[^'\n]*'(?: \(\d+\))? panicked at ", re.MULTILINE)


@contextlib.contextmanager
def rust_panic_text_dropped(*, survive_abort: bool = True) -> Iterator[None]:
    """Run a polars call with fd 2 filtered: what arrives is passed on to the real
    stderr up to the first Rust panic message. A panic inside polars is raised in
    Python as a ``PanicException`` (which we turn into a one-line error), but Rust's
    panic hook has already written the message, and with ``RUST_BACKTRACE=1`` a whole
    backtrace, to fd 2 (not through ``sys.stderr``): without this, bad input gets many
    lines on stderr. Anything else written meanwhile (warnings, other threads) is kept.

    With ``survive_abort`` (for users' files), fd 2 is a pipe to a small forked
    forwarding process, so what native code writes just before it aborts the process
    (``memory allocation of N bytes failed``) still reaches stderr: the forwarder
    outlives it. Without it (files mlw wrote itself, read often: a results store's
    parts), fd 2 is a temporary file, filtered when the call returns (a fork costs a
    few milliseconds per call)."""
    with contextlib.suppress(AttributeError, ValueError, OSError):
        sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:           # no fd 2 (a daemon): nothing to protect
        yield
        return
    pid = None
    try:
        if survive_abort:
            read_end, write_end = os.pipe()
            pid = os.fork()
        else:
            import tempfile

            write_end = os.dup((tmp := tempfile.TemporaryFile()).fileno())
            tmp.close()
            read_end = os.dup(write_end)
    except OSError:  # pragma: no cover - out of processes or files: leave fd 2 alone
        os.close(saved)
        yield
        return
    if pid == 0:  # the forwarder: only system calls, then _exit
        code = 0
        try:
            os.close(write_end)
            _forward(read_end, saved)
        except BaseException:  # noqa: BLE001 - nothing may escape a forked child
            code = 1
        finally:
            os._exit(code)
    if pid is not None:
        os.close(read_end)
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        yield
    finally:
        with contextlib.suppress(AttributeError, ValueError, OSError):
            sys.stderr.flush()
        os.dup2(saved, 2)  # with a pipe, its last writer is gone: the forwarder ends
        if pid is not None:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)
        else:
            with contextlib.suppress(OSError):
                os.lseek(read_end, 0, os.SEEK_SET)
                _forward(read_end, 2)
            os.close(read_end)
        os.close(saved)


#: What the forwarder keeps of a panic-free stream (a runaway writer cannot fill memory).
_FORWARD_MAX = 1 << 20


def _forward(read_end: int, out: int) -> None:
    """Copy ``read_end`` to ``out`` until end of input or a Rust panic message; what
    follows a panic is read and dropped. Lines are passed on as they complete, so a
    line written just before the writer dies is never lost."""
    pending = b""
    dropping = False
    while True:
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        if dropping:
            continue
        pending += chunk
        panic = _PANIC_LINE.search(pending)
        if panic:
            if panic.start():
                os.write(out, pending[:panic.start()])
            pending, dropping = b"", True
            continue
        cut = pending.rfind(b"\n") + 1  # a panic line starts after a newline
        if cut:
            os.write(out, pending[:cut])
            pending = pending[cut:]
        if len(pending) > _FORWARD_MAX:
            os.write(out, pending)
            pending = b""
    if pending and not dropping:
        os.write(out, pending)


def _polars_failures() -> tuple[type[BaseException], ...]:
    """What a polars read raises on bad input (``PanicException`` is a BaseException)."""
    import polars as pl

    return (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError, ValueError,
            OverflowError)


@guarded
def load_csv(path: str | Path, *, n_labels: int | None = None,
             label_columns: Sequence[str] | None = None, separator: str | None = None,
             drop_identifiers: bool = True, name: str | None = None,
             categorical: Sequence[str] | None = None) -> Dataset:
    """Load a CSV file with a header row (optionally .gz/.bz2) through polars.

    ``separator`` defaults to a tab for ``.tsv`` files and a comma otherwise. A text
    column whose values are mostly numbers is numeric: its other values must be missing
    markers (:data:`MISSING_MARKERS`), and any other text is an error naming the line and
    the column (a typo must not turn a feature into text). ``categorical=[names]`` reads
    such columns as text instead.
    """
    import polars as pl

    path = Path(path)
    raw = read_bytes(path)
    if separator is None:
        separator = "\t" if path.name.lower().split(".")[1:2] == ["tsv"] else ","
    if not isinstance(separator, str) or len(separator.encode("utf-8")) != 1:
        raise ValueError(f"separator must be a single one-byte character, got {separator!r}")
    _check_header(path, raw, separator)
    try:
        with rust_panic_text_dropped():
            df = pl.read_csv(raw, separator=separator, infer_schema_length=None)
    except _polars_failures() as exc:
        raise DataFormatError(path, None, f"cannot read as CSV: {_first_line(exc)}") from None
    return frame_to_dataset(df, path, fmt="csv", n_labels=n_labels, label_columns=label_columns,
                            line_offset=2, drop_identifiers=drop_identifiers, name=name,
                            categorical=categorical)


#: Memory polars' CSV reader takes per column of the header, whatever the rows (about
#: 0.9 KiB measured on a one-row file of a million columns).
CSV_BYTES_PER_COLUMN = 1024


def _check_header(path: Path, raw: bytes, separator: str) -> None:
    """Refuse a header with more columns than the limits allow before polars sees it:
    polars cannot fail an allocation gracefully (it aborts the process)."""
    end = raw.find(b"\n")
    header = raw if end < 0 else raw[:end]
    n = header.count(separator.encode("utf-8")) + 1  # quoted separators: an upper bound
    check_columns(path, n, "columns in the header", line=1)
    check_memory(path, CSV_BYTES_PER_COLUMN * float(n),
                 f"parsing a header of {n:,} columns")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def read_parquet_frame(path: str | Path, *, columns_only: bool = False,
                       survive_abort: bool = True) -> Any:
    """The one way the core reads a Parquet file through polars: its declared counts
    and sizes checked first (:func:`~mlw.io._parquet_pages.check_parquet`: polars
    trusts them, and a corrupt one can make it abort the process), the name read as a
    name (polars would take ``[``, ``*`` or ``?`` in it for a glob pattern), the table's
    columns and size within the limits before it is decompressed (the row and column
    counts come from the metadata), and Rust's panic text dropped. Returns the
    ``polars.DataFrame``, or only its column names with ``columns_only``; raises
    :class:`DataFormatError` (one line) for anything polars cannot read, and
    ``FileNotFoundError`` / ``PermissionError`` as they are. ``survive_abort``: see
    :func:`rust_panic_text_dropped`."""
    import polars as pl

    path = Path(path)
    check_parquet(path)
    try:
        with rust_panic_text_dropped(survive_abort=survive_abort):
            lazy = pl.scan_parquet(path, glob=False)
            names = list(lazy.collect_schema())
            if columns_only:
                return names
            n_rows = int(lazy.select(pl.len()).collect().item())
            check_columns(path, len(names), "columns")
            check_memory(path, 8.0 * n_rows * len(names),
                         f"a table of {n_rows:,} rows x {len(names):,} columns")
            return pl.read_parquet(path, glob=False)
    except _polars_failures() as exc:
        if isinstance(exc, (FileNotFoundError, PermissionError, DataFormatError)):
            raise
        raise DataFormatError(path, None, f"cannot read as Parquet: {_first_line(exc)}") \
            from None


def parquet_columns(path: str | Path) -> list[str]:
    """The column names of a Parquet file, from its metadata
    (:func:`read_parquet_frame`'s checks); bad metadata is a one-line
    :class:`DataFormatError`."""
    return read_parquet_frame(path, columns_only=True)


@guarded
def load_parquet(path: str | Path, *, n_labels: int | None = None,
                 label_columns: Sequence[str] | None = None, drop_identifiers: bool = True,
                 name: str | None = None, categorical: Sequence[str] | None = None) -> Dataset:
    """Load a Parquet file through polars (row numbers in errors are 0-based), by
    :func:`read_parquet_frame`: a file whose table would not fit ``max_memory`` is
    refused before it is decompressed.
    """
    path = Path(path)
    df = read_parquet_frame(path)
    return frame_to_dataset(df, path, fmt="parquet", n_labels=n_labels,
                            label_columns=label_columns, line_offset=0,
                            drop_identifiers=drop_identifiers, name=name,
                            categorical=categorical)


def sniff_parquet(head: bytes) -> bool:
    return head[:4] == b"PAR1"
