"""Split search over a dense ``X``, its per-tree bins and the partition of a node's rows.

``X`` is given transposed, ``XT`` (d, n) C-contiguous, so a feature's values are
contiguous. Each feature is binned once per tree (:func:`histogram_bins`: quantile bins;
:func:`rank_bins`: one bin per distinct value, the paper's exact scan); a node orders
its rows by bin id with a counting sort (an insertion sort below 17 rows), never by a
comparison sort of the values.
"""

from __future__ import annotations

import numpy as np

from mlw.jit import kernel
from mlw_lacovac._kernels.criterion import CRIT_LACOVA, T_N, evaluate, move_row, reset_moved
from mlw_lacovac._kernels.sort import argsort_quick, argsort_stable
from mlw_lacovac._kernels.stats import row_weight


def weighted_quantiles(col, qs, w=None):
    """numpy's default ("linear") quantiles ``qs`` of ``col`` whose values count ``w``
    times each (None: once): the value at the virtual position ``h = (W - 1) q`` of the
    sorted values repeated ``w`` times, interpolated between positions ``floor(h)`` and
    ``floor(h) + 1`` with numpy's formula, so integer weights give ``np.quantile`` of the
    repeated column bit for bit (and no weights ``np.quantile(col, qs)``)."""
    order = np.argsort(col, kind="stable")
    v = col[order]
    cw = np.cumsum(np.ones(v.size) if w is None else w[order])
    h = (cw[-1] - 1.0) * qs
    lo = np.floor(h)
    g = h - lo
    last = v.size - 1
    a = v[np.minimum(np.searchsorted(cw, lo, side="right"), last)]
    b = v[np.minimum(np.searchsorted(cw, np.minimum(lo + 1.0, cw[-1] - 1.0), side="right"),
                     last)]
    diff = b - a
    return np.where(g >= 0.5, b - diff * (1 - g), a + diff * g)


def histogram_bins(X, max_bins, w=None):
    """Per-value bin ids (uint16) of a dense ``X``, transposed to (d, n): each column is
    cut at its distinct quantiles ``k / max_bins``, k = 1..max_bins-1, the rows counted
    ``w`` times each (``sample_weight``; see :func:`weighted_quantiles`)."""
    n, d = X.shape
    out = np.empty((d, n), np.uint16)
    qs = np.arange(1, max_bins) / max_bins
    for f in range(d):
        col = X[:, f]
        edges = np.unique(weighted_quantiles(col, qs, w))
        out[f] = np.searchsorted(edges, col, side="right")
    return out


def rank_bins(X):
    """The rank of each value among its column's distinct values, transposed to (d, n)
    (uint16), or None when a column has more than 65535 distinct values. As bins they
    make every midpoint a candidate: the exact scan with a counting sort."""
    n, d = X.shape
    out = np.empty((d, n), np.uint16)
    for f in range(d):
        uniq, inv = np.unique(X[:, f], return_inverse=True)
        if uniq.size > 65535:
            return None
        out[f] = inv.ravel()
    return out


@kernel
def _order_by_bin(kb, n, order, bcount):
    """``order[:n]``: the local rows sorted by their bin ``kb`` (any order inside a bin).
    Returns False when every row is in one bin (no candidate)."""
    lo = kb[0]
    hi = lo
    for t in range(1, n):
        b = kb[t]
        if b < lo:
            lo = b
        elif b > hi:
            hi = b
    if lo == hi:
        return False
    nb = hi - lo + 1
    if n <= 16 or nb > bcount.size - 1:
        for t in range(n):
            order[t] = t
        if n <= 16:
            for i in range(1, n):
                o = order[i]
                key = kb[o]
                j = i - 1
                while j >= 0 and kb[order[j]] > key:
                    order[j + 1] = order[j]
                    j -= 1
                order[j + 1] = o
        else:  # more bins than bcount holds: the same stable order by a merge sort
            keys = np.empty(n)
            for t in range(n):
                keys[t] = kb[t]  # bin ids < 2**53: exact as float64
            argsort_stable(keys, n, order)
        return True
    for b in range(nb + 1):
        bcount[b] = 0
    for t in range(n):
        bcount[kb[t] - lo + 1] += 1
    for b in range(nb):
        bcount[b + 1] += bcount[b]
    for t in range(n):
        b = kb[t] - lo
        order[bcount[b]] = t
        bcount[b] += 1
    return True


