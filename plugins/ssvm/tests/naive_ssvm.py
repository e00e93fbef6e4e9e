"""Slow, obviously-correct pure-Python references for the structured-SVM kernels: the
losses from their definitions (Section 2.1 of Díez et al.), the loss-augmented argmax
by enumerating all 2^L label vectors, Algorithm 2 as printed (a double loop over the
numbers of true and false positives), and the joint-constraint sum."""

from __future__ import annotations

import itertools

import numpy as np

HAMMING, SUBSET, FBETA, JACCARD, PRECISION, RECALL = range(6)


def _ratio(num: float, den: float, perfect: bool) -> float:
    return num / den if den > 0 else (1.0 if perfect else 0.0)


def loss(code: int, beta2: float, y, ybar) -> float:
    y = [int(v) for v in y]
    ybar = [int(v) for v in ybar]
    a = sum(1 for t, p in zip(y, ybar, strict=True) if t and p)
    b = sum(1 for t, p in zip(y, ybar, strict=True) if not t and p)
    c = sum(1 for t, p in zip(y, ybar, strict=True) if t and not p)
    perfect = a == b == c == 0
    if code == HAMMING:
        return float(b + c)
    if code == SUBSET:
        return 0.0 if y == ybar else 1.0
    if code == FBETA:
        return 1 - _ratio((1 + beta2) * a, (1 + beta2) * a + b + beta2 * c, perfect)
    if code == JACCARD:
        return 1 - _ratio(a, a + b + c, perfect)
    if code == PRECISION:
        return 1 - _ratio(a, a + b, perfect)
    if code == RECALL:
        return 1 - _ratio(a, a + c, perfect)
    raise ValueError(code)


def value(code: int, beta2: float, s, y, ybar) -> float:
    """Delta(y, ybar) + sum_l s_l ybar_l, the quantity every oracle maximises."""
    return loss(code, beta2, y, ybar) + float(sum(sl for sl, v in zip(s, ybar, strict=True) if v))


def brute_force(code: int, beta2: float, s, y) -> float:
    """max over all 2^L label vectors of :func:`value`."""
    return max(value(code, beta2, s, y, ybar)
               for ybar in itertools.product((0, 1), repeat=len(y)))


def algorithm2(code: int, beta2: float, s, y) -> tuple[float, list[int]]:
    """Algorithm 2 of the paper as printed: every (a, b) with sorted positives and
    negatives, O(L^2)."""
    L = len(y)
    pos = sorted((j for j in range(L) if y[j]), key=lambda j: -s[j])
    neg = sorted((j for j in range(L) if not y[j]), key=lambda j: -s[j])
    best, best_y = -np.inf, None
    for a in range(len(pos) + 1):
        for d in range(len(neg) + 1):
            b = len(neg) - d
            ybar = [0] * L
            for j in pos[:a]:
                ybar[j] = 1
            for j in neg[:b]:
                ybar[j] = 1
            v = value(code, beta2, s, y, ybar)
            if v > best:
                best, best_y = v, ybar
    return best, best_y


def constraint_sum(X, bias: float, Y, Ybar) -> np.ndarray:
    """(1/n) sum_i (x_i, bias) (x) (y_i - ybar_i) as a (p + 1, L) matrix."""
    X = np.asarray(X.todense() if hasattr(X, "todense") else X, float)
    Xb = np.hstack([X, np.full((X.shape[0], 1), bias)])
    D = np.asarray(Y, float) - np.asarray(Ybar, float)
    return Xb.T @ D / X.shape[0]


# ---------------------------------------------------------------------------------------
# The working-set dual QP  max delta'alpha - 1/2 alpha'H alpha  s.t.  alpha >= 0,
# sum(alpha) <= C: its optimality conditions and two solvers that share nothing with
# mlw_ssvm._qp.


def qp_kkt_residual(H, delta, alpha, C) -> float:
    """The largest violation, in loss units, of the KKT conditions of the whole QP at
    ``alpha`` (which must be feasible: alpha >= 0, sum(alpha) <= C): with d = delta -
    H alpha and a multiplier lam >= 0 of sum(alpha) <= C, every positive alpha_k needs
    d_k = lam, every zero one d_k <= lam, and lam (C - sum(alpha)) = 0 (measured as lam
    (C - sum(alpha)) / C). lam is the midpoint of the positive variables' d (0 when that
    is negative or no variable is positive)."""
    alpha = np.asarray(alpha, dtype=np.float64)
    assert (alpha >= 0).all() and alpha.sum() <= C * (1 + 1e-12), "alpha is infeasible"
    d = delta - H @ alpha
    pos = alpha > 0
    lam = max(0.0, 0.5 * (d[pos].max() + d[pos].min())) if pos.any() else 0.0
    return max(float(np.max(np.abs(d[pos] - lam), initial=0.0)),
               float(np.max(d[~pos] - lam, initial=0.0)),
               lam * (C - alpha.sum()) / C)


