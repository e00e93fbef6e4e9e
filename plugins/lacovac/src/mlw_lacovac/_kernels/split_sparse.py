"""Split search over a CSR ``X`` without densifying it, and the partition of a node's rows.

A node builds a local column view (CSC) of its rows' stored entries. The absent entries
of a feature are one block of zeros. For a feature whose every stored value is 1 (word
and one-hot features, flagged once per tree by ``xone``) the only candidate is "rows
with the feature" against the rest: its label counts come from the rows with the
feature that carry a label of the node, so the local CSC holds only those rows for such
features (``cnt_all`` counts all of them), and the pair counts are added only when the
criterion's bound cannot prune the candidate. Other features are scanned exactly: the
negative values moved left in ascending order, then the positive values moved right in
descending order, so only stored entries are touched.
"""

from __future__ import annotations

import numpy as np

from mlw.jit import kernel
from mlw_lacovac._kernels.criterion import (
    CRIT_LACOVA,
    T_N,
    add_pairs,
    evaluate,
    float_criterion,
    lacova_bound,
    lacova_exact,
    move_row,
    njit_noref,
    reset_moved,
)
from mlw_lacovac._kernels.sort import argsort_stable
from mlw_lacovac._kernels.stats import row_weight


def ones_features(X) -> np.ndarray:
    """Boolean mask of the columns of a CSR ``X`` whose stored values are all exactly 1."""
    ok = np.ones(X.shape[1], np.bool_)
    ok[X.indices[X.data != 1.0]] = False
    return ok


@kernel
def node_csc(x_indptr, x_indices, x_data, rows, w, lptr, fmask, xone, cnt_all, w_all, cptr,
             fillp, crow, cval):
    """The node's stored entries by feature (local row numbers ``crow``, values ``cval``):
    all of them for features without ``xone``, only the rows with a local label for the
    others; ``cnt_all[f]`` counts every stored entry of ``f`` in the node, ``w_all[f]``
    sums their rows' weights ``w`` (None: 1 each)."""
    d = cnt_all.size
    for f in range(d):
        cnt_all[f] = 0
        w_all[f] = 0.0
        cptr[f + 1] = 0
    cptr[0] = 0
    n = rows.size
    for t in range(n):
        r = rows[t]
        labelled = lptr[t + 1] > lptr[t]
        for p in range(x_indptr[r], x_indptr[r + 1]):
            f = x_indices[p]
            if fmask[f]:
                cnt_all[f] += 1
                w_all[f] += row_weight(w, r)
                if labelled or not xone[f]:
                    cptr[f + 1] += 1
    for f in range(d):
        cptr[f + 1] += cptr[f]
        fillp[f] = cptr[f]
    for t in range(n):
        r = rows[t]
        labelled = lptr[t + 1] > lptr[t]
        for p in range(x_indptr[r], x_indptr[r + 1]):
            f = x_indices[p]
            if fmask[f] and (labelled or not xone[f]):
                q = fillp[f]
                crow[q] = t
                cval[q] = x_data[p]
                fillp[f] = q + 1


