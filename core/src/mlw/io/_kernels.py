"""Numba kernels of the loaders: exact number parsing, index parsing and the ARFF
tokeniser, over raw bytes (the XC kernels are in :mod:`mlw.io._xc_kernels`, the mapping
to X/Y in :mod:`mlw.io.expand`, numpy).

Every kernel works on a ``uint8`` array holding the (decompressed) text and plain
numeric arrays; none raises. A kernel that meets malformed input stops and reports an
error code, the line number and the byte span of the offending token in an ``err``
array, and the Python wrapper turns that into a one-line ``ValueError`` naming the file
and line (see :mod:`mlw.io.arff` and :mod:`mlw.io.xc`).

Numbers are parsed exactly: a decimal whose digits form an integer below 2^53 and
whose power of ten is within 10^±22 is converted with one correctly rounded multiplication or
division (Clinger's fast path); any other syntactically valid decimal is handed back to
Python's ``float`` (the "fallback" list), so every value equals what ``float(token)``
gives.
"""

from __future__ import annotations

import numpy as np

from mlw.io._codes import (  # noqa: F401 - the kernels' constants, re-exported
    ERR_DUPLICATE,
    ERR_EMPTY,
    ERR_INDEX_RANGE,
    ERR_LABEL_MISSING,
    ERR_LABEL_VALUE,
    ERR_NOMINAL,
    ERR_NUMBER,
    ERR_OK,
    ERR_QUOTE,
    ERR_ROW_COUNT,
    ERR_SPARSE_INDEX,
    ERR_SPARSE_SYNTAX,
    ERR_TOO_FEW,
    ERR_TOO_MANY,
    ERR_TRAILING,
    ERR_XC_SYNTAX,
    FNV_OFFSET,
    FNV_PRIME,
    GOLDEN,
    KIND_NOMINAL,
    KIND_NUMERIC,
    KIND_SKIP,
    NUM_BAD,
    NUM_FALLBACK,
    NUM_OK,
)
from mlw.jit import kernel

_POW10 = np.array([10.0**i for i in range(23)], dtype=np.float64)
_TWO53 = 9007199254740992

_FNV_OFFSET = np.uint64(FNV_OFFSET)
_FNV_PRIME = np.uint64(FNV_PRIME)
_GOLDEN = np.uint64(GOLDEN)


@kernel
def _is_ws(c: np.uint8) -> bool:
    return c == 32 or c == 9 or c == 13


@kernel
def parse_number(buf, s, e):
    """Parse ``buf[s:e]`` as a decimal; return (status, value) with NUM_* status."""
    i = s
    neg = False
    if i < e and (buf[i] == 43 or buf[i] == 45):
        neg = buf[i] == 45
        i += 1
    mant = np.int64(0)
    ndig = 0
    exp10 = 0
    any_digit = False
    inexact = False
    while i < e and 48 <= buf[i] <= 57:
        any_digit = True
        d = np.int64(buf[i]) - 48
        if mant == 0 and d == 0:
            pass
        elif ndig < 18:
            mant = mant * 10 + d
            ndig += 1
        else:
            exp10 += 1
            if d != 0:
                inexact = True
        i += 1
    if i < e and buf[i] == 46:
        i += 1
        while i < e and 48 <= buf[i] <= 57:
            any_digit = True
            d = np.int64(buf[i]) - 48
            if mant == 0 and d == 0:
                exp10 -= 1
            elif ndig < 18:
                mant = mant * 10 + d
                ndig += 1
                exp10 -= 1
            elif d != 0:
                inexact = True
            i += 1
    if not any_digit:
        return NUM_BAD, 0.0
    if i < e and (buf[i] == 101 or buf[i] == 69):
        i += 1
        eneg = False
        if i < e and (buf[i] == 43 or buf[i] == 45):
            eneg = buf[i] == 45
            i += 1
        if i >= e or not (48 <= buf[i] <= 57):
            return NUM_BAD, 0.0
        ev = 0
        while i < e and 48 <= buf[i] <= 57:
            if ev < 100000:
                ev = ev * 10 + (np.int64(buf[i]) - 48)
            i += 1
        exp10 += -ev if eneg else ev
    if i != e:
        return NUM_BAD, 0.0
    if mant == 0:
        return NUM_OK, -0.0 if neg else 0.0
    if inexact or mant >= _TWO53:
        return NUM_FALLBACK, 0.0
    if exp10 < -22 or exp10 > 22:
        return NUM_FALLBACK, 0.0
    v = np.float64(mant)
    if exp10 >= 0:
        v = v * _POW10[exp10]
    else:
        v = v / _POW10[-exp10]
    return NUM_OK, -v if neg else v


