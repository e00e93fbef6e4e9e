"""The tree's joint distribution P(y | x) for the decoders: exact size marginals and
draws.

A row reaches one leaf per label block (a vertical split sends it down every branch);
the blocks are independent given the leaves, so P(y | x) is the product of the leaves'
smoothed distributions ``P_l(s) = (count(s) + alpha Q_l(s)) / (n_l + alpha)``,
``Q_l`` the product of the leaf's Laplace marginals ``q_j`` (see
:mod:`mlw_lacovac._leaves`).

Size marginals: per leaf, the table ``A_l[i, k] = P_l(y_i = 1, |s| = k)`` and the size
distribution ``B_l[k] = P_l(|s| = k)``, each the observed subsets' share plus ``alpha``
times that of the independent ``Q_l`` (Poisson-binomial, each label's share taken out
again by the core's stable leave-one-out recursion); a row's
``P(y_j = 1, |y| = s)`` is ``A_l[j, .]`` of the block of ``j`` convolved with the size
distribution of the row's other blocks (prefix and suffix convolutions). Every term is
a sum of products of non-negative numbers, so nothing cancels.
"""

from __future__ import annotations

import numpy as np

from mlw.decoders import leave_one_out, poisson_binomial
from mlw.jit import kernel


@kernel
def leaf_size_tables(leaves, leaf_lab_ptr, leaf_sub_ptr, leaf_bits_ptr, sub_count, sub_bits,
                     leaf_n, logq1, alpha):
    """For each leaf of ``leaves`` (ids; entry ``u``) with ``m`` labels: ``A[aptr[u]:]``
    the (m, m + 1) row-major table ``P(y_i = 1, |s| = k)`` and ``B[bptr[u]:]`` the
    ``m + 1`` probabilities ``P(|s| = k)`` of the leaf's smoothed distribution.
    Returns ``(aptr, A, bptr, B)``."""
    U = leaves.size
    aptr = np.zeros(U + 1, np.int64)
    bptr = np.zeros(U + 1, np.int64)
    width = 1
    for u in range(U):
        m = leaf_lab_ptr[leaves[u] + 1] - leaf_lab_ptr[leaves[u]]
        aptr[u + 1] = aptr[u] + m * (m + 1)
        bptr[u + 1] = bptr[u] + m + 1
        width = max(width, m)
    A = np.zeros(aptr[U])
    B = np.zeros(bptr[U])
    q = np.empty(width)
    pb = np.empty(width + 1)
    r = np.empty(width)
    for u in range(U):
        leaf = leaves[u]
        l0 = leaf_lab_ptr[leaf]
        m = leaf_lab_ptr[leaf + 1] - l0
        a = aptr[u]
        b = bptr[u]
        den = leaf_n[leaf] + alpha
        s0 = leaf_sub_ptr[leaf]
        bp = leaf_bits_ptr[leaf]
        for s in range(s0, leaf_sub_ptr[leaf + 1]):
            w = sub_count[s] / den
            size = 0
            for i in range(m):
                size += sub_bits[bp + (s - s0) * m + i]
            B[b + size] += w
            for i in range(m):
                if sub_bits[bp + (s - s0) * m + i]:
                    A[a + i * (m + 1) + size] += w
        if alpha > 0.0:
            wq = alpha / den
            for i in range(m):
                q[i] = np.exp(logq1[l0 + i])
            poisson_binomial(q[:m], pb[:m + 1])
            for k in range(m + 1):
                B[b + k] += wq * pb[k]
            for i in range(m):
                leave_one_out(pb[:m + 1], q[i], r[:m])
                for k in range(1, m + 1):
                    A[a + i * (m + 1) + k] += wq * q[i] * r[k - 1]
    return aptr, A, bptr, B


@kernel(inline="always")
def _convolve(x, nx, y, ny, out):
    """``out[:nx + ny - 1]`` = the convolution of ``x[:nx]`` and ``y[:ny]``; returns its
    length."""
    for t in range(nx + ny - 1):
        out[t] = 0.0
    for i in range(nx):
        xi = x[i]
        if xi == 0.0:
            continue
        for k in range(ny):
            out[i + k] += xi * y[k]
    return nx + ny - 1


