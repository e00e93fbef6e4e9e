"""numba kernels of the ML-XGB booster and the dynamic chain.

Plain functions over arrays (CSR as ``indptr, indices, data``), no Python objects,
no validation: the wrappers in :mod:`mlw_xdcc.booster` and the estimators validate.

Conventions
-----------
* Binned features: bin codes ``uint16``; :data:`MISSING` marks a missing value in the
  dense code matrix; in the sparse (CSR) code matrix an absent entry is missing.
  The tree kernels take ``codes, indptr, indices, bins`` with either ``codes`` (dense)
  or ``indptr, indices, bins`` (CSR) set and the others ``None``: every branch on the
  layout tests ``is not None`` on the argument it reads, so numba prunes the other
  layout's branch at compile time and a first run compiles one layout, not both.
  Feature ``f`` owns the global histogram rows ``feat_off[f] .. feat_off[f+1]-1`` and
  the raw cut values ``edges[edge_off[f] .. edge_off[f+1]-1]`` (one fewer than bins):
  a present value ``x`` has bin ``#{edges_f <= x}``; "bin <= b goes left" is the raw
  test ``x < edges_f[b]`` (``+inf`` when ``b`` is the last bin).
* Compile time (a fresh install's first ``mlw fit``): the small helpers that
  ``grow_tree`` alone calls (``_take_slot``, ``_build``, ``_unbuild``, ``_partition``,
  ``_goes_left``) are inlined into it at numba's IR level (``inline="always"``: one
  compilation instead of six, 0.2-0.4 s CPU less, the same machine code's speed);
  ``label_score``, with five call sites in ``best_split``, is not (LLVM inlines it
  anyway, and typing its body five times cost 0.25 s).
* Gradient rows ``GH`` have ``W = 2L + 1`` columns: ``g_1..g_L, h_1..h_L, 1`` (the last
  column counts instances, so empty children are recognised exactly).
* Split criteria (the paper's Table 1), by code: 0 ``sum_gain``, 1 ``max_gain``,
  2 ``sum_weight``, 3 ``max_weight``, 4 ``sum_abs_g``, 5 ``max_abs_g``.  Per label ``j``
  a node has the score ``G_j^2/(H_j+lam)`` (gain), the signed leaf weight
  ``-G_j/(H_j+lam)`` (weight) or its absolute value ``|G_j|/(H_j+lam)`` (abs_g); the
  node's score is their sum (``sum_*``) or maximum (``max_*``) over the labels, and a
  split gains ``score(left) + score(right) - score(parent)`` (Eq. 5's form, without its
  factor 1/2, as XGBoost's code).  For the ``sum_*`` criteria that is accumulated label
  by label, ``sum_j (s_j(left) + s_j(right) - s_j(parent))``.
"""

from __future__ import annotations

import numpy as np

from mlw.jit import kernel

MISSING = np.uint16(65535)
GAIN_EPS = 1e-10


# --------------------------------------------------------------------------------------
# binning
# --------------------------------------------------------------------------------------
@kernel
def _bin_of(edges, lo, hi, x):
    """``#{edges[lo:hi] <= x}`` (``np.searchsorted(..., side="right")`` on the slice,
    written out: numba compiles the generic one in ~0.8 s on a fresh install)."""
    a = lo
    b = hi
    while a < b:
        mid = (a + b) // 2
        if edges[mid] <= x:
            a = mid + 1
        else:
            b = mid
    return a - lo


@kernel
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
                out_bins[k] = _bin_of(edges, edge_off[f], edge_off[f + 1], x)


@kernel
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
@kernel
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
@kernel
def label_score(G, H, crit, lam):
    """The per-label node score of criterion ``crit`` (Table 1's summand): ``G^2/(H+lam)``,
    ``-G/(H+lam)`` or ``|G|/(H+lam)``; 0 when ``H + lam`` is not positive."""
    den = H + lam
    if not den > 0.0:
        return 0.0
    if crit <= 1:
        return G * G / den
    if crit <= 3:
        return -G / den
    return abs(G) / den


@kernel
def node_scores(total, L, crit, lam, out):
    """Per-label scores of a node with sums ``total`` into ``out``; returns the node's
    aggregated score (sum or maximum over the labels, Table 1)."""
    is_max = crit % 2 == 1
    agg = -np.inf if is_max else 0.0
    for j in range(L):
        s = label_score(total[j], total[L + j], crit, lam)
        out[j] = s
        if is_max:
            if s > agg:
                agg = s
        else:
            agg += s
    return agg


