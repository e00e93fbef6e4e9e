"""Numba kernels of the decoders: plain functions over arrays, one row at a time.

No validation happens here (the decoders in :mod:`mlw.decoders` validate). The size
marginals of a row are an (L, S) array ``P`` with ``P[j, s - 1] = P(y_j = 1, |y| = s)``
for ``s = 1..S`` (sizes above ``S`` have probability 0, or are cut off by the caller),
and ``p0 = P(y = 0)``.
"""

from __future__ import annotations

import numpy as np

from mlw.jit import kernel


@kernel
def _gfm_row(P, p0, beta2, y_out):
    """The General F-measure Maximizer (Dembczyński et al., NeurIPS 2011) for one row.

    With ``Delta[j, k] = sum_s P[j, s - 1] (1 + beta2) / (beta2 s + k)``, the best set
    of size ``k >= 1`` is the ``k`` labels of largest ``Delta[:, k]`` and its expected
    F-beta is their sum; the empty set's is ``p0`` (F(0, 0) = 1). Writes the best set
    into ``y_out`` (uint8, length L) and returns its expected F-beta. Ties: the smaller
    set, then the lower label indices. Sizes above the number ``m`` of labels with any
    mass are never better than size ``m`` (``Delta`` falls with ``k``), so they are not
    searched.
    """
    L, S = P.shape
    active = np.empty(L, dtype=np.int64)
    m = 0
    for j in range(L):
        for s in range(S):
            if P[j, s] > 0.0:
                active[m] = j
                m += 1
                break
    for j in range(L):
        y_out[j] = 0
    best = p0
    best_k = 0
    col = np.empty(m, dtype=np.float64)
    best_idx = np.empty(m, dtype=np.int64)
    for k in range(1, m + 1):
        for a in range(m):
            j = active[a]
            acc = 0.0
            for s in range(S):
                acc += P[j, s] / (beta2 * (s + 1) + k)
            col[a] = -acc * (1.0 + beta2)
        order = np.argsort(col, kind="mergesort")
        e = 0.0
        for r in range(k):
            e -= col[order[r]]
        if e > best:
            best = e
            best_k = k
            for r in range(k):
                best_idx[r] = active[order[r]]
    for r in range(best_k):
        y_out[best_idx[r]] = 1
    return best


@kernel
def gfm(P, p0, beta2):
    """:func:`_gfm_row` for every row: ``P`` (n, L, S), ``p0`` (n,). Returns
    ``(Y uint8 (n, L), expected F-beta (n,))``."""
    n, L, _ = P.shape
    Y = np.zeros((n, L), dtype=np.uint8)
    value = np.empty(n, dtype=np.float64)
    for i in range(n):
        value[i] = _gfm_row(P[i], p0[i], beta2, Y[i])
    return Y, value


@kernel
def poisson_binomial(p, q):
    """``q[s] = P(sum_j y_j = s)`` for independent ``y_j ~ Bernoulli(p[j])``."""
    L = p.shape[0]
    for s in range(L + 1):
        q[s] = 0.0
    q[0] = 1.0
    for j in range(L):
        pj = p[j]
        for s in range(j + 1, 0, -1):
            q[s] = q[s] * (1.0 - pj) + q[s - 1] * pj
        q[0] *= 1.0 - pj


@kernel
def leave_one_out(q, pj, r):
    """``r[s] = P(sum_{l != j} y_l = s)`` from the full distribution ``q`` (length L + 1)
    by undoing label ``j``'s convolution: forward when ``pj <= 1/2``, backward otherwise
    (each recursion divides by the larger of ``pj``, ``1 - pj``, so errors do not grow).
    ``r`` has length L; negatives from rounding are set to 0."""
    L = r.shape[0]
    if pj <= 0.5:
        prev = 0.0
        for s in range(L):
            v = (q[s] - pj * prev) / (1.0 - pj)
            r[s] = v
            prev = v
    else:
        nxt = 0.0
        for s in range(L, 0, -1):
            v = (q[s] - (1.0 - pj) * nxt) / pj
            r[s - 1] = v
            nxt = v
    for s in range(L):
        if r[s] < 0.0:
            r[s] = 0.0


