"""Numba kernels of the XC and svmlight loaders (:mod:`mlw.io.xc`, :mod:`mlw.io.svmlight`):
counting and filling CSR arrays from chunks of whole lines of the Extreme
Classification Repository text format, whose rows are svmlight's multi-label rows
(``l1,l2 f:v f:v``); svmlight adds ``#`` comments and skips blank lines."""

from __future__ import annotations

from mlw.io._kernels import (
    ERR_INDEX_RANGE,
    ERR_NUMBER,
    ERR_ROW_COUNT,
    ERR_XC_SYNTAX,
    NUM_BAD,
    NUM_FALLBACK,
    _fail,
    _is_ws,
    parse_index,
    parse_number,
)
from mlw.jit import kernel


@kernel
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


@kernel
def xc_fill(buf, first_line, n_features, n_labels, row0, px, py, x_indptr, x_idx, x_val,
            y_indptr, y_idx, err, svmlight=False):
    """Parse whole XC lines of ``buf`` into the CSR arrays from row ``row0`` on.

    Blank lines after the last declared row are ignored. With ``svmlight``, a ``#``
    starts a comment that runs to the end of the line, and lines blank without their
    comment are skipped (they are no instance). Returns ``(rows, px, py,
    n_fb)``; the ``n_fb`` numbers needing Python's ``float`` are marked by a negative
    feature index ``-(f + 1)`` with their byte offset in ``buf`` as the value, for the
    wrapper to fix, so no extra array is needed. On malformed input
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
        if svmlight:
            for q in range(pos, eol):
                if buf[q] == 35:
                    le = q
                    break
        while le > pos and _is_ws(buf[le - 1]):
            le -= 1
        blank = True
        for q in range(pos, le):
            if not _is_ws(buf[q]):
                blank = False
                break
        if svmlight and blank:
            pos = eol + 1
            line += 1
            continue
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
                    lab, p = parse_index(buf, p, fe)
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
                f, p = parse_index(buf, p, le)
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
                if st == NUM_FALLBACK:  # marked by a negative index, the offset as value
                    x_idx[px] = -(f + 1)
                    x_val[px] = vs
                    n_fb += 1
                else:
                    x_idx[px] = f
                    x_val[px] = v
                px += 1
            row += 1
            x_indptr[row] = px
            y_indptr[row] = py
        pos = eol + 1
        line += 1
    return row, px, py, n_fb
