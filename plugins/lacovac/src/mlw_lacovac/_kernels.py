"""Numba kernels of the LaCovaC family: label statistics of a node, phi-correlation
clustering, and the split search (LaCova criterion, variance, multi-label entropy).

Everything here works on raw arrays: ``Y`` as CSR ``(indptr, indices)`` of the positive
labels, ``X`` as a dense C-contiguous float64 matrix or CSR ``(indptr, indices, data)``
with sorted indices. A node is an int64 array of row numbers plus a ``label_map``
(global label -> local position, -1 when the label is not part of the node). Local
positions preserve the global order, so a row's local labels come out sorted.
Validation is done by the Python wrappers, never here.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Criterion codes of :func:`best_split_dense` / :func:`best_split_sparse`.
CRIT_LACOVA = 0  # min(sum of variances, sum of |covariances|) per child (LaCova/LaCovaC)
CRIT_VARIANCE = 1  # sum of label variances (a node with fewer than two varying labels)
CRIT_ENTROPY = 2  # sum of binary label entropies (ML-C4.5)


# ----------------------------------------------------------------------------------------
# label statistics and clustering
# ----------------------------------------------------------------------------------------
@njit(cache=True)
def node_label_stats(y_indptr, y_indices, rows, label_map, n_lab):
    """Counts ``c[j]`` of each local label and the co-occurrence counts ``C[j, k]``
    (``j < k``, upper triangle) over the rows of a node."""
    counts = np.zeros(n_lab, np.int64)
    co = np.zeros((n_lab, n_lab), np.int64)
    buf = np.empty(n_lab, np.int64)
    for t in range(rows.size):
        r = rows[t]
        m = 0
        for p in range(y_indptr[r], y_indptr[r + 1]):
            j = label_map[y_indices[p]]
            if j >= 0:
                buf[m] = j
                m += 1
        for a in range(m):
            ja = buf[a]
            counts[ja] += 1
            for b in range(a + 1, m):
                co[ja, buf[b]] += 1
    return counts, co


@njit(cache=True)
def phi_matrix(counts, co, n):
    """Phi (Pearson) correlation of binary labels from counts; 0 where a label is
    constant (its correlation is undefined). Symmetric, unit diagonal for varying
    labels."""
    L = counts.size
    R = np.zeros((L, L), np.float64)
    nf = float(n)
    for j in range(L):
        vj = float(counts[j]) * (nf - counts[j])
        if vj > 0:
            R[j, j] = 1.0
        for k in range(j + 1, L):
            vk = float(counts[k]) * (nf - counts[k])
            if vj > 0 and vk > 0:
                r = (nf * co[j, k] - float(counts[j]) * counts[k]) / np.sqrt(vj * vk)
                R[j, k] = r
                R[k, j] = r
    return R


@njit(cache=True)
def _find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit(cache=True)
def threshold_components(R, lam):
    """Single-linkage clusters at distance ``1 - lam``: the connected components of
    the graph with an edge where ``|R[j, k]| > lam``. Returns a component id per label,
    numbered by first appearance (0, 1, ...)."""
    L = R.shape[0]
    parent = np.arange(L)
    for j in range(L):
        for k in range(j + 1, L):
            if abs(R[j, k]) > lam:
                a = _find(parent, j)
                b = _find(parent, k)
                if a != b:
                    if a < b:
                        parent[b] = a
                    else:
                        parent[a] = b
    comp = np.full(L, -1, np.int64)
    nxt = 0
    for j in range(L):
        root = _find(parent, j)
        if comp[root] < 0:
            comp[root] = nxt
            nxt += 1
        comp[j] = comp[root]
    return comp


@njit(cache=True)
def sum_abs_covariance(counts, co, n):
    """Sum over label pairs of |cov(y_j, y_k)| (population covariance)."""
    L = counts.size
    s = 0.0
    inv = 1.0 / n
    for j in range(L):
        pj = counts[j] * inv
        for k in range(j + 1, L):
            s += abs(co[j, k] * inv - pj * counts[k] * inv)
    return s


@njit(cache=True)
def lacova_cov_threshold(counts, n):
    """LaCova's critical value of the sum of |covariances| under label independence:
    mean + 2 standard deviations of the sum of half-normal |cov| approximations."""
    L = counts.size
    s1 = 0.0
    s2 = 0.0
    inv = 1.0 / n
    for j in range(L):
        pj = counts[j] * inv
        for k in range(j + 1, L):
            pk = counts[k] * inv
            v = pj * pk * (1.0 - pj) * (1.0 - pk)
            s1 += np.sqrt(v)
            s2 += v
    if n <= 1:
        return np.inf
    mean = np.sqrt(2.0 / (np.pi * (n - 1))) * s1
    sd = np.sqrt((1.0 - 2.0 / np.pi) / (n - 1) * s2)
    return mean + 2.0 * sd


# ----------------------------------------------------------------------------------------
# split criterion
# ----------------------------------------------------------------------------------------
@njit(cache=True)
def _side_var(ns, c, comp, tc, crit, pbuf):
    """Sum of label variances of one child (or the entropy sum for ML-C4.5); fills
    ``pbuf`` with the label frequencies. The child's counts are ``c`` or, when ``comp``,
    the complement ``tc - c``."""
    L = c.size
    inv = 1.0 / ns
    var = 0.0
    ent = 0.0
    for j in range(L):
        cj = tc[j] - c[j] if comp else c[j]
        p = cj * inv
        pbuf[j] = p
        var += p * (1.0 - p)
        if crit == CRIT_ENTROPY and p > 0.0 and p < 1.0:
            ent -= p * np.log2(p) + (1.0 - p) * np.log2(1.0 - p)
    if crit == CRIT_ENTROPY:
        return ent
    return var


@njit(cache=True)
def _cov_lower_bound(ns, ssum, ssq, var):
    """|sum_{j<k} cov_jk| <= sum_{j<k} |cov_jk|, from the variance of the row
    cardinalities: Var(sum_j y_j) = sum_j var_j + 2 sum_{j<k} cov_jk."""
    m = ssum / ns
    lb = 0.5 * abs(ssq / ns - m * m - var)
    return lb


@njit(cache=True)
def _side_cov(ns, c, C, comp, tc, tC, pj, pk, pbuf):
    """Sum over label pairs of |cov| of one child: all pairs as if they never
    co-occurred, then the co-occurring pairs corrected."""
    L = c.size
    inv = 1.0 / ns
    s1 = 0.0
    s2 = 0.0
    for j in range(L):
        p = (tc[j] - c[j] if comp else c[j]) * inv
        pbuf[j] = p
        s1 += p
        s2 += p * p
    cov = 0.5 * (s1 * s1 - s2)
    for t in range(pj.size):
        j = pj[t]
        k = pk[t]
        cjk = tC[j, k] - C[j, k] if comp else C[j, k]
        pp = pbuf[j] * pbuf[k]
        cov += abs(cjk * inv - pp) - pp
    if cov < 0.0:
        cov = 0.0
    return cov


@njit(cache=True)
def _candidate(nl, n, c, C, a0, a1, a2, a3, a4, tc, tC, tot, pj, pk, crit, best_q, pbuf):
    """Weighted criterion of the split with ``nl`` rows (counts ``c``/``C``) on one side
    and the rest of the node on the other.

    ``a0..a4`` are running sums of the moved side (sum c_j, sum c_j^2, sum tc_j c_j,
    sum of row cardinalities, sum of their squares) and ``tot`` the node's (sum tc_j,
    sum tc_j^2, -, cardinality sum, square sum), so both variance sums and the
    covariance lower bound cost O(1). Returns ``inf`` when that bound shows the split
    cannot beat ``best_q``.
    """
    nr = n - nl
    if crit == CRIT_ENTROPY:
        vl = _side_var(nl, c, False, tc, crit, pbuf)
        vr = _side_var(nr, c, True, tc, crit, pbuf)
        return (nl * vl + nr * vr) / n
    vl = a0 / nl - a1 / (nl * nl)
    s1 = tot[0] - a0
    s2 = tot[1] - 2.0 * a2 + a1
    vr = s1 / nr - s2 / (nr * nr)
    if crit == CRIT_VARIANCE:
        return (nl * vl + nr * vr) / n
    lbl = _cov_lower_bound(nl, a3, a4, vl)
    lbr = _cov_lower_bound(nr, tot[3] - a3, tot[4] - a4, vr)
    ml = vl if vl <= lbl else lbl
    mr = vr if vr <= lbr else lbr
    if (nl * ml + nr * mr) / n >= best_q - 1e-12:
        return np.inf
    # exact |cov| sums, the larger child first; otherwise cov >= lb >= var and the
    # minimum is var. Re-check the bound after the first one.
    if nl >= nr:
        if vl > lbl:
            ml = min(vl, _side_cov(nl, c, C, False, tc, tC, pj, pk, pbuf))
            if (nl * ml + nr * mr) / n >= best_q - 1e-12:
                return np.inf
        if vr > lbr:
            mr = min(vr, _side_cov(nr, c, C, True, tc, tC, pj, pk, pbuf))
    else:
        if vr > lbr:
            mr = min(vr, _side_cov(nr, c, C, True, tc, tC, pj, pk, pbuf))
            if (nl * ml + nr * mr) / n >= best_q - 1e-12:
                return np.inf
        if vl > lbl:
            ml = min(vl, _side_cov(nl, c, C, False, tc, tC, pj, pk, pbuf))
    return (nl * ml + nr * mr) / n


@njit(cache=True)
def _side_measure(ns, c, C, comp, tc, tC, pj, pk, crit, pbuf):
    """Impurity of one child, computed directly (the reference form)."""
    var = _side_var(ns, c, comp, tc, crit, pbuf)
    if crit != CRIT_LACOVA:
        return var
    return min(var, _side_cov(ns, c, C, comp, tc, tC, pj, pk, pbuf))


@njit(cache=True)
def split_quality(nl, cl, Cl, n, tc, tC, crit):
    """Weighted criterion of the split that puts the rows with counts ``cl``/``Cl`` left
    (``nl`` rows) and the rest of the node (``n`` rows, counts ``tc``/``tC``) right."""
    pj, pk = cooccurring_pairs(tC)
    pbuf = np.empty(tc.size)
    ql = _side_measure(nl, cl, Cl, False, tc, tC, pj, pk, crit, pbuf)
    qr = _side_measure(n - nl, cl, Cl, True, tc, tC, pj, pk, crit, pbuf)
    return (nl * ql + (n - nl) * qr) / n


@njit(cache=True)
def cooccurring_pairs(co):
    L = co.shape[0]
    m = 0
    for j in range(L):
        for k in range(j + 1, L):
            if co[j, k] > 0:
                m += 1
    pj = np.empty(m, np.int64)
    pk = np.empty(m, np.int64)
    m = 0
    for j in range(L):
        for k in range(j + 1, L):
            if co[j, k] > 0:
                pj[m] = j
                pk[m] = k
                m += 1
    return pj, pk


@njit(cache=True)
def local_labels(y_indptr, y_indices, rows, label_map):
    """The node's rows as a CSR of local label positions (positive labels only)."""
    n = rows.size
    ptr = np.zeros(n + 1, np.int64)
    for t in range(n):
        r = rows[t]
        m = 0
        for p in range(y_indptr[r], y_indptr[r + 1]):
            if label_map[y_indices[p]] >= 0:
                m += 1
        ptr[t + 1] = ptr[t] + m
    idx = np.empty(ptr[n], np.int64)
    for t in range(n):
        r = rows[t]
        m = ptr[t]
        for p in range(y_indptr[r], y_indptr[r + 1]):
            j = label_map[y_indices[p]]
            if j >= 0:
                idx[m] = j
                m += 1
    return ptr, idx


