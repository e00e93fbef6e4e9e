"""ARFF files: Mulan (ARFF + label XML), MEKA (``-C N`` in the relation name), dense and
sparse rows, ``.gz``/``.bz2``.

The header is parsed in Python (it is small); the ``@data`` section is tokenised by the
numba kernel :func:`mlw.io._kernels.parse_arff_rows` straight from the raw bytes into
attribute-level CSR arrays, which :mod:`mlw.io.expand` (numpy) then maps to the
feature matrix ``X`` and the label matrix ``Y``. Sparse files stay sparse: a file with
sparse rows gives CSR ``X`` and CSR ``Y`` and is never densified.

Policies (see ``docs/guide/datasets.md``):

* numeric attributes are one float64 column; ``?`` is NaN.
* a two-valued nominal feature is ONE 0/1 column: the value that reads as true
  (``1``, ``yes``, ``true``, ...) is 1 when the other reads as false; otherwise the
  second declared value is 1. Three or more values are one-hot (``name=value``
  columns); a missing value gives NaN in every column of the attribute.
* identifier-like nominal features (more distinct values in the data than half the
  rows, and more than 20) are dropped with a :class:`DatasetWarning`, as are ``string``
  and ``date`` attributes; each drop is recorded in ``provenance["dropped"]``.
* labels must be binary nominal or numeric 0/1; a missing label is an error naming the
  attribute and line.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw._lazy import LazyModule
from mlw.dataset import Dataset
from mlw.io import _codes as C  # noqa: E402 - constants, no numba
from mlw.io._common import (
    DataFormatError,
    DatasetWarning,
    base_name,
    decode,
    number_token,
    parse_fallback_numbers,
    read_bytes,
)
from mlw.io._limits import LimitError, check_columns, check_memory, get_limits, memory_guard
from mlw.io.arff_header import ArffHeader, Attribute, parse_header
from mlw.io.expand import plan_expansion
from mlw.io.mulan import find_label_xml, read_label_xml

# numba kernels, imported (and compiled or loaded from cache) on first use
K = LazyModule("mlw.io._kernels")

#: A nominal feature with more distinct values than this many AND more than half the
#: number of rows is taken for an identifier (genbase's ``protein``) and dropped.
IDENTIFIER_MIN_VALUES = 20

_TRUE = {"1", "yes", "true", "y", "t", "+1", "1.0", "on", "pos", "positive"}
_FALSE = {"0", "no", "false", "n", "f", "-1", "0.0", "off", "neg", "negative"}
_MEKA_C = re.compile(r"(?:^|[\s:'\"])-C\s+(-?\d+)")


# -- which attributes are labels -------------------------------------------------------


def _meka_c(relation: str) -> int | None:
    m = _MEKA_C.search(relation)
    return int(m.group(1)) if m else None


def _count_to_indices(c: int, n_attrs: int, path: Path, line: int | None, what: str) -> list[int]:
    if c == 0 or abs(c) > n_attrs:
        raise DataFormatError(path, line, f"{what} {c} but the header declares "
                                          f"{n_attrs} attributes")
    return list(range(c)) if c > 0 else list(range(n_attrs + c, n_attrs))


def _xml_line(xml: Path, label: str) -> int | None:
    try:
        text = xml.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for i, ln in enumerate(text.splitlines(), 1):
        if f'"{label}"' in ln or f"'{label}'" in ln:
            return i
    return None


def select_labels(header: ArffHeader, path: Path, *, xml: str | Path | bool | None,
                  n_labels: int | None, label_columns: Sequence[str] | None
                  ) -> tuple[list[int], dict[str, Any]]:
    """Attribute indices of the labels, in label-column order, and provenance notes."""
    attrs = header.attributes
    index = {a.name: i for i, a in enumerate(attrs)}
    meka = _meka_c(header.relation)
    note: dict[str, Any] = {}
    if label_columns is not None:
        labels = []
        for name in label_columns:
            if name not in index:
                raise DataFormatError(path, None, f"label column {name!r} is not an attribute "
                                                  f"of the file")
            labels.append(index[name])
        if len(set(labels)) != len(labels):
            raise ValueError("label_columns names a column twice")
        note["label_source"] = "label_columns"
        return labels, note
    if n_labels is not None:
        note["label_source"] = "n_labels"
        return _count_to_indices(int(n_labels), len(attrs), path, None, "n_labels is"), note
    xml_path: Path | None = None
    if xml is None or xml is True:
        xml_path = find_label_xml(path)
        if xml is True and xml_path is None:
            raise DataFormatError(path, None, "no Mulan XML label file beside it")
    elif xml is not False:
        xml_path = Path(xml)
        if not xml_path.is_file():
            raise FileNotFoundError(f"label XML file not found: {xml_path}")
    if xml_path is not None:
        names = read_label_xml(xml_path)
        labels = []
        for name in names:
            if name not in index:
                raise DataFormatError(xml_path, _xml_line(xml_path, name),
                                      f"label {name!r} is not an attribute of {path.name}")
            labels.append(index[name])
        note["label_source"] = "xml"
        note["xml"] = str(xml_path)
        if meka is not None:
            try:
                by_c = _count_to_indices(meka, len(attrs), path, header.relation_line, "")
            except ValueError:
                by_c = []
            if sorted(by_c) != sorted(labels):
                note["notes"] = [f"the relation name says -C {meka}, which contradicts the "
                                 f"XML; the XML decides which attributes are labels"]
        return labels, note
    if meka is not None:
        note["label_source"] = "meka"
        note["meka_c"] = meka
        return _count_to_indices(meka, len(attrs), path, header.relation_line,
                                 "the relation name says -C"), note
    raise DataFormatError(path, None, "cannot tell which attributes are labels: no Mulan XML "
                                      "beside the file and no '-C N' in the relation name "
                                      "(pass xml=, n_labels= or label_columns=; mlw fit: "
                                      "--labels NAME,... or --n-labels N)")


# -- data ------------------------------------------------------------------------------


def binary_one_index(values: Sequence[str]) -> int:
    """Which of two nominal values is 1: the one reading as true, else the second."""
    a, b = (v.strip().lower() for v in values)
    if a in _TRUE and b in _FALSE:
        return 0
    return 1


_ERRORS = {
    C.ERR_NUMBER: "cannot parse {tok!r} as a number (numeric attribute {attr!r})",
    C.ERR_NOMINAL: "unknown value {tok!r} for nominal attribute {attr!r} (declared: {declared})",
    C.ERR_TOO_FEW: "expected {n_attrs} values, found {extra}",
    C.ERR_TOO_MANY: "more than {n_attrs} values (the header declares {n_attrs} attributes)",
    C.ERR_SPARSE_INDEX: "bad sparse entry {tok!r}: expected 'index value'",
    C.ERR_INDEX_RANGE: "sparse index {extra} out of range (the header declares {n_attrs} "
                       "attributes, indices 0..{last})",
    C.ERR_DUPLICATE: "sparse index {extra} appears twice in the row",
    C.ERR_QUOTE: "unterminated quoted value {tok!r}",
    C.ERR_SPARSE_SYNTAX: "malformed sparse row near {tok!r}: expected 'index value' entries "
                         "separated by ',' and a closing '}}'",
    C.ERR_EMPTY: "empty value for attribute {attr!r}",
    C.ERR_TRAILING: "unexpected text {tok!r} after the values of the row",
}


def _short(b: bytes, n: int = 40) -> str:
    s = decode(b)
    return s if len(s) <= n else s[:n] + "..."


def _kernel_error(err: np.ndarray, buf: np.ndarray, attrs: list[Attribute], path: Path) -> None:
    code, line, s, e, extra = (int(v) for v in err)
    tok = _short(bytes(buf[s:e]).strip())
    attr_i = extra if code in (C.ERR_NUMBER, C.ERR_NOMINAL, C.ERR_EMPTY) else -1
    attr = attrs[attr_i].name if 0 <= attr_i < len(attrs) else ""
    declared = ""
    if code == C.ERR_NOMINAL:
        vals = attrs[attr_i].values
        declared = ", ".join(vals[:8]) + (", ..." if len(vals) > 8 else "")
    msg = _ERRORS[code].format(tok=tok, attr=attr, declared=declared, n_attrs=len(attrs),
                               extra=extra, last=len(attrs) - 1)
    raise DataFormatError(path, line, msg)


def nominal_table(blob: np.ndarray, vinfo: np.ndarray) -> np.ndarray:
    """Open-addressing hash table over (attribute, value bytes) -> row of ``vinfo``,
    which the tokeniser's ``lookup_nominal`` searches.

    ``vinfo[v] = (start, end, attribute, code)``: value ``v`` is ``blob[start:end]``,
    the ``code``-th declared value of ``attribute``. The hash is FNV-1a over the bytes,
    seeded with the attribute, in uint64 arithmetic (Python integers masked to 64
    bits, as the kernel's ``np.uint64`` wraps). Built in Python, once per file from the
    header's values: a kernel less for a fresh install to compile.
    """
    mask64 = (1 << 64) - 1
    n = vinfo.shape[0]
    size = 16
    while size < 2 * n + 1:
        size *= 2
    table = np.full(size, -1, dtype=np.int64)
    data = blob.tobytes()
    for v, (start, end, attr, _) in enumerate(vinfo.tolist()):
        h = C.FNV_OFFSET ^ ((attr * C.GOLDEN) & mask64)
        for byte in data[start:end]:
            h = ((h ^ byte) * C.FNV_PRIME) & mask64
        j = h & (size - 1)
        while table[j] != -1:
            j = (j + 1) & (size - 1)
        table[j] = v
    return table


def parse_data(raw: bytes, header: ArffHeader, kinds: np.ndarray, path: Path
               ) -> dict[str, Any]:
    """Run the tokeniser over the ``@data`` section: attribute-level CSR and row lines."""
    attrs = header.attributes
    blob_parts: list[bytes] = []
    info: list[tuple[int, int, int, int]] = []
    off = 0
    for a, att in enumerate(attrs):
        if kinds[a] != C.KIND_NOMINAL:
            continue
        for c, v in enumerate(att.values):
            b = v.encode("utf-8")
            blob_parts.append(b)
            info.append((off, off + len(b), a, c))
            off += len(b)
    blob = np.frombuffer(b"".join(blob_parts) or b"\0", dtype=np.uint8)
    vinfo = np.array(info, dtype=np.int64).reshape(-1, 4)
    buf = np.frombuffer(raw, dtype=np.uint8)[header.data_offset:]
    max_rows = raw.count(b"\n", header.data_offset) + 1
    max_entries = raw.count(b",", header.data_offset) + max_rows
    check_memory(path, 2.0 * len(raw) + 13.0 * max_entries + 16.0 * max_rows,
                 f"parsing {max_rows:,} lines with up to {max_entries:,} values")
    # a section without '{' has no sparse row (nor instance weight), one without quotes no
    # quoted value: the kernel then gets None for their scratch arrays and numba compiles
    # it without that code (a dense file's first load compiles less; same results)
    last_seen = (np.full(len(attrs), -1, dtype=np.int64)
                 if raw.find(b"{", header.data_offset) >= 0 else None)
    quoted = (raw.find(b"'", header.data_offset) >= 0
              or raw.find(b'"', header.data_offset) >= 0)
    scratch = np.empty(max(buf.shape[0], 1), dtype=np.uint8) if quoted else None
    out = K.parse_arff_rows(buf, header.data_line, kinds, blob, vinfo,
                            nominal_table(blob, vinfo), max_rows, max_entries,
                            np.zeros(max_entries, dtype=np.uint8), last_seen, scratch)
    indptr, cols, vals, row_line, fb_flag, n_rows, nnz, n_sparse, n_weights, err = out
    if err[0] != C.ERR_OK:
        _kernel_error(err, buf, attrs, path)
    fb = np.flatnonzero(fb_flag[:nnz])
    if fb.size:
        mv = memoryview(raw)[header.data_offset:]
        offsets = vals[fb].astype(np.int64)
        vals[fb] = parse_fallback_numbers(mv, offsets.tolist())
        overflow = np.flatnonzero(np.isinf(vals[fb]))
        if overflow.size:
            entry = int(fb[overflow[0]])
            row = int(np.searchsorted(indptr[:n_rows + 1], entry, side="right") - 1)
            start = int(offsets[overflow[0]])
            token = number_token(mv, start)
            raise DataFormatError(path, int(row_line[row]),
                                  f"{_short(token)!r} is too large for a float64 (numeric "
                                  f"attribute {attrs[int(cols[entry])].name!r})")
    return {
        "indptr": indptr[:n_rows + 1].copy(),
        "cols": cols[:nnz].copy(),
        "vals": vals[:nnz].copy(),
        "row_line": row_line[:n_rows].copy(),
        "n_rows": int(n_rows),
        "n_sparse_rows": int(n_sparse),
        "n_weights": int(n_weights),
    }


def _distinct_codes(data: dict[str, Any], a: int) -> int:
    """Number of distinct values attribute ``a`` takes (absent counts as code 0)."""
    mask = data["cols"] == a
    present = data["vals"][mask]
    present = present[~np.isnan(present)]
    distinct = set(np.unique(present).tolist())
    if int(mask.sum()) < data["n_rows"]:
        distinct.add(0.0)
    return len(distinct)


def load_arff(path: str | Path, *, xml: str | Path | bool | None = None,
              n_labels: int | None = None, label_columns: Sequence[str] | None = None,
              sparse: bool | None = None, drop_identifiers: bool = True,
              name: str | None = None) -> Dataset:
    """Load a Mulan or MEKA ARFF file (dense or sparse, optionally .gz/.bz2).

    Parameters
    ----------
    path : str or Path
        The ARFF file.
    xml : path, bool or None
        The Mulan label file. ``None`` looks for ``NAME.xml`` beside the file
        (``yeast-train.arff`` -> ``yeast.xml``); ``False`` ignores any XML (MEKA's
        ``-C`` decides); ``True`` requires the XML beside the file.
    n_labels : int, optional
        Labels by position, as MEKA's ``-C``: the first ``N`` attributes, or the last
        ``-N``. Overrides the XML and the relation name.
    label_columns : list of str, optional
        Label attribute names, in the order of the label columns. Overrides all else.
    sparse : bool, optional
        ``None`` (default): CSR ``X``/``Y`` when the file has sparse rows, dense arrays
        otherwise. ``True``/``False`` force either.
    drop_identifiers : bool
        Drop identifier-like nominal features (default True).
    name : str, optional
        Dataset name (default: the file name without suffixes, ``yeast-train``).
    """
    path = Path(path)
    with memory_guard(path):
        return loads_arff(read_bytes(path), path=path, xml=xml, n_labels=n_labels,
                      label_columns=label_columns, sparse=sparse,
                      drop_identifiers=drop_identifiers, name=name)


def loads_arff(raw: bytes, *, path: str | Path = "<bytes>", xml: str | Path | bool | None = None,
               n_labels: int | None = None, label_columns: Sequence[str] | None = None,
               sparse: bool | None = None, drop_identifiers: bool = True,
               name: str | None = None) -> Dataset:
    """:func:`load_arff` on the (decompressed) bytes of an ARFF file.

    ``path`` names the file in error messages and is where a Mulan XML is looked for
    (``xml=None``); the other parameters are those of :func:`load_arff`.
    """
    path = Path(path)
    with memory_guard(path):
        return _loads_arff(raw, path, xml=xml, n_labels=n_labels, label_columns=label_columns,
                           sparse=sparse, drop_identifiers=drop_identifiers, name=name)


def _loads_arff(raw: bytes, path: Path, *, xml: str | Path | bool | None,
                n_labels: int | None, label_columns: Sequence[str] | None,
                sparse: bool | None, drop_identifiers: bool, name: str | None) -> Dataset:
    header = parse_header(raw, path)
    attrs = header.attributes
    labels, label_note = select_labels(header, path, xml=xml, n_labels=n_labels,
                                       label_columns=label_columns)
    label_set = set(labels)
    for a in labels:
        att = attrs[a]
        if att.kind == "nominal" and len(att.values) != 2:
            raise DataFormatError(path, att.line, f"label {att.name!r} is nominal with "
                                                  f"{len(att.values)} values; a label must be "
                                                  f"binary")
        if att.kind in ("string", "date"):
            raise DataFormatError(path, att.line, f"label {att.name!r} is a {att.kind} "
                                                  f"attribute; a label must be binary")
    kinds = np.array([C.KIND_NUMERIC if a.kind == "numeric" else
                      C.KIND_NOMINAL if a.kind == "nominal" else C.KIND_SKIP for a in attrs],
                     dtype=np.int8)
    data = parse_data(raw, header, kinds, path)
    n_rows = data["n_rows"]

    dropped: list[dict[str, str]] = []
    warn: list[str] = []
    n_attrs = len(attrs)
    limits = get_limits()
    role = np.zeros(n_attrs, dtype=np.int8)
    outcol = np.zeros(n_attrs, dtype=np.int64)
    width = np.ones(n_attrs, dtype=np.int64)
    one_code = np.ones(n_attrs, dtype=np.float64)
    feature_names: list[str] = []
    one_hot: list[str] = []
    schema: list[dict[str, Any]] = []
    for a, att in enumerate(attrs):
        if a in label_set:
            continue
        if att.kind in ("string", "date"):
            dropped.append({"attribute": att.name, "reason": f"{att.kind} attribute"})
            schema.append({"name": att.name, "encoding": "dropped"})
            continue
        if att.kind == "numeric":
            role[a] = C.ROLE_COPY
        elif len(att.values) <= 2:
            if len(att.values) == 2 and binary_one_index(att.values) == 0:
                role[a] = C.ROLE_INVERT
            else:
                role[a] = C.ROLE_COPY
        else:
            if drop_identifiers and len(att.values) > IDENTIFIER_MIN_VALUES:
                distinct = _distinct_codes(data, a)
                if distinct > IDENTIFIER_MIN_VALUES and distinct > n_rows / 2:
                    dropped.append({"attribute": att.name,
                                    "reason": f"identifier-like nominal ({distinct} distinct "
                                              f"values in {n_rows} rows)"})
                    schema.append({"name": att.name, "encoding": "dropped"})
                    continue
            if len(att.values) > limits.max_onehot:
                raise LimitError(path, att.line, f"nominal attribute {att.name!r} declares "
                                                 f"{len(att.values):,} values, more than the "
                                                 f"{limits.max_onehot:,} one-hot columns one "
                                                 f"attribute may expand to "
                                                 f"({limits.advice('max_onehot')})")
            role[a] = C.ROLE_ONEHOT
            width[a] = len(att.values)
            one_hot.append(att.name)
        outcol[a] = len(feature_names)
        if role[a] == C.ROLE_ONEHOT:
            feature_names.extend(f"{att.name}={v}" for v in att.values)
            schema.append({"name": att.name, "encoding": "onehot", "values": list(att.values)})
        else:
            feature_names.append(att.name)
            if att.kind == "numeric":
                schema.append({"name": att.name, "encoding": "numeric"})
            else:  # one column: 1 is the second value, or the first for ROLE_INVERT
                one = (None if len(att.values) < 2 else
                       att.values[0] if role[a] == C.ROLE_INVERT else att.values[1])
                schema.append({"name": att.name, "encoding": "binary",
                               "values": list(att.values), "one": one})
    for d in dropped:
        warn.append(f"dropped attribute {d['attribute']!r}: {d['reason']}")
    for j, a in enumerate(labels):
        att = attrs[a]
        outcol[a] = j
        if att.kind == "numeric":
            role[a] = C.ROLE_LABEL_NUM
        else:
            role[a] = C.ROLE_LABEL_NOM
            one_code[a] = float(binary_one_index(att.values))
    complex_attrs = np.array([a for a in range(n_attrs)
                              if role[a] in (C.ROLE_INVERT, C.ROLE_ONEHOT)
                              or (role[a] == C.ROLE_LABEL_NOM and one_code[a] == 0.0)],
                             dtype=np.int64)
    indptr, cols, vals = data["indptr"], data["cols"], data["vals"]
    expansion = plan_expansion(indptr, cols, vals, n_rows, role, outcol, width, one_code,
                               complex_attrs)
    x_counts, y_counts, err = expansion.x_counts, expansion.y_counts, expansion.err
    if err[0] != C.ERR_OK:
        line = int(data["row_line"][err[1]])
        att = attrs[int(err[2])]
        if err[0] == C.ERR_LABEL_MISSING:
            raise DataFormatError(path, line, f"missing value '?' for label {att.name!r}")
        bad = vals[indptr[err[1]]:indptr[err[1] + 1]][cols[indptr[err[1]]:indptr[err[1] + 1]]
                                                        == err[2]][0]
        raise DataFormatError(path, line, f"label {att.name!r} has value {bad:g}; "
                                          f"labels must be 0 or 1")
    check_columns(path, len(feature_names), "features after one-hot expansion")
    x_nnz, y_nnz = int(x_counts.sum()), int(y_counts.sum())
    check_memory(path, 12.0 * x_nnz + 4.0 * y_nnz + 16.0 * n_rows,
                 f"{x_nnz:,} feature values in {n_rows:,} rows")
    x_indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(x_counts, out=x_indptr[1:])
    y_indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(y_counts, out=y_indptr[1:])
    x_idx, x_val, y_idx = expansion.fill()
    n_features, n_label_cols = len(feature_names), len(labels)
    X = sp.csr_matrix((x_val, x_idx, x_indptr), shape=(n_rows, n_features))
    X.sort_indices()
    X.eliminate_zeros()
    Y = sp.csr_matrix((np.ones(y_idx.shape[0], dtype=np.uint8), y_idx, y_indptr),
                      shape=(n_rows, n_label_cols))
    Y.sort_indices()
    file_sparse = data["n_sparse_rows"] > 0
    make_sparse = file_sparse if sparse is None else bool(sparse)
    if not make_sparse:
        check_memory(path, float(n_rows) * (8 * n_features + n_label_cols),
                     f"a dense X of {n_rows:,} rows x {n_features:,} columns (sparse=True keeps "
                     f"it sparse)")
        X = X.toarray()
        Y = Y.toarray()
    n_missing = int(np.isnan(vals).sum())
    if data["n_weights"]:
        warn.append(f"{data['n_weights']} instance weights ignored")
    provenance: dict[str, Any] = {
        "path": str(path),
        "format": "arff",
        "relation": header.relation,
        **label_note,
        "sparse_file": bool(file_sparse),
        "dropped": dropped,
        "one_hot": one_hot,
        "missing_values": n_missing,
        "warnings": warn,
        "schema": schema,
    }
    for w in warn:
        warnings.warn(f"{path.name}: {w}", DatasetWarning, stacklevel=3)
    return Dataset(X, Y, feature_names, [attrs[a].name for a in labels],
                   name or base_name(path), provenance)


def sniff_arff(head: bytes) -> bool:
    """True when the first non-comment line starts with ``@relation``."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    for raw_line in head.splitlines():
        s = raw_line.strip()
        if not s or s.startswith(b"%"):
            continue
        return s[:9].lower() == b"@relation"
    return False
