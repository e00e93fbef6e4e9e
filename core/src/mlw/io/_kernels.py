"""Numba kernels of the loaders: tokenising ARFF and XC data rows from raw bytes.

Every kernel works on a ``uint8`` array holding the (decompressed) text and plain
numeric arrays; none raises. A kernel that meets malformed input stops and reports an
error code, the line number and the byte span of the offending token in an ``err``
array, and the Python wrapper turns that into a one-line ``ValueError`` naming the file
and line (see :mod:`mlw.io.arff` and :mod:`mlw.io.xc`).

Numbers are parsed exactly: a decimal with at most 15 significant digits and a power
of ten within 10^±22 is converted with one correctly rounded multiplication or
division (Clinger's fast path); any other syntactically valid decimal is handed back to
Python's ``float`` (the "fallback" list), so every value equals what ``float(token)``
gives.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# attribute kinds
KIND_NUMERIC = 0
KIND_NOMINAL = 1
KIND_SKIP = 2  # string/date/dropped attributes: the token is read and ignored

# error codes (see mlw.io.arff._ERRORS for the messages)
ERR_OK = 0
ERR_NUMBER = 1
ERR_NOMINAL = 2
ERR_TOO_FEW = 3
ERR_TOO_MANY = 4
ERR_SPARSE_INDEX = 5
ERR_INDEX_RANGE = 6
ERR_DUPLICATE = 7
ERR_QUOTE = 8
ERR_SPARSE_SYNTAX = 9
ERR_EMPTY = 10
ERR_TRAILING = 11
ERR_LABEL_MISSING = 12
ERR_LABEL_VALUE = 13
ERR_ROW_COUNT = 14
ERR_XC_SYNTAX = 15

# number parse results
NUM_OK = 0
NUM_FALLBACK = 1
NUM_BAD = 2

_POW10 = np.array([10.0**i for i in range(23)], dtype=np.float64)
_TWO53 = 9007199254740992

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _is_ws(c: np.uint8) -> bool:
    return c == 32 or c == 9 or c == 13


@njit(cache=True)
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


@njit(cache=True)
def build_nominal_table(blob, vinfo):
    """Open-addressing hash table over (attribute, value bytes) -> row of ``vinfo``.

    ``vinfo[v] = (start, end, attribute, code)``: value ``v`` is ``blob[start:end]``, the
    ``code``-th declared value of ``attribute``.
    """
    n = vinfo.shape[0]
    size = 16
    while size < 2 * n + 1:
        size *= 2
    table = np.full(size, -1, dtype=np.int64)
    mask = np.uint64(size - 1)
    for v in range(n):
        h = _FNV_OFFSET ^ (np.uint64(vinfo[v, 2]) * _GOLDEN)
        for i in range(vinfo[v, 0], vinfo[v, 1]):
            h = (h ^ np.uint64(blob[i])) * _FNV_PRIME
        j = np.int64(h & mask)
        while table[j] != -1:
            j = (j + 1) & (size - 1)
        table[j] = v
    return table


@njit(cache=True)
def lookup_nominal(arr, s, e, attr, table, blob, vinfo):
    """Row of ``vinfo`` holding value ``arr[s:e]`` of ``attr``, or -1."""
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def _fail(err, code, line, s, e, extra):
    err[0] = code
    err[1] = line
    err[2] = s
    err[3] = e
    err[4] = extra


@njit(cache=True)
def parse_arff_rows(buf, first_line, kinds, blob, vinfo, max_rows, max_entries):
    """Tokenise the ``@data`` section of an ARFF file into attribute-level CSR arrays.

    Dense rows (``v1,v2,...``) and sparse rows (``{i v, j w}``) may be mixed; blank
    lines and ``%`` comment lines are skipped; empty entries of a sparse row (slashdot's
    ``{,3125 1}``) are skipped; a trailing ``,{w}`` instance weight is skipped and
    counted. Values are stored per attribute: the number for a numeric attribute, the
    index of the declared value for a nominal one (absent = index 0, as in sparse ARFF),
    NaN for ``?``. Zeros are not stored. Nominal values are found through a hash table
    over (attribute, bytes) built from ``blob``/``vinfo`` (see
    :func:`build_nominal_table`).

    The per-value work is written inline in this one loop on purpose: calling a helper
    that takes many arrays costs a reference-count update per array per value, which
    made the tokeniser several times slower.

    Returns ``(indptr, cols, vals, row_line, fb_flag, n_rows, nnz, n_sparse_rows,
    n_weights, err)``; where ``fb_flag`` is set, ``vals`` holds the byte offset of a
    number for Python's ``float`` to parse.
    """
    n_attrs = kinds.shape[0]
    table = build_nominal_table(blob, vinfo)
    tmask = np.uint64(table.shape[0] - 1)
    indptr = np.zeros(max_rows + 1, dtype=np.int64)
    cols = np.empty(max_entries, dtype=np.int32)
    vals = np.empty(max_entries, dtype=np.float64)
    fb_flag = np.zeros(max_entries, dtype=np.uint8)
    row_line = np.empty(max_rows, dtype=np.int64)
    last_seen = np.full(n_attrs, -1, dtype=np.int64)
    scratch = np.empty(max(buf.shape[0], 1), dtype=np.uint8)
    err = np.zeros(5, dtype=np.int64)
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
        sparse = buf[p] == 123
        stop = 44
        if sparse:
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
            if sparse:
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
                idx = np.int64(0)
                while p < le and 48 <= buf[p] <= 57:
                    if idx < 1_000_000_000_000:
                        idx = idx * 10 + (np.int64(buf[p]) - 48)
                    p += 1
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
            else:
                while p < le and _is_ws(buf[p]):
                    p += 1
                if a >= n_attrs:
                    if _weight_block(buf, p, le) == le:
                        weight = True
                        break
                    _fail(err, ERR_TOO_MANY, line, p, le, 0)
                    break
                attr = a
                a += 1
            quoted = False
            if p < le and (buf[p] == 39 or buf[p] == 34):
                q = _closing_quote(buf, p, le)
                if q < 0:
                    _fail(err, ERR_QUOTE, line, p, le, attr)
                    break
                ts = p + 1
                te = q
                quoted = True
                p = q + 1
            else:
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
                if quoted:
                    m = _unescape(buf, ts, te, scratch)
                    g = lookup_nominal(scratch, 0, m, attr, table, blob, vinfo)
                else:
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
            if sparse:
                if p < le and buf[p] == 44:
                    p += 1
                elif p < le and buf[p] == 125:
                    p += 1
                    closed = True
                    break
                else:
                    _fail(err, ERR_SPARSE_SYNTAX, line, min(p, le), min(p + 1, le), 0)
                    break
            else:
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
        if sparse:
            if not closed:
                _fail(err, ERR_SPARSE_SYNTAX, line, le, le, 0)
                break
            q = _skip_weight(buf, p, le)
            if q < 0 or q < le:
                _fail(err, ERR_TRAILING, line, p, le, 0)
                break
            weight = q > p
        elif a < n_attrs and not weight:
            _fail(err, ERR_TOO_FEW, line, start, le, a)
            break
        if weight:
            n_weights += 1
        row += 1
        indptr[row] = nnz
        pos = eol + 1
        line += 1
    return indptr, cols, vals, row_line, fb_flag, row, nnz, n_sparse, n_weights, err


# roles of attributes when expanding attribute-level CSR into X and Y
ROLE_DROP = 0
ROLE_COPY = 1        # numeric, or binary nominal whose second value is 1: value as is
ROLE_INVERT = 2      # binary nominal whose FIRST value is 1: absent/0 -> 1, 1 -> 0
ROLE_ONEHOT = 3      # nominal with k >= 3 values: k 0/1 columns
ROLE_LABEL_NOM = 4   # label, binary nominal; one_code says which code is 1
ROLE_LABEL_NUM = 5   # label, numeric: the value must be 0 or 1


@njit(cache=True)
def expand_count(indptr, cols, vals, n_rows, role, width, one_code, complex_attrs):
    """Entry counts of X and Y per row (see :func:`expand_fill`); err on bad labels."""
    n_attrs = role.shape[0]
    seen = np.full(n_attrs, -1, dtype=np.int64)
    x_counts = np.zeros(n_rows, dtype=np.int64)
    y_counts = np.zeros(n_rows, dtype=np.int64)
    err = np.zeros(3, dtype=np.int64)
    for r in range(n_rows):
        nx = 0
        ny = 0
        for j in range(indptr[r], indptr[r + 1]):
            a = cols[j]
            v = vals[j]
            seen[a] = r
            ro = role[a]
            if ro == ROLE_COPY:
                nx += 1
            elif ro == ROLE_INVERT:
                if np.isnan(v):
                    nx += 1
            elif ro == ROLE_ONEHOT:
                nx += width[a] if np.isnan(v) else 1
            elif ro == ROLE_LABEL_NOM:
                if np.isnan(v):
                    err[0] = ERR_LABEL_MISSING
                    err[1] = r
                    err[2] = a
                    return x_counts, y_counts, err
                if v == one_code[a]:
                    ny += 1
            elif ro == ROLE_LABEL_NUM:
                if np.isnan(v):
                    err[0] = ERR_LABEL_MISSING
                    err[1] = r
                    err[2] = a
                    return x_counts, y_counts, err
                if v != 1.0:
                    err[0] = ERR_LABEL_VALUE
                    err[1] = r
                    err[2] = a
                    return x_counts, y_counts, err
                ny += 1
        for t in range(complex_attrs.shape[0]):
            a = complex_attrs[t]
            if seen[a] != r:
                ro = role[a]
                if ro == ROLE_INVERT or ro == ROLE_ONEHOT:
                    nx += 1
                elif ro == ROLE_LABEL_NOM:
                    ny += 1
        x_counts[r] = nx
        y_counts[r] = ny
    return x_counts, y_counts, err


@njit(cache=True)
def expand_fill(indptr, cols, vals, n_rows, role, outcol, width, one_code, complex_attrs,
                x_indptr, y_indptr):
    """Write X and Y entries into arrays sized by :func:`expand_count`."""
    n_attrs = role.shape[0]
    seen = np.full(n_attrs, -1, dtype=np.int64)
    x_idx = np.empty(x_indptr[n_rows], dtype=np.int32)
    x_val = np.empty(x_indptr[n_rows], dtype=np.float64)
    y_idx = np.empty(y_indptr[n_rows], dtype=np.int32)
    for r in range(n_rows):
        px = x_indptr[r]
        py = y_indptr[r]
        for j in range(indptr[r], indptr[r + 1]):
            a = cols[j]
            v = vals[j]
            seen[a] = r
            ro = role[a]
            if ro == ROLE_COPY:
                x_idx[px] = outcol[a]
                x_val[px] = v
                px += 1
            elif ro == ROLE_INVERT:
                if np.isnan(v):
                    x_idx[px] = outcol[a]
                    x_val[px] = np.nan
                    px += 1
            elif ro == ROLE_ONEHOT:
                if np.isnan(v):
                    for k in range(width[a]):
                        x_idx[px] = outcol[a] + k
                        x_val[px] = np.nan
                        px += 1
                else:
                    x_idx[px] = outcol[a] + np.int64(v)
                    x_val[px] = 1.0
                    px += 1
            elif ro == ROLE_LABEL_NOM:
                if v == one_code[a]:
                    y_idx[py] = outcol[a]
                    py += 1
            elif ro == ROLE_LABEL_NUM:
                y_idx[py] = outcol[a]
                py += 1
        for t in range(complex_attrs.shape[0]):
            a = complex_attrs[t]
            if seen[a] != r:
                ro = role[a]
                if ro == ROLE_INVERT:
                    x_idx[px] = outcol[a]
                    x_val[px] = 1.0
                    px += 1
                elif ro == ROLE_ONEHOT:
                    x_idx[px] = outcol[a]
                    x_val[px] = 1.0
                    px += 1
                elif ro == ROLE_LABEL_NOM:
                    y_idx[py] = outcol[a]
                    py += 1
    return x_idx, x_val, y_idx


@njit(cache=True)
def xc_count(buf):
    """Lines (rows), label entries and feature entries of a chunk of whole XC lines.

    Every line is a row (a blank line is an instance with no label and no feature). A
    row's first token is its label list when it holds no ``:`` (it is empty when the
    row starts with a space).
    """
    n = buf.shape[0]
    rows = 0
    n_lab = 0
    n_feat = 0
    pos = 0
    while pos < n:
        eol = pos
        colons = 0
        while eol < n and buf[eol] != 10:
            if buf[eol] == 58:
                colons += 1
            eol += 1
        rows += 1
        n_feat += colons
        p = pos
        while p < eol and not (buf[p] == 32 or buf[p] == 9 or buf[p] == 13):
            p += 1
        field_has_colon = False
        commas = 0
        for q in range(pos, p):
            if buf[q] == 58:
                field_has_colon = True
            elif buf[q] == 44:
                commas += 1
        if not field_has_colon and p > pos:
            n_lab += commas + 1
        pos = eol + 1
    return rows, n_lab, n_feat


@njit(cache=True)
def xc_fill(buf, first_line, n_features, n_labels, row0, px, py, x_indptr, x_idx, x_val,
            y_indptr, y_idx, fb_pos, fb_off, err):
    """Parse whole XC lines of ``buf`` into the CSR arrays from row ``row0`` on.

    Blank lines after the last declared row are ignored. Returns ``(rows, px, py,
    n_fb)``; numbers needing Python's ``float`` are listed in
    ``fb_pos`` (entry index) / ``fb_off`` (byte offset in ``buf``). On malformed input
    sets ``err = [code, line, start, end, extra]`` and stops.
    """
    n = buf.shape[0]
    n_rows_max = x_indptr.shape[0] - 1
    row = row0
    n_fb = 0
    pos = 0
    line = first_line
    while pos < n:
        eol = pos
        while eol < n and buf[eol] != 10:
            eol += 1
        le = eol
        while le > pos and _is_ws(buf[le - 1]):
            le -= 1
        blank = True
        for q in range(pos, le):
            if not _is_ws(buf[q]):
                blank = False
                break
        if row >= n_rows_max and not blank:
            _fail(err, ERR_ROW_COUNT, line, pos, le, n_rows_max)
            return row, px, py, n_fb
        if row < n_rows_max:
            p = pos
            # label field
            fe = p
            has_colon = False
            while fe < le and not (buf[fe] == 32 or buf[fe] == 9):
                if buf[fe] == 58:
                    has_colon = True
                fe += 1
            if not has_colon:
                while p < fe:
                    s = p
                    lab = np.int64(0)
                    while p < fe and 48 <= buf[p] <= 57:
                        if lab < 1_000_000_000_000:
                            lab = lab * 10 + (np.int64(buf[p]) - 48)
                        p += 1
                    if p == s or (p < fe and buf[p] != 44):
                        q = p
                        while q < fe and buf[q] != 44:
                            q += 1
                        _fail(err, ERR_XC_SYNTAX, line, s, max(q, s + 1), 1)
                        return row, px, py, n_fb
                    if lab >= n_labels:
                        _fail(err, ERR_INDEX_RANGE, line, s, p, 1)
                        return row, px, py, n_fb
                    y_idx[py] = lab
                    py += 1
                    if p < fe:
                        p += 1  # the comma
                        if p == fe:
                            _fail(err, ERR_XC_SYNTAX, line, p - 1, p, 1)
                            return row, px, py, n_fb
            # features
            while True:
                while p < le and _is_ws(buf[p]):
                    p += 1
                if p >= le:
                    break
                s = p
                f = np.int64(0)
                while p < le and 48 <= buf[p] <= 57:
                    if f < 1_000_000_000_000:
                        f = f * 10 + (np.int64(buf[p]) - 48)
                    p += 1
                if p == s or p >= le or buf[p] != 58:
                    q = s
                    while q < le and not _is_ws(buf[q]):
                        q += 1
                    _fail(err, ERR_XC_SYNTAX, line, s, max(q, s + 1), 2)
                    return row, px, py, n_fb
                if f >= n_features:
                    _fail(err, ERR_INDEX_RANGE, line, s, p, 2)
                    return row, px, py, n_fb
                p += 1
                vs = p
                while p < le and not _is_ws(buf[p]):
                    p += 1
                st, v = parse_number(buf, vs, p)
                if st == NUM_BAD:
                    _fail(err, ERR_NUMBER, line, vs, max(p, vs + 1), 2)
                    return row, px, py, n_fb
                x_idx[px] = f
                if st == NUM_FALLBACK:
                    fb_pos[n_fb] = px
                    fb_off[n_fb] = vs
                    n_fb += 1
                    x_val[px] = 0.0
                else:
                    x_val[px] = v
                px += 1
            row += 1
            x_indptr[row] = px
            y_indptr[row] = py
        pos = eol + 1
        line += 1
    return row, px, py, n_fb