@kernel
def best_split(hist, feat_off, feats, total, L, crit, lam, mcw, acc, best_left, parent, sl,
               sr):
    """Best split of one node from its histogram ``hist`` (total_bins, W).

    Scans, per feature in ``feats`` with a present value in the node (the bins' counts
    say which: a feature without is skipped before any pass over ``W``), every cut with
    missing values going right (the forward scan, which also tries "all present left,
    missing right") and, when the node has missing values for the feature, every cut
    with missing going left.  A candidate is valid when both children have rows and
    hessian sums (over labels) >= ``mcw``; its gain is ``score(left) + score(right) -
    score(parent)`` (Table 1's node scores; for ``sum_*`` accumulated label by label,
    ``sum_j (s_j(left) + s_j(right) - s_j(parent))``).  Returns ``(gain, feature, bin,
    default_left)``; feature -1 when no valid split has a gain above GAIN_EPS.
    ``best_left`` receives the left child's sums; ``parent``, ``sl`` and ``sr`` (length
    L) are scratch for the node's and the children's per-label scores.

    The candidate loop calls no function taking arrays (each such call costs atomic
    reference counts); the children's scores are computed in a loop without a reduction
    (so the divisions vectorise) and aggregated in label order in a second.  With many
    labels the gain is computed before the validity test (which also costs a pass over
    the labels), with few labels after it; both orders accept the same candidates.
    """
    W = 2 * L + 1
    is_max = crit % 2 == 1
    best_gain = GAIN_EPS
    best_f = -1
    best_b = -1
    best_dl = False
    parent_agg = node_scores(total, L, crit, lam, parent)
    h_total = 0.0
    for j in range(L):
        h_total += total[L + j]
    n_total = total[W - 1]
    for fi in range(feats.shape[0]):
        f = feats[fi]
        o0 = feat_off[f]
        nb = feat_off[f + 1] - o0
        # rows of the node with a present value: none (a label-feature not yet
        # propagated for them, an absent word) means no candidate, so skip the scans
        present = 0.0
        for b in range(nb):
            present += hist[o0 + b, W - 1]
        if present < 0.5:
            continue
        has_missing = n_total - present > 0.5
        for backward in range(2):
            if backward == 0:
                # forward scan: missing goes right.  It runs over every bin: the last
                # cut (every present row left) leaves the right child empty, and is
                # skipped, unless the node has missing values for f
                for w in range(W):
                    acc[w] = 0.0
                last = nb
            elif not has_missing:
                break
            else:
                # backward: missing goes left; left = missing + bins <= b
                for w in range(W):
                    acc[w] = total[w]
                for b in range(nb):
                    if hist[o0 + b, W - 1] > 0.0:
                        for w in range(W):
                            acc[w] -= hist[o0 + b, w]
                last = nb - 1       # acc now holds the missing sums
            for b in range(last):
                if hist[o0 + b, W - 1] <= 0.0:
                    continue
                for w in range(W):
                    acc[w] += hist[o0 + b, w]
                cl = acc[W - 1]
                if cl < 0.5 or n_total - cl < 0.5:
                    continue
                checked = False
                if L <= 4:
                    hl = 0.0
                    for j in range(L):
                        hl += acc[L + j]
                    if not (hl >= mcw and (h_total - hl) >= mcw):
                        continue
                    checked = True
                if L == 1:
                    g = (label_score(acc[0], acc[1], crit, lam)
                         + label_score(total[0] - acc[0], total[1] - acc[1], crit, lam))
                    g = g - parent_agg if is_max else g - parent[0]
                else:
                    for j in range(L):
                        gl = acc[j]
                        hl = acc[L + j]
                        sl[j] = label_score(gl, hl, crit, lam)
                        sr[j] = label_score(total[j] - gl, total[L + j] - hl, crit, lam)
                    if is_max:
                        ml = -np.inf
                        mr = -np.inf
                        for j in range(L):
                            if sl[j] > ml:
                                ml = sl[j]
                            if sr[j] > mr:
                                mr = sr[j]
                        g = ml + mr - parent_agg
                    else:
                        g = 0.0
                        for j in range(L):
                            g += sl[j] + sr[j] - parent[j]
                if not g > best_gain:
                    continue
                if not checked:
                    hl = 0.0
                    for j in range(L):
                        hl += acc[L + j]
                    if not (hl >= mcw and (h_total - hl) >= mcw):
                        continue
                best_gain = g
                best_f = f
                best_b = b
                best_dl = backward == 1
                for w in range(W):      # a loop: a slice copy compiles numba's shape
                    best_left[w] = acc[w]   # check and its error message (~4 s first run)
    return best_gain, best_f, best_b, best_dl