@kernel
def search_dense(XT, xbin, rows, w, lptr, lidx, tc, features, min_child, crit, pj, pk, ptc,
                 pidx, adj_ptr, adj_k, adj_p, adj_b, adj_w, gb, gtc, gpp, tot, c, Cv, touched,
                 mp, acc, cnt, deg, cb, order, kb, bcount, vals):
    """Best binary split ``x[f] <= t`` of a node over ``features`` of a dense ``X``.

    ``rows`` are the node's rows, ``w`` the rows' weights (None: 1 each), ``lptr``/``lidx``
    their local labels (CSR), ``tc`` the node's label counts and ``pj .. tot`` its context
    (:func:`~mlw_lacovac._kernels.criterion.node_context`); ``c .. cb`` the moved side's
    state (:func:`~mlw_lacovac._kernels.criterion.state_buffers`) and ``order .. vals``
    work buffers (:func:`search_buffers`). Each child of a split on ``f`` keeps at
    least ``min_child[f]`` rows (of weight). Candidates are the midpoints between consecutive values
    that lie in different bins of ``xbin`` (per-value bin ids shaped like ``XT``); with an
    empty ``xbin`` every midpoint between distinct values. Returns ``(feature, threshold,
    quality)``, feature -1 when no split is valid; ties keep the first feature and the
    first threshold (the lower one).
    """
    n = rows.size
    W = tot[T_N]
    L = tc.size
    best_q = np.inf
    best_f = -1
    best_t = 0.0
    best_bl = 0
    best_br = 0
    if n < 2:
        return best_f, best_t, best_q
    use_bins = xbin.shape[0] > 0
    pairs = crit == CRIT_LACOVA
    for j in range(L):
        deg[j] = adj_ptr[j + 1] - adj_ptr[j]
    for i in range(5):
        acc[i] = 0.0
    cnt[0] = 0
    cnt[1] = 0
    for fi in range(features.size):
        f = features[fi]
        min_leaf = min_child[f]
        if W < 2 * min_leaf:
            continue
        if use_bins:
            for t in range(n):
                kb[t] = xbin[f, rows[t]]
            if not _order_by_bin(kb, n, order, bcount):
                continue
        else:
            for t in range(n):
                vals[t] = XT[f, rows[t]]
            argsort_quick(vals, n, order)
            if vals[order[0]] == vals[order[n - 1]]:
                continue
        nl = 0.0
        for i in range(n - 1):
            t = order[i]
            wt = row_weight(w, rows[t])
            move_row(t, wt, lptr, lidx, c, Cv, pidx, tc, deg, touched, mp, acc, cnt, pairs, False)
            nl += wt
            if nl < min_leaf or W - nl < min_leaf:
                continue
            if use_bins:
                bl = kb[t]
                br = kb[order[i + 1]]
                if bl == br:
                    continue
            else:
                v0 = vals[t]
                v1 = vals[order[i + 1]]
                if v0 == v1:
                    continue
            q = evaluate(nl, W, c, Cv, touched, mp, acc, cnt, tc, pj, pk, ptc, adj_ptr, adj_k,
                         adj_p, adj_b, adj_w, gb, gtc, gpp, tot, cb, crit, best_q)
            if q < best_q - 1e-12:
                best_q = q
                best_f = f
                if use_bins:
                    best_bl = bl
                    best_br = br
                else:
                    thr = 0.5 * (v0 + v1)
                    best_t = v0 if thr == v1 else thr
        reset_moved(c, Cv, touched, mp, acc, cnt)
    if best_f >= 0 and use_bins:
        # the threshold of the winner only: the midpoint between the largest value of
        # the left bin and the smallest of the right bin among the node's rows
        v0 = -np.inf
        v1 = np.inf
        for t in range(n):
            r = rows[t]
            b = xbin[best_f, r]
            v = XT[best_f, r]
            if b == best_bl and v > v0:
                v0 = v
            if b == best_br and v < v1:
                v1 = v
        thr = 0.5 * (v0 + v1)
        best_t = v0 if thr == v1 else thr
    return best_f, best_t, best_q


def search_buffers(n_max: int, n_bins: int):
    """Work buffers ``(order, kb, bcount, vals)`` of :func:`search_dense`."""
    return (np.empty(n_max, np.int64), np.empty(n_max, np.int64), np.empty(n_bins + 1, np.int64),
            np.empty(n_max))


@kernel
def partition_dense(XT, rows_buf, s, n, f, thr, tmp):
    """Stable in-place partition of ``rows_buf[s:s+n]``: the rows with ``x[f] <= thr``
    first, both parts in their previous order. Returns the size of the left part."""
    nl = 0
    nr = 0
    for t in range(n):
        r = rows_buf[s + t]
        if XT[f, r] <= thr:
            rows_buf[s + nl] = r
            nl += 1
        else:
            tmp[nr] = r
            nr += 1
    for i in range(nr):
        rows_buf[s + nl + i] = tmp[i]
    return nl
