"""numba kernels of the ML-XGB booster and the dynamic chain.

Plain functions over arrays (CSR as ``indptr, indices, data``), no Python objects,
no validation: the wrappers in :mod:`mlw_xdcc.booster` and the estimators validate.

Conventions
-----------
* Binned features: bin codes ``uint16``; :data:`MISSING` marks a missing value in the
  dense code matrix; in the sparse (CSR) code matrix an absent entry is missing.
  Feature ``f`` owns the global histogram rows ``feat_off[f] .. feat_off[f+1]-1`` and
  the raw cut values ``edges[edge_off[f] .. edge_off[f+1]-1]`` (one fewer than bins):
  a present value ``x`` has bin ``#{edges_f <= x}``; "bin <= b goes left" is the raw
  test ``x < edges_f[b]`` (``+inf`` when ``b`` is the last bin).
* Gradient rows ``GH`` have ``W = 2L + 1`` columns: ``g_1..g_L, h_1..h_L, 1`` (the last
  column counts instances, so empty children are recognised exactly).
* Split criteria (the paper's Table 1), by code: 0 ``sum_gain``, 1 ``max_gain``,
  2 ``sum_weight``, 3 ``max_weight``, 4 ``sum_abs_g``, 5 ``max_abs_g``.  Per label ``j``
  a node scores ``G_j^2/(H_j+lam)`` (gain), ``|G_j|/(H_j+lam)`` (weight) or ``|G_j|``
  (abs_g); a split improves label ``j`` by ``s_j(left) + s_j(right) - s_j(parent)`` and
  the criterion sums (``sum_*``) or maximises (``max_*``) that over the labels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MISSING = np.uint16(65535)
GAIN_EPS = 1e-10


# --------------------------------------------------------------------------------------
# binning
# --------------------------------------------------------------------------------------
@njit(cache=True)
def bin_dense(X, edges, edge_off, out):
    """Bin codes of a dense float64 matrix into ``out`` (uint16, NaN -> MISSING)."""
    n, d = X.shape
    for f in range(d):
        e = edges[edge_off[f]:edge_off[f + 1]]
        for i in range(n):
            x = X[i, f]
            if np.isnan(x):
                out[i, f] = MISSING
            else:
                out[i, f] = np.searchsorted(e, x, side="right")


@njit(cache=True)
def bin_sparse(indptr, indices, data, edges, edge_off, out_bins):
    """Bin codes of the stored entries of a CSR matrix (absent entries are missing).
    A stored NaN is missing too: it gets the code MISSING."""
    for i in range(indptr.shape[0] - 1):
        for k in range(indptr[i], indptr[i + 1]):
            x = data[k]
            if np.isnan(x):
                out_bins[k] = MISSING
            else:
                f = indices[k]
                e = edges[edge_off[f]:edge_off[f + 1]]
                out_bins[k] = np.searchsorted(e, x, side="right")


@njit(cache=True)
def csr_append_dense(indptr, indices, data, n_features, block):
    """A CSR matrix with the dense ``block`` appended as columns ``n_features..``;
    NaN in ``block`` stays absent (missing), every other value (0 included) is stored."""
    n = indptr.shape[0] - 1
    k = block.shape[1]
    nnz = indptr[n]
    for i in range(n):
        for j in range(k):
            if not np.isnan(block[i, j]):
                nnz += 1
    out_ptr = np.empty(n + 1, dtype=np.int64)
    out_idx = np.empty(nnz, dtype=np.int32)
    out_dat = np.empty(nnz, dtype=data.dtype)
    p = 0
    out_ptr[0] = 0
    for i in range(n):
        for q in range(indptr[i], indptr[i + 1]):
            out_idx[p] = indices[q]
            out_dat[p] = data[q]
            p += 1
        for j in range(k):
            v = block[i, j]
            if not np.isnan(v):
                out_idx[p] = n_features + j
                out_dat[p] = v
                p += 1
        out_ptr[i + 1] = p
    return out_ptr, out_idx, out_dat


# --------------------------------------------------------------------------------------
# gradients
# --------------------------------------------------------------------------------------
@njit(cache=True)
def logistic_gradients(margin, Y, mask, GH):
    """``GH[i] = (p - y, p(1-p), 1)`` per label, times ``mask`` (0 freezes a label of an
    instance: separate-and-conquer).  ``Y`` and ``mask`` are dense uint8 (n, L)."""
    n, L = margin.shape
    for i in range(n):
        for j in range(L):
            p = 1.0 / (1.0 + np.exp(-margin[i, j]))
            if mask[i, j]:
                GH[i, j] = p - Y[i, j]
                h = p * (1.0 - p)
                GH[i, L + j] = h if h > 1e-16 else 1e-16
            else:
                GH[i, j] = 0.0
                GH[i, L + j] = 0.0
        GH[i, 2 * L] = 1.0


# --------------------------------------------------------------------------------------
# split scoring (Table 1)
# --------------------------------------------------------------------------------------
@njit(cache=True)
def label_score(G, H, crit, lam):
    """The per-label node score of criterion ``crit``."""
    den = H + lam
    if crit <= 1:
        return G * G / den if den > 0.0 else 0.0
    if crit <= 3:
        return abs(G) / den if den > 0.0 else 0.0
    return abs(G)


@njit(cache=True)
def split_gain(left, total, L, crit, lam):
    """Gain of splitting a node with gradient sums ``total`` into ``left`` and
    ``total - left`` (each a W-vector ``G_1..G_L, H_1..H_L, count``)."""
    is_max = crit % 2 == 1
    acc = -np.inf if is_max else 0.0
    for j in range(L):
        gl = left[j]
        hl = left[L + j]
        gt = total[j]
        ht = total[L + j]
        delta = (label_score(gl, hl, crit, lam) + label_score(gt - gl, ht - hl, crit, lam)
                 - label_score(gt, ht, crit, lam))
        if is_max:
            if delta > acc:
                acc = delta
        else:
            acc += delta
    return acc


@njit(cache=True)
def _valid(left, total, L, mcw):
    W = 2 * L + 1
    cl = left[W - 1]
    cr = total[W - 1] - cl
    if cl < 0.5 or cr < 0.5:
        return False
    hl = 0.0
    ht = 0.0
    for j in range(L):
        hl += left[L + j]
        ht += total[L + j]
    return hl >= mcw and (ht - hl) >= mcw


@njit(cache=True)
def best_split(hist, feat_off, feats, total, L, crit, lam, mcw, acc, best_left):
    """Best split of one node from its histogram ``hist`` (total_bins, W).

    Scans, per feature in ``feats``, every cut with missing values going right (the
    forward scan, which also tries "all present left, missing right") and, when the
    node has missing values for the feature, every cut with missing going left.
    Returns ``(gain, feature, bin, default_left)``; feature -1 when no valid split has
    a gain above GAIN_EPS.  ``best_left`` receives the left child's sums.
    """
    W = 2 * L + 1
    best_gain = GAIN_EPS
    best_f = -1
    best_b = -1
    best_dl = False
    for fi in range(feats.shape[0]):
        f = feats[fi]
        o0 = feat_off[f]
        nb = feat_off[f + 1] - o0
        # the node has missing values for f when its bins count fewer rows than it has
        present = 0.0
        for b in range(nb):
            present += hist[o0 + b, W - 1]
        has_missing = total[W - 1] - present > 0.5
        # forward scan: missing goes right
        for w in range(W):
            acc[w] = 0.0
        last = nb if has_missing else nb - 1
        for b in range(last):
            if hist[o0 + b, W - 1] <= 0.0:
                continue
            for w in range(W):
                acc[w] += hist[o0 + b, w]
            if _valid(acc, total, L, mcw):
                g = split_gain(acc, total, L, crit, lam)
                if g > best_gain:
                    best_gain = g
                    best_f = f
                    best_b = b
                    best_dl = False
                    best_left[:] = acc
        if has_missing:
            # backward: missing goes left; left = missing + bins <= b
            for w in range(W):
                acc[w] = total[w]
            for b in range(nb):
                if hist[o0 + b, W - 1] > 0.0:
                    for w in range(W):
                        acc[w] -= hist[o0 + b, w]
            # acc now holds the missing sums
            for b in range(nb - 1):
                if hist[o0 + b, W - 1] <= 0.0:
                    continue
                for w in range(W):
                    acc[w] += hist[o0 + b, w]
                if _valid(acc, total, L, mcw):
                    g = split_gain(acc, total, L, crit, lam)
                    if g > best_gain:
                        best_gain = g
                        best_f = f
                        best_b = b
                        best_dl = True
                        best_left[:] = acc
    return best_gain, best_f, best_b, best_dl


# --------------------------------------------------------------------------------------
# histograms and row partitions
# --------------------------------------------------------------------------------------
@njit(cache=True)
def hist_dense(codes, feat_off, fmask, rows, start, end, GH, hist):
    """Add the gradient rows of ``rows[start:end]`` into ``hist`` (dense codes)."""
    d = codes.shape[1]
    W = GH.shape[1]
    for k in range(start, end):
        r = rows[k]
        for f in range(d):
            if not fmask[f]:
                continue
            b = codes[r, f]
            if b != MISSING:
                base = feat_off[f] + b
                for w in range(W):
                    hist[base, w] += GH[r, w]


@njit(cache=True)
def hist_sparse(indptr, indices, bins, feat_off, fmask, rows, start, end, GH, hist):
    """Add the gradient rows of ``rows[start:end]`` into ``hist`` (CSR codes)."""
    W = GH.shape[1]
    for k in range(start, end):
        r = rows[k]
        for q in range(indptr[r], indptr[r + 1]):
            f = indices[q]
            b = bins[q]
            if fmask[f] and b != MISSING:
                base = feat_off[f] + b
                for w in range(W):
                    hist[base, w] += GH[r, w]


@njit(cache=True)
def _sparse_code(indptr, indices, bins, r, f):
    lo = indptr[r]
    hi = indptr[r + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        c = indices[mid]
        if c < f:
            lo = mid + 1
        elif c > f:
            hi = mid
        else:
            return bins[mid]
    return MISSING


@njit(cache=True)
def _goes_left(dense, codes, indptr, indices, bins, r, f, b, dl):
    if dense:
        c = codes[r, f]
    else:
        c = _sparse_code(indptr, indices, bins, r, f)
    if c == MISSING:
        return dl
    return c <= b


@njit(cache=True)
def _partition(dense, codes, indptr, indices, bins, rows, start, end, f, b, dl, tmp):
    """Stable in-place partition of ``rows[start:end]``; returns the first right index."""
    nl = start
    nr = 0
    for k in range(start, end):
        r = rows[k]
        if _goes_left(dense, codes, indptr, indices, bins, r, f, b, dl):
            rows[nl] = r
            nl += 1
        else:
            tmp[nr] = r
            nr += 1
    for k in range(nr):
        rows[nl + k] = tmp[k]
    return nl


# --------------------------------------------------------------------------------------
# growing one tree
# --------------------------------------------------------------------------------------
@njit(cache=True)
def _build(dense, codes, indptr, indices, bins, feat_off, fmask, rows, start, end, GH, hist):
    if dense:
        hist_dense(codes, feat_off, fmask, rows, start, end, GH, hist)
    else:
        hist_sparse(indptr, indices, bins, feat_off, fmask, rows, start, end, GH, hist)


@njit(cache=True)
def _unbuild(dense, codes, indptr, indices, bins, feat_off, fmask, rows, start, end, hist):
    """Zero exactly the histogram rows that the rows ``rows[start:end]`` touch."""
    W = hist.shape[1]
    for k in range(start, end):
        r = rows[k]
        if dense:
            for f in range(codes.shape[1]):
                b = codes[r, f]
                if fmask[f] and b != MISSING:
                    for w in range(W):
                        hist[feat_off[f] + b, w] = 0.0
        else:
            for q in range(indptr[r], indptr[r + 1]):
                f = indices[q]
                b = bins[q]
                if fmask[f] and b != MISSING:
                    for w in range(W):
                        hist[feat_off[f] + b, w] = 0.0


@njit(cache=True)
def grow_tree(dense, codes, indptr, indices, bins, feat_off, fmask, feats, GH, rows,
              L, max_depth, crit, lam, gamma, mcw, eta, pool, clean, tmp,
              node_feat, node_bin, node_dl, node_left, node_right, node_gain, node_value):
    """Grow one tree depth-first (the same tree as level-wise growth: no leaf limit).

    Histograms live in a pool of buffers (``clean[s]``: buffer ``s`` is all zero; the
    flags persist across trees).  For a large node the smaller child is built from its
    rows and the larger one is the parent's histogram minus the smaller (the
    subtraction trick, in the parent's buffer).  When a node has so few rows that
    building both children costs less than touching every bin, both are built from
    their rows and their buffers are cleaned afterwards by zeroing only the bins their
    rows touched.  Splits whose gain is below ``gamma`` are pruned bottom-up
    afterwards, as XGBoost does.  Leaf values are ``eta * (-G_j / (H_j + lam))``.
    Returns the number of nodes.
    """
    W = 2 * L + 1
    m = rows.shape[0]
    n_slots = pool.shape[0]
    total_bins = pool.shape[1]
    n_active = 0
    for f in range(fmask.shape[0]):
        if fmask[f]:
            n_active += 1
    free = np.empty(n_slots, dtype=np.int64)
    n_free = n_slots
    for s in range(n_slots):
        free[s] = n_slots - 1 - s
    max_nodes = node_feat.shape[0]
    sums = np.zeros((max_nodes, W))
    acc = np.empty(W)
    left_sum = np.empty(W)
    # stack of (node, start, end, depth, slot, built-from-rows)
    st_node = np.empty(2 * max_depth + 4, dtype=np.int64)
    st_start = np.empty_like(st_node)
    st_end = np.empty_like(st_node)
    st_depth = np.empty_like(st_node)
    st_slot = np.empty_like(st_node)
    st_rows = np.empty(2 * max_depth + 4, dtype=np.bool_)
    sp = 0

    for k in range(m):
        r = rows[k]
        for w in range(W):
            sums[0, w] += GH[r, w]
    n_nodes = 1
    for j in range(L):
        den = sums[0, L + j] + lam
        node_value[0, j] = -eta * sums[0, j] / den if den > 0.0 else 0.0
    node_left[0] = -1
    node_right[0] = -1
    node_gain[0] = 0.0
    if max_depth == 0 or m < 2:
        return n_nodes
    n_free -= 1
    slot = free[n_free]
    if not clean[slot]:
        pool[slot, :, :] = 0.0
    clean[slot] = False
    _build(dense, codes, indptr, indices, bins, feat_off, fmask, rows, 0, m, GH, pool[slot])
    st_node[0] = 0
    st_start[0] = 0
    st_end[0] = m
    st_depth[0] = 0
    st_slot[0] = slot
    st_rows[0] = True
    sp = 1
    while sp > 0:
        sp -= 1
        nid = st_node[sp]
        start = st_start[sp]
        end = st_end[sp]
        depth = st_depth[sp]
        slot = st_slot[sp]
        from_rows = st_rows[sp]
        gain, f, b, dl = best_split(pool[slot], feat_off, feats, sums[nid], L, crit, lam,
                                    mcw, acc, left_sum)
        split = f >= 0
        if split:
            mid = _partition(dense, codes, indptr, indices, bins, rows, start, end, f, b, dl,
                             tmp)
            lc = n_nodes
            rc = n_nodes + 1
            n_nodes += 2
            node_feat[nid] = f
            node_bin[nid] = b
            node_dl[nid] = dl
            node_left[nid] = lc
            node_right[nid] = rc
            node_gain[nid] = gain
            for w in range(W):
                sums[lc, w] = left_sum[w]
                sums[rc, w] = sums[nid, w] - left_sum[w]
            sums[lc, W - 1] = mid - start
            sums[rc, W - 1] = end - mid
            for c in (lc, rc):
                node_left[c] = -1
                node_right[c] = -1
                node_gain[c] = 0.0
                for j in range(L):
                    den = sums[c, L + j] + lam
                    node_value[c, j] = -eta * sums[c, j] / den if den > 0.0 else 0.0
        direct = (end - start) * n_active <= total_bins
        if not split or depth + 1 >= max_depth or direct:
            # the node's histogram is no longer needed: give the buffer back
            if from_rows:
                _unbuild(dense, codes, indptr, indices, bins, feat_off, fmask, rows, start,
                         end, pool[slot])
                clean[slot] = True
            free[n_free] = slot
            n_free += 1
            if not split or depth + 1 >= max_depth:
                continue
        if direct:
            for c, s0, s1 in ((rc, mid, end), (lc, start, mid)):
                n_free -= 1
                cs = free[n_free]
                if not clean[cs]:
                    pool[cs, :, :] = 0.0
                clean[cs] = False
                _build(dense, codes, indptr, indices, bins, feat_off, fmask, rows, s0, s1,
                       GH, pool[cs])
                st_node[sp] = c
                st_start[sp] = s0
                st_end[sp] = s1
                st_depth[sp] = depth + 1
                st_slot[sp] = cs
                st_rows[sp] = True
                sp += 1
            continue
        nl = mid - start
        nr = end - mid
        n_free -= 1
        small = free[n_free]
        if not clean[small]:
            pool[small, :, :] = 0.0
        clean[small] = False
        if nl <= nr:
            s0, s1, small_node, big_node = start, mid, lc, rc
        else:
            s0, s1, small_node, big_node = mid, end, rc, lc
        _build(dense, codes, indptr, indices, bins, feat_off, fmask, rows, s0, s1, GH,
               pool[small])
        big = pool[slot]
        sm = pool[small]
        for q in range(big.shape[0]):
            for w in range(W):
                big[q, w] -= sm[q, w]
        # push the bigger child first so the smaller one is expanded first
        for c, cs, fr in ((big_node, slot, False), (small_node, small, True)):
            st_node[sp] = c
            if c == lc:
                st_start[sp] = start
                st_end[sp] = mid
            else:
                st_start[sp] = mid
                st_end[sp] = end
            st_depth[sp] = depth + 1
            st_slot[sp] = cs
            st_rows[sp] = fr
            sp += 1
    # bottom-up pruning: children are created after parents, so reverse id order
    if gamma > 0.0:
        for nid in range(n_nodes - 1, -1, -1):
            lc = node_left[nid]
            if lc >= 0:
                rc = node_right[nid]
                if node_left[lc] < 0 and node_right[rc] < 0 and node_gain[nid] < gamma:
                    node_left[nid] = -1
                    node_right[nid] = -1
    return n_nodes


# --------------------------------------------------------------------------------------
# prediction
# --------------------------------------------------------------------------------------
@njit(cache=True)
def add_tree_binned(dense, codes, indptr, indices, bins, node_feat, node_bin, node_dl,
                    node_left, node_right, node_value, margin):
    """Add one tree's leaf values to ``margin`` for every row of the binned data."""
    n = margin.shape[0]
    L = margin.shape[1]
    for i in range(n):
        nid = 0
        while node_left[nid] >= 0:
            if _goes_left(dense, codes, indptr, indices, bins, i, node_feat[nid],
                          node_bin[nid], node_dl[nid]):
                nid = node_left[nid]
            else:
                nid = node_right[nid]
        for j in range(L):
            margin[i, j] += node_value[nid, j]