# --------------------------------------------------------------------------------------
# histograms and row partitions
# --------------------------------------------------------------------------------------
@kernel
def hist_dense(codes, feat_off, feats, rows, start, end, GH, hist):
    """Add the gradient rows of ``rows[start:end]`` into ``hist`` (dense codes), for the
    features ``feats`` only (a feature missing in every row is left out by the caller:
    no loop over the chain's empty label-features)."""
    W = GH.shape[1]
    for k in range(start, end):
        r = rows[k]
        for fi in range(feats.shape[0]):
            f = feats[fi]
            b = codes[r, f]
            if b != MISSING:
                base = feat_off[f] + b
                for w in range(W):
                    hist[base, w] += GH[r, w]


@kernel
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


@kernel
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


@kernel(inline="always")
def _goes_left(codes, indptr, indices, bins, r, f, b, dl):
    c = MISSING
    if codes is not None:
        c = codes[r, f]
    if indptr is not None:
        c = _sparse_code(indptr, indices, bins, r, f)
    if c == MISSING:
        return dl
    return c <= b


@kernel(inline="always")
def _partition(codes, indptr, indices, bins, rows, start, end, f, b, dl, tmp):
    """Stable in-place partition of ``rows[start:end]``; returns the first right index."""
    nl = start
    nr = 0
    for k in range(start, end):
        r = rows[k]
        if _goes_left(codes, indptr, indices, bins, r, f, b, dl):
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
@kernel(inline="always")
def _build(codes, indptr, indices, bins, feat_off, fmask, feats, rows, start, end, GH,
           hist):
    if codes is not None:
        hist_dense(codes, feat_off, feats, rows, start, end, GH, hist)
    if indptr is not None:
        hist_sparse(indptr, indices, bins, feat_off, fmask, rows, start, end, GH, hist)


@kernel(inline="always")
def _unbuild(codes, indptr, indices, bins, feat_off, fmask, feats, rows, start, end, hist):
    """Zero exactly the histogram rows that the rows ``rows[start:end]`` touch."""
    W = hist.shape[1]
    if codes is not None:
        for k in range(start, end):
            r = rows[k]
            for fi in range(feats.shape[0]):
                f = feats[fi]
                b = codes[r, f]
                if b != MISSING:
                    for w in range(W):
                        hist[feat_off[f] + b, w] = 0.0
    if indptr is not None:
        for k in range(start, end):
            r = rows[k]
            for q in range(indptr[r], indptr[r + 1]):
                f = indices[q]
                b = bins[q]
                if fmask[f] and b != MISSING:
                    for w in range(W):
                        hist[feat_off[f] + b, w] = 0.0


@kernel(inline="always")
def _take_slot(pool, clean, free, n_free):
    """A zeroed histogram buffer from the free list: ``(slot, n_free)``."""
    n_free -= 1
    slot = free[n_free]
    if not clean[slot]:
        buf = pool[slot]
        for q in range(buf.shape[0]):
            for w in range(buf.shape[1]):
                buf[q, w] = 0.0
    clean[slot] = False
    return slot, n_free


