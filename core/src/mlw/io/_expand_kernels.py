"""Numba kernels mapping attribute-level CSR (what :func:`mlw.io._kernels.parse_arff_rows`
produces) to the feature matrix ``X`` and the label matrix ``Y``.

Each attribute has a role (copy, inverted binary, one-hot, label, dropped) decided in
Python by :mod:`mlw.io.arff`; :func:`expand_count` sizes the output CSR arrays and
:func:`expand_fill` writes them, so nothing is densified.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# roles of attributes when expanding attribute-level CSR into X and Y
from mlw.io._codes import (  # noqa: F401 - re-exported for the kernels' callers
    ROLE_COPY,
    ROLE_DROP,
    ROLE_INVERT,
    ROLE_LABEL_NOM,
    ROLE_LABEL_NUM,
    ROLE_ONEHOT,
)
from mlw.io._kernels import ERR_LABEL_MISSING, ERR_LABEL_VALUE


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