@njit(cache=True, inline="always")
def _move(t, sign, lptr, lidx, c, C, tc, acc):
    """Add (sign 1) or remove (-1) row ``t``'s labels to counts ``c`` and pair counts
    ``C`` and update the running sums ``acc`` (see :func:`_candidate`)."""
    for a in range(lptr[t], lptr[t + 1]):
        ja = lidx[a]
        old = c[ja]
        c[ja] = old + sign
        acc[0] += sign
        acc[1] += (old + sign) * (old + sign) - old * old
        acc[2] += sign * tc[ja]
        for b in range(a + 1, lptr[t + 1]):
            C[ja, lidx[b]] += sign
    k = lptr[t + 1] - lptr[t]
    acc[3] += sign * k
    acc[4] += sign * k * k


@njit(cache=True)
def _totals(lptr, tc):
    tot = np.zeros(5)
    for j in range(tc.size):
        tot[0] += tc[j]
        tot[1] += tc[j] * tc[j]
    for t in range(lptr.size - 1):
        k = lptr[t + 1] - lptr[t]
        tot[3] += k
        tot[4] += k * k
    return tot


@njit(cache=True)
def best_split_dense(XT, xbin, rows, lptr, lidx, tc, tC, features, min_child, crit):
    """Best binary split ``x[f] <= t`` over ``features`` of a dense ``X``, given as its
    transpose ``XT`` (d, n), C-contiguous, so a feature's values are contiguous.

    Each child of a split on feature ``f`` must keep at least ``min_child[f]`` rows
    (``min_child`` has one entry per feature of ``X``). Thresholds are midpoints between
    consecutive distinct values; when ``xbin`` (per-value histogram bin ids, shaped like
    ``XT``) is not empty, only the pairs of consecutive values in different bins are
    candidates, and the rows are ordered by a counting sort on the bin ids instead of
    a comparison sort when the node's bin range is at most 4 n (the order inside a bin
    does not matter then). Exact ranks as bins (:func:`rank_bins`) give the exact scan. Returns
    ``(feature, threshold, quality)``, feature -1 when no split is valid; ties keep
    the first feature and the first threshold.
    """
    use_bins = xbin.shape[0] > 0
    n = rows.size
    L = tc.size
    pj, pk = cooccurring_pairs(tC)
    pbuf = np.empty(L)
    c = np.zeros(L, np.int64)
    C = np.zeros((L, L), np.int64)
    tot = _totals(lptr, tc)
    vals = np.empty(n)
    best_q = np.inf
    best_f = -1
    best_t = 0.0
    if n < 2:
        return best_f, best_t, best_q
    bstart = np.zeros(1, np.int64)
    bmin = np.zeros(0)
    bmax = np.zeros(0)
    order = np.empty(n, np.int64)
    for fi in range(features.size):
        f = features[fi]
        min_leaf = min_child[f]
        if n < 2 * min_leaf:
            continue
        for t in range(n):
            vals[t] = XT[f, rows[t]]
        counting = False
        if use_bins:
            lo = xbin[f, rows[0]]
            hi = lo
            for t in range(1, n):
                b0 = xbin[f, rows[t]]
                if b0 < lo:
                    lo = b0
                elif b0 > hi:
                    hi = b0
            if lo == hi:
                continue  # one bin: no candidate
            nb = hi - lo + 1
            counting = nb <= 4 * n
        if counting:
            # counting sort by bin: the candidates are the bin boundaries, so the order
            # inside a bin does not matter
            if bstart.size < nb + 1:
                bstart = np.empty(nb + 1, np.int64)
                bmin = np.empty(nb)
                bmax = np.empty(nb)
            bstart[:nb + 1] = 0
            bmin[:nb] = np.inf
            bmax[:nb] = -np.inf
            for t in range(n):
                b0 = xbin[f, rows[t]] - lo
                bstart[b0 + 1] += 1
                if vals[t] < bmin[b0]:
                    bmin[b0] = vals[t]
                if vals[t] > bmax[b0]:
                    bmax[b0] = vals[t]
            for b0 in range(nb):
                bstart[b0 + 1] += bstart[b0]
            fillp = bstart[:nb].copy()
            for t in range(n):
                b0 = xbin[f, rows[t]] - lo
                order[fillp[b0]] = t
                fillp[b0] += 1
        else:
            order = np.argsort(vals)
            if vals[order[0]] == vals[order[n - 1]]:
                continue
        a0 = 0.0  # running sums of the left side, see _candidate
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        a4 = 0.0
        for i in range(n - 1):
            t = order[i]
            p0 = lptr[t]
            p1 = lptr[t + 1]
            for a in range(p0, p1):  # _move, inlined with scalar sums
                ja = lidx[a]
                old = c[ja]
                c[ja] = old + 1
                a1 += 2 * old + 1
                a2 += tc[ja]
                for b in range(a + 1, p1):
                    C[ja, lidx[b]] += 1
            k = p1 - p0
            a0 += k
            a3 += k
            a4 += k * k
            nl = i + 1
            if nl < min_leaf or n - nl < min_leaf:
                continue
            if use_bins:
                bl = xbin[f, rows[t]]
                br = xbin[f, rows[order[i + 1]]]
                if bl == br:
                    continue
                if counting:  # the left part's largest and the right part's smallest
                    v0 = bmax[bl - lo]
                    v1 = bmin[br - lo]
                else:
                    v0 = vals[t]
                    v1 = vals[order[i + 1]]
            else:
                v0 = vals[t]
                v1 = vals[order[i + 1]]
                if v0 == v1:
                    continue
            q = _candidate(nl, n, c, C, a0, a1, a2, a3, a4, tc, tC, tot, pj, pk, crit, best_q,
                           pbuf)
            if q < best_q - 1e-12:
                best_q = q
                best_f = f
                thr = 0.5 * (v0 + v1)
                if thr == v1:
                    thr = v0
                best_t = thr
        # reset: only the co-occurring pairs can be non-zero
        c[:] = 0
        for p in range(pj.size):
            C[pj[p], pk[p]] = 0
    return best_f, best_t, best_q