@njit(cache=True)
def _walk(x, roots, t0, t1, feat, thr, dl, left, value, out_row):
    """Add the leaf weights of trees t0..t1-1 for one raw row ``x`` (NaN = missing).
    The right child of a node is always ``left + 1``; unsigned node ids spare numba's
    negative-index wraparound checks in this hot loop."""
    L = value.shape[1]
    for t in range(t0, t1):
        nid = np.uint64(roots[t])
        while True:
            lc = left[nid]
            if lc < 0:
                break
            v = x[np.uint64(feat[nid])]
            go_right = not (v < thr[nid])
            if go_right and dl[nid] and np.isnan(v):
                go_right = False
            nid = np.uint64(lc) + np.uint64(go_right)
        for j in range(L):
            out_row[j] += value[nid, j]


@njit(cache=True)
def predict_dense(X, roots, t0, t1, feat, thr, dl, left, value, out):
    """Add the outputs of trees ``t0..t1-1`` (root node ids ``roots``) to ``out``."""
    for i in range(X.shape[0]):
        _walk(X[i], roots, t0, t1, feat, thr, dl, left, value, out[i])


@njit(cache=True)
def predict_sparse(indptr, indices, data, n_features, roots, t0, t1, feat, thr, dl, left,
                   value, out):
    """As :func:`predict_dense` for CSR rows; absent entries are missing."""
    x = np.full(n_features, np.nan)
    for i in range(indptr.shape[0] - 1):
        for q in range(indptr[i], indptr[i + 1]):
            x[indices[q]] = data[q]
        _walk(x, roots, t0, t1, feat, thr, dl, left, value, out[i])
        for q in range(indptr[i], indptr[i + 1]):
            x[indices[q]] = np.nan


# --------------------------------------------------------------------------------------
# the dynamic chain
# --------------------------------------------------------------------------------------
@njit(cache=True)
def propagate_one(P, frozen, values, prob_at, chosen):
    """One step of the paper's Eq. (8) for every instance.

    Among the labels not yet propagated (``frozen == 0``), take the most probable one;
    if its probability is >= 0.5 propagate 1 for it, otherwise propagate 0 for the
    least probable one.  The label is frozen, its value written to ``values`` and the
    probability it was propagated with to ``prob_at``; ``chosen[i]`` gets the label
    (-1 when every label is already propagated).  Ties go to the lowest label index.
    """
    n, L = P.shape
    for i in range(n):
        hi = -1
        lo = -1
        for j in range(L):
            if frozen[i, j]:
                continue
            if hi < 0 or P[i, j] > P[i, hi]:
                hi = j
            if lo < 0 or P[i, j] < P[i, lo]:
                lo = j
        if hi < 0:
            chosen[i] = -1
            continue
        if P[i, hi] >= 0.5:
            j = hi
            values[i, j] = 1.0
        else:
            j = lo
            values[i, j] = 0.0
        frozen[i, j] = 1
        prob_at[i, j] = P[i, j]
        chosen[i] = j
