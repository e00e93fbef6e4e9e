"""Numba kernels of :mod:`mlw.neighbors`: exact k-nearest-neighbour search.

Plain functions over arrays (CSR/CSC as ``indptr, indices, data``), ``@kernel`` (:mod:`mlw.jit`),
no Python objects and no validation: :class:`mlw.neighbors.NeighborIndex` validates.
Parallel kernels split the queries into ``n_chunks`` chunks run with ``prange``; each
chunk allocates its accumulators once, so memory is ``n_chunks × n_index`` plus the
``(n_queries, k)`` outputs, never ``n_queries × n_index``. ``knn_search`` and
``topk_from_products`` have serial twins (``*_serial``, the same per-row function called
once for all rows) that the wrapper uses for small searches; ``knn_self_search`` is the
leave-one-out query of the indexed rows, each pair visited once (serial).

Every kernel keeps, per query, the k best candidates by a *score* that is larger for a
nearer row: the cosine similarity, or minus the squared Euclidean distance. Ties are
broken by the lower row index, so results are deterministic whatever the order in which
candidates are visited. Cosine keeps only positive similarities (a row sharing no
feature with the query is no neighbour); Euclidean keeps every row.

One kernel is public, for plugins' own numba kernels: :func:`scatter_touched`, the
sparse accumulation of weighted postings with the list of rows touched, reached as
``mlw.neighbors.scatter_touched``. Everything else here is private to
:mod:`mlw.neighbors`.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from mlw.jit import kernel

#: ``metric`` codes of the kernels.
COSINE = 0
EUCLIDEAN = 1


@kernel
def row_sq_norms(indptr, data):
    """Sum of squares of every CSR row (sequential, in index order)."""
    n = indptr.shape[0] - 1
    out = np.zeros(n, dtype=np.float64)
    for i in range(n):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * data[p]
        out[i] = s
    return out


@kernel
def dense_row_sq_norms(X):
    """:func:`row_sq_norms` of a dense matrix: the same sums (zeros add nothing), so a
    row has the same norm dense or CSR."""
    n, d = X.shape
    out = np.zeros(n, dtype=np.float64)
    for i in range(n):
        s = 0.0
        for j in range(d):
            v = X[i, j]
            if v != 0.0:
                s += v * v
        out[i] = s
    return out


@kernel
def row_norms(indptr, data):
    """Euclidean norm of every CSR row: the square root of :func:`row_sq_norms`."""
    return np.sqrt(row_sq_norms(indptr, data))


@kernel
def _inverse_norms(sq):
    """1/|t| from the squared norms (0 for an all-zero row)."""
    out = np.zeros(sq.shape[0], dtype=np.float64)
    for r in range(sq.shape[0]):
        if sq[r] > 0.0:
            out[r] = 1.0 / np.sqrt(sq[r])
    return out


@kernel
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


@kernel
def _offer(best_idx, best_sim, count, k, worst, cand, sim, o_self, use_mask, allowed):
    """Offer ``(cand, sim)`` to the top-k unless ``cand`` is the query's excluded row
    (leave-one-out) or masked out. Returns the new count and the score a later candidate
    must reach (the k-th best once the list is full)."""
    if cand == o_self or (use_mask and allowed[cand] == 0):
        return count, worst
    count = _insert_topk(best_idx, best_sim, count, k, cand, sim)
    if count == k:
        worst = best_sim[k - 1]
    return count, worst


@kernel
def _axpy(a, b, v):
    """``a += v * b`` over two equal-length views (a loop over whole views, which LLVM
    vectorises; an offset ``range(i + 1, n)`` loop ran ~3x slower)."""
    for r in range(a.shape[0]):
        a[r] += v * b[r]


@kernel
def _scatter(acc, rows, data, lo, hi, v):
    """Add ``v`` times the postings ``lo:hi`` (``rows``, ``data``) to ``acc``."""
    for pp in range(lo, hi):
        acc[rows[pp]] += v * data[pp]


@kernel
def scatter_touched(acc, seen, touched, nt, rows, data, lo, hi, v):
    """Add ``v`` times the postings ``lo:hi`` (``rows``, ``data``) to ``acc``, listing
    in ``touched[nt:]`` each row seen for the first time; returns the new count.

    Kernel API, public as ``mlw.neighbors.scatter_touched`` for plugins' numba code (LCIF
    sums its neighbours' label rows with it): a row ``r`` is new when ``seen[r] == 0``,
    and is then marked ``seen[r] = 1``. The caller owns the buffers (``acc`` and
    ``seen`` as long as the largest row index + 1, ``touched`` as long as the number
    of distinct rows) and resets ``acc`` and ``seen`` at the rows of ``touched[:nt]``
    between queries. Each row gets ``acc[r] += v * data[p]`` in posting order."""
    for pp in range(lo, hi):
        r = rows[pp]
        if seen[r] == 0:
            seen[r] = 1
            touched[nt] = r
            nt += 1
        acc[r] += v * data[pp]
    return nt


@kernel
def _query_start(nq2, cos):
    """A query's start, from its squared norm ``nq2``: ``(skip, 1/|q|, worst)``.

    ``skip``: a cosine query of norm 0 has no neighbour (no positive similarity).
    ``1/|q|`` is 0 for a zero norm (Euclidean). ``worst`` is the score a candidate must
    reach: cosine similarities must be positive (0.0); every Euclidean row qualifies."""
    if cos and nq2 == 0.0:
        return True, 0.0, 0.0
    inv_nq = 1.0 / np.sqrt(nq2) if nq2 > 0.0 else 0.0
    return False, inv_nq, 0.0 if cos else -np.inf


@kernel
def _knn_search_rows(q_indptr, q_indices, q_data, q_sq, t_col_indptr, t_col_rows,
                     t_col_data, t_sq, t_order, t_inv, t_dense, t_dense_pos, k, own,
                     allowed, use_mask, cos, start, stop, idx, sim):
    """:func:`knn_search` for the queries ``start:stop``, into ``idx``/``sim``."""
    n_t = t_sq.shape[0]
    has_dense = t_dense_pos.shape[0] > 0
    acc = np.zeros(n_t, dtype=np.float64)
    seen = np.zeros(n_t, dtype=np.uint8)
    touched = np.empty(n_t, dtype=np.int32)
    bi = np.empty(k, dtype=np.int32)
    bs = np.empty(k, dtype=np.float64)
    for i in range(start, stop):
        nq2 = q_sq[i]
        skip, inv_nq, worst = _query_start(nq2, cos)
        if skip:
            continue
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
                f = t_dense_pos[j] if has_dense else -1
                if f >= 0:
                    # a frequent feature: one contiguous pass over its dense column
                    # (adding v * 0 leaves a row's sum unchanged, so every row gets the
                    # same additions in the same order as through the postings)
                    _axpy(acc, t_dense[f], v)
                else:
                    _scatter(acc, t_col_rows, t_col_data, t_col_indptr[j],
                             t_col_indptr[j + 1], v)
            for r in range(n_t):
                if cos:
                    s = acc[r] * inv_nq * t_inv[r]
                    acc[r] = 0.0
                    if s < worst or s <= 0.0:
                        continue
                else:
                    s = -(nq2 + t_sq[r] - 2.0 * acc[r])
                    acc[r] = 0.0
                    if s < worst:
                        continue
                count, worst = _offer(bi, bs, count, k, worst, r, s, o_self, use_mask,
                                      allowed)
        else:
            nt = 0
            for p in range(q_indptr[i], q_indptr[i + 1]):
                j = q_indices[p]
                nt = scatter_touched(acc, seen, touched, nt, t_col_rows, t_col_data,
                                     t_col_indptr[j], t_col_indptr[j + 1], q_data[p])
            for q in range(nt):
                r = touched[q]
                d = acc[r]
                acc[r] = 0.0
                if cos:
                    seen[r] = 0
                    s = d * inv_nq * t_inv[r]
                    if s < worst or s <= 0.0:
                        continue
                else:
                    s = -(nq2 + t_sq[r] - 2.0 * d)
                    if s < worst:
                        continue
                count, worst = _offer(bi, bs, count, k, worst, r, s, o_self, use_mask,
                                      allowed)
            if not cos:
                # untouched rows: dot product 0, nearest first by norm
                for q in range(n_t):
                    r = t_order[q]
                    if seen[r]:
                        continue
                    s = -(nq2 + t_sq[r] - 2.0 * 0.0)
                    if count == k and s < worst:
                        break
                    count, worst = _offer(bi, bs, count, k, worst, r, s, o_self,
                                          use_mask, allowed)
                for q in range(nt):
                    seen[touched[q]] = 0
        for q in range(count):
            idx[i, q] = bi[q]
            sim[i, q] = bs[q]


@kernel(parallel=True)
def knn_search(q_indptr, q_indices, q_data, q_sq,
               t_col_indptr, t_col_rows, t_col_data, t_sq, t_order, t_dense, t_dense_pos,
               k, own, allowed, n_chunks, metric):
    """The k nearest indexed rows of every CSR query row, through an inverted index.

    Parameters
    ----------
    q_* : CSR of the queries (sorted indices) and their squared row norms.
    t_col_* : CSC of the indexed rows (the inverted index feature → rows).
    t_sq : squared norms of the indexed rows (:func:`row_sq_norms`).
    t_order : the indexed rows by increasing norm (stable); Euclidean only (rows that share
        no feature with a query are visited in this order), may be empty for cosine.
    t_dense, t_dense_pos : the frequent features' columns as dense rows (n_frequent,
        n_index) and, per feature, its row in ``t_dense`` or -1; both empty for none. A
        query in dense mode adds a frequent feature's column in one contiguous pass
        instead of scattering its long postings (the same sums, bit for bit).
    k : number of neighbours.
    own : int64 per query: query ``i`` never has indexed row ``own[i]`` (leave-one-out
        when the queries are indexed rows); -1 for none.
    allowed : uint8 mask of usable indexed rows, or an empty array for all rows.
    n_chunks : number of query chunks run in parallel.
    metric : :data:`COSINE` or :data:`EUCLIDEAN`.

    Returns
    -------
    idx : int32 (n_queries, k), -1 where fewer than k rows qualify.
    score : float64 (n_queries, k): cosine similarity, or minus the squared Euclidean
        distance; 0 where idx is -1.

    Dot products are accumulated per query into one float64 accumulator per chunk; a
    query whose postings touch at least half the rows scans all rows afterwards
    (branch-light; its frequent features are added from ``t_dense``), otherwise only the
    rows it touched. For Euclidean, the rows it did
    not touch (dot product 0) are then offered in increasing norm until none can enter.
    """
    n_q = q_indptr.shape[0] - 1
    n_t = t_sq.shape[0]
    t_inv = _inverse_norms(t_sq)
    idx = np.full((n_q, k), -1, dtype=np.int32)
    sim = np.zeros((n_q, k), dtype=np.float64)
    chunk = (n_q + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        start = c * chunk
        stop = min(n_q, start + chunk)
        if start >= stop:
            continue
        _knn_search_rows(q_indptr, q_indices, q_data, q_sq, t_col_indptr, t_col_rows,
                         t_col_data, t_sq, t_order, t_inv, t_dense, t_dense_pos, k, own,
                         allowed,
                         allowed.shape[0] == n_t, metric == COSINE, start, stop, idx, sim)
    return idx, sim


@kernel
def knn_search_serial(q_indptr, q_indices, q_data, q_sq, t_col_indptr, t_col_rows,
                      t_col_data, t_sq, t_order, t_dense, t_dense_pos, k, own, allowed,
                      metric):
    """:func:`knn_search` in the calling thread (no parallel region): the same results,
    for searches too small to repay waking the worker threads."""
    n_q = q_indptr.shape[0] - 1
    n_t = t_sq.shape[0]
    t_inv = _inverse_norms(t_sq)
    idx = np.full((n_q, k), -1, dtype=np.int32)
    sim = np.zeros((n_q, k), dtype=np.float64)
    if n_q > 0:
        _knn_search_rows(q_indptr, q_indices, q_data, q_sq, t_col_indptr, t_col_rows,
                         t_col_data, t_sq, t_order, t_inv, t_dense, t_dense_pos, k, own,
                         allowed,
                         allowed.shape[0] == n_t, metric == COSINE, 0, n_q, idx, sim)
    return idx, sim


@kernel
def _shares_feature(indptr, indices, a, b):
    """Whether CSR rows ``a`` and ``b`` (sorted indices) store a common feature."""
    p, pe = indptr[a], indptr[a + 1]
    q, qe = indptr[b], indptr[b + 1]
    while p < pe and q < qe:
        if indices[p] == indices[q]:
            return True
        if indices[p] < indices[q]:
            p += 1
        else:
            q += 1
    return False


@kernel
def knn_self_search(indptr, indices, data, t_col_indptr, t_col_rows, t_col_data, t_sq,
                    t_order, t_dense, t_dense_pos, k, metric):
    """:func:`knn_search` of the indexed rows themselves, leave-one-out (``own[i] = i``,
    no mask), visiting every pair of rows once: the same results, half the work.

    ``indptr, indices, data`` are the indexed rows (CSR, sorted indices), the other
    arguments those of :func:`knn_search`. Row i accumulates its dot products with the
    rows ``r > i`` only (the postings past row i, the dense columns from ``i + 1``) and
    offers each pair to both top-k lists, with the score each side's own query would
    compute: the dot product has the same terms in the same (feature) order whichever
    row is the query, and cosine multiplies it by the query's inverse norm first, so the
    results are those of :func:`knn_search` bit for bit. Euclidean then offers each
    row the rows sharing no feature with it (dot product 0) in increasing norm, as
    :func:`knn_search` does, skipping the rows it already holds. Runs in the calling
    thread (the top-k lists of both rows of a pair are updated together).
    """
    n = t_sq.shape[0]
    n_f = t_col_indptr.shape[0] - 1
    cos = metric == COSINE
    has_dense = t_dense_pos.shape[0] > 0
    t_inv = _inverse_norms(t_sq)
    idx = np.full((n, k), -1, dtype=np.int32)
    sim = np.zeros((n, k), dtype=np.float64)
    count = np.zeros(n, dtype=np.int64)
    worst = np.full(n, 0.0 if cos else -np.inf)
    acc = np.zeros(n, dtype=np.float64)
    seen = np.zeros(n, dtype=np.uint8)
    touched = np.empty(n, dtype=np.int32)
    cursor = t_col_indptr[:n_f].copy()  # per feature: its first posting of a row > i
    for i in range(n):
        work = 0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            c = cursor[j]
            end = t_col_indptr[j + 1]
            while c < end and t_col_rows[c] <= i:
                c += 1
            cursor[j] = c
            work += end - c
        nq2 = t_sq[i]
        if cos and nq2 == 0.0:
            continue  # an all-zero row has no positive similarity with any row
        inv_i = t_inv[i]
        dense = 2 * work >= n - i - 1
        nt = 0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            v = data[p]
            f = t_dense_pos[j] if has_dense else -1
            if dense and f >= 0:
                _axpy(acc[i + 1:], t_dense[f, i + 1:], v)
            elif dense:
                _scatter(acc, t_col_rows, t_col_data, cursor[j], t_col_indptr[j + 1], v)
            else:
                nt = scatter_touched(acc, seen, touched, nt, t_col_rows, t_col_data,
                                     cursor[j], t_col_indptr[j + 1], v)
        n_scan = n - i - 1 if dense else nt
        for q in range(n_scan):
            r = i + 1 + q if dense else touched[q]
            d = acc[r]
            acc[r] = 0.0
            seen[r] = 0
            if cos:
                s_i = d * inv_i * t_inv[r]   # as query i computes it
                s_r = d * t_inv[r] * inv_i   # as query r computes it
            else:
                s_i = -(nq2 + t_sq[r] - 2.0 * d)
                s_r = s_i
            if s_i >= worst[i] and (s_i > 0.0 or not cos):
                count[i] = _insert_topk(idx[i], sim[i], count[i], k, r, s_i)
                if count[i] == k:
                    worst[i] = sim[i, k - 1]
            if s_r >= worst[r] and (s_r > 0.0 or not cos):
                count[r] = _insert_topk(idx[r], sim[r], count[r], k, i, s_r)
                if count[r] == k:
                    worst[r] = sim[r, k - 1]
    if not cos:
        # rows sharing no feature with row i (dot product 0), nearest first by norm
        for i in range(n):
            ci = count[i]
            wi = worst[i]
            bi = idx[i]
            bs = sim[i]
            for q in range(n):
                r = t_order[q]
                if r == i:
                    continue
                s = -(t_sq[i] + t_sq[r] - 2.0 * 0.0)
                if ci == k and s < wi:
                    break
                held = False
                for m in range(ci):
                    if bi[m] == r:
                        held = True
                        break
                if held or _shares_feature(indptr, indices, i, r):
                    continue
                ci = _insert_topk(bi, bs, ci, k, r, s)
                if ci == k:
                    wi = bs[k - 1]
            count[i] = ci
    return idx, sim


@kernel
def _topk_rows(G, q_sq, t_sq, t_inv, k, own, allowed, use_mask, cos, start, stop, idx, sim):
    """:func:`topk_from_products` for the queries ``start:stop``, into ``idx``/``sim``."""
    n_t = G.shape[1]
    bi = np.empty(k, dtype=np.int32)
    bs = np.empty(k, dtype=np.float64)
    for i in range(start, stop):
        nq2 = q_sq[i]
        skip, inv_nq, worst = _query_start(nq2, cos)
        if skip:
            continue
        o_self = own[i]
        count = 0
        for r in range(n_t):
            if cos:
                s = G[i, r] * inv_nq * t_inv[r]
                if s < worst or s <= 0.0:
                    continue
            else:
                s = -(nq2 + t_sq[r] - 2.0 * G[i, r])
                if s < worst:
                    continue
            count, worst = _offer(bi, bs, count, k, worst, r, s, o_self, use_mask, allowed)
        for q in range(count):
            idx[i, q] = bi[q]
            sim[i, q] = bs[q]


@kernel(parallel=True)
def topk_from_products(G, q_sq, t_sq, k, own, allowed, n_chunks, metric):
    """The k nearest indexed rows of each query from the dense dot products
    ``G = Q @ T.T`` (computed by BLAS in the wrapper): the scores of :func:`knn_search`
    (cosine ``G * (1/|q|) * (1/|t|)``, positive only; or ``-(|q|² + |t|² - 2G)``),
    the same tie order and the same ``own``/``allowed`` exclusions."""
    n_q, n_t = G.shape
    t_inv = _inverse_norms(t_sq)
    idx = np.full((n_q, k), -1, dtype=np.int32)
    sim = np.zeros((n_q, k), dtype=np.float64)
    chunk = (n_q + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        _topk_rows(G, q_sq, t_sq, t_inv, k, own, allowed, allowed.shape[0] == n_t,
                   metric == COSINE, c * chunk, min(n_q, c * chunk + chunk), idx, sim)
    return idx, sim


@kernel
def topk_from_products_serial(G, q_sq, t_sq, k, own, allowed, metric):
    """:func:`topk_from_products` in the calling thread (no parallel region): the same
    results, for products too small to repay waking the worker threads."""
    n_q, n_t = G.shape
    t_inv = _inverse_norms(t_sq)
    idx = np.full((n_q, k), -1, dtype=np.int32)
    sim = np.zeros((n_q, k), dtype=np.float64)
    _topk_rows(G, q_sq, t_sq, t_inv, k, own, allowed, allowed.shape[0] == n_t,
               metric == COSINE, 0, n_q, idx, sim)
    return idx, sim


# -- binary data: integer overlap counts, indexed rows tiled and sorted by length -------------

#: Rows per block of the binary kernel's scan: 64 one-byte counts, tested 8 bytes at a time.
BINARY_BLOCK = 64
_HIGH = np.uint64(0x8080808080808080)
_ONES = np.uint64(0x0101010101010101)


@kernel(inline="always")
def _block_has_count(w, base, t):
    """Whether one of the 64 byte counts ``w[base:base + 8]`` (uint64 words) is >= t, for
    counts <= 127 and 1 <= t <= 128: adding 128 - t to each byte sets its high bit exactly
    when the byte is >= t, and never carries into the next byte."""
    kk = np.uint64(128 - t) * _ONES
    x = ((w[base] + kk) | (w[base + 1] + kk) | (w[base + 2] + kk) | (w[base + 3] + kk)
         | (w[base + 4] + kk) | (w[base + 5] + kk) | (w[base + 6] + kk) | (w[base + 7] + kk))
    return (x & _HIGH) != np.uint64(0)


@kernel(inline="always")
def _min_count(cm, m, inv_nq, blk_inv, worst):
    """The smallest overlap count >= cm whose similarity bound ``c * inv_nq * blk_inv``
    reaches ``worst`` (m + 1 when none <= m does). Rounding is monotone, so a row of the
    block (inverse norm <= blk_inv) with a smaller count has a similarity < worst."""
    while cm <= m and float(cm) * inv_nq * blk_inv < worst:
        cm += 1
    return cm


@kernel(parallel=True)
def knn_search_binary(q_indptr, q_indices, own, tile_indptr, tile_rows, t_inv, blk_inv, perm,
                      k, allowed, n_chunks, tile, q_block):
    """Cosine :func:`knn_search` for 0/1 data (every stored value 1), exactly: same
    neighbours, similarities (``float(count) * (1/|q|) * (1/|t|)``, as the general
    kernel computes them) and tie order.

    The indexed rows are renumbered by decreasing inverse norm (``perm[r]`` is the
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
