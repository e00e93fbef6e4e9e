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
from numba import njit


@njit(cache=True)
def log_sigmoid(z: float) -> float:
    """log(1 / (1 + exp(-z))) without overflow."""
    if z >= 0.0:
        return -np.log1p(np.exp(-z))
    return z - np.log1p(np.exp(z))


@njit(cache=True)
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


@njit(cache=True)
def pcc_exact_linear(A, W):
    """Exact PCC inference by depth-first enumeration of all ``2**L`` label vectors.

    Returns ``(marginals float64 (n, L), mode uint8 (n, L), mode_log_proba (n,))``.
    The marginals are normalised by the enumerated total mass (1 up to rounding).
    """
    n, L = A.shape
    marg = np.zeros((n, L), dtype=np.float64)
    mode = np.zeros((n, L), dtype=np.uint8)
    mode_lp = np.empty(n, dtype=np.float64)
    z = np.empty((L + 1, L), dtype=np.float64)   # z[d, j]: logit of link j given y_<d
    lp = np.empty(L + 1, dtype=np.float64)       # log-probability of the prefix y_<d
    state = np.zeros(L + 1, dtype=np.int64)      # next value to try at depth d (2: done)
    y = np.zeros(L, dtype=np.uint8)
    for i in range(n):
        for j in range(L):
            z[0, j] = A[i, j]
        lp[0] = 0.0
        state[:] = 0
        best = -np.inf
        total = 0.0
        d = 0
        while d >= 0:
            if d == L:
                p = np.exp(lp[L])
                total += p
                for j in range(L):
                    if y[j]:
                        marg[i, j] += p
                if lp[L] > best:
                    best = lp[L]
                    for j in range(L):
                        mode[i, j] = y[j]
                d -= 1
                continue
            s = state[d]
            if s == 2:
                state[d] = 0
                d -= 1
                continue
            state[d] = s + 1
            y[d] = s
            if s == 1:
                lp[d + 1] = lp[d] + log_sigmoid(z[d, d])
                for j in range(d + 1, L):
                    z[d + 1, j] = z[d, j] + W[j, d]
            else:
                lp[d + 1] = lp[d] + log_sigmoid(-z[d, d])
                for j in range(d + 1, L):
                    z[d + 1, j] = z[d, j]
            d += 1
        for j in range(L):
            marg[i, j] /= total
        mode_lp[i] = best
    return marg, mode, mode_lp


@njit(cache=True)
def _lex_less(a, b):
    for j in range(a.shape[0]):
        if a[j] != b[j]:
            return a[j] < b[j]
    return False


@njit(cache=True)
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
    cur_y = np.zeros((B, L), dtype=np.uint8)
    cur_z = np.zeros((B, L), dtype=np.float64)
    cur_lp = np.zeros(B, dtype=np.float64)
    new_y = np.zeros((B, L), dtype=np.uint8)
    new_z = np.zeros((B, L), dtype=np.float64)
    new_lp = np.zeros(B, dtype=np.float64)
    cand_lp = np.empty(2 * B, dtype=np.float64)
    for i in range(n):
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
