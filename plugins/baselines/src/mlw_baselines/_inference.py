"""Chain inference for any base classifier, in NumPy, batched over instances.

Every function takes a *link oracle* ``oracle(d, rows, prefix) -> p`` giving
``P(y_d = 1 | x_rows[m], y_<d = prefix[m])`` for ``m`` queries at once (chain
positions; ``rows`` indexes instances, ``prefix`` is uint8 of shape (m, d)), so the
classifier is called once per chain position on a whole batch. The semantics and
tie-breaking are those of the linear kernels in :mod:`mlw_baselines._kernels` (which
are the fast path for linear links); the tests check the two against each other and
against brute force.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import logsumexp

from mlw_baselines._base_estimator import LOG_PROBA_FLOOR

Oracle = Callable[[int, np.ndarray, np.ndarray], np.ndarray]


def _log_pair(p1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore"):
        return np.log1p(-p1), np.log(p1)


def greedy(oracle: Oracle, n: int, L: int) -> tuple[np.ndarray, np.ndarray]:
    """Classifier-chain greedy inference: ``(Yhat uint8, P float64)``, both (n, L)."""
    Yhat = np.zeros((n, L), dtype=np.uint8)
    P = np.empty((n, L))
    rows = np.arange(n)
    for d in range(L):
        p1 = oracle(d, rows, Yhat[:, :d])
        P[:, d] = p1
        Yhat[:, d] = p1 >= 0.5
    return Yhat, P


def chain_log_proba(oracle: Oracle, Y: np.ndarray, rows: np.ndarray | None = None, *,
                    floor: bool = True) -> np.ndarray:
    """log P(Y | x) by the chain rule, each factor floored at ``PROBA_FLOOR`` (unless
    ``floor=False``). Row ``r`` of ``Y`` belongs to instance ``rows[r]`` (default: ``r``)."""
    n, L = Y.shape
    out = np.zeros(n)
    rows = np.arange(n) if rows is None else rows
    low = LOG_PROBA_FLOOR if floor else -np.inf
    for d in range(L):
        p1 = oracle(d, rows, Y[:, :d])
        p = np.where(Y[:, d] == 1, p1, 1.0 - p1)
        with np.errstate(divide="ignore"):
            out += np.maximum(np.log(p), low)
    return out


def all_label_vectors(L: int) -> np.ndarray:
    """All ``2**L`` vectors in lexicographic order (position 0 most significant)."""
    codes = np.arange(2 ** L, dtype=np.int64)
    shifts = np.arange(L - 1, -1, -1, dtype=np.int64)
    return ((codes[:, None] >> shifts[None, :]) & 1).astype(np.uint8)


def leaf_log_proba(oracle: Oracle, idx: np.ndarray, L: int) -> np.ndarray:
    """log P(y | x_i) of all ``2**L`` vectors (columns in the order of
    :func:`all_label_vectors`) for the instances ``idx``, level by level: one oracle call
    per chain position on ``len(idx) * 2**d`` (instance, prefix) pairs."""
    c = idx.size
    lp = np.zeros((c, 1))
    prefixes = np.zeros((1, 0), dtype=np.uint8)
    for d in range(L):
        m = prefixes.shape[0]
        rows = np.repeat(idx, m)
        p1 = oracle(d, rows, np.tile(prefixes, (c, 1))).reshape(c, m)
        l0, l1 = _log_pair(p1)
        lp = np.stack([lp + l0, lp + l1], axis=2).reshape(c, 2 * m)
        prefixes = np.concatenate(
            [np.repeat(prefixes, 2, axis=0),
             np.tile(np.array([[0], [1]], dtype=np.uint8), (m, 1))], axis=1)
    return lp


def exact(oracle: Oracle, n: int, L: int, *, max_rows: int = 1 << 16
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact inference by enumerating all ``2**L`` vectors, level by level, for chunks
    of instances with at most ``max_rows`` oracle queries per call.

    Returns ``(marginals, mode, mode_log_proba)``.
    """
    marg = np.zeros((n, L))
    mode = np.zeros((n, L), dtype=np.uint8)
    mode_lp = np.empty(n)
    chunk = max(1, max_rows // (1 << max(L - 1, 0)))
    vectors = all_label_vectors(L)
    for start in range(0, n, chunk):
        idx = np.arange(start, min(n, start + chunk))
        c = idx.size
        lp = leaf_log_proba(oracle, idx, L)
        best = np.argmax(lp, axis=1)  # first maximum = lexicographically smallest
        top = lp[np.arange(c), best]
        w = np.exp(lp - top[:, None])
        w /= w.sum(axis=1, keepdims=True)
        marg[idx] = w @ vectors
        mode[idx] = vectors[best]
        mode_lp[idx] = top
    return marg, mode, mode_lp


def beam_search(oracle: Oracle, n: int, L: int, width: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """The final beams: ``(vectors uint8 (n, b, L), log_proba (n, b))`` in chain
    positions and beam order, ``b = min(width, 2**L)`` (as
    :func:`mlw_baselines._kernels.pcc_beam_final_linear`)."""
    all_rows = np.arange(n)
    cur_y = np.zeros((n, 1, L), dtype=np.uint8)
    cur_lp = np.zeros((n, 1))
    for d in range(L):
        m = cur_lp.shape[1]
        rows = np.repeat(all_rows, m)
        p1 = oracle(d, rows, cur_y[:, :, :d].reshape(n * m, d)).reshape(n, m)
        l0, l1 = _log_pair(p1)
        cand_lp = np.stack([cur_lp + l0, cur_lp + l1], axis=2).reshape(n, 2 * m)
        keep = min(width, 2 * m)
        order = np.argsort(-cand_lp, axis=1, kind="stable")[:, :keep]
        parent, value = order // 2, (order % 2).astype(np.uint8)
        cur_y = cur_y[all_rows[:, None], parent]
        cur_y[:, :, d] = value
        cur_lp = np.take_along_axis(cand_lp, order, axis=1)
    return cur_y, cur_lp


def best_vectors(vectors: np.ndarray, lp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per instance, the vector of highest ``lp`` among ``vectors`` (n, b, L), ties to
    the lexicographically smallest: ``(best (n, L), best_lp (n,))``."""
    n = lp.shape[0]
    top = lp.max(axis=1)
    best = np.argmax(lp, axis=1)
    ties = np.flatnonzero((lp == top[:, None]).sum(axis=1) > 1)
    for i in ties:  # lexicographically smallest among equally probable vectors
        cands = np.flatnonzero(lp[i] == top[i])
        keys = vectors[i, cands]
        best[i] = cands[np.lexsort(keys.T[::-1])[0]]
    return vectors[np.arange(n), best].copy(), top


def beam(oracle: Oracle, n: int, L: int, width: int
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Beam search keeping the ``width`` most probable prefixes per instance.

    Returns ``(marginals, mode, mode_log_proba)``; the marginals are over the final
    beam, normalised by its mass (see :func:`mlw_baselines._kernels.pcc_beam_linear`).
    """
    cur_y, cur_lp = beam_search(oracle, n, L, width)
    mode, top = best_vectors(cur_y, cur_lp)
    w = np.exp(cur_lp - top[:, None])
    w /= w.sum(axis=1, keepdims=True)
    marg = np.einsum("nb,nbl->nl", w, cur_y.astype(np.float64))
    return marg, mode, top


# -- mixtures of chains (EPCC) ------------------------------------------------------------


def label_order_codes(order: np.ndarray) -> np.ndarray:
    """For each row of :func:`all_label_vectors` in the chain positions of ``order``,
    its index among the same vectors in label order (label 0 most significant)."""
    L = order.size
    vectors = all_label_vectors(L).astype(np.int64)
    return vectors @ (np.int64(1) << (L - 1 - order.astype(np.int64)))


def mixture_table(oracles: list[Oracle], orders: np.ndarray, idx: np.ndarray, L: int,
                  codes: list[np.ndarray] | None = None) -> np.ndarray:
    """The mixture probability ``(1/m) sum_k P_k(y | x_i)`` of all ``2**L`` vectors for
    the instances ``idx``: shape (len(idx), 2**L), columns in the order of
    :func:`all_label_vectors` in *label order*."""
    m = len(oracles)
    codes = [label_order_codes(o) for o in orders] if codes is None else codes
    table = np.zeros((idx.size, 1 << L))
    for oracle, code in zip(oracles, codes, strict=False):
        table[:, code] += np.exp(leaf_log_proba(oracle, idx, L)) / m
    return table


def mixture_exact(oracles: list[Oracle], orders: np.ndarray, n: int, L: int, *,
                  max_rows: int = 1 << 16) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact inference of the mixture ``(1/m) sum_k P_k`` of ``m`` chains with link
    oracles ``oracles`` and chain orders ``orders`` (m, L): ``(marginals, mode,
    mode_log_proba)`` in label order, with the semantics of
    :func:`mlw_baselines._kernels.epcc_exact_linear`."""
    marg = np.zeros((n, L))
    mode = np.zeros((n, L), dtype=np.uint8)
    mode_lp = np.empty(n)
    chunk = max(1, max_rows // (1 << max(L - 1, 0)))
    vectors = all_label_vectors(L)
    codes = [label_order_codes(o) for o in orders]
    for start in range(0, n, chunk):
        idx = np.arange(start, min(n, start + chunk))
        table = mixture_table(oracles, orders, idx, L, codes)
        best = np.argmax(table, axis=1)
        marg[idx] = (table @ vectors) / table.sum(axis=1, keepdims=True)
        mode[idx] = vectors[best]
        mode_lp[idx] = np.log(table[np.arange(idx.size), best])
    return marg, mode, mode_lp


def mixture_size_marginals(oracles: list[Oracle], orders: np.ndarray, n: int, L: int, *,
                           max_rows: int = 1 << 16) -> np.ndarray:
    """P(y_j = 1, |y| = s | x_i) of the mixture by enumeration, shape (n, L, L) (entry
    ``[i, j, s - 1]``, label order), as
    :func:`mlw_baselines._kernels.mixture_size_marginals_linear`."""
    out = np.zeros((n, L, L))
    chunk = max(1, max_rows // (1 << max(L - 1, 0)))
    vectors = all_label_vectors(L).astype(np.float64)
    sizes = vectors.sum(axis=1).astype(np.int64)
    by_size = (sizes[:, None] == np.arange(1, L + 1)[None, :]).astype(np.float64)
    codes = [label_order_codes(o) for o in orders]
    for start in range(0, n, chunk):
        idx = np.arange(start, min(n, start + chunk))
        table = mixture_table(oracles, orders, idx, L, codes)
        table /= table.sum(axis=1, keepdims=True)
        out[idx] = np.einsum("iv,vj,vs->ijs", table, vectors, by_size, optimize=True)
    return out


def mixture_sample(oracles: list[Oracle], orders: np.ndarray, n: int, L: int,
                   n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """``n_samples`` label vectors per instance drawn from the mixture (a member chosen
    uniformly, then its chain sampled link by link, one oracle call per chain position
    and member on all draws at once): uint8 (n, n_samples, L) in label order."""
    out = np.zeros((n, n_samples, L), dtype=np.uint8)
    member = rng.integers(0, len(oracles), size=(n, n_samples))
    for k, (oracle, order) in enumerate(zip(oracles, orders, strict=False)):
        rows, draws = np.nonzero(member == k)
        prefix = np.zeros((rows.size, L), dtype=np.uint8)
        for d in range(L):
            p1 = oracle(d, rows, prefix[:, :d]) if rows.size else np.zeros(0)
            prefix[:, d] = rng.random(rows.size) < p1
        out[rows[:, None], draws[:, None], order[None, :]] = prefix
    return out


def mixture_log_proba(oracles: list[Oracle], orders: np.ndarray,
                      cand: np.ndarray) -> np.ndarray:
    """log of the mixture probability (unfloored) of candidate vectors ``cand`` uint8
    (n, C, L) in label order, shape (n, C)."""
    n, C, L = cand.shape
    rows = np.repeat(np.arange(n), C)
    flat = cand.reshape(n * C, L)
    member = np.stack([chain_log_proba(oracle, np.ascontiguousarray(flat[:, order]), rows,
                                       floor=False)
                       for oracle, order in zip(oracles, orders, strict=False)])
    return (logsumexp(member, axis=0) - np.log(len(oracles))).reshape(n, C)
