"""The svmlight / LIBSVM multi-label text format, streamed into CSR.

::

    # a comment                 <- '#' to the end of a line is a comment
    0,2 1:0.5 4:1.25            <- labels 0 and 2; feature 1 = 0.5, feature 4 = 1.25
     2:2                        <- no label (the row starts with a space)
    3 4:1e-3

This is what scikit-learn's ``dump_svmlight_file(..., multilabel=True)``, LibMultiLabel,
omikuji and napkinXC read and write (files named ``.svm``, ``.libsvm``, ``.svmlight``
or ``.txt``). Its rows are those of the Extreme Classification Repository's format
(:mod:`mlw.io.xc`), which adds a header line ``instances features labels``: a file
with that header is read as an XC file, so both conventions load through either name.
Blank lines are skipped. Feature indices are one-based (LIBSVM's convention) or
zero-based: ``zero_based="auto"`` takes a file with a feature index 0 as zero-based and
any other as one-based, as scikit-learn does. Label indices are read as they are.
Without a header, the number of features and labels is the largest index seen plus
one, unless ``n_features`` / ``n_labels`` say more (a test file read to match its
training file).

The same numba tokenizer as the XC reader parses both (:mod:`mlw.io._xc_kernels`), two
passes over chunks of whole lines, so memory holds the final CSR arrays and one chunk.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from mlw.dataset import Dataset
from mlw.files import atomic_write
from mlw.io._common import DataFormatError, base_name, read_head
from mlw.io._limits import check_columns, check_memory, memory_guard
from mlw.io.xc import (
    _HEADER,
    _MAX_INDEX,
    CHUNK_BYTES,
    _load_xc,
    check_chunk_bytes,
    count_rows,
    csr_pair,
    fill_rows,
)

ZeroBased = bool | Literal["auto"]

#: One data row: an optional label list, then ``index:value`` entries, a comment after.
_ROW = re.compile(rb"^(\d+(,\d+)*)?([ \t]+\d+:[^\s#]+)*[ \t]*(#.*)?$"
                  rb"|^\d+:[^\s#]+([ \t]+\d+:[^\s#]+)*[ \t]*(#.*)?$")


def sniff_svmlight(head: bytes) -> bool:
    """True when the first lines that are not comments or blank look like svmlight rows
    with at least one ``index:value`` entry among them (a file of bare integers is not
    claimed) and the first is not an XC header (:func:`mlw.io.xc.sniff_xc` claims
    those)."""
    lines = [ln.rstrip(b"\r") for ln in head.split(b"\n")]
    if len(head) >= 4096:
        lines = lines[:-1]  # the last line may be cut
    data = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith(b"#")][:20]
    if not data or _HEADER.match(data[0]):
        return False
    return all(_ROW.match(ln) for ln in data) and any(b":" in ln for ln in data)


def load_svmlight(path: str | Path, *, name: str | None = None,
                  zero_based: ZeroBased = "auto", n_features: int | None = None,
                  n_labels: int | None = None, chunk_bytes: int = CHUNK_BYTES) -> Dataset:
    """Load a multi-label svmlight / LIBSVM file (optionally .gz/.bz2), see the module
    documentation for the format.

    Parameters
    ----------
    path : the file
    name : the dataset's name (default: the file's base name)
    zero_based : True, False or "auto"
        Whether feature indices start at 0; "auto": zero-based when some feature index
        is 0 (a file with the XC header is zero-based, that format's convention).
    n_features, n_labels : at least this many columns (default: the largest index seen
        plus one, or the header's)

    Raises ``ValueError`` naming the file and line for a malformed row (a label that is
    not an integer, an entry that is not ``index:value``, a value that is not a
    number, a feature index 0 in a one-based file), and for a repeated index in a row.
    """
    path = Path(path)
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based must be true, false or 'auto', got {zero_based!r}")
    for what, v in (("n_features", n_features), ("n_labels", n_labels)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise ValueError(f"{what} must be a non-negative integer, got {v!r}")
    check_chunk_bytes(chunk_bytes)
    with memory_guard(path):
        first = read_head(path, 1 << 16).split(b"\n", 1)[0].rstrip(b"\r")
        if _HEADER.match(first):
            ds = _load_xc(path, name=name, chunk_bytes=chunk_bytes)
            if zero_based is False:
                raise DataFormatError(path, 1, "a file with the XC header "
                                               "'instances features labels' is zero-based")
            ds.provenance["format"] = "svmlight"
            return _widen(ds, path, n_features, n_labels)
        return _load_plain(path, name=name, zero_based=zero_based,
                           n_features=n_features, n_labels=n_labels,
                           chunk_bytes=chunk_bytes)


def _load_plain(path: Path, *, name: str | None, zero_based: ZeroBased,
                n_features: int | None, n_labels: int | None,
                chunk_bytes: int) -> Dataset:
    lines, n_lab, n_feat = count_rows(path, 0, chunk_bytes)
    check_memory(path, 16.0 * (lines + 1) + 12.0 * n_feat + 4.0 * n_lab,
                 f"{lines:,} lines with {n_feat:,} feature and {n_lab:,} label entries")
    # indices are bounded by int32 only; the columns are the largest index seen + 1
    n, x_indptr, x_idx, x_val, y_indptr, y_idx = fill_rows(
        path, 0, lines, _MAX_INDEX, _MAX_INDEX, n_lab, n_feat, chunk_bytes,
        svmlight=True, declared="indices are 32-bit:")
    one_based = zero_based is False or (zero_based == "auto" and not (x_idx == 0).any())
    if one_based and x_idx.size:
        if (x_idx == 0).any():
            row = int(np.searchsorted(x_indptr, np.flatnonzero(x_idx == 0)[0], side="right"))
            raise DataFormatError(path, None, f"instance {row - 1} (0-based) has feature "
                                              f"index 0 in a one-based file "
                                              f"(zero_based=False)")
        x_idx -= 1
    d = max(int(x_idx.max()) + 1 if x_idx.size else 0, n_features or 0)
    L = max(int(y_idx.max()) + 1 if y_idx.size else 0, n_labels or 0)
    check_columns(path, d, "features (the largest feature index)")
    check_columns(path, L, "labels (the largest label index)")
    X, Y = csr_pair(path, n, d, L, x_indptr, x_idx, x_val, y_indptr, y_idx,
                    first_row_line=None)
    provenance: dict[str, Any] = {"path": str(path), "format": "svmlight",
                                  "zero_based": not one_based, "dropped": [],
                                  "warnings": []}
    return Dataset(X, Y, [f"f{j}" for j in range(d)], [f"label_{j}" for j in range(L)],
                   name or base_name(path), provenance)


def _widen(ds: Dataset, path: Path, n_features: int | None,
           n_labels: int | None) -> Dataset:
    d, L = ds.X.shape[1], ds.Y.shape[1]
    if (n_features or 0) <= d and (n_labels or 0) <= L:
        return ds
    d2, L2 = max(d, n_features or 0), max(L, n_labels or 0)
    X = sp.csr_matrix((ds.X.data, ds.X.indices, ds.X.indptr), shape=(ds.X.shape[0], d2))
    Y = sp.csr_matrix((ds.Y.data, ds.Y.indices, ds.Y.indptr), shape=(ds.Y.shape[0], L2))
    return Dataset(X, Y, [f"f{j}" for j in range(d2)], [f"label_{j}" for j in range(L2)],
                   ds.name, ds.provenance)


def write_svmlight(dataset: Dataset, path: str | Path, *, zero_based: bool = False,
                   header: bool = False) -> None:
    """Write ``dataset`` as multi-label svmlight rows, atomically (:mod:`mlw.files`).

    ``zero_based=False`` writes one-based feature indices (LIBSVM, LibMultiLabel,
    scikit-learn's default); ``header=True`` writes the XC header line
    ``instances features labels`` first (napkinXC's and the Extreme Classification
    Repository's convention), which requires zero-based indices. Label indices are
    written as they are; a row without labels starts with a space. Without the header
    a blank line is no instance, so a row without labels or features is written as the
    explicit zero ``1:0`` (``0:0`` zero-based), which reading drops. Read a zero-based
    file back with ``zero_based=True`` ("auto" cannot tell it without an index 0).
    """
    if header and not zero_based:
        raise ValueError("the XC header goes with zero-based indices (zero_based=True)")
    path = Path(path)
    X = sp.csr_matrix(dataset.X)
    Y = sp.csr_matrix(dataset.Y)
    X.sort_indices()
    Y.sort_indices()
    n, d = X.shape
    shift = 0 if zero_based else 1
    with atomic_write(path, "w", encoding="ascii") as fh:
        if header:
            fh.write(f"{n} {d} {Y.shape[1]}\n")
        xi, xv, yi = X.indices.tolist(), X.data.tolist(), Y.indices.tolist()
        xp, yp = X.indptr.tolist(), Y.indptr.tolist()
        for i in range(n):
            labs = ",".join(map(str, yi[yp[i]:yp[i + 1]]))
            feats = " ".join(f"{j + shift}:{v!r}" for j, v in
                             zip(xi[xp[i]:xp[i + 1]], xv[xp[i]:xp[i + 1]], strict=True))
            if not (labs or feats or header):
                feats = f"{shift}:0"
            fh.write(f"{labs} {feats}".rstrip() + "\n")