def histogram_bins(X, max_bins):
    """Per-value bin ids (uint16) of a dense ``X``, transposed to (d, n): each column is
    cut at its distinct quantiles ``k / max_bins``, k = 1..max_bins-1."""
    n, d = X.shape
    out = np.empty((d, n), np.uint16)
    qs = np.arange(1, max_bins) / max_bins
    for f in range(d):
        col = X[:, f]
        edges = np.unique(np.quantile(col, qs))
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


@njit(cache=True)
def _node_csc(x_indptr, x_indices, x_data, rows, fmask, n_features):
    """The node's rows of a CSR ``X`` as a local CSC (local row numbers), keeping only
    the features with ``fmask`` set."""
    n = rows.size
    cnt = np.zeros(n_features + 1, np.int64)
    for t in range(n):
        r = rows[t]
        for p in range(x_indptr[r], x_indptr[r + 1]):
            f = x_indices[p]
            if fmask[f]:
                cnt[f + 1] += 1
    for f in range(n_features):
        cnt[f + 1] += cnt[f]
    fill = cnt[:n_features].copy()
    crow = np.empty(cnt[n_features], np.int64)
    cval = np.empty(cnt[n_features], np.float64)
    for t in range(n):
        r = rows[t]
        for p in range(x_indptr[r], x_indptr[r + 1]):
            f = x_indices[p]
            if fmask[f]:
                q = fill[f]
                crow[q] = t
                cval[q] = x_data[p]
                fill[f] += 1
    return cnt, crow, cval


