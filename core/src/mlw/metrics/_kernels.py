"""Numba kernels behind the metrics: plain functions over raw arrays.

No validation happens here (the wrappers in :mod:`mlw.metrics.counts` and
:mod:`mlw.metrics.ranking` validate); CSR matrices arrive as ``indptr, indices`` (and
``data`` for scores) with sorted, duplicate-free column indices and no stored zeros in
label matrices.
"""

from __future__ import annotations

import numpy as np

from mlw.jit import kernel


@kernel
def confusion_counts_csr(n_labels, t_indptr, t_indices, p_indptr, p_indices):
    """Per-instance (tp, fp, fn) and per-label (tp, fp, fn) of two CSR label matrices:
    a merge of the sorted column indices of each row, O(nnz(Y_true) + nnz(Y_pred)).
    (Two dense matrices are counted with numpy: :func:`mlw.metrics.counts.confusion_counts`.)"""
    n = t_indptr.shape[0] - 1
    inst = np.zeros((n, 3), dtype=np.int64)
    lab = np.zeros((n_labels, 3), dtype=np.int64)
    for i in range(n):
        a = t_indptr[i]
        a_end = t_indptr[i + 1]
        b = p_indptr[i]
        b_end = p_indptr[i + 1]
        tp = 0
        fp = 0
        fn = 0
        while a < a_end and b < b_end:
            ja = t_indices[a]
            jb = p_indices[b]
            if ja == jb:
                tp += 1
                lab[ja, 0] += 1
                a += 1
                b += 1
            elif ja < jb:
                fn += 1
                lab[ja, 2] += 1
                a += 1
            else:
                fp += 1
                lab[jb, 1] += 1
                b += 1
        while a < a_end:
            fn += 1
            lab[t_indices[a], 2] += 1
            a += 1
        while b < b_end:
            fp += 1
            lab[p_indices[b], 1] += 1
            b += 1
        inst[i, 0] = tp
        inst[i, 1] = fp
        inst[i, 2] = fn
    return inst, lab


@kernel
def _sift_down(a, root, end):
    """Restore the max-heap property of ``a[:end]`` below ``root``."""
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and a[child + 1] > a[child]:
            child += 1
        if a[root] >= a[child]:
            return
        t = a[root]
        a[root] = a[child]
        a[child] = t
        root = child


