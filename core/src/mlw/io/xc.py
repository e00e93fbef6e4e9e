"""The Extreme Classification Repository's text format (Bhatia et al.), streamed.

::

    3 5 4                  <- header: instances, features, labels
    0,2 0:0.5 3:1.25       <- labels 0 and 2; feature 0 = 0.5, feature 3 = 1.25
     1:2                   <- no label (the row starts with a space)
    3 4:1e-3

Indices are 0-based. Every line is an instance (a blank line has no label and no
feature); blank lines after the declared number of rows are ignored. The file is read
twice in chunks of whole lines (first counting, then filling), so memory holds the final
CSR arrays and one chunk, never the whole text. ``X`` is float64 CSR and ``Y`` uint8 CSR.
"""

from __future__ import annotations

import lzma
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw._lazy import LazyModule
from mlw.dataset import Dataset
from mlw.io import _codes as C  # noqa: E402 - constants, no numba
from mlw.io._common import (
    DataFormatError,
    base_name,
    check_expansion,
    decode,
    number_token,
    open_binary,
    parse_fallback_numbers,
    strip_compression,
)
from mlw.io._limits import check_columns, check_memory, memory_guard

# numba kernels, imported (and compiled or loaded from cache) on first use
K = LazyModule("mlw.io._kernels")
XK = LazyModule("mlw.io._xc_kernels")

CHUNK_BYTES = 1 << 22
_HEADER = re.compile(rb"^\s*(\d{1,18})\s+(\d{1,18})\s+(\d{1,18})\s*$")
#: Feature and label indices are stored as int32.
_MAX_INDEX = 2**31 - 1

_XC_ERRORS = {
    C.ERR_ROW_COUNT: "more rows than the {extra} the header declares",
    C.ERR_INDEX_RANGE: "{what} index {tok} out of range ({limit})",
    C.ERR_XC_SYNTAX: "malformed {what} {tok!r}: expected {expected}",
    C.ERR_NUMBER: "cannot parse {tok!r} as a number",
}


def _chunks(path: Path, skip: int, chunk: int):
    """(bytes of whole lines, number of the first line) after ``skip`` header bytes.

    A compressed file is checked against ``max_ratio`` as it streams
    (:func:`mlw.io._common.check_expansion`); a damaged one is a :class:`DataFormatError`.
    """
    compressed = path.stat().st_size if strip_compression(path)[1] else None
    try:
        with open_binary(path) as fh:
            fh.read(skip)
            total = skip
            rest = b""
            line = 2 if skip else 1  # the header, when skipped, is line 1
            while True:
                block = fh.read(chunk)
                if compressed is not None:
                    total += len(block)
                    check_expansion(path, total, compressed, in_memory=False)
                if not block:
                    if rest:
                        yield rest + b"\n", line
                    return
                block = rest + block
                cut = block.rfind(b"\n")
                if cut < 0:
                    rest = block
                    continue
                whole, rest = block[:cut + 1], block[cut + 1:]
                yield whole, line
                line += whole.count(b"\n")
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        if isinstance(exc, (FileNotFoundError, PermissionError)):
            raise
        raise DataFormatError(path, None, f"cannot read the file ({exc})") from None