@njit(cache=True)
def best_split_sparse(x_indptr, x_indices, x_data, n_features, rows, lptr, lidx, tc, tC,
                      fmask, min_child, crit):
    """:func:`best_split_dense` for a CSR ``X`` without densifying it.

    The absent entries of a feature are one block of zeros. Candidates with the zero
    block on the right are scanned by moving the negative values left in ascending
    order; candidates with the zero block on the left by moving the positive values
    right in descending order. Only the stored entries of the node's rows are touched.
    ``min_child`` holds the smallest child size per feature, as for the dense search.
    """
    n = rows.size
    L = tc.size
    best_q = np.inf
    best_f = -1
    best_t = 0.0
    if n < 2:
        return best_f, best_t, best_q
    pj, pk = cooccurring_pairs(tC)
    pbuf = np.empty(L)
    c = np.zeros(L, np.int64)
    C = np.zeros((L, L), np.int64)
    tot = _totals(lptr, tc)
    acc = np.zeros(5)
    cptr, crow, cval = _node_csc(x_indptr, x_indices, x_data, rows, fmask, n_features)
    for f in range(n_features):
        a = cptr[f]
        b = cptr[f + 1]
        nnz = b - a
        min_leaf = min_child[f]
        if nnz == 0 or n < 2 * min_leaf:
            continue
        vals = cval[a:b]
        rws = crow[a:b]
        nzero = n - nnz
        order = np.argsort(vals, kind="mergesort")
        nneg = 0
        while nneg < nnz and vals[order[nneg]] < 0.0:
            nneg += 1
        npos = nnz - nneg
        if nzero == 0 and vals[order[0]] == vals[order[nnz - 1]]:
            continue
        # pass A: left = the i+1 smallest negatives; right = the other negatives, the
        # zero block and the positives
        for i in range(nneg):
            t = rws[order[i]]
            _move(t, 1, lptr, lidx, c, C, tc, acc)
            nl = i + 1
            v0 = vals[order[i]]
            if i + 1 < nneg:
                v1 = vals[order[i + 1]]
            elif nzero > 0:
                v1 = 0.0
            elif npos > 0:
                v1 = vals[order[nneg]]
            else:
                continue
            if v0 == v1 or nl < min_leaf or n - nl < min_leaf:
                continue
            q = _candidate(nl, n, c, C, acc[0], acc[1], acc[2], acc[3], acc[4], tc, tC, tot,
                           pj, pk, crit, best_q, pbuf)
            if q < best_q - 1e-12:
                best_q = q
                best_f = f
                thr = 0.5 * (v0 + v1)
                best_t = v0 if thr == v1 else thr
        for i in range(nneg):
            _move(rws[order[i]], -1, lptr, lidx, c, C, tc, acc)
        # pass B: right = the i+1 largest positives (counts in c); left = the rest
        for i in range(npos):
            o = order[nnz - 1 - i]
            t = rws[o]
            _move(t, 1, lptr, lidx, c, C, tc, acc)
            nr = i + 1
            v1 = vals[o]
            if i + 1 < npos:
                v0 = vals[order[nnz - 2 - i]]
            elif nzero > 0:
                v0 = 0.0
            elif nneg > 0:
                v0 = vals[order[nneg - 1]]
            else:
                continue
            if v0 == v1 or nr < min_leaf or n - nr < min_leaf:
                continue
            q = _candidate(nr, n, c, C, acc[0], acc[1], acc[2], acc[3], acc[4], tc, tC, tot,
                           pj, pk, crit, best_q, pbuf)
            if q < best_q - 1e-12:
                best_q = q
                best_f = f
                thr = 0.5 * (v0 + v1)
                best_t = v0 if thr == v1 else thr
        for i in range(npos):
            _move(rws[order[nnz - 1 - i]], -1, lptr, lidx, c, C, tc, acc)
    return best_f, best_t, best_q


