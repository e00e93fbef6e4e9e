"""Numba kernels of LCIF: sparse cosine kNN through an inverted index, feature→label
neighbourhoods, and the sparse scoring of candidate labels.

All functions take raw arrays (CSR/CSC as ``indptr, indices, data``), never Python
objects, and never validate: the wrappers in :mod:`mlw_lcif.model` do. Parallel kernels
split the queries into chunks and run the chunks with ``prange``; each chunk allocates
its own accumulator once, so memory is bounded by ``n_chunks × (n_train or n_labels)``
plus the outputs (``n_queries × k``), never ``n_queries × n_train``.

Ties are broken deterministically: a higher similarity first, then the lower index.
Only positive similarities count as neighbours (a similarity of 0 carries no vote).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True)
def row_norms(indptr, data):
    """Euclidean norm of every CSR row (sequential sum of squares, in index order)."""
    n = indptr.shape[0] - 1
    out = np.zeros(n, dtype=np.float64)
    for i in range(n):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * data[p]
        out[i] = np.sqrt(s)
    return out


@njit(cache=True)
def _insert_topk(best_idx, best_sim, count, k, cand, sim):
    """Insert ``(cand, sim)`` into the sorted top-k arrays (sim desc, index asc).
    Returns the new count."""
    if count == k:
        ws = best_sim[k - 1]
        if sim < ws or (sim == ws and cand > best_idx[k - 1]):
            return count
        pos = k - 1
    else:
        pos = count
        count += 1
    while pos > 0:
        ps = best_sim[pos - 1]
        if ps > sim or (ps == sim and best_idx[pos - 1] < cand):
            break
        best_sim[pos] = ps
        best_idx[pos] = best_idx[pos - 1]
        pos -= 1
    best_sim[pos] = sim
    best_idx[pos] = cand
    return count


@njit(cache=True)
def _offer(best_idx, best_sim, count, k, worst, cand, sim, o_self, use_mask, allowed):
    """Offer ``(cand, sim)`` to the top-k unless ``cand`` is the query itself (leave-one-
    out) or masked out. Returns the new count and the similarity a later candidate must
    reach (the k-th best once the list is full)."""
    if cand == o_self or (use_mask and allowed[cand] == 0):
        return count, worst
    count = _insert_topk(best_idx, best_sim, count, k, cand, sim)
    if count == k:
        worst = best_sim[k - 1]
    return count, worst


@njit(parallel=True, cache=True)
def knn_search(q_indptr, q_indices, q_data, q_norms,
               t_col_indptr, t_col_rows, t_col_data, t_norms,
               k, own, allowed, n_chunks):
    """The k most cosine-similar training rows of every query row.

    Parameters
    ----------
    q_* : CSR of the queries (sorted indices) and their row norms.
    t_col_* : CSC of the training rows (the inverted index feature → rows).
    t_norms : training row norms.
    k : number of neighbours.
    own : int64 per query: query ``i`` never has training row ``own[i]`` (leave-one-out
        when the queries are training rows); -1 for none.
    allowed : uint8 mask of usable training rows, or an empty array for all rows.
    n_chunks : number of query chunks run in parallel.

    Returns
    -------
    idx : int32 (n_queries, k), -1 where fewer than k rows have a positive similarity.
    sim : float64 (n_queries, k), 0 where idx is -1.
    """
    n_q = q_indptr.shape[0] - 1
    n_t = t_norms.shape[0]
    use_mask = allowed.shape[0] == n_t
    t_inv = np.zeros(n_t, dtype=np.float64)
    for r in range(n_t):
        if t_norms[r] > 0.0:
            t_inv[r] = 1.0 / t_norms[r]
    idx = np.full((n_q, k), -1, dtype=np.int32)
    sim = np.zeros((n_q, k), dtype=np.float64)
    chunk = (n_q + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        start = c * chunk
        stop = min(n_q, start + chunk)
        if start >= stop:
            continue
        acc = np.zeros(n_t, dtype=np.float64)
        seen = np.zeros(n_t, dtype=np.uint8)
        touched = np.empty(n_t, dtype=np.int32)
        bi = np.empty(k, dtype=np.int32)
        bs = np.empty(k, dtype=np.float64)
        for i in range(start, stop):
            nq = q_norms[i]
            if nq == 0.0:
                continue
            inv_nq = 1.0 / nq
            o_self = own[i]
            count = 0
            work = 0
            for p in range(q_indptr[i], q_indptr[i + 1]):
                j = q_indices[p]
                work += t_col_indptr[j + 1] - t_col_indptr[j]
            if 2 * work >= n_t:
                # dense mode: most rows are touched, so scan them all afterwards
                for p in range(q_indptr[i], q_indptr[i + 1]):
                    j = q_indices[p]
                    v = q_data[p]
                    for pp in range(t_col_indptr[j], t_col_indptr[j + 1]):
                        acc[t_col_rows[pp]] += v * t_col_data[pp]
                worst = 0.0  # a candidate must beat this (all sims > 0)
                for r in range(n_t):
                    s = acc[r] * inv_nq * t_inv[r]
                    acc[r] = 0.0
                    if s < worst or s <= 0.0:
                        continue
                    count, worst = _offer(bi, bs, count, k, worst, r, s, o_self, use_mask,
                                          allowed)
            else:
                worst = 0.0
                nt = 0
                for p in range(q_indptr[i], q_indptr[i + 1]):
                    j = q_indices[p]
                    v = q_data[p]
                    for pp in range(t_col_indptr[j], t_col_indptr[j + 1]):
                        r = t_col_rows[pp]
                        if seen[r] == 0:
                            seen[r] = 1
                            touched[nt] = r
                            nt += 1
                        acc[r] += v * t_col_data[pp]
                for q in range(nt):
                    r = touched[q]
                    d = acc[r]
                    acc[r] = 0.0
                    seen[r] = 0
                    s = d * inv_nq * t_inv[r]
                    if s < worst or s <= 0.0:
                        continue
                    count, worst = _offer(bi, bs, count, k, worst, r, s, o_self, use_mask,
                                          allowed)
            for q in range(count):
                idx[i, q] = bi[q]
                sim[i, q] = bs[q]
    return idx, sim


# -- binary data: integer overlap counts, training rows tiled and sorted by length ------------

#: Rows per block of the binary kernel's scan: 64 one-byte counts, tested 8 bytes at a time.
BINARY_BLOCK = 64
_HIGH = np.uint64(0x8080808080808080)
_ONES = np.uint64(0x0101010101010101)


@njit(cache=True, inline="always")
def _block_has_count(w, base, t):
    """Whether one of the 64 byte counts ``w[base:base + 8]`` (uint64 words) is >= t, for
    counts <= 127 and 1 <= t <= 128: adding 128 - t to each byte sets its high bit exactly
    when the byte is >= t, and never carries into the next byte."""
    kk = np.uint64(128 - t) * _ONES
    x = ((w[base] + kk) | (w[base + 1] + kk) | (w[base + 2] + kk) | (w[base + 3] + kk)
         | (w[base + 4] + kk) | (w[base + 5] + kk) | (w[base + 6] + kk) | (w[base + 7] + kk))
    return (x & _HIGH) != np.uint64(0)


@njit(cache=True, inline="always")
def _min_count(cm, m, inv_nq, blk_inv, worst):
    """The smallest overlap count >= cm whose similarity bound ``c * inv_nq * blk_inv``
    reaches ``worst`` (m + 1 when none <= m does). Rounding is monotone, so a row of the
    block (inverse norm <= blk_inv) with a smaller count has a similarity < worst."""
    while cm <= m and float(cm) * inv_nq * blk_inv < worst:
        cm += 1
    return cm


@njit(parallel=True, cache=True)
def knn_search_binary(q_indptr, q_indices, own, tile_indptr, tile_rows, t_inv, blk_inv, perm,
                      k, allowed, n_chunks, tile, q_block):
    """:func:`knn_search` for 0/1 data (every stored value 1), exactly: same neighbours,
    similarities (``float(count) * (1/|q|) * (1/|t|)``, as the general kernel computes
    them) and tie order.

    The training rows are renumbered by decreasing inverse norm (``perm[r]`` is the
    original index of renumbered row r, all-zero rows last) and cut into tiles of ``tile``
    rows, each with its own inverted index of uint16 local row numbers (``tile_indptr``
    (n_tiles, n_features + 1) into ``tile_rows``). A query counts its overlaps with the
    rows of one tile in a small uint8 accumulator (cache resident), then scans the tile in
    blocks of 64 rows: once it has k neighbours, a block is skipped when no count in it can
    reach the k-th similarity (``blk_inv`` is the largest inverse norm of each block; a
    word-parallel test checks 8 counts at once), and a query stops early when no row left
    can. ``q_block`` queries go through the tiles together. Queries must have at most 255
    non-zeros (the wrapper routes longer ones to :func:`knn_search`).
    """
    n_q = q_indptr.shape[0] - 1
    n_t = t_inv.shape[0]
    n_tiles = tile_indptr.shape[0]
    use_mask = allowed.shape[0] == n_t
    idx = np.full((n_q, k), -1, dtype=np.int32)
    sim = np.zeros((n_q, k), dtype=np.float64)
    chunk = (n_q + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        start = c * chunk
        stop = min(n_q, start + chunk)
        if start >= stop:
            continue
        cnt = np.zeros(tile, dtype=np.uint8)
        w = cnt.view(np.uint64)
        touched = np.empty(tile, dtype=np.int32)
        bi = np.empty((q_block, k), dtype=np.int32)
        bs = np.zeros((q_block, k), dtype=np.float64)
        count = np.zeros(q_block, dtype=np.int64)
        cms = np.ones(q_block, dtype=np.int64)
        done = np.zeros(q_block, dtype=np.uint8)
        for s0 in range(start, stop, q_block):
            nqb = min(stop, s0 + q_block) - s0
            for qi in range(nqb):
                count[qi] = 0
                cms[qi] = 1
                done[qi] = 1 if q_indptr[s0 + qi + 1] == q_indptr[s0 + qi] else 0
            for T in range(n_tiles):
                r0 = T * tile
                n_rows = min(tile, n_t - r0)
                nbt = (n_rows + BINARY_BLOCK - 1) // BINARY_BLOCK
                b0 = r0 // BINARY_BLOCK
                for qi in range(nqb):
                    if done[qi]:
                        continue
                    i = s0 + qi
                    m = q_indptr[i + 1] - q_indptr[i]
                    inv_nq = 1.0 / np.sqrt(float(m))
                    o_self = own[i]
                    ci = count[qi]
                    worst = bs[qi, k - 1] if ci == k else 0.0
                    cm = cms[qi]  # the smallest count that can still enter the top k
                    if ci == k:
                        cm = _min_count(cm, m, inv_nq, blk_inv[b0], worst)
                        if cm > m:  # no row of this or a later tile can
                            done[qi] = 1
                            continue
                    work = 0
                    for p in range(q_indptr[i], q_indptr[i + 1]):
                        j = q_indices[p]
                        work += tile_indptr[T, j + 1] - tile_indptr[T, j]
                    if work == 0:
                        cms[qi] = cm
                        continue
                    bir = bi[qi]
                    bsr = bs[qi]
                    if work >= 2 * nbt:
                        # dense: count, then scan the blocks that can hold a neighbour
                        for p in range(q_indptr[i], q_indptr[i + 1]):
                            j = q_indices[p]
                            for pp in range(tile_indptr[T, j], tile_indptr[T, j + 1]):
                                cnt[tile_rows[pp]] += 1
                        for bl in range(nbt):
                            if ci == k:
                                cm = _min_count(cm, m, inv_nq, blk_inv[b0 + bl], worst)
                                if cm > m:
                                    done[qi] = 1
                                    break
                            if m <= 127 and not _block_has_count(w, bl * 8, cm):
                                continue
                            for rl in range(bl * BINARY_BLOCK,
                                            min(n_rows, bl * BINARY_BLOCK + BINARY_BLOCK)):
                                cr = cnt[rl]
                                if cr < cm:
                                    continue
                                r = r0 + rl
                                s = float(cr) * inv_nq * t_inv[r]
                                if s < worst:
                                    continue
                                ci, worst = _offer(bir, bsr, ci, k, worst, perm[r], s,
                                                   o_self, use_mask, allowed)
                        cnt[:] = 0
                    else:
                        # sparse: visit only the rows touched
                        nt = 0
                        for p in range(q_indptr[i], q_indptr[i + 1]):
                            j = q_indices[p]
                            for pp in range(tile_indptr[T, j], tile_indptr[T, j + 1]):
                                rl = tile_rows[pp]
                                if cnt[rl] == 0:
                                    touched[nt] = rl
                                    nt += 1
                                cnt[rl] += 1
                        for q in range(nt):
                            rl = touched[q]
                            cr = cnt[rl]
                            cnt[rl] = 0
                            r = r0 + rl
                            s = float(cr) * inv_nq * t_inv[r]
                            if s < worst:
                                continue
                            ci, worst = _offer(bir, bsr, ci, k, worst, perm[r], s, o_self,
                                               use_mask, allowed)
                    count[qi] = ci
                    cms[qi] = cm
            for qi in range(nqb):
                for q in range(count[qi]):
                    idx[s0 + qi, q] = bi[qi, q]
                    sim[s0 + qi, q] = bs[qi, q]
    return idx, sim


@njit(parallel=True, cache=True)
def feature_label_topk(x_col_indptr, x_col_rows, x_col_data, f_norms,
                       y_indptr, y_indices, y_data, l_norms, n_labels, k, n_chunks):
    """For every feature column, its k most cosine-similar label columns over the
    training rows: sim(f_j, y_l) = sum_r x_rj y_rl / (||f_j|| ||y_l||).

    Returns ``idx`` int32 (n_features, k) (-1 padded) and ``sim`` float64.
    """
    n_f = x_col_indptr.shape[0] - 1
    idx = np.full((n_f, k), -1, dtype=np.int32)
    sim = np.zeros((n_f, k), dtype=np.float64)
    chunk = (n_f + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        start = c * chunk
        stop = min(n_f, start + chunk)
        if start >= stop:
            continue
        acc = np.zeros(n_labels, dtype=np.float64)
        seen = np.zeros(n_labels, dtype=np.uint8)
        touched = np.empty(n_labels, dtype=np.int32)
        bi = np.empty(k, dtype=np.int32)
        bs = np.empty(k, dtype=np.float64)
        for j in range(start, stop):
            fn = f_norms[j]
            if fn == 0.0:
                continue
            nt = 0
            for p in range(x_col_indptr[j], x_col_indptr[j + 1]):
                r = x_col_rows[p]
                v = x_col_data[p]
                for pp in range(y_indptr[r], y_indptr[r + 1]):
                    lab = y_indices[pp]
                    if seen[lab] == 0:
                        seen[lab] = 1
                        touched[nt] = lab
                        nt += 1
                    acc[lab] += v * y_data[pp]
            count = 0
            for q in range(nt):
                lab = touched[q]
                d = acc[lab]
                acc[lab] = 0.0
                seen[lab] = 0
                ln = l_norms[lab]
                if ln == 0.0:
                    continue
                s = d * (1.0 / fn) * (1.0 / ln)
                if s > 0.0:
                    count = _insert_topk(bi, bs, count, k, lab, s)
            for q in range(count):
                idx[j, q] = bi[q]
                sim[j, q] = bs[q]
    return idx, sim


@njit(cache=True)
def _score_row(i, nbr_idx, nbr_sim, k_ins, s_indptr, s_indices, s_data,
               q_indptr, q_indices, q_data, fl_idx, fl_sim, k_feat, lam,
               acc_ins, acc_fl, seen, touched):
    """Accumulate the instance and feature confidences of query i into the dense
    per-label buffers; returns (number of candidate labels, sum of sims, sum of x)."""
    nt = 0
    wsum = 0.0
    if lam > 0.0:
        for q in range(k_ins):
            r = nbr_idx[i, q]
            if r < 0:
                break
            w = nbr_sim[i, q]
            wsum += w
            for p in range(s_indptr[r], s_indptr[r + 1]):
                lab = s_indices[p]
                if seen[lab] == 0:
                    seen[lab] = 1
                    touched[nt] = lab
                    nt += 1
                acc_ins[lab] += w * s_data[p]
    xsum = 0.0
    if lam < 1.0:
        for p in range(q_indptr[i], q_indptr[i + 1]):
            j = q_indices[p]
            v = q_data[p]
            if v <= 0.0:
                continue
            xsum += v
            for q in range(k_feat):
                lab = fl_idx[j, q]
                if lab < 0:
                    break
                if seen[lab] == 0:
                    seen[lab] = 1
                    touched[nt] = lab
                    nt += 1
                acc_fl[lab] += v * fl_sim[j, q]
    return nt, wsum, xsum


@njit(parallel=True, cache=True)
def score_candidates(nbr_idx, nbr_sim, k_ins, s_indptr, s_indices, s_data,
                     q_indptr, q_indices, q_data, fl_idx, fl_sim, k_feat, lam,
                     n_labels, n_chunks):
    """LCIF scores of every query over its candidate labels only, as CSR.

    score(x, y) = lam * conf_INS(x, y) + (1 - lam) * conf_FL(x, y) with
    conf_INS = sum_{i in N_k(x)} sim(x, i) s_iy / sum_{i in N_k(x)} sim(x, i)
    (``s`` is the training label matrix, or the second-order scores for LCIF2) and
    conf_FL = sum_j x_j sim(f_j, y) [y in N_kfeat(f_j)] / sum_j x_j.
    Candidates are the labels of the neighbours and of the features' neighbourhoods;
    an entry is stored only when its score is positive. Rows have sorted indices.
    """
    n_q = nbr_idx.shape[0]
    counts = np.zeros(n_q + 1, dtype=np.int64)
    chunk = (n_q + n_chunks - 1) // n_chunks
    # pass 1: the number of positive-scored candidates per query
    for c in prange(n_chunks):
        start = c * chunk
        stop = min(n_q, start + chunk)
        if start >= stop:
            continue
        acc_ins = np.zeros(n_labels, dtype=np.float64)
        acc_fl = np.zeros(n_labels, dtype=np.float64)
        seen = np.zeros(n_labels, dtype=np.uint8)
        touched = np.empty(n_labels, dtype=np.int32)
        for i in range(start, stop):
            nt, wsum, xsum = _score_row(i, nbr_idx, nbr_sim, k_ins, s_indptr, s_indices,
                                        s_data, q_indptr, q_indices, q_data, fl_idx,
                                        fl_sim, k_feat, lam, acc_ins, acc_fl, seen, touched)
            m = 0
            for q in range(nt):
                lab = touched[q]
                v = 0.0
                if wsum > 0.0:
                    v += lam * (acc_ins[lab] / wsum)
                if xsum > 0.0:
                    v += (1.0 - lam) * (acc_fl[lab] / xsum)
                if v > 0.0:
                    m += 1
                acc_ins[lab] = 0.0
                acc_fl[lab] = 0.0
                seen[lab] = 0
            counts[i + 1] = m
    indptr = np.cumsum(counts)
    indices = np.empty(indptr[n_q], dtype=np.int32)
    data = np.empty(indptr[n_q], dtype=np.float64)
    # pass 2: fill
    for c in prange(n_chunks):
        start = c * chunk
        stop = min(n_q, start + chunk)
        if start >= stop:
            continue
        acc_ins = np.zeros(n_labels, dtype=np.float64)
        acc_fl = np.zeros(n_labels, dtype=np.float64)
        seen = np.zeros(n_labels, dtype=np.uint8)
        touched = np.empty(n_labels, dtype=np.int32)
        for i in range(start, stop):
            nt, wsum, xsum = _score_row(i, nbr_idx, nbr_sim, k_ins, s_indptr, s_indices,
                                        s_data, q_indptr, q_indices, q_data, fl_idx,
                                        fl_sim, k_feat, lam, acc_ins, acc_fl, seen, touched)
            labs = np.sort(touched[:nt])
            pos = indptr[i]
            for q in range(nt):
                lab = labs[q]
                v = 0.0
                if wsum > 0.0:
                    v += lam * (acc_ins[lab] / wsum)
                if xsum > 0.0:
                    v += (1.0 - lam) * (acc_fl[lab] / xsum)
                if v > 0.0:
                    indices[pos] = lab
                    data[pos] = v
                    pos += 1
                acc_ins[lab] = 0.0
                acc_fl[lab] = 0.0
                seen[lab] = 0
    return indptr, indices, data


@njit(parallel=True, cache=True)
def filter_neighbours(idx, sim, drop, k):
    """Keep, in order, the first k neighbours of each row whose index is not marked in
    ``drop`` (uint8 per training row). Returns the filtered lists and, per row, whether
    the result may be incomplete (the source list was full and ran out)."""
    n, kk = idx.shape
    out_i = np.full((n, k), -1, dtype=np.int32)
    out_s = np.zeros((n, k), dtype=np.float64)
    short = np.zeros(n, dtype=np.uint8)
    for i in prange(n):
        m = 0
        for q in range(kk):
            r = idx[i, q]
            if r < 0:
                break
            if drop[r]:
                continue
            out_i[i, m] = r
            out_s[i, m] = sim[i, q]
            m += 1
            if m == k:
                break
        if m < k and idx[i, kk - 1] >= 0:
            short[i] = 1
    return out_i, out_s, short


@njit(cache=True)
def _bucket(s, T):
    """Largest m with T[m] <= s (T ascending, T[0] = 0); -1 when s < T[0]."""
    nT = T.shape[0]
    m = int(s * (nT - 1))
    if m > nT - 1:
        m = nT - 1
    if m < 0:
        m = 0
    while m + 1 < nT and T[m + 1] <= s:
        m += 1
    while m >= 0 and T[m] > s:
        m -= 1
    return m


@njit(cache=True)
def _cardinality_threshold(A, B, lam, is_val, T, coarse, fine, target, top_label):
    """Replicates ``mlw.thresholds.CardinalityMatching`` (two-pass search, top-label
    rule) on the training rows of lam*A + (1-lam)*B; returns the index of T chosen."""
    n, L = A.shape
    nT = T.shape[0]
    hist = np.zeros(nT, dtype=np.int64)
    top = np.zeros(nT, dtype=np.int64)
    n_tr = 0
    for i in range(n):
        if is_val[i]:
            continue
        n_tr += 1
        rmax = -1.0
        for j in range(L):
            s = lam * A[i, j] + (1.0 - lam) * B[i, j]
            if s > rmax:
                rmax = s
            if s > 0.0:  # as the core: only positive scores are ever predicted
                hist[_bucket(s, T)] += 1
        if rmax > 0.0:
            top[_bucket(rmax, T)] += 1
    # count_ge[m] = #entries >= T[m]; below[m] = #rows with 0 < rowmax < T[m]
    count_ge = np.zeros(nT, dtype=np.int64)
    acc = 0
    for m in range(nT - 1, -1, -1):
        acc += hist[m]
        count_ge[m] = acc
    below = np.zeros(nT, dtype=np.int64)
    acc = 0
    for m in range(nT):
        below[m] = acc
        acc += top[m]
    best_m = coarse[0]
    best_v = -np.inf
    for c in range(coarse.shape[0]):
        m = coarse[c]
        cnt = count_ge[m] + (below[m] if top_label else 0)
        v = -abs(cnt / n_tr - target)
        if v > best_v:
            best_v = v
            best_m = m
    t2 = best_m
    v2 = -np.inf
    for c in range(fine.shape[1]):
        m = fine[best_m, c]
        if m < 0:
            continue
        cnt = count_ge[m] + (below[m] if top_label else 0)
        v = -abs(cnt / n_tr - target)
        if v > v2:
            v2 = v
            t2 = m
    return t2 if v2 > best_v else best_m


@njit(cache=True)
def _metrics_on_validation(A, B, lam, is_val, Y, t, top_label, out):
    """All selection metrics of the thresholded validation rows, written into ``out``:
    0 accuracy, 1 f1_example, 2 f1_micro, 3 f1_macro, 4 -hamming_loss,
    5 subset_accuracy (larger is better for all). Zero denominators follow
    mlw.evaluate: 1 where the prediction is perfect (nothing true, nothing predicted)."""
    n, L = A.shape
    tp_l = np.zeros(L, dtype=np.int64)
    fp_l = np.zeros(L, dtype=np.int64)
    fn_l = np.zeros(L, dtype=np.int64)
    pred = np.zeros(L, dtype=np.uint8)
    acc_sum = 0.0
    f1_sum = 0.0
    sub_sum = 0.0
    n_val = 0
    for i in range(n):
        if not is_val[i]:
            continue
        n_val += 1
        npred = 0
        rmax = -1.0
        jmax = 0
        for j in range(L):
            s = lam * A[i, j] + (1.0 - lam) * B[i, j]
            if s > rmax:
                rmax = s
                jmax = j
            if s >= t and s > 0.0:
                pred[j] = 1
                npred += 1
            else:
                pred[j] = 0
        if top_label and npred == 0 and rmax > 0.0:
            pred[jmax] = 1
            npred = 1
        tp = 0
        ntrue = 0
        for j in range(L):
            y = Y[i, j]
            ntrue += y
            if pred[j] and y:
                tp += 1
                tp_l[j] += 1
            elif pred[j]:
                fp_l[j] += 1
            elif y:
                fn_l[j] += 1
        union = npred + ntrue - tp
        acc_sum += 1.0 if union == 0 else tp / union
        den = npred + ntrue
        f1_sum += 1.0 if den == 0 else 2.0 * tp / den
        sub_sum += 1.0 if (tp == npred and tp == ntrue) else 0.0
    if n_val == 0:
        return
    TP = 0
    FP = 0
    FN = 0
    mac = 0.0
    for j in range(L):
        TP += tp_l[j]
        FP += fp_l[j]
        FN += fn_l[j]
        den = 2 * tp_l[j] + fp_l[j] + fn_l[j]
        mac += 1.0 if den == 0 else 2.0 * tp_l[j] / den
    out[0] = acc_sum / n_val
    out[1] = f1_sum / n_val
    den = 2 * TP + FP + FN
    out[2] = 1.0 if den == 0 else 2.0 * TP / den
    out[3] = mac / L
    out[4] = -(FP + FN) / (n_val * L)
    out[5] = sub_sum / n_val


@njit(parallel=True, cache=True)
def grid_evaluate(A, B, lams, is_val, Y, T, coarse, fine, target, top_label):
    """Score every (k_ins, k_feat, lambda) of one fold: A (n_k, n, L) instance
    confidences, B (n_kf, n, L) feature confidences of all rows (training rows scored
    without themselves, validation rows against the training rows only). The threshold
    is fitted by cardinality matching on the training rows; the metrics (see
    ``_metrics_on_validation``) are computed on the validation rows.
    Returns (n_k, n_kf, n_lam, 6)."""
    na = A.shape[0]
    nb = B.shape[0]
    nl = lams.shape[0]
    out = np.zeros((na, nb, nl, 6), dtype=np.float64)
    for ab in prange(na * nb):
        a = ab // nb
        b = ab % nb
        for q in range(nl):
            lam = lams[q]
            if (lam == 1.0 and b > 0) or (lam == 0.0 and a > 0):
                continue  # the other part has no weight: same as (a, 0) / (0, b)
            m = _cardinality_threshold(A[a], B[b], lam, is_val, T, coarse, fine, target,
                                       top_label)
            _metrics_on_validation(A[a], B[b], lam, is_val, Y, T[m], top_label,
                                   out[a, b, q])
    for a in range(na):
        for b in range(nb):
            for q in range(nl):
                if lams[q] == 1.0 and b > 0:
                    out[a, b, q] = out[a, 0, q]
                elif lams[q] == 0.0 and a > 0:
                    out[a, b, q] = out[0, b, q]
    return out
