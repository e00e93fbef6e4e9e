"""The dual quadratic program of the 1-slack structural SVM over a working set.

For joint constraints k = 1..K with difference vectors g_k and mean losses delta_k,
the dual of  min_w,xi  1/2 |w|^2 + C xi  s.t.  <w, g_k> >= delta_k - xi, xi >= 0  is

    max_alpha  delta' alpha - 1/2 alpha' H alpha   s.t.  alpha >= 0,  sum(alpha) <= C,

with the Gram matrix H_kl = <g_k, g_l> and w = sum_k alpha_k g_k. The working set is
small (tens to a few hundred constraints) and dense. It is solved exactly with the
Goldfarb-Idnani dual active-set method of the ``quadprog`` package (the Fortran code
behind R's quadprog; a finite method, exact up to round-off), applied to the primal in
the span of the constraint vectors (:func:`_solve_exact`: well conditioned even when
constraints are dependent and H is singular), inside an active-set loop that only
factorises the constraints that can be active (:func:`solve_dual`). The tests check the
KKT conditions and the primal-dual gap, also with dependent constraints and with more
constraints than dimensions.
"""

from __future__ import annotations

import numpy as np
import quadprog
from scipy.linalg import LinAlgError, lu_factor, lu_solve
from scipy.linalg.lapack import dpstrf

#: Curvature given to the slack so that quadprog's matrix is positive definite.
RHO = 1e-9
#: Tolerance of the optimality check of :func:`solve_dual` (loss units).
KKT_TOL = 1e-9
#: Most restricted solves in one call of :func:`solve_dual`.
MAX_ROUNDS = 20
#: Most linear solves of the warm-started fast path (:func:`_warm_solve`) before it
#: hands over to the quadprog loop.
WARM_ROUNDS = 12
#: A positive dual variable below SMALL times the sum whose gradient is LEAVE_TOL
#: (loss units) below the multiplier is round-off and is dropped (see solve_dual).
SMALL = 1e-4
LEAVE_TOL = 1e-6


def _solve_exact(H: np.ndarray, delta: np.ndarray, C: float) -> np.ndarray:
    """The exact optimum of the QP over these constraints, from the primal side.

    H is only positive semidefinite and, with the highly correlated constraint vectors
    of a cutting-plane run, badly conditioned: quadprog on the dual with a 1e-12 ridge
    returned dual variables whose gradients were off by 0.04 (median) on a struct_f1
    fit. So quadprog solves the primal
    in the span of the constraint vectors instead: with H = F F' (F from LAPACK's
    pivoted Cholesky factorisation dpstrf, P' H P = L L', stopped at the numerical rank:
    pivots below 1e-12 of the largest diagonal entry dropped), w = Q u for an
    orthonormal Q with <w, g_k> = (F u)_k, and

        min_{u, xi}  1/2 |u|^2 + 1/2 rho xi^2 + C xi   s.t.  F u + xi >= delta,  xi >= 0,

    whose Hessian diag(1, ..., 1, rho) is positive definite and perfectly conditioned
    along u (rho = 1e-9 changes the objective by at most rho * xi^2 / 2). The Lagrange
    multipliers of the K constraints are the dual variables alpha.

    The pivoted Cholesky factor replaced an eigendecomposition (eigenvalues below 1e-12
    of the largest dropped): the same answers to 1e-14 on 400 working sets of a
    struct_f1 fit, at a tenth of the factorisation's cost; quadprog is handed the
    inverse Cholesky factor of its (diagonal) Hessian instead of factorising it. Each
    saves CPU on every one of the thousands of QP solves of a fit.
    """
    K = delta.size
    c, piv, rank, info = dpstrf(H, lower=1, tol=1e-12 * max(float(H.diagonal().max()),
                                                              1e-300))
    if info < 0:  # pragma: no cover - only for an invalid argument
        raise RuntimeError(f"dpstrf failed on the working-set Gram matrix ({info})")
    F = np.empty((K, rank))
    F[piv - 1] = np.tril(c[:, :rank])  # H = F F' (rows back in the original order)
    r = rank
    Rinv = np.eye(r + 1)  # quadprog's Hessian diag(1, ..., 1, rho), as R^{-1}
    Rinv[r, r] = 1.0 / np.sqrt(RHO)
    a = np.zeros(r + 1)
    a[r] = -float(C)
    A = np.zeros((r + 1, K + 1))  # quadprog: A' x >= b, one column per constraint
    A[:r, :K] = F.T
    A[r, :K] = 1.0
    A[r, K] = 1.0
    b = np.zeros(K + 1)
    b[:K] = delta
    try:
        lagr = quadprog.solve_qp(Rinv, a, A, b, 0, True)[4]
    except ValueError as exc:  # pragma: no cover - the problem is always feasible
        raise RuntimeError(f"the working-set QP could not be solved: {exc}") from None
    alpha = np.maximum(lagr[:K], 0.0)
    total = alpha.sum()
    if total > C:  # rho lets the sum exceed C by rho * xi
        alpha *= C / total
    return alpha


def _gradient(H: np.ndarray, delta: np.ndarray, alpha: np.ndarray, C: float
              ) -> tuple[np.ndarray, float]:
    """d_k = delta_k - (H alpha)_k (the violation of constraint k by the current w) and
    the multiplier lam of sum(alpha) <= C (0 while the sum is below C, otherwise the
    largest d_k of the dual variables that carry weight, more than ``SMALL`` of the
    sum). At the optimum every positive alpha_k has d_k = lam and every zero one
    d_k <= lam."""
    d = delta - H @ alpha
    total = alpha.sum()
    lam = 0.0
    if total > 0 and total >= C * (1 - 1e-9):
        lam = float(np.max(d[alpha > SMALL * total]))
    return d, lam