@njit(cache=True)
def partition_dense(X, rows, f, thr):
    """Boolean mask of the rows that go left (``x[f] <= thr``)."""
    out = np.empty(rows.size, np.bool_)
    for t in range(rows.size):
        out[t] = X[rows[t], f] <= thr
    return out


@njit(cache=True)
def _csr_value(x_indptr, x_indices, x_data, r, f):
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


@njit(cache=True)
def partition_sparse(x_indptr, x_indices, x_data, rows, f, thr):
    out = np.empty(rows.size, np.bool_)
    for t in range(rows.size):
        out[t] = _csr_value(x_indptr, x_indices, x_data, rows[t], f) <= thr
    return out


# ----------------------------------------------------------------------------------------
# prediction: route rows through a flattened tree
# ----------------------------------------------------------------------------------------
# node kinds
LEAF = 0
HSPLIT = 1
VSPLIT = 2


@njit(cache=True)
def route_dense(X, kind, feature, threshold, child_ptr, children, leaf_id, max_leaves):
    """For each row, the ids of the leaves it reaches (one per label block), padded
    with -1: shape (n, max_leaves)."""
    n = X.shape[0]
    out = np.full((n, max_leaves), -1, np.int64)
    stack = np.empty(kind.size, np.int64)
    for r in range(n):
        stack[0] = 0
        top = 1
        m = 0
        while top > 0:
            top -= 1
            v = stack[top]
            k = kind[v]
            if k == LEAF:
                out[r, m] = leaf_id[v]
                m += 1
            elif k == HSPLIT:
                if X[r, feature[v]] <= threshold[v]:
                    stack[top] = children[child_ptr[v]]
                else:
                    stack[top] = children[child_ptr[v] + 1]
                top += 1
            else:
                for p in range(child_ptr[v + 1] - 1, child_ptr[v] - 1, -1):
                    stack[top] = children[p]
                    top += 1
    return out


@njit(cache=True)
def route_sparse(x_indptr, x_indices, x_data, n, kind, feature, threshold, child_ptr,
                 children, leaf_id, max_leaves):
    out = np.full((n, max_leaves), -1, np.int64)
    stack = np.empty(kind.size, np.int64)
    for r in range(n):
        stack[0] = 0
        top = 1
        m = 0
        while top > 0:
            top -= 1
            v = stack[top]
            k = kind[v]
            if k == LEAF:
                out[r, m] = leaf_id[v]
                m += 1
            elif k == HSPLIT:
                if _csr_value(x_indptr, x_indices, x_data, r, feature[v]) <= threshold[v]:
                    stack[top] = children[child_ptr[v]]
                else:
                    stack[top] = children[child_ptr[v] + 1]
                top += 1
            else:
                for p in range(child_ptr[v + 1] - 1, child_ptr[v] - 1, -1):
                    stack[top] = children[p]
                    top += 1
    return out