def qp_reference(H, delta, C) -> np.ndarray:
    """The optimum for a nonsingular H by Lawson and Hanson's NNLS (scipy.optimize.nnls):
    for a fixed multiplier lam of the sum, max (delta - lam)'alpha - 1/2 alpha'H alpha
    over alpha >= 0 is min |R alpha - v|^2 over alpha >= 0 with H = R'R (Cholesky) and
    R'v = delta - lam. lam = 0 if that alpha sums to at most C; otherwise the sum, a
    continuous non-increasing piecewise-linear function of lam, is brought to C by
    bisection and a last linear interpolation between the bracketing solutions."""
    from scipy.linalg import cholesky, solve_triangular
    from scipy.optimize import nnls

    R = cholesky(H, lower=False)

    def at(lam: float) -> np.ndarray:
        v = solve_triangular(R, delta - lam, trans="T")
        return nnls(R, v, maxiter=50 * delta.size)[0]

    alpha = at(0.0)
    if alpha.sum() <= C:
        return alpha
    lo, hi = 0.0, float(delta.max())  # at lam = max(delta), alpha = 0
    for _ in range(200):  # to the last bit of lam
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if at(mid).sum() > C:
            lo = mid
        else:
            hi = mid
    a_lo, a_hi = at(lo), at(hi)
    s_lo, s_hi = a_lo.sum(), a_hi.sum()
    t = (s_lo - C) / (s_lo - s_hi) if s_lo > s_hi else 1.0
    return np.maximum(a_lo + t * (a_hi - a_lo), 0.0)


def qp_brute_force(H, delta, C) -> float:
    """The optimal dual objective by enumerating supports (small K only, any H): on each
    support S, the stationary point of the objective restricted to alpha_S (free, or with
    sum(alpha_S) = C), by least squares; the best feasible one is the optimum (the
    optimum is such a point of the face whose relative interior holds it)."""
    K = delta.size
    best = 0.0  # alpha = 0
    for m in range(1, K + 1):
        for S in itertools.combinations(range(K), m):
            S = list(S)
            HS = H[np.ix_(S, S)]
            M = np.zeros((m + 1, m + 1))
            M[:m, :m], M[:m, m], M[m, :m] = HS, 1.0, 1.0
            for a in (np.linalg.lstsq(HS, delta[S], rcond=None)[0],
                      np.linalg.lstsq(M, np.append(delta[S], C), rcond=None)[0][:m]):
                if a.min() < -1e-12 * max(1.0, a.max()) or a.sum() > C * (1 + 1e-12):
                    continue
                full = np.zeros(K)
                full[S] = np.maximum(a, 0.0)
                best = max(best, float(delta @ full - 0.5 * full @ H @ full))
    return best


def random_working_sets(n: int, seed: int = 0):
    """n random working sets (H, delta, C, start): K in 2..79 constraints of dimension
    K..K+39 with row scales 0.01-3, every second set with near-duplicate constraints
    (half the rows copies of the other half plus 1e-3 noise), delta uniform in [0, 1],
    C log-uniform in [1e-2, 1e5], and every other pair with a feasible start on the
    first half."""
    rng = np.random.default_rng(seed)
    for trial in range(n):
        K = int(rng.integers(2, 80))
        D = K + int(rng.integers(0, 40))
        A = rng.normal(size=(K, D)) * rng.uniform(0.01, 3.0, size=(K, 1))
        if trial % 2 == 0:
            A[K // 2:] = A[: K - K // 2] + 1e-3 * rng.normal(size=(K - K // 2, D))
        H, delta = A @ A.T, rng.uniform(0.0, 1.0, K)
        C = float(10.0 ** rng.uniform(-2, 5))
        start = np.zeros(K)
        if trial % 4 > 1:
            start[: K // 2] = rng.dirichlet(np.ones(K // 2)) * C * rng.uniform(0, 1)
        yield H, delta, C, start