@kernel
def parse_index(buf, p, e):
    """The decimal digits of ``buf`` from ``p`` on (before ``e``) as an index: returns
    ``(value, end)``, ``end`` the first byte that is not a digit (``end == p``: none).

    The readers' one parser of the integers in a file (sparse ARFF attribute indices, XC
    label and feature indices). The value stops growing once it reaches 10^12, more
    than any index a file may declare, so a long run of digits cannot overflow: the
    caller's range check refuses it.
    """
    v = np.int64(0)
    while p < e and 48 <= buf[p] <= 57:
        if v < 1_000_000_000_000:
            v = v * 10 + (np.int64(buf[p]) - 48)
        p += 1
    return v, p


@kernel
def lookup_nominal(arr, s, e, attr, table, blob, vinfo):
    """Row of ``vinfo`` holding value ``arr[s:e]`` of ``attr``, or -1: a lookup in the
    open-addressing table :func:`mlw.io.arff.nominal_table` builds (``vinfo[v] = (start,
    end, attribute, code)``: value ``v`` is ``blob[start:end]``, the ``code``-th declared
    value of ``attribute``)."""
    h = _FNV_OFFSET ^ (np.uint64(attr) * _GOLDEN)
    for i in range(s, e):
        h = (h ^ np.uint64(arr[i])) * _FNV_PRIME
    size = table.shape[0]
    j = np.int64(h & np.uint64(size - 1))
    ln = e - s
    while True:
        v = table[j]
        if v == -1:
            return -1
        if vinfo[v, 2] == attr and vinfo[v, 1] - vinfo[v, 0] == ln:
            same = True
            b0 = vinfo[v, 0]
            for k in range(ln):
                if blob[b0 + k] != arr[s + k]:
                    same = False
                    break
            if same:
                return v
        j = (j + 1) & (size - 1)


@kernel
def _unescape(buf, s, e, scratch):
    """Weka's backslash escapes of a quoted token -> ``scratch[0:n]``; returns n.

    Backslash + one of ``\\ ' " %`` gives that character, ``\\n \\t \\r`` the control
    characters; any other backslash is kept (as :func:`mlw.io.arff.unquote` does).
    """
    n = 0
    i = s
    while i < e:
        c = buf[i]
        if c == 92 and i + 1 < e:
            d = buf[i + 1]
            if d == 110:
                c = 10
                i += 1
            elif d == 116:
                c = 9
                i += 1
            elif d == 114:
                c = 13
                i += 1
            elif d == 92 or d == 39 or d == 34 or d == 37:
                c = d
                i += 1
        scratch[n] = c
        n += 1
        i += 1
    return n


@kernel
def _closing_quote(buf, p, le):
    """Index of the quote closing the one at ``p`` (backslash escapes honoured), or -1."""
    q = buf[p]
    i = p + 1
    while i < le:
        c = buf[i]
        if c == 92:
            i += 2
            continue
        if c == q:
            return i
        i += 1
    return -1


@kernel
def _skip_weight(buf, p, le):
    """After a sparse row: an optional ``, {weight}``; the position after it, or -1."""
    while p < le and _is_ws(buf[p]):
        p += 1
    if p >= le:
        return p
    if buf[p] != 44:
        return -1
    p += 1
    while p < le and _is_ws(buf[p]):
        p += 1
    return _weight_block(buf, p, le)


@kernel
def _weight_block(buf, p, le):
    """A ``{weight}`` block at p (Weka's instance weight); position after it or -1."""
    if p >= le or buf[p] != 123:
        return -1
    while p < le and buf[p] != 125:
        p += 1
    if p >= le:
        return -1
    p += 1
    while p < le and _is_ws(buf[p]):
        p += 1
    return p


# An explicit signature: the call sites pass constant error codes, and without one numba
# compiled a specialisation per constant (Literal[int]) — a dozen extra compilations
# on the first run after installation.
@kernel("void(int64[::1], int64, int64, int64, int64, int64)")
def _fail(err, code, line, s, e, extra):
    err[0] = code
    err[1] = line
    err[2] = s
    err[3] = e
    err[4] = extra