@kernel
def gfm_independent(M, beta2, tail):
    """GFM under label independence (the plug-in rule for learners that give marginals
    only): each row's size marginals are ``P(y_j = 1, |y| = s) = p_j P(|y_{-j}| = s - 1)``,
    exact through the Poisson-binomial distribution, with sizes beyond the point where
    the remaining size mass falls below ``tail`` left out. ``M`` (n, L) marginals.
    Returns ``(Y uint8 (n, L), expected F-beta (n,))``."""
    n, L = M.shape
    Y = np.zeros((n, L), dtype=np.uint8)
    value = np.empty(n, dtype=np.float64)
    q = np.empty(L + 1, dtype=np.float64)
    r = np.empty(L, dtype=np.float64)
    P = np.empty((L, L), dtype=np.float64)
    for i in range(n):
        p = M[i]
        poisson_binomial(p, q)
        S = L
        rest = 0.0
        while S > 1:
            rest += q[S]
            if rest >= tail:
                break
            S -= 1
        for j in range(L):
            leave_one_out(q, p[j], r)
            for s in range(S):
                P[j, s] = p[j] * r[s]
        value[i] = _gfm_row(P[:, :S], q[0], beta2, Y[i])
    return Y, value


@kernel
def gfm_samples(samples, beta2):
    """GFM with the size marginals estimated from label vectors drawn from the
    learner's joint: ``samples`` uint8 (n, T, L). Returns ``(Y, estimated expected
    F-beta)``."""
    n, T, L = samples.shape
    Y = np.zeros((n, L), dtype=np.uint8)
    value = np.empty(n, dtype=np.float64)
    P = np.zeros((L, L), dtype=np.float64)
    sizes = np.empty(T, dtype=np.int64)
    for i in range(n):
        S = 1
        empty = 0
        for t in range(T):
            c = 0
            for j in range(L):
                c += samples[i, t, j]
            sizes[t] = c
            if c > S:
                S = c
            if c == 0:
                empty += 1
        for j in range(L):
            for s in range(S):
                P[j, s] = 0.0
        for t in range(T):
            c = sizes[t]
            if c == 0:
                continue
            for j in range(L):
                if samples[i, t, j]:
                    P[j, c - 1] += 1.0 / T
        value[i] = _gfm_row(P[:, :S], empty / T, beta2, Y[i])
    return Y, value


@kernel
def jaccard_topk_samples(samples, scores):
    """The set of the ``k`` top-scoring labels (``k = 0..L``) with the largest mean
    Jaccard index over the label vectors ``samples`` uint8 (n, T, L) (J(0, 0) = 1).
    ``scores`` (n, L) rank the labels (ties: lower index first). Returns
    ``(Y uint8 (n, L), the mean Jaccard index of the chosen set (n,))``."""
    n, T, L = samples.shape
    Y = np.zeros((n, L), dtype=np.uint8)
    value = np.empty(n, dtype=np.float64)
    rank = np.empty(L, dtype=np.int64)
    total = np.zeros(L + 1, dtype=np.float64)
    hits = np.zeros(L + 1, dtype=np.int64)
    for i in range(n):
        order = np.argsort(-scores[i], kind="mergesort")
        for r in range(L):
            rank[order[r]] = r
        for k in range(L + 1):
            total[k] = 0.0
        for t in range(T):
            for k in range(L + 1):
                hits[k] = 0
            size = 0
            for j in range(L):
                if samples[i, t, j]:
                    size += 1
                    hits[rank[j] + 1] += 1
            tp = 0
            for k in range(L + 1):
                tp += hits[k]
                union = k + size - tp
                if union == 0:
                    total[k] += 1.0
                else:
                    total[k] += tp / union
        best_k = 0
        for k in range(1, L + 1):
            if total[k] > total[best_k]:
                best_k = k
        for r in range(best_k):
            Y[i, order[r]] = 1
        value[i] = total[best_k] / T
    return Y, value
