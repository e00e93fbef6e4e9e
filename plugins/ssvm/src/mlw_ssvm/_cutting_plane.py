"""The 1-slack margin-rescaling cutting-plane algorithm with a constraint cache
(Joachims, Finley and Yu 2009, Algorithm 4 and the "-w 4" variant of SVM-struct; the
paper's Algorithm 1).

The problem (Eq. 6 of Díez et al.) is

    min_{w, xi >= 0}  1/2 |w|^2 + C xi
    s.t.  <w, (1/n) sum_i x_i (x) (y_i - ybar_i)>  >=  (1/n) sum_i Delta(y_i, ybar_i) - xi
          for every (ybar_1, ..., ybar_n),

with w = (w_1, ..., w_L), w_l in R^(p+1) (the last coordinate multiplies the constant
bias feature). Each iteration

1. computes the label scores s_il = <w_l, (x_i, bias)> and the slack xi the working set
   requires;
2. looks in the per-example constraint cache for a joint constraint violated by more
   than xi + max(epsilon, epsilon_est / 10) (epsilon_est: the violation measured at the
   last oracle pass), as SVM-struct does; if there is none, it calls the loss-augmented
   argmax oracle on every example, adds the answers to the cache, and stops when that
   most violated constraint is violated by at most xi + epsilon;
3. adds the constraint to the working set and re-solves the dual QP (:mod:`._qp`);
   constraints whose dual variable stayed 0 for 50 consecutive solves are dropped
   (SVM-struct's rule).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from mlw_ssvm import _kernels as K
from mlw_ssvm._qp import dual_objective, solve_dual, working_set_slack

#: A constraint whose dual variable stayed 0 for this many QP solves leaves the
#: working set (SVM-struct's remove_inactive_constraints(..., 50)).
INACTIVE_LIMIT = 50


@dataclass
class CuttingPlaneResult:
    """What :func:`solve` found.

    ``W`` has shape (p + 1, L): column l is w_l, the last row the bias weights.
    """

    W: np.ndarray
    converged: bool
    n_iter: int  # QP solves (constraints added)
    n_oracle_passes: int  # passes of the argmax oracle over all examples
    n_cached: int  # constraints taken from the cache without an oracle pass
    n_constraints: int  # working-set size at the end
    slack: float  # xi of the final working set
    violation: float  # last measured violation beyond xi (<= epsilon when converged)
    primal: float  # 1/2 |w|^2 + C xi over the working set
    dual: float  # dual objective over the working set
    state: dict  # working set and cache, to warm-start another solve on the same data


def scores(X, W: np.ndarray, bias: float) -> np.ndarray:
    """s_il = <w_l, x_i> + bias * w_{p, l}, as a dense (n, L) array."""
    p = W.shape[0] - 1
    S = X @ W[:p]
    S = np.asarray(S, dtype=np.float64)
    if bias != 0.0:
        S += bias * W[p]
    return np.ascontiguousarray(S)


def constraint_sum(X, bias: float, Y: np.ndarray, Ybar: np.ndarray) -> np.ndarray:
    """g = (1/n) sum_i (x_i, bias) (x) (y_i - ybar_i), shape (p + 1, L)."""
    if sp.issparse(X):
        return K.constraint_sum_csr(X.indptr, X.indices, X.data, X.shape[1], float(bias),
                                    Y, Ybar)
    return K.constraint_sum_dense(X, float(bias), Y, Ybar)


def solve(X, Y: np.ndarray, *, loss_code: int, beta2: float, C: float, epsilon: float,
          bias: float, cache_size: int, max_iter: int,
          state: dict | None = None) -> CuttingPlaneResult:
    """Train the 1-slack structural SVM on validated ``X`` (float64 ndarray or canonical
    CSR) and dense uint8 ``Y``.

    ``state`` (the ``state`` of an earlier result on the same data, loss and bias)
    starts from that run's working set and cache: its constraints are valid cutting
    planes for any C, so a run for another C starts from the QP over them instead of
    from w = 0 (the answer again meets the epsilon criterion; it is not bit-identical
    to a cold start).

    BLAS is limited to one thread: every product here is small (the working set has
    tens of constraints), and on a busy machine spinning OpenBLAS threads made a
    40 x 40 eigendecomposition 50 times slower (12 ms instead of 0.2 ms of CPU).
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _solve(X, Y, loss_code=loss_code, beta2=beta2, C=C, epsilon=epsilon,
                      bias=bias, cache_size=cache_size, max_iter=max_iter, state=state)