@kernel
def parse_arff_rows(buf, first_line, kinds, blob, vinfo, table, max_rows, max_entries,
                    fb_flag, last_seen, scratch):
    """Tokenise the ``@data`` section of an ARFF file into attribute-level CSR arrays.

    Dense rows (``v1,v2,...``) and sparse rows (``{i v, j w}``) may be mixed; blank
    lines and ``%`` comment lines are skipped; empty entries of a sparse row (slashdot's
    ``{,3125 1}``) are skipped; a trailing ``,{w}`` instance weight is skipped and
    counted. Values are stored per attribute: the number for a numeric attribute, the
    index of the declared value for a nominal one (absent = index 0, as in sparse ARFF),
    NaN for ``?``. Zeros are not stored. Nominal values are found through a hash table
    over (attribute, bytes), ``table``, built in Python from ``blob``/``vinfo`` (see
    :func:`mlw.io.arff.nominal_table`: a kernel less to compile on a fresh install).

    The per-value work is written inline in this one loop on purpose: calling a helper
    that takes many arrays costs a reference-count update per array per value, which
    made the tokeniser several times slower.

    ``fb_flag`` (uint8, ``max_entries`` zeros) receives the fallback flags below.
    ``last_seen`` (int64, one per attribute, all -1) is the sparse rows' scratch for
    duplicate indices and ``scratch`` (uint8, as long as ``buf``) the quoted values'
    unescaping buffer. Passing ``None`` for either says the section has no ``{`` (so no
    sparse row and no instance weight) or no quote character: numba prunes the branches
    that read it (each tests ``is not None`` on the argument itself), so a plain dense
    file, the common case, compiles without the sparse-row and quoted-value code.

    Returns ``(indptr, cols, vals, row_line, fb_flag, n_rows, nnz, n_sparse_rows,
    n_weights, err)``; where ``fb_flag`` is set, ``vals`` holds the byte offset of a
    number for Python's ``float`` to parse.
    """
    n_attrs = kinds.shape[0]
    tmask = np.uint64(table.shape[0] - 1)
    # np.empty of int64, int32 and float64 only (and ``fb_flag``, zeros, from the
    # caller): each (dtype, np.zeros or np.empty) is one more thing a fresh install
    # compiles, and these three the booster compiles anyway
    indptr = np.empty(max_rows + 1, dtype=np.int64)
    indptr[0] = 0
    cols = np.empty(max_entries, dtype=np.int32)
    vals = np.empty(max_entries, dtype=np.float64)
    row_line = np.empty(max_rows, dtype=np.int64)
    err = np.empty(5, dtype=np.int64)
    for i in range(5):
        err[i] = 0
    n = buf.shape[0]
    pos = 0
    line = first_line
    row = 0
    nnz = 0
    n_sparse = 0
    n_weights = 0
    while pos < n:
        eol = pos
        while eol < n and buf[eol] != 10:
            eol += 1
        le = eol
        p = pos
        while p < le and _is_ws(buf[p]):
            p += 1
        while le > p and _is_ws(buf[le - 1]):
            le -= 1
        if p >= le or buf[p] == 37:  # blank or comment line
            pos = eol + 1
            line += 1
            continue
        row_line[row] = line
        sparse = False
        stop = 44
        if last_seen is not None:
            if buf[p] == 123:
                sparse = True
                n_sparse += 1
                p += 1
                stop = 125
        start = p
        a = 0
        closed = False
        weight = False
        while True:
            # -- locate the next value: its attribute and byte span [ts, te) --------
            attr = 0
            dense_row = True
            if last_seen is not None:
                if sparse:
                    dense_row = False
                    while p < le and _is_ws(buf[p]):
                        p += 1
                    if p >= le:
                        break
                    c = buf[p]
                    if c == 125:
                        p += 1
                        closed = True
                        break
                    if c == 44:  # an empty entry
                        p += 1
                        continue
                    if not (48 <= c <= 57):
                        q = p
                        while q < le and not _is_ws(buf[q]) and buf[q] != 44 and buf[q] != 125:
                            q += 1
                        _fail(err, ERR_SPARSE_INDEX, line, p, max(q, p + 1), 0)
                        break
                    s0 = p
                    idx, p = parse_index(buf, p, le)
                    if idx >= n_attrs:
                        _fail(err, ERR_INDEX_RANGE, line, s0, p, idx)
                        break
                    if last_seen[idx] == row:
                        _fail(err, ERR_DUPLICATE, line, s0, p, idx)
                        break
                    last_seen[idx] = row
                    if p >= le or not _is_ws(buf[p]):
                        _fail(err, ERR_SPARSE_SYNTAX, line, s0, min(p + 1, le), 0)
                        break
                    while p < le and _is_ws(buf[p]):
                        p += 1
                    attr = idx
            if dense_row:
                while p < le and _is_ws(buf[p]):
                    p += 1
                if a >= n_attrs:
                    # a trailing {w} instance weight; a section without '{' has none,
                    # and a dense file then compiles without _weight_block
                    if last_seen is not None:
                        if _weight_block(buf, p, le) == le:
                            weight = True
                            break
                    _fail(err, ERR_TOO_MANY, line, p, le, 0)
                    break
                attr = a
                a += 1
            quoted = False
            ts = p
            te = p
            if scratch is not None:
                if p < le and (buf[p] == 39 or buf[p] == 34):
                    q = _closing_quote(buf, p, le)
                    if q < 0:
                        _fail(err, ERR_QUOTE, line, p, le, attr)
                        break
                    ts = p + 1
                    te = q
                    quoted = True
                    p = q + 1
            if not quoted:
                ts = p
                while p < le and buf[p] != 44 and buf[p] != stop:
                    p += 1
                te = p
                while te > ts and _is_ws(buf[te - 1]):
                    te -= 1
                if te == ts:
                    _fail(err, ERR_EMPTY, line, ts, ts, attr)
                    break
            # -- store it -------------------------------------------------------------
            k = kinds[attr]
            if k == KIND_SKIP:
                pass
            elif not quoted and te - ts == 1 and buf[ts] == 63:  # '?'
                cols[nnz] = attr
                vals[nnz] = np.nan
                nnz += 1
            elif k == KIND_NUMERIC:
                st, v = parse_number(buf, ts, te)
                if st == NUM_BAD:
                    _fail(err, ERR_NUMBER, line, ts, te, attr)
                    break
                if st == NUM_FALLBACK:
                    cols[nnz] = attr
                    vals[nnz] = np.float64(ts)
                    fb_flag[nnz] = 1
                    nnz += 1
                elif v != 0.0:
                    cols[nnz] = attr
                    vals[nnz] = v
                    nnz += 1
            else:
                g = -1
                if scratch is not None:
                    if quoted:
                        m = _unescape(buf, ts, te, scratch)
                        g = lookup_nominal(scratch, 0, m, attr, table, blob, vinfo)
                if not quoted:
                    h = _FNV_OFFSET ^ (np.uint64(attr) * _GOLDEN)
                    for i in range(ts, te):
                        h = (h ^ np.uint64(buf[i])) * _FNV_PRIME
                    j = np.int64(h & tmask)
                    ln = te - ts
                    while True:
                        cand = table[j]
                        if cand == -1:
                            break
                        if vinfo[cand, 2] == attr and vinfo[cand, 1] - vinfo[cand, 0] == ln:
                            b0 = vinfo[cand, 0]
                            same = True
                            for kk in range(ln):
                                if blob[b0 + kk] != buf[ts + kk]:
                                    same = False
                                    break
                            if same:
                                g = cand
                                break
                        j = (j + 1) & (table.shape[0] - 1)
                if g < 0:
                    _fail(err, ERR_NOMINAL, line, ts, te, attr)
                    break
                code = vinfo[g, 3]
                if code != 0:
                    cols[nnz] = attr
                    vals[nnz] = code
                    nnz += 1
            # -- the separator after it ----------------------------------------------
            while p < le and _is_ws(buf[p]):
                p += 1
            if last_seen is not None:
                if sparse:
                    if p < le and buf[p] == 44:
                        p += 1
                        continue
                    if p < le and buf[p] == 125:
                        p += 1
                        closed = True
                        break
                    _fail(err, ERR_SPARSE_SYNTAX, line, min(p, le), min(p + 1, le), 0)
                    break
            if not sparse:
                if p >= le:
                    break
                if buf[p] != 44:
                    _fail(err, ERR_TRAILING, line, p, le, 0)
                    break
                p += 1
                if p >= le and a < n_attrs:
                    _fail(err, ERR_EMPTY, line, p, p, a)
                    break
        if err[0] != 0:
            break
        if last_seen is not None:
            if sparse:
                if not closed:
                    _fail(err, ERR_SPARSE_SYNTAX, line, le, le, 0)
                    break
                q = _skip_weight(buf, p, le)
                if q < 0 or q < le:
                    _fail(err, ERR_TRAILING, line, p, le, 0)
                    break
                weight = q > p
        if not sparse and a < n_attrs and not weight:
            _fail(err, ERR_TOO_FEW, line, start, le, a)
            break
        if weight:
            n_weights += 1
        row += 1
        indptr[row] = nnz
        pos = eol + 1
        line += 1
    return indptr, cols, vals, row_line, fb_flag, row, nnz, n_sparse, n_weights, err