def _read_header(path: Path) -> tuple[int, int, int, int]:
    try:
        with open_binary(path) as fh:
            first = fh.readline(1 << 16)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        if isinstance(exc, (FileNotFoundError, PermissionError)):
            raise
        raise DataFormatError(path, None, f"cannot read the file ({exc})") from None
    m = _HEADER.match(first.rstrip(b"\r\n"))
    if not m:
        raise DataFormatError(path, 1, f"expected the header 'instances features labels', "
                                       f"found {decode(first[:60]).strip()!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), len(first)


def _error(err: np.ndarray, chunk: bytes, path: Path, n_features: int, n_labels: int,
           declared: str = "the header declares") -> None:
    code, line, s, e, extra = (int(v) for v in err)
    tok = decode(chunk[s:e])[:40]
    what = {1: "label", 2: "feature"}.get(extra, "entry")
    limit = (f"{declared} {n_labels} labels" if extra == 1
             else f"{declared} {n_features} features")
    expected = ("comma-separated label indices" if extra == 1
                else "'index:value' feature entries")
    raise DataFormatError(path, line, _XC_ERRORS[code].format(
        tok=tok, what=what, limit=limit, expected=expected, extra=extra))


def load_xc(path: str | Path, *, name: str | None = None,
            chunk_bytes: int = CHUNK_BYTES) -> Dataset:
    """Load an extreme-classification repository text file (optionally .gz/.bz2).

    Raises ``ValueError`` naming the file and line for a bad header, a malformed row,
    an index beyond the header's counts, a repeated index in a row, or a row count
    other than the header's.
    """
    path = Path(path)
    with memory_guard(path):
        return _load_xc(path, name=name, chunk_bytes=chunk_bytes)


def check_chunk_bytes(chunk_bytes: Any) -> None:
    if not isinstance(chunk_bytes, int) or isinstance(chunk_bytes, bool) or chunk_bytes < 1:
        raise ValueError(f"chunk_bytes must be a positive integer, got {chunk_bytes!r}")


def count_rows(path: Path, skip: int, chunk_bytes: int) -> tuple[int, int, int]:
    """(lines, label entries, feature entries) after ``skip`` header bytes: the first
    pass, exact for XC rows, an upper bound when comments and blank lines are skipped."""
    rows = n_lab = n_feat = 0
    for chunk, _ in _chunks(path, skip, chunk_bytes):
        r, lab, feat = XK.xc_count(np.frombuffer(chunk, dtype=np.uint8))
        rows, n_lab, n_feat = rows + r, n_lab + lab, n_feat + feat
    return rows, n_lab, n_feat


def fill_rows(path: Path, skip: int, n: int, d: int, L: int, n_lab: int, n_feat: int,
              chunk_bytes: int, *, svmlight: bool = False,
              declared: str = "the header declares") -> tuple[int, np.ndarray, np.ndarray,
                                                              np.ndarray, np.ndarray,
                                                              np.ndarray]:
    """The second pass: at most ``n`` rows parsed into CSR arrays sized by the first
    pass's counts. Returns ``(rows, x_indptr, x_idx, x_val, y_indptr, y_idx)``, the
    entry arrays cut to what was filled."""
    x_indptr = np.zeros(n + 1, dtype=np.int64)
    y_indptr = np.zeros(n + 1, dtype=np.int64)
    # the counts include any (blank) lines beyond the header's rows: an upper bound
    x_idx = np.empty(n_feat, dtype=np.int32)
    x_val = np.empty(n_feat, dtype=np.float64)
    y_idx = np.empty(n_lab, dtype=np.int32)
    err = np.zeros(5, dtype=np.int64)
    row = px = py = 0
    for chunk, first_line in _chunks(path, skip, chunk_bytes):
        buf = np.frombuffer(chunk, dtype=np.uint8)
        px0 = px
        row, px, py, n_fb = XK.xc_fill(buf, first_line, d, L, row, px, py, x_indptr, x_idx,
                                       x_val, y_indptr, y_idx, err, svmlight)
        if err[0] != C.ERR_OK:
            _error(err, chunk, path, d, L, declared)
        if n_fb:  # numbers for Python's float: negative index, byte offset as the value
            where = px0 + np.flatnonzero(x_idx[px0:px] < 0)
            offsets = x_val[where].astype(np.int64)
            x_val[where] = parse_fallback_numbers(chunk, offsets.tolist())
            overflow = np.flatnonzero(np.isinf(x_val[where]))
            if overflow.size:
                start = int(offsets[overflow[0]])
                token = decode(number_token(chunk, start))[:40]
                raise DataFormatError(path, first_line + chunk.count(b"\n", 0, start),
                                      f"{token!r} is too large for a float64")
            x_idx[where] = -x_idx[where] - 1
    return row, x_indptr, x_idx[:px], x_val[:px], y_indptr, y_idx[:py]


def csr_pair(path: Path, n: int, d: int, L: int, x_indptr: np.ndarray, x_idx: np.ndarray,
             x_val: np.ndarray, y_indptr: np.ndarray,
             y_idx: np.ndarray, *,
             first_row_line: int | None = 2) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """``X`` (float64) and ``Y`` (uint8) CSR of filled arrays, a repeated index in a row
    refused (naming its line), explicit zeros of ``X`` dropped."""
    X = sp.csr_matrix((x_val, x_idx, x_indptr[:n + 1]), shape=(n, d))
    Y = sp.csr_matrix((np.ones(y_idx.shape[0], dtype=np.uint8), y_idx, y_indptr[:n + 1]),
                      shape=(n, L))
    for M, what in ((X, "feature"), (Y, "label")):
        _check_no_duplicates(M, path, what, first_row_line)
    X.eliminate_zeros()
    return X, Y


def _load_xc(path: Path, *, name: str | None, chunk_bytes: int) -> Dataset:
    check_chunk_bytes(chunk_bytes)
    n, d, L, header_len = _read_header(path)
    check_columns(path, d, "the header declares features", line=1)
    check_columns(path, L, "the header declares labels", line=1)
    if max(d, L) > _MAX_INDEX:
        raise DataFormatError(path, 1, f"the header declares {max(d, L):,} columns; indices "
                                       f"are 32-bit (at most {_MAX_INDEX:,})")
    rows, n_lab, n_feat = count_rows(path, header_len, chunk_bytes)
    if rows < n:
        raise DataFormatError(path, None, f"the header declares {n} instances but the file "
                                          f"has only {rows} rows")
    # n <= rows here: the file itself bounds every allocation below (names: d + L)
    check_memory(path, 16.0 * (n + 1) + 12.0 * n_feat + 4.0 * n_lab + 60.0 * (d + L),
                 f"{n:,} rows with {n_feat:,} feature and {n_lab:,} label entries "
                 f"({d:,} features, {L:,} labels)")
    _, *arrays = fill_rows(path, header_len, n, d, L, n_lab, n_feat, chunk_bytes)
    X, Y = csr_pair(path, n, d, L, *arrays)
    provenance: dict[str, Any] = {"path": str(path), "format": "xc",
                                  "header": [n, d, L], "dropped": [], "warnings": []}
    return Dataset(X, Y, [f"f{j}" for j in range(d)], [f"label_{j}" for j in range(L)],
                   name or base_name(path), provenance)


def _check_no_duplicates(M: sp.csr_matrix, path: Path, what: str,
                         first_row_line: int | None = 2) -> None:
    M.sort_indices()
    idx = M.indices
    if idx.size < 2:
        return
    same = idx[1:] == idx[:-1]
    starts = np.zeros(idx.size, dtype=bool)
    starts[M.indptr[1:-1][M.indptr[1:-1] < idx.size]] = True
    dup = np.flatnonzero(same & ~starts[1:])
    if dup.size:
        row = int(np.searchsorted(M.indptr, dup[0] + 1, side="right") - 1)
        line = None if first_row_line is None else row + first_row_line
        raise DataFormatError(path, line, f"instance {row} (0-based) "
                                          f"lists {what} {int(idx[dup[0] + 1])} twice")


_ROW = re.compile(rb"^(\d+(,\d+)*)?([ \t]+\d+:\S+)*[ \t]*$|^\d+:\S+([ \t]+\d+:\S+)*[ \t]*$")


def sniff_xc(head: bytes) -> bool:
    """True when the first line is three integers and the second looks like an XC row."""
    lines = head.split(b"\n", 2)
    if not _HEADER.match(lines[0].rstrip(b"\r")):
        return False
    if len(lines) < 2 or not lines[1].strip():
        return True
    second = lines[1].rstrip(b"\r")
    return len(lines) == 2 and len(second) > 200 or bool(_ROW.match(second))


def write_xc(dataset: Dataset, path: str | Path) -> None:
    """Write ``dataset`` in the XC text format, atomically (:mod:`mlw.files`): the
    svmlight writer with the header line and zero-based indices."""
    from mlw.io.svmlight import write_svmlight

    write_svmlight(dataset, path, zero_based=True, header=True)