def _solve(X, Y: np.ndarray, *, loss_code: int, beta2: float, C: float, epsilon: float,
           bias: float, cache_size: int, max_iter: int,
           state: dict | None) -> CuttingPlaneResult:
    n, p = X.shape
    L = Y.shape[1]
    dim = (p + 1) * L
    W = np.zeros((p + 1, L))
    cap = 16
    G = np.empty((cap, dim))
    delta = np.empty(cap)
    H = np.empty((cap, cap))
    last_active = np.empty(cap, np.int64)
    alpha = np.zeros(0)
    k = 0  # working-set size
    if cache_size > 0:
        cache_Y = np.zeros((n, cache_size, L), np.uint8)
        cache_loss = np.zeros((n, cache_size))
        cache_count = np.zeros(n, np.int64)
    if state is not None:
        k = state["G"].shape[0]
        cap = max(16, 2 * k)
        G = np.empty((cap, dim))
        G[:k] = state["G"]
        delta = np.empty(cap)
        delta[:k] = state["delta"]
        H = np.empty((cap, cap))
        H[:k, :k] = G[:k] @ G[:k].T
        last_active = np.zeros(cap, np.int64)
        alpha = solve_dual(H[:k, :k], delta[:k], C)
        W = (alpha @ G[:k]).reshape(p + 1, L)
        if cache_size > 0 and state["cache_Y"] is not None \
                and state["cache_Y"].shape[1] == cache_size:
            cache_Y = state["cache_Y"].copy()
            cache_loss = state["cache_loss"].copy()
            cache_count = state["cache_count"].copy()
    eps_est = 0.0
    n_iter = n_passes = n_cached = 0
    converged = False
    violation = np.inf
    while True:
        S = scores(X, W, bias)
        xi = working_set_slack(H[:k, :k], delta[:k], alpha)
        from_cache = False
        if cache_size > 0 and k > 0:
            Ybar, lo = K.cache_best(S, Y, cache_Y, cache_loss, cache_count)
            viol = lo.mean() - K.margin_gap(S, Y, Ybar)
            from_cache = viol - xi > max(epsilon, eps_est / 10.0)
        if not from_cache:
            Ybar, lo = K.most_violated(loss_code, beta2, S, Y)
            n_passes += 1
            if cache_size > 0:
                K.cache_insert(S, Y, Ybar, lo, cache_Y, cache_loss, cache_count)
            viol = lo.mean() - K.margin_gap(S, Y, Ybar)
            violation = max(0.0, viol - xi)
            eps_est = violation
            if violation <= epsilon:
                converged = True
                break
        if n_iter >= max_iter:
            break
        # add the joint constraint to the working set
        if k == cap:
            cap *= 2
            G = np.concatenate([G, np.empty((cap - k, dim))])
            delta = np.concatenate([delta, np.empty(cap - k)])
            H2 = np.empty((cap, cap))
            H2[:k, :k] = H[:k, :k]
            H = H2
            last_active = np.concatenate([last_active, np.empty(cap - k, np.int64)])
        g = constraint_sum(X, bias, Y, Ybar).ravel()
        G[k] = g
        delta[k] = lo.mean()
        row = G[:k] @ g
        H[k, :k] = row
        H[:k, k] = row
        H[k, k] = g @ g
        last_active[k] = n_iter
        k += 1
        n_iter += 1
        n_cached += int(from_cache)
        alpha = solve_dual(H[:k, :k], delta[:k], C, start=alpha)
        last_active[:k][alpha > 0] = n_iter
        keep = n_iter - last_active[:k] <= INACTIVE_LIMIT
        if not keep.all():
            idx = np.flatnonzero(keep)
            m = idx.size
            G[:m] = G[idx]
            delta[:m] = delta[idx]
            H[:m, :m] = H[np.ix_(idx, idx)]
            last_active[:m] = last_active[idx]
            alpha = alpha[idx]
            k = m
        W = (alpha @ G[:k]).reshape(p + 1, L)
    Hk, dk = H[:k, :k], delta[:k]
    xi = working_set_slack(Hk, dk, alpha)
    primal = 0.5 * float(alpha @ Hk @ alpha) + C * xi
    cached = cache_size > 0
    return CuttingPlaneResult(W=W, converged=converged, n_iter=n_iter,
                              n_oracle_passes=n_passes, n_cached=n_cached, n_constraints=k,
                              slack=xi, violation=float(violation), primal=primal,
                              dual=dual_objective(Hk, dk, alpha),
                              state={"G": G[:k].copy(), "delta": dk.copy(),
                                     "cache_Y": cache_Y if cached else None,
                                     "cache_loss": cache_loss if cached else None,
                                     "cache_count": cache_count if cached else None})