def kkt_violation(H: np.ndarray, delta: np.ndarray, alpha: np.ndarray, C: float
                  ) -> np.ndarray:
    """How far each dual variable is from optimality: d_k - lam for a zero alpha_k
    (> 0: it should enter), |d_k - lam| for a positive one."""
    d, lam = _gradient(H, delta, alpha, C)
    return np.where(alpha > 0, np.abs(d - lam), d - lam)


def solve_dual(H: np.ndarray, delta: np.ndarray, C: float,
               start: np.ndarray | None = None) -> np.ndarray:
    """The optimal dual variables ``alpha`` (length K) of the working-set QP.

    An active-set loop around quadprog: quadprog solves the QP restricted to a set of
    candidate constraints (all of them, or with ``start``, the previous solution, those
    with a positive dual variable plus the new ones); then a zero variable whose
    gradient says it should be positive joins the set, and a positive one whose
    gradient is below the others' (round-off of nearly dependent constraints, where
    quadprog's answer can keep a dual variable of 1e-7 that should be 0) leaves it, and
    the restricted QP is solved again. It stops when no zero variable violates its
    optimality condition by more than 1e-9 loss units and no small positive one is
    left over (:func:`kkt_violation`). So the answer is the optimum of the whole QP;
    restricting only saves factorising the columns of constraints that stay inactive.
    """
    K = delta.size
    if K == 0:
        return np.zeros(0)
    H = np.asarray(H, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    active = np.ones(K, bool)
    if start is not None:
        active[: start.size] = start > 0
    tol = KKT_TOL * max(1.0, float(np.max(np.abs(delta))))
    if start is not None:
        alpha = _warm_solve(H, delta, C, active.copy(), tol)
        if alpha is not None:
            return alpha
    best, best_viol = None, np.inf
    for _ in range(MAX_ROUNDS):
        idx = np.flatnonzero(active)
        alpha = np.zeros(K)
        alpha[idx] = _solve_exact(H[np.ix_(idx, idx)], delta[idx], C)
        d, lam = _gradient(H, delta, alpha, C)
        pos = alpha > 0
        enter = ~active & (d - lam > tol)
        leave = pos & (alpha <= SMALL * alpha.sum()) & (d < lam - LEAVE_TOL * tol / KKT_TOL)
        viol = max(float(np.max(d - lam, initial=0.0)), float(np.max(lam - d[pos],
                                                                     initial=0.0)))
        if viol < best_viol:
            best, best_viol = alpha, viol
        if not enter.any() and not leave.any():
            return alpha
        active = (active & ~leave) | enter
    return best  # pragma: no cover - cycling; the least violating solution seen


def _warm_solve(H: np.ndarray, delta: np.ndarray, C: float, active: np.ndarray,
                tol: float) -> np.ndarray | None:
    """The optimum when it is found by guessing which dual variables are positive, or
    None (then :func:`solve_dual` runs its quadprog loop).

    In a cutting-plane run almost every dual variable stays positive from one solve to
    the next (about 60 of 65 on a noisy L = 10 fit), so the optimum is usually the
    solution of the optimality conditions on the previous positive set plus the new
    constraint: H_AA alpha_A = delta_A - lam 1 with lam = 0 if that gives sum(alpha) <= C,
    else with sum(alpha_A) = C (both from one LU factorisation). A guess whose alpha
    has non-positive entries loses them, one that leaves a zero variable with
    d_k - lam > tol gains the most violated one, up to ``WARM_ROUNDS`` linear solves.
    An answer is returned only if it passes the complete optimality check (alpha > 0
    on the set, 0 elsewhere, sum(alpha) <= C, lam >= 0 and lam = 0 unless the sum is C,
    |d_k - lam| <= tol on the set and d_k - lam <= tol off it), so it is the optimum
    quadprog would give, for a linear solve instead of a factorisation and quadprog
    run per round; singular or ill-conditioned guesses fail the check or the
    factorisation and go to quadprog.
    """
    K = delta.size
    for _ in range(WARM_ROUNDS):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            return None
        try:
            lu = lu_factor(H[np.ix_(idx, idx)], check_finite=False)
        except (LinAlgError, ValueError):
            return None
        a0 = lu_solve(lu, delta[idx], check_finite=False)
        lam = 0.0
        if a0.sum() > C:
            u = lu_solve(lu, np.ones(idx.size), check_finite=False)
            if not u.sum() > 0:
                return None
            lam = (a0.sum() - C) / u.sum()
            a0 = a0 - lam * u
        if not np.all(np.isfinite(a0)):
            return None
        if np.any(a0 <= 0):
            active[idx[a0 <= 0]] = False
            continue
        alpha = np.zeros(K)
        alpha[idx] = a0
        d = delta - H @ alpha
        if np.any(np.abs(d[idx] - lam) > tol) or alpha.sum() > C * (1 + 1e-12):
            return None
        out = d - lam
        out[idx] = -np.inf
        enter = out > tol
        if not enter.any():
            return alpha
        active |= enter
    return None


def dual_objective(H: np.ndarray, delta: np.ndarray, alpha: np.ndarray) -> float:
    """delta' alpha - 1/2 alpha' H alpha."""
    return float(delta @ alpha - 0.5 * alpha @ H @ alpha)


def working_set_slack(H: np.ndarray, delta: np.ndarray, alpha: np.ndarray) -> float:
    """xi = max(0, max_k delta_k - <w, g_k>), the slack the working set requires."""
    if delta.size == 0:
        return 0.0
    return max(0.0, float(np.max(delta - H @ alpha)))