@kernel
def grow_tree(codes, indptr, indices, bins, feat_off, fmask, feats, n_bins, GH, rows,
              L, max_depth, crit, lam, gamma, mcw, eta, pool, clean, tmp, sums,
              node_feat, node_bin, node_dl, node_left, node_right, node_gain, node_value):
    """Grow one tree depth-first (the same tree as level-wise growth: no leaf limit).

    ``fmask`` marks the features drawn for the tree (``colsample_bytree``) and
    ``feats`` those of them that have a present value in some training row: only
    ``feats`` are binned into histograms and searched.  ``n_bins`` is the number of
    histogram bins of the features present in some training row.  A node's children
    are built from their rows instead of by subtraction when ``rows x len(feats) <=
    n_bins``: both counts leave out the features missing everywhere (the chain's
    label-features before their label is propagated), which are never binned, so such
    a feature changes neither the cost nor the trees and their rounding, and the
    chain's round 1 grows exactly ML-XGB's trees (the paper's "length 1 corresponds to
    ML-XGB").

    Histograms live in a pool of buffers (``clean[s]``: buffer ``s`` is all zero; the
    flags persist across trees).  For a large node the smaller child is built from its
    rows and the larger one is the parent's histogram minus the smaller (the
    subtraction trick, in the parent's buffer; with many labels the bins the smaller
    child has no row in, exactly zero there, are skipped).  When a node has so few rows
    that building both children costs less than touching every bin, each child is
    built from its rows when it is expanded, and its buffer is cleaned afterwards by
    zeroing only the bins its rows touched.  So at most one buffer per level where the
    walk entered the smaller child (at most log2(rows) levels) plus the current one are
    in use, however deep the tree.  Splits whose gain is below ``gamma`` are pruned bottom-up
    afterwards, as XGBoost does.  Leaf values are ``eta * (-G_j / (H_j + lam))``.
    ``sums`` (at least ``node_feat.shape[0]`` rows of W) is scratch for the nodes'
    gradient sums.  Returns the number of nodes.
    """
    W = 2 * L + 1
    m = rows.shape[0]
    n_slots = pool.shape[0]
    n_active = feats.shape[0]
    free = np.empty(n_slots, dtype=np.int64)
    n_free = n_slots
    for s in range(n_slots):
        free[s] = n_slots - 1 - s
    # every scratch array is float64 or int64 with an explicit dtype: numba compiles
    # one np.empty per (size type, dtype), and the ARFF reader has compiled these two
    acc = np.empty(W, dtype=np.float64)
    left_sum = np.empty(W, dtype=np.float64)
    parent = np.empty(L, dtype=np.float64)
    sl = np.empty(L, dtype=np.float64)
    sr = np.empty(L, dtype=np.float64)
    # stack of (node, start, end, depth, slot, built-from-rows); slot -1: build the
    # node's histogram from its rows when it is popped
    n_stack = 2 * max_depth + 4
    st_node = np.empty(n_stack, dtype=np.int64)
    st_start = np.empty(n_stack, dtype=np.int64)
    st_end = np.empty(n_stack, dtype=np.int64)
    st_depth = np.empty(n_stack, dtype=np.int64)
    st_slot = np.empty(n_stack, dtype=np.int64)
    st_rows = np.empty(n_stack, dtype=np.int64)     # 1: built from rows
    sp = 0

    for w in range(W):
        sums[0, w] = 0.0
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
    st_node[0] = 0
    st_start[0] = 0
    st_end[0] = m
    st_depth[0] = 0
    st_slot[0] = -1
    st_rows[0] = 1
    sp = 1
    while sp > 0:
        sp -= 1
        nid = st_node[sp]
        start = st_start[sp]
        end = st_end[sp]
        depth = st_depth[sp]
        slot = st_slot[sp]
        from_rows = st_rows[sp]
        if slot < 0:
            slot, n_free = _take_slot(pool, clean, free, n_free)
            _build(codes, indptr, indices, bins, feat_off, fmask, feats, rows, start, end,
                   GH, pool[slot])
        gain, f, b, dl = best_split(pool[slot], feat_off, feats, sums[nid], L, crit, lam,
                                    mcw, acc, left_sum, parent, sl, sr)
        split = f >= 0
        if split:
            mid = _partition(codes, indptr, indices, bins, rows, start, end, f, b, dl,
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
        direct = (end - start) * n_active <= n_bins
        if not split or depth + 1 >= max_depth or direct:
            # the node's histogram is no longer needed: give the buffer back
            if from_rows:
                _unbuild(codes, indptr, indices, bins, feat_off, fmask, feats, rows, start,
                         end, pool[slot])
                clean[slot] = True
            free[n_free] = slot
            n_free += 1
            if not split or depth + 1 >= max_depth:
                continue
        if direct:
            # right pushed first so the left child is expanded first; each child's
            # histogram is built from its rows when it is popped
            for c, s0, s1 in ((rc, mid, end), (lc, start, mid)):
                st_node[sp] = c
                st_start[sp] = s0
                st_end[sp] = s1
                st_depth[sp] = depth + 1
                st_slot[sp] = -1
                st_rows[sp] = 1
                sp += 1
            continue
        nl = mid - start
        nr = end - mid
        small, n_free = _take_slot(pool, clean, free, n_free)
        if nl <= nr:
            s0, s1, small_node, big_node = start, mid, lc, rc
        else:
            s0, s1, small_node, big_node = mid, end, rc, lc
        _build(codes, indptr, indices, bins, feat_off, fmask, feats, rows, s0, s1, GH,
               pool[small])
        big = pool[slot]
        sm = pool[small]
        if W >= 16:
            for q in range(big.shape[0]):
                if sm[q, W - 1] != 0.0:     # an untouched bin of the smaller child is all 0
                    for w in range(W):
                        big[q, w] -= sm[q, w]
        else:                               # narrow rows: one vectorised pass is cheaper
            for q in range(big.shape[0]):
                for w in range(W):
                    big[q, w] -= sm[q, w]
        # push the bigger child first so the smaller one is expanded first
        for c, cs, fr in ((big_node, slot, 0), (small_node, small, 1)):
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
@kernel
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


@kernel
def predict_dense(X, roots, t0, t1, feat, thr, dl, left, value, out):
    """Add the outputs of trees ``t0..t1-1`` (root node ids ``roots``) to ``out``."""
    for i in range(X.shape[0]):
        _walk(X[i], roots, t0, t1, feat, thr, dl, left, value, out[i])


@kernel
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