@njit_noref
def search_ones(f0, f1, rows, w, lptr, lidx, tc, min_child, crit, pj, pk, ptc, pidx, adj_ptr,
                adj_k, adj_p, adj_b, adj_w, gb, gtc, gpp, tot, c, Cv, touched, mp, acc, cnt,
                deg, cb, cnt_all, w_all, cptr, crow, best_q):
    """The 0/1 features ``f0 .. f1 - 1`` of :func:`search_sparse` (each one candidate: the
    rows with the feature right, the rest left), against the best criterion so far
    ``best_q``: returns ``(feature, quality)`` of the best of them when it beats
    ``best_q`` by more than 1e-12 (ties: the first feature), else feature -1. Compiled
    without reference counting (it runs per feature; see ``njit_noref``)."""
    W = tot[T_N]
    pairs = crit == CRIT_LACOVA
    best_f = -1
    for f in range(f0, f1):
        nnz = cnt_all[f]
        min_leaf = min_child[f]
        if nnz == 0 or W < 2 * min_leaf:
            continue
        a = cptr[f]
        b = cptr[f + 1]
        wnz = w_all[f]  # the weight of the rows with a stored entry
        # one candidate: the nnz rows with the feature (x = 1) right, the rest left
        if W - wnz < min_leaf or wnz < min_leaf:
            continue
        for i in range(a, b):
            move_row(crow[i], row_weight(w, rows[crow[i]]), lptr, lidx, c, Cv, pidx, tc,
                     deg, touched, mp, acc, cnt, False, True)
        if pairs:
            q, vm, lbm, vr, lbr = lacova_bound(wnz, W, acc[0], acc[1], acc[2], acc[3],
                                               tot)
            if q >= best_q - 1e-12:
                q = np.inf
            elif vm > lbm or vr > lbr:
                for i in range(a, b):
                    add_pairs(crow[i], row_weight(w, rows[crow[i]]), lptr, lidx, Cv, pidx,
                              mp, cnt)
                q = lacova_exact(wnz, W, c, Cv, touched, mp, acc, cnt, tc, pj, pk, ptc,
                                 adj_ptr, adj_k, adj_p, adj_b, adj_w, gb, gtc, gpp, tot, cb,
                                 vm, lbm, vr, lbr, best_q)
        else:
            q = float_criterion(wnz, W, acc[0], acc[1], acc[2], c, tc, tot, crit)
        if q < best_q - 1e-12:
            best_q = q
            best_f = f
        reset_moved(c, Cv, touched, mp, acc, cnt)
    return best_f, best_q


