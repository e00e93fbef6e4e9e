"""Numba kernels of the chain learners with linear links.

A chain of ``L`` linear links is given in *chain positions*: link ``j`` predicts the
``j``-th label of the chain with

    P(y_j = 1 | x, y_0..y_{j-1}) = sigmoid(A[i, j] + sum_{k < j} W[j, k] * y_k)

where ``A[i, j] = w_j · x_i + b_j`` is the feature part (computed by the wrapper, so
sparse ``X`` never reaches a kernel) and ``W`` is strictly lower triangular (the
weights of the chained labels). Inputs are validated by the wrappers; the kernels only
compute.

Tie-breaking, shared with the pure-NumPy inference of :mod:`mlw_baselines._inference`:
the mode is the label vector of highest log-probability, and among equal ones the
lexicographically smallest in chain order (``0 < 1``, position 0 most significant).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from mlw.jit import kernel


@kernel
def log_sigmoid(z: float) -> float:
    """log(1 / (1 + exp(-z))) without overflow."""
    if z >= 0.0:
        return -np.log1p(np.exp(-z))
    return z - np.log1p(np.exp(z))


@kernel
def chain_greedy_linear(A, W):
    """Classifier-chain greedy inference: ``y_j = 1`` iff ``P(y_j = 1 | x, ŷ_<j) >= 0.5``.

    Returns ``(Yhat uint8 (n, L), P float64 (n, L))`` where ``P[i, j]`` is the link's
    probability of ``y_j = 1`` along the greedy path.
    """
    n, L = A.shape
    Yhat = np.zeros((n, L), dtype=np.uint8)
    P = np.empty((n, L), dtype=np.float64)
    for i in range(n):
        for j in range(L):
            z = A[i, j]
            for k in range(j):
                if Yhat[i, k]:
                    z += W[j, k]
            p = np.exp(log_sigmoid(z))
            P[i, j] = p
            if p >= 0.5:
                Yhat[i, j] = 1
    return Yhat, P


@kernel
def pcc_exact_linear(A, W, n_chunks):
    """Exact PCC inference: :func:`epcc_exact_linear` with the one chain as its only
    member, in chain order (all ``2**L`` label vectors enumerated depth first in
    probability space, one exp per node, where a log-space enumeration takes two
    log-sigmoids).

    Returns ``(marginals float64 (n, L), mode uint8 (n, L), mode_log_proba (n,))`` in
    chain positions: the marginals normalised by the enumerated total mass (1 up to
    rounding), the most probable vector (ties: the lexicographically smallest in chain
    order) and the log of its probability. Memory: ``2**L`` floats per chunk.
    """
    L = A.shape[1]
    orders = np.arange(L).reshape(1, L)
    return epcc_exact_linear(np.ascontiguousarray(A),
                             np.ascontiguousarray(W).reshape(1, L, L), orders, n_chunks)


@kernel
def _lex_less(a, b):
    for j in range(a.shape[0]):
        if a[j] != b[j]:
            return a[j] < b[j]
    return False


@kernel
def _beam_search_row(A, i, W, B, cur_y, cur_z, cur_lp, new_y, new_z, new_lp, cand_lp):
    """Beam search for instance ``i``, in the given work arrays (``cur_*``/``new_*`` of
    ``B`` rows, ``cand_lp`` of ``2B``). Returns the final beam size; the beam is left in
    ``cur_y`` (label vectors in chain positions) and ``cur_lp`` (log-probabilities)."""
    L = A.shape[1]
    m = 1
    cur_lp[0] = 0.0
    for j in range(L):
        cur_z[0, j] = A[i, j]
        cur_y[0, j] = 0
    for d in range(L):
        for b in range(m):
            cand_lp[2 * b] = cur_lp[b] + log_sigmoid(-cur_z[b, d])
            cand_lp[2 * b + 1] = cur_lp[b] + log_sigmoid(cur_z[b, d])
        c = 2 * m
        order = np.argsort(-cand_lp[:c], kind="mergesort")
        keep = min(B, c)
        for r in range(keep):
            cidx = order[r]
            parent = cidx // 2
            v = cidx % 2
            new_lp[r] = cand_lp[cidx]
            for j in range(L):
                new_y[r, j] = cur_y[parent, j]
            new_y[r, d] = v
            for j in range(L):
                new_z[r, j] = cur_z[parent, j]
            if v == 1:
                for j in range(d + 1, L):
                    new_z[r, j] += W[j, d]
        for r in range(keep):
            cur_lp[r] = new_lp[r]
            for j in range(L):
                cur_y[r, j] = new_y[r, j]
                cur_z[r, j] = new_z[r, j]
        m = keep
    return m


@kernel
def _beam_buffers(B, L):
    """The work arrays of :func:`_beam_search_row` for a beam of ``B`` over ``L`` labels:
    ``(cur_y, cur_z, cur_lp, new_y, new_z, new_lp, cand_lp)``."""
    cur_y = np.zeros((B, L), dtype=np.uint8)
    cur_z = np.zeros((B, L), dtype=np.float64)
    cur_lp = np.zeros(B, dtype=np.float64)
    new_y = np.zeros((B, L), dtype=np.uint8)
    new_z = np.zeros((B, L), dtype=np.float64)
    new_lp = np.zeros(B, dtype=np.float64)
    cand_lp = np.empty(2 * B, dtype=np.float64)
    return cur_y, cur_z, cur_lp, new_y, new_z, new_lp, cand_lp


@kernel
def pcc_beam_linear(A, W, beam):
    """Beam-search PCC inference (Kumar et al., 2013): keep the ``beam`` most probable
    prefixes at every depth.

    Candidates at depth ``d`` are ordered (parent, value 0), (parent, value 1) for the
    parents in beam order, and the ``beam`` best kept by a stable sort on
    log-probability. Returns ``(marginals, mode, mode_log_proba)`` as
    :func:`pcc_exact_linear`, where the marginals are over the final beam only
    (normalised by its mass) and the mode is its best vector (lexicographic ties).
    With ``beam >= 2**L`` nothing is pruned and the result is the exact one.
    """
    n, L = A.shape
    marg = np.zeros((n, L), dtype=np.float64)
    mode = np.zeros((n, L), dtype=np.uint8)
    mode_lp = np.empty(n, dtype=np.float64)
    B = beam
    cur_y, cur_z, cur_lp, new_y, new_z, new_lp, cand_lp = _beam_buffers(B, L)
    for i in range(n):
        m = _beam_search_row(A, i, W, B, cur_y, cur_z, cur_lp, new_y, new_z, new_lp, cand_lp)
        best = 0
        for r in range(1, m):
            if cur_lp[r] > cur_lp[best] or (
                    cur_lp[r] == cur_lp[best] and _lex_less(cur_y[r], cur_y[best])):
                best = r
        top = cur_lp[best]
        total = 0.0
        for r in range(m):
            p = np.exp(cur_lp[r] - top)
            total += p
            for j in range(L):
                if cur_y[r, j]:
                    marg[i, j] += p
        for j in range(L):
            marg[i, j] /= total
            mode[i, j] = cur_y[best, j]
        mode_lp[i] = top
    return marg, mode, mode_lp


@kernel
def pcc_beam_final_linear(A, W, beam):
    """The final beams of :func:`pcc_beam_linear`: ``(vectors uint8 (n, b, L) in chain
    positions, log_proba (n, b))`` with ``b = min(beam, 2**L)``, in beam order."""
    n, L = A.shape
    B = beam
    b_out = B
    if L < 62 and (1 << L) < B:
        b_out = 1 << L
    out_y = np.zeros((n, b_out, L), dtype=np.uint8)
    out_lp = np.empty((n, b_out), dtype=np.float64)
    cur_y, cur_z, cur_lp, new_y, new_z, new_lp, cand_lp = _beam_buffers(B, L)
    for i in range(n):
        m = _beam_search_row(A, i, W, B, cur_y, cur_z, cur_lp, new_y, new_z, new_lp, cand_lp)
        for r in range(m):
            out_lp[i, r] = cur_lp[r]
            for j in range(L):
                out_y[i, r, j] = cur_y[r, j]
    return out_y, out_lp


# -- ensembles of probabilistic chains (EPCC) -------------------------------------------------
#
# Member k of an ensemble of m chains has its own order: chain position d predicts label
# orders[k, d]; its feature logits are the columns k*L .. k*L + L - 1 of A and its chained
# weights W[k] (chain positions, strictly lower triangular). The ensemble's joint model
# is the mixture P(y | x) = (1/m) sum_k P_k(y | x).


@kernel
def _mixture_table_row(A, W, orders, i, table, z, pr, p1, p0, code, state, bits):
    """Fill ``table`` (``2**L`` floats, indexed by the label vector in label order, label
    0 the most significant bit) with the mixture probability ``(1/m) sum_k P_k(y | x_i)``
    of every label vector: each member enumerates all vectors depth first (0 before 1),
    in probability space with one exp per node. The other arguments are work arrays
    (see :func:`_table_buffers`)."""
    m, L = orders.shape
    inv_m = 1.0 / m
    table[:] = 0.0
    for k in range(m):
        for d in range(L):
            bits[d] = np.int64(1) << (L - 1 - orders[k, d])
            z[0, d] = A[i, k * L + d]
        pr[0] = inv_m
        code[0] = 0
        state[:] = 0
        d = 0
        while d >= 0:
            if d == L:
                table[code[L]] += pr[L]
                d -= 1
                continue
            s = state[d]
            if s == 2:
                state[d] = 0
                d -= 1
                continue
            if s == 0:  # one exp per node, in probability space
                zz = z[d, d]
                e = np.exp(-abs(zz))
                if zz >= 0.0:
                    p1[d] = 1.0 / (1.0 + e)
                    p0[d] = e / (1.0 + e)
                else:
                    p1[d] = e / (1.0 + e)
                    p0[d] = 1.0 / (1.0 + e)
            state[d] = s + 1
            if s == 1:
                pr[d + 1] = pr[d] * p1[d]
                code[d + 1] = code[d] | bits[d]
                for j in range(d + 1, L):
                    z[d + 1, j] = z[d, j] + W[k, j, d]
            else:
                pr[d + 1] = pr[d] * p0[d]
                code[d + 1] = code[d]
                for j in range(d + 1, L):
                    z[d + 1, j] = z[d, j]
            d += 1


@kernel
def _table_buffers(L):
    """The work arrays of :func:`_mixture_table_row`: ``(table, z, pr, p1, p0, code,
    state, bits)``."""
    return (np.zeros(1 << L, dtype=np.float64), np.empty((L + 1, L), dtype=np.float64),
            np.empty(L + 1, dtype=np.float64), np.empty(L + 1, dtype=np.float64),
            np.empty(L + 1, dtype=np.float64), np.zeros(L + 1, dtype=np.int64),
            np.zeros(L + 1, dtype=np.int64), np.empty(L, dtype=np.int64))


@kernel(parallel=True)
def epcc_exact_linear(A, W, orders, n_chunks):
    """Exact inference of the mixture of ``m`` linear chains: every member enumerates all
    ``2**L`` label vectors (depth first, 0 before 1) and adds its
    probability of each to a table indexed by the vector in *label order* (label 0 the
    most significant bit; :func:`_mixture_table_row`).

    Returns ``(marginals (n, L), mode uint8 (n, L), mode_log_proba (n,))``, all in label
    order: the mixture's marginals and its most probable vector (ties: the
    lexicographically smallest in label order), with log of its mixture probability.
    Memory: one table of ``2**L`` floats per chunk of instances.
    """
    n = A.shape[0]
    L = orders.shape[1]
    size = 1 << L
    marg = np.zeros((n, L), dtype=np.float64)
    mode = np.zeros((n, L), dtype=np.uint8)
    mode_lp = np.empty(n, dtype=np.float64)
    chunk = (n + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        start = c * chunk
        stop = min(n, start + chunk)
        if start >= stop:
            continue
        table, z, pr, p1, p0, code, state, bits = _table_buffers(L)
        for i in range(start, stop):
            _mixture_table_row(A, W, orders, i, table, z, pr, p1, p0, code, state, bits)
            best = 0
            total = 0.0
            for v in range(size):
                p = table[v]
                total += p
                if p > table[best]:
                    best = v
                for j in range(L):
                    if (v >> (L - 1 - j)) & 1:
                        marg[i, j] += p
            for j in range(L):
                marg[i, j] /= total
                mode[i, j] = (best >> (L - 1 - j)) & 1
            mode_lp[i] = np.log(table[best])
    return marg, mode, mode_lp


@kernel
def mixture_size_marginals_linear(A, W, orders):
    """P(y_j = 1, |y| = s | x_i) of the mixture of ``m`` linear chains (as
    :func:`epcc_exact_linear`; one chain is a mixture of one), by enumerating all
    ``2**L`` label vectors: shape (n, L, L), entry ``[i, j, s - 1]``, label order,
    normalised by the enumerated total mass."""
    n = A.shape[0]
    L = orders.shape[1]
    size = 1 << L
    out = np.zeros((n, L, L), dtype=np.float64)
    table, z, pr, p1, p0, code, state, bits = _table_buffers(L)
    for i in range(n):
        _mixture_table_row(A, W, orders, i, table, z, pr, p1, p0, code, state, bits)
        total = 0.0
        for v in range(size):
            total += table[v]
        for v in range(1, size):
            p = table[v] / total
            c = 0
            for j in range(L):
                c += (v >> j) & 1
            for j in range(L):
                if (v >> (L - 1 - j)) & 1:
                    out[i, j, c - 1] += p
    return out


@kernel
def _sigmoid(z):
    """1 / (1 + exp(-z)) with one exp and no overflow."""
    if z >= 0.0:
        return 1.0 / (1.0 + np.exp(-z))
    e = np.exp(z)
    return e / (1.0 + e)


@kernel
def mixture_sample_linear(A, W, orders, n_samples, seed):
    """``n_samples`` label vectors per row drawn from the mixture of ``m`` linear chains
    (a member chosen uniformly, then its chain sampled link by link): uint8
    (n, n_samples, L) in label order. Until a draw's first positive label every link
    has its feature-only probability, computed once per row and member."""
    n = A.shape[0]
    m, L = orders.shape
    np.random.seed(seed)
    out = np.zeros((n, n_samples, L), dtype=np.uint8)
    z = np.empty(L, dtype=np.float64)
    base = np.empty((m, L), dtype=np.float64)
    for i in range(n):
        for k in range(m):
            for d in range(L):
                base[k, d] = _sigmoid(A[i, k * L + d])
        for t in range(n_samples):
            k = 0
            if m > 1:
                k = np.random.randint(0, m)
            d = 0
            while d < L:  # no positive yet: the links' feature-only probabilities
                if np.random.random() < base[k, d]:
                    break
                d += 1
            if d == L:
                continue
            out[i, t, orders[k, d]] = 1
            for j in range(d + 1, L):
                z[j] = A[i, k * L + j] + W[k, j, d]
            for e in range(d + 1, L):
                if np.random.random() < _sigmoid(z[e]):
                    out[i, t, orders[k, e]] = 1
                    for j in range(e + 1, L):
                        z[j] += W[k, j, e]
    return out


@kernel(parallel=True)
def mixture_log_proba_linear(A, W, orders, cand):
    """log P(y | x) under the mixture of ``m`` linear chains (unfloored), for the
    candidate vectors ``cand`` uint8 (n, C, L) in label order; returns (n, C).

    A member's chain rule costs ``O(L + |y| L)``: the logits start from the feature part
    and each positive label adds its column of chained weights to the later links.
    """
    n, C, L = cand.shape
    m = orders.shape[0]
    out = np.empty((n, C), dtype=np.float64)
    log_m = np.log(m)
    for i in prange(n):
        z = np.empty(L, dtype=np.float64)
        member_lp = np.empty(m, dtype=np.float64)
        for c in range(C):
            for k in range(m):
                for d in range(L):
                    z[d] = A[i, k * L + d]
                s = 0.0
                for d in range(L):
                    if cand[i, c, orders[k, d]]:
                        s += log_sigmoid(z[d])
                        for j in range(d + 1, L):
                            z[j] += W[k, j, d]
                    else:
                        s += log_sigmoid(-z[d])
                member_lp[k] = s
            top = member_lp.max()
            acc = 0.0
            for k in range(m):
                acc += np.exp(member_lp[k] - top)
            out[i, c] = top + np.log(acc) - log_m
    return out