@kernel
def _sort(a):
    """Sort a float64 vector in place, ascending (heapsort: plain loops, which numba
    compiles in a fraction of the time of ``np.sort``'s quicksort; scores are checked
    finite before they get here)."""
    n = a.shape[0]
    for root in range(n // 2 - 1, -1, -1):
        _sift_down(a, root, n)
    for end in range(n - 1, 0, -1):
        t = a[0]
        a[0] = a[end]
        a[end] = t
        _sift_down(a, np.int64(0), end)   # not a literal 0: one specialisation


@kernel
def _n_at_least(srt, s):
    """#{k : srt[k] >= s} of an ascending vector (binary search for the first >= s)."""
    lo = 0
    hi = srt.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if srt[mid] < s:
            lo = mid + 1
        else:
            hi = mid
    return srt.shape[0] - lo


@kernel
def _rank_row(scores, relevant, out, i):
    """Ranking quantities of one instance.

    ``scores`` is the full (L,) score row, ``relevant`` the (sorted) indices of its
    true labels. Writes into ``out[i]``: one-error (0/1), coverage, ranking loss and
    average precision, with ties counted pessimistically as scikit-learn does: the rank
    of label j is #{k : s_k >= s_j}.
    """
    L = scores.shape[0]
    m = relevant.shape[0]
    if m == 0:
        # No relevant label: the ranking has no meaning (scikit-learn: coverage 0,
        # ranking loss 0, LRAP 1); one-error 0 likewise.
        out[i, 0] = 0.0
        out[i, 1] = 0.0
        out[i, 2] = 0.0
        out[i, 3] = 1.0
        return
    srt = np.empty(L, dtype=np.float64)
    for k in range(L):
        srt[k] = scores[k]
    _sort(srt)
    rel = np.empty(m, dtype=np.float64)
    rel_srt = np.empty(m, dtype=np.float64)
    for a in range(m):
        rel[a] = scores[relevant[a]]
        rel_srt[a] = rel[a]
    _sort(rel_srt)
    max_rank = 0
    pairs = 0
    ap = 0.0
    best_rel = rel_srt[m - 1]
    for a in range(m):
        s = rel[a]
        # rank among all labels and among the relevant ones (ties pessimistic)
        rank = _n_at_least(srt, s)
        rank_rel = _n_at_least(rel_srt, s)
        if rank > max_rank:
            max_rank = rank
        pairs += rank - rank_rel
        ap += rank_rel / rank
    # one-error: the top of the ranking is not certainly relevant, i.e. some
    # irrelevant label scores at least as high as the best relevant one
    top_rank = _n_at_least(srt, best_rel)
    top_rank_rel = _n_at_least(rel_srt, best_rel)
    out[i, 0] = 1.0 if top_rank > top_rank_rel else 0.0
    out[i, 1] = max_rank
    if m == L:
        out[i, 2] = 0.0
        out[i, 3] = 1.0
    else:
        out[i, 2] = pairs / (m * (L - m))
        out[i, 3] = ap / m


@kernel
def ranking_csr_scores(n_labels, s_indptr, s_indices, s_data, t_indptr,
                       t_indices):
    """Per-instance (one_error, coverage, ranking_loss, average_precision) for CSR scores
    (an absent score is 0) and CSR true labels, one dense row buffer at a time. (Dense
    scores are ranked with numpy: :func:`mlw.metrics.ranking.ranking_table`.)"""
    n = s_indptr.shape[0] - 1
    out = np.empty((n, 4), dtype=np.float64)
    row = np.zeros(n_labels, dtype=np.float64)
    for i in range(n):
        for k in range(s_indptr[i], s_indptr[i + 1]):
            row[s_indices[k]] = s_data[k]
        _rank_row(row, t_indices[t_indptr[i]:t_indptr[i + 1]], out, i)
        for k in range(s_indptr[i], s_indptr[i + 1]):
            row[s_indices[k]] = 0.0
    return out


@kernel
def capped_log_loss_dense(scores, t_indptr, t_indices, cap):
    """Sum over all n*L terms of min(-log p(y_ij), cap) for dense scores."""
    n, L = scores.shape
    total = 0.0
    for i in range(n):
        a = t_indptr[i]
        a_end = t_indptr[i + 1]
        for j in range(L):
            if a < a_end and t_indices[a] == j:
                p = scores[i, j]
                a += 1
            else:
                p = 1.0 - scores[i, j]
            if p <= 0.0:
                total += cap
            else:
                v = -np.log(p)
                total += v if v < cap else cap
    return total


@kernel
def capped_log_loss_csr(n_labels, s_indptr, s_indices, s_data, t_indptr, t_indices,
                        cap):
    """The same sum for CSR scores (an absent score is 0), in O(nnz): an absent score
    on an absent label costs -log(1) = 0, on a true label it costs the cap."""
    n = s_indptr.shape[0] - 1
    total = 0.0
    for i in range(n):
        a = t_indptr[i]
        a_end = t_indptr[i + 1]
        b = s_indptr[i]
        b_end = s_indptr[i + 1]
        while a < a_end or b < b_end:
            ja = t_indices[a] if a < a_end else n_labels
            jb = s_indices[b] if b < b_end else n_labels
            if ja == jb:
                p = s_data[b]
                a += 1
                b += 1
            elif ja < jb:
                p = 0.0  # true label without a stored score
                a += 1
            else:
                p = 1.0 - s_data[b]
                b += 1
            if p <= 0.0:
                total += cap
            else:
                v = -np.log(p)
                total += v if v < cap else cap
    return total