@kernel
def search_sparse(x_indptr, x_indices, x_data, rows, w, lptr, lidx, tc, fmask, xone,
                  min_child, crit, pj, pk, ptc, pidx, adj_ptr, adj_k, adj_p, adj_b, adj_w, gb,
                  gtc, gpp, tot, c, Cv, touched, mp, acc, cnt, deg, cb, cnt_all, w_all, cptr,
                  fillp, crow, cval):
    """:func:`~mlw_lacovac._kernels.split_dense.search_dense` for a CSR ``X``: the best
    split over the features with ``fmask`` set. ``crow``/``cval`` must hold every stored
    entry of the node's rows."""
    n = rows.size
    W = tot[T_N]
    L = tc.size
    best_q = np.inf
    best_f = -1
    best_t = 0.0
    if n < 2:
        return best_f, best_t, best_q
    pairs = crit == CRIT_LACOVA
    for j in range(L):
        deg[j] = adj_ptr[j + 1] - adj_ptr[j]
    for i in range(5):
        acc[i] = 0.0
    cnt[0] = 0
    cnt[1] = 0
    node_csc(x_indptr, x_indices, x_data, rows, w, lptr, fmask, xone, cnt_all, w_all, cptr,
             fillp, crow, cval)
    d = cnt_all.size
    f = np.int64(0)  # not a literal 0: search_ones compiles once, not twice
    while f < d:
        if xone[f]:
            # a run of 0/1 features: one call of the reference-count-free kernel
            g = f + 1
            while g < d and xone[g]:
                g += 1
            bf, bq = search_ones(f, g, rows, w, lptr, lidx, tc, min_child, crit, pj, pk, ptc,
                                 pidx, adj_ptr, adj_k, adj_p, adj_b, adj_w, gb, gtc, gpp, tot,
                                 c, Cv, touched, mp, acc, cnt, deg, cb, cnt_all, w_all, cptr,
                                 crow, best_q)
            if bf >= 0:
                best_f = bf
                best_q = bq
                best_t = 0.5
            f = g
            continue
        nnz = cnt_all[f]
        min_leaf = min_child[f]
        if nnz == 0 or W < 2 * min_leaf:
            f += 1
            continue
        a = cptr[f]
        b = cptr[f + 1]
        nzero = n - nnz
        vals = cval[a:b]
        rws = crow[a:b]
        order = np.empty(nnz, np.int64)
        argsort_stable(vals, nnz, order)
        nneg = 0
        while nneg < nnz and vals[order[nneg]] < 0.0:
            nneg += 1
        npos = nnz - nneg
        if nzero == 0 and vals[order[0]] == vals[order[nnz - 1]]:
            f += 1
            continue
        # pass A: left = the i+1 smallest negatives; right = the other negatives, the
        # zero block and the positives
        nl = 0.0
        for i in range(nneg):
            wt = row_weight(w, rows[rws[order[i]]])
            move_row(rws[order[i]], wt, lptr, lidx, c, Cv, pidx, tc, deg, touched, mp, acc, cnt,
                     pairs, False)
            nl += wt
            v0 = vals[order[i]]
            if i + 1 < nneg:
                v1 = vals[order[i + 1]]
            elif nzero > 0:
                v1 = 0.0
            elif npos > 0:
                v1 = vals[order[nneg]]
            else:
                continue
            if v0 == v1 or nl < min_leaf or W - nl < min_leaf:
                continue
            q = evaluate(nl, W, c, Cv, touched, mp, acc, cnt, tc, pj, pk, ptc, adj_ptr, adj_k,
                         adj_p, adj_b, adj_w, gb, gtc, gpp, tot, cb, crit, best_q)
            if q < best_q - 1e-12:
                best_q = q
                best_f = f
                thr = 0.5 * (v0 + v1)
                best_t = v0 if thr == v1 else thr
        reset_moved(c, Cv, touched, mp, acc, cnt)
        # pass B: right = the i+1 largest positives (the moved side); left = the rest
        nr = 0.0
        for i in range(npos):
            o = order[nnz - 1 - i]
            wt = row_weight(w, rows[rws[o]])
            move_row(rws[o], wt, lptr, lidx, c, Cv, pidx, tc, deg, touched, mp, acc, cnt, pairs,
                     False)
            nr += wt
            v1 = vals[o]
            if i + 1 < npos:
                v0 = vals[order[nnz - 2 - i]]
            elif nzero > 0:
                v0 = 0.0
            elif nneg > 0:
                v0 = vals[order[nneg - 1]]
            else:
                continue
            if v0 == v1 or nr < min_leaf or W - nr < min_leaf:
                continue
            q = evaluate(nr, W, c, Cv, touched, mp, acc, cnt, tc, pj, pk, ptc, adj_ptr, adj_k,
                         adj_p, adj_b, adj_w, gb, gtc, gpp, tot, cb, crit, best_q)
            if q < best_q - 1e-12:
                best_q = q
                best_f = f
                thr = 0.5 * (v0 + v1)
                best_t = v0 if thr == v1 else thr
        reset_moved(c, Cv, touched, mp, acc, cnt)
        f += 1
    return best_f, best_t, best_q


@kernel
def csr_value(x_indptr, x_indices, x_data, r, f):
    """``X[r, f]`` of a CSR matrix with sorted indices (0 when absent)."""
    lo = x_indptr[r]
    hi = x_indptr[r + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        g = x_indices[mid]
        if g == f:
            return x_data[mid]
        if g < f:
            lo = mid + 1
        else:
            hi = mid
    return 0.0


@kernel
def partition_sparse(x_indptr, x_indices, x_data, rows_buf, s, n, f, thr, tmp):
    """:func:`~mlw_lacovac._kernels.split_dense.partition_dense` for a CSR ``X``."""
    nl = 0
    nr = 0
    for t in range(n):
        r = rows_buf[s + t]
        if csr_value(x_indptr, x_indices, x_data, r, f) <= thr:
            rows_buf[s + nl] = r
            nl += 1
        else:
            tmp[nr] = r
            nr += 1
    for i in range(nr):
        rows_buf[s + nl + i] = tmp[i]
    return nl