@kernel
def add_size_marginals(reached, table_of, leaf_lab_ptr, leaf_labels, aptr, A, bptr, B,
                       weight, out):
    """Adds ``weight`` times each row's ``P(y_j = 1, |y| = s)`` into ``out`` (n, L, L),
    entry ``[i, j, s - 1]``. ``reached`` (n, max_leaves) holds the leaf ids each row
    reaches (padded with -1), ``table_of[leaf]`` the leaf's entry in the tables of
    :func:`leaf_size_tables`."""
    n, L, _ = out.shape
    nmax = reached.shape[1]
    pre = np.zeros((nmax + 1, L + 1))
    suf = np.zeros((nmax + 1, L + 1))
    plen = np.zeros(nmax + 1, np.int64)
    slen = np.zeros(nmax + 1, np.int64)
    rest = np.zeros(L + 1)
    for r in range(n):
        nb = 0
        while nb < nmax and reached[r, nb] >= 0:
            nb += 1
        pre[0, 0] = 1.0
        plen[0] = 1
        for c in range(nb):
            u = table_of[reached[r, c]]
            plen[c + 1] = _convolve(pre[c], plen[c], B[bptr[u]:], bptr[u + 1] - bptr[u],
                                    pre[c + 1])
        suf[nb, 0] = 1.0
        slen[nb] = 1
        for c in range(nb - 1, -1, -1):
            u = table_of[reached[r, c]]
            slen[c] = _convolve(suf[c + 1], slen[c + 1], B[bptr[u]:], bptr[u + 1] - bptr[u],
                                suf[c])
        for c in range(nb):
            leaf = reached[r, c]
            u = table_of[leaf]
            m = leaf_lab_ptr[leaf + 1] - leaf_lab_ptr[leaf]
            nr = _convolve(pre[c], plen[c], suf[c + 1], slen[c + 1], rest)
            a = aptr[u]
            for i in range(m):
                j = leaf_labels[leaf_lab_ptr[leaf] + i]
                for k in range(1, m + 1):
                    p = A[a + i * (m + 1) + k] * weight
                    if p == 0.0:
                        continue
                    for t in range(nr):
                        out[r, j, k + t - 1] += p * rest[t]


@kernel
def sample_leaves(reached, pick, leaf_lab_ptr, leaf_labels, leaf_sub_ptr, leaf_bits_ptr,
                  sub_count, sub_bits, leaf_n, logq1, alpha, seed, out):
    """Draws ``out[r, t]`` (uint8, label vectors) for every ``pick[r, t]``: in each leaf
    the row reaches, an observed subset with probability ``count(s) / (n + alpha)``,
    else (probability ``alpha / (n + alpha)``) independent labels with the leaf's
    Laplace marginals."""
    np.random.seed(seed)
    n, T = pick.shape
    nmax = reached.shape[1]
    for r in range(n):
        for t in range(T):
            if not pick[r, t]:
                continue
            for c in range(nmax):
                leaf = reached[r, c]
                if leaf < 0:
                    break
                l0 = leaf_lab_ptr[leaf]
                m = leaf_lab_ptr[leaf + 1] - l0
                s0 = leaf_sub_ptr[leaf]
                s1 = leaf_sub_ptr[leaf + 1]
                v = np.random.random() * (leaf_n[leaf] + alpha)
                if v < leaf_n[leaf] or alpha <= 0.0:
                    s = s0
                    acc = sub_count[s0]
                    while acc <= v and s < s1 - 1:
                        s += 1
                        acc += sub_count[s]
                    bp = leaf_bits_ptr[leaf] + (s - s0) * m
                    for i in range(m):
                        out[r, t, leaf_labels[l0 + i]] = sub_bits[bp + i]
                else:
                    for i in range(m):
                        out[r, t, leaf_labels[l0 + i]] = (
                            1 if np.random.random() < np.exp(logq1[l0 + i]) else 0)
