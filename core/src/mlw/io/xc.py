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
from mlw.files import atomic_write
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
    C.ERR_INDEX_RANGE: "{what} index {tok} out of range (the header declares {limit})",
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
            line = 2
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


def _error(err: np.ndarray, chunk: bytes, path: Path, n_features: int, n_labels: int) -> None:
    code, line, s, e, extra = (int(v) for v in err)
    tok = decode(chunk[s:e])[:40]
    what = {1: "label", 2: "feature"}.get(extra, "entry")
    limit = f"{n_labels} labels" if extra == 1 else f"{n_features} features"
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


def _load_xc(path: Path, *, name: str | None, chunk_bytes: int) -> Dataset:
    if not isinstance(chunk_bytes, int) or isinstance(chunk_bytes, bool) or chunk_bytes < 1:
        raise ValueError(f"chunk_bytes must be a positive integer, got {chunk_bytes!r}")
    n, d, L, header_len = _read_header(path)
    check_columns(path, d, "the header declares features", line=1)
    check_columns(path, L, "the header declares labels", line=1)
    if max(d, L) > _MAX_INDEX:
        raise DataFormatError(path, 1, f"the header declares {max(d, L):,} columns; indices "
                                       f"are 32-bit (at most {_MAX_INDEX:,})")
    rows = n_lab = n_feat = 0
    for chunk, _ in _chunks(path, header_len, chunk_bytes):
        r, lab, feat = XK.xc_count(np.frombuffer(chunk, dtype=np.uint8))
        rows, n_lab, n_feat = rows + r, n_lab + lab, n_feat + feat
    if rows < n:
        raise DataFormatError(path, None, f"the header declares {n} instances but the file "
                                          f"has only {rows} rows")
    # n <= rows here: the file itself bounds every allocation below (names: d + L)
    check_memory(path, 16.0 * (n + 1) + 12.0 * n_feat + 4.0 * n_lab + 60.0 * (d + L),
                 f"{n:,} rows with {n_feat:,} feature and {n_lab:,} label entries "
                 f"({d:,} features, {L:,} labels)")
    x_indptr = np.zeros(n + 1, dtype=np.int64)
    y_indptr = np.zeros(n + 1, dtype=np.int64)
    # the counts include any (blank) lines beyond the header's rows: an upper bound
    x_idx = np.empty(n_feat, dtype=np.int32)
    x_val = np.empty(n_feat, dtype=np.float64)
    y_idx = np.empty(n_lab, dtype=np.int32)
    err = np.zeros(5, dtype=np.int64)
    row = px = py = 0
    for chunk, first_line in _chunks(path, header_len, chunk_bytes):
        buf = np.frombuffer(chunk, dtype=np.uint8)
        px0 = px
        row, px, py, n_fb = XK.xc_fill(buf, first_line, d, L, row, px, py, x_indptr, x_idx,
                                       x_val, y_indptr, y_idx, err)
        if err[0] != C.ERR_OK:
            _error(err, chunk, path, d, L)
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
    X = sp.csr_matrix((x_val, x_idx, x_indptr), shape=(n, d))
    Y = sp.csr_matrix((np.ones(n_lab, dtype=np.uint8), y_idx, y_indptr), shape=(n, L))
    for M, what in ((X, "feature"), (Y, "label")):
        _check_no_duplicates(M, path, what)
    X.eliminate_zeros()
    provenance: dict[str, Any] = {"path": str(path), "format": "xc",
                                  "header": [n, d, L], "dropped": [], "warnings": []}
    return Dataset(X, Y, [f"f{j}" for j in range(d)], [f"label_{j}" for j in range(L)],
                   name or base_name(path), provenance)


def _check_no_duplicates(M: sp.csr_matrix, path: Path, what: str) -> None:
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
        raise DataFormatError(path, row + 2, f"instance {row} (0-based) "
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
    """Write ``dataset`` in the XC text format, atomically (:mod:`mlw.files`)."""
    path = Path(path)
    X = sp.csr_matrix(dataset.X)
    Y = sp.csr_matrix(dataset.Y)
    n, d = X.shape
    with atomic_write(path, "w", encoding="ascii") as fh:
        fh.write(f"{n} {d} {Y.shape[1]}\n")
        for i in range(n):
            labs = ",".join(str(j) for j in Y.indices[Y.indptr[i]:Y.indptr[i + 1]])
            feats = " ".join(f"{j}:{v!r}" for j, v in
                             zip(X.indices[X.indptr[i]:X.indptr[i + 1]].tolist(),
                                 X.data[X.indptr[i]:X.indptr[i + 1]].tolist(), strict=True))
            fh.write(f"{labs} {feats}".rstrip() + "\n")
