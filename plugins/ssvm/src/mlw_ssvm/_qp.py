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
KKT conditions of the whole QP (to 2e-9 loss units) and the dual objective against two
independent solvers (NNLS with a bisection on the multiplier of the sum, and an
enumeration of supports for small K), on random working sets with near-duplicate,
dependent and more constraints than dimensions, and on working sets saved from real
fits (tests/test_ssvm_qp.py).
"""

from __future__ import annotations

import numpy as np
import quadprog
from scipy.linalg import LinAlgError, lu_factor, lu_solve
from scipy.linalg.lapack import dpstrf

#: Curvature given to the slack so that quadprog's matrix is positive definite
#: (:func:`_solve_slack`).
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


def _factor(H: np.ndarray) -> np.ndarray:
    """F (K x rank) with H = F F', from LAPACK's pivoted Cholesky factorisation dpstrf
    (P' H P = L L'), stopped at the numerical rank: pivots below 1e-12 of the largest
    diagonal entry dropped.

    It replaced an eigendecomposition (eigenvalues below 1e-12 of the largest dropped):
    the same answers to 1e-14 on 400 working sets of a struct_f1 fit, at a tenth of the
    factorisation's cost, which is paid on every one of the thousands of QP solves of a
    fit."""
    K = H.shape[0]
    c, piv, rank, info = dpstrf(H, lower=1, tol=1e-12 * max(float(H.diagonal().max()),
                                                              1e-300))
    if info < 0:  # pragma: no cover - only for an invalid argument
        raise RuntimeError(f"dpstrf failed on the working-set Gram matrix ({info})")
    F = np.empty((K, rank))
    F[piv - 1] = np.tril(c[:, :rank])  # H = F F' (rows back in the original order)
    return F


def _solve_slack(F: np.ndarray, delta: np.ndarray, C: float) -> np.ndarray:
    """An approximate optimum, to find a constraint that is active at the optimum (see
    :func:`_solve_exact`): quadprog on the primal with the slack xi as a variable,

        min_{u, xi}  1/2 |u|^2 + 1/2 rho xi^2 + C xi   s.t.  F u + xi >= delta,  xi >= 0,

    whose Hessian diag(1, ..., 1, rho) is positive definite (rho = 1e-9 changes the
    objective by at most rho * xi^2 / 2). Its multipliers of the K constraints are the
    dual variables alpha. Not exact: quadprog starts from the unconstrained minimum
    xi = -C / rho and the xi it ends at carries that value's round-off, C / rho * 2^-52
    (2^-11 = 4.9e-4 at C = 4395), by which every active constraint's d_k = delta_k -
    (H alpha)_k is then off (:func:`_solve_exact` removes xi)."""
    K, r = F.shape
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


def _solve_pinned(F: np.ndarray, delta: np.ndarray, C: float, k0: int
                  ) -> np.ndarray | None:
    """The exact optimum if constraint k0 is active at it (else None): on the active
    constraint k0, xi = delta_k0 - <f_k0, u>, which takes xi out of the primal:

        min_u  1/2 |u|^2 - C <f_k0, u>
        s.t.   <f_k - f_k0, u> >= delta_k - delta_k0  (k != k0),   -<f_k0, u> >= -delta_k0,

    the last constraint being xi >= 0. Its Hessian is the identity, so quadprog's answer
    is exact up to the round-off of the linear term C f_k0 (2^-52 C |f_k0|^2 in d, not
    2^-52 C / rho). The multipliers are alpha_k (k != k0) and mu of xi >= 0; stationarity
    in xi gives alpha_k0 = C - mu - sum_{k != k0} alpha_k, which is >= 0 exactly when
    pinning k0 was right."""
    K, r = F.shape
    f0 = F[k0]
    A = (F - f0).T  # column k: f_k - f_k0; column k0 becomes xi >= 0
    A[:, k0] = -f0
    b = delta - delta[k0]
    b[k0] = -delta[k0]
    try:
        lagr = quadprog.solve_qp(np.eye(r), C * f0, np.ascontiguousarray(A), b, 0,
                                 True)[4]
    except ValueError:  # inconsistent: some k with f_k = f_k0 and delta_k > delta_k0
        return None
    alpha = lagr.copy()
    alpha[k0] = C - lagr.sum()  # C - mu - sum of the others
    if alpha[k0] < -1e-9 * C:
        return None
    return np.maximum(alpha, 0.0)


def _solve_hard(F: np.ndarray, delta: np.ndarray, C: float) -> np.ndarray | None:
    """The exact optimum if it has xi = 0 (else None): quadprog on min 1/2 |u|^2 s.t.
    F u >= delta, whose multipliers alpha are the optimum of the whole QP when they sum
    to at most C (then mu = C - sum(alpha) >= 0 is the multiplier of xi >= 0). Neither
    a slack nor a large linear term: exact up to the round-off of |u|."""
    try:
        alpha = quadprog.solve_qp(np.eye(F.shape[1]), np.zeros(F.shape[1]),
                                  np.ascontiguousarray(F.T), delta, 0, True)[4]
    except ValueError:  # F u >= delta is infeasible: xi > 0
        return None
    return alpha if alpha.sum() <= C else None


def _solve_exact(H: np.ndarray, delta: np.ndarray, C: float, tol: float,
                 guess: np.ndarray | None = None) -> np.ndarray:
    """The exact optimum of the QP over these constraints, from the primal side.

    H is only positive semidefinite and, with the highly correlated constraint vectors
    of a cutting-plane run, badly conditioned: quadprog on the dual with a 1e-12 ridge
    returned dual variables whose gradients were off by 0.04 (median) on a struct_f1
    fit. So quadprog solves the primal in the span of the constraint vectors instead:
    with H = F F' (:func:`_factor`) and w = Q u for an orthonormal Q, <w, g_k> = (F u)_k,
    and the primal is min 1/2 |u|^2 + C xi s.t. F u + xi >= delta, xi >= 0, whose
    Lagrange multipliers are alpha. quadprog needs a positive-definite Hessian, which
    the linear term C xi lacks, so:

    1. when ``guess`` (the previous solution, from :func:`solve_dual`) sums to less than
       C, xi = 0 is tried first (:func:`_solve_hard`, exact when it applies);
    2. otherwise, or if that fails, xi is kept with a small curvature
       (:func:`_solve_slack`), and its answer is taken if it meets the optimality
       conditions (:func:`kkt_violation` <= ``tol``): it does when the sum binds, where
       every active constraint's d_k is off by the same round-off of xi, which the
       multiplier of the sum absorbs;
    3. if not, xi is eliminated on the constraint with the largest multiplier of step 2
       (:func:`_solve_pinned`), exact up to 2^-52 C |f_k0|^2, or step 1 is tried if that
       multiplier's sum was below C.

    An earlier version of this function stopped at step 2, which left every active
    constraint off by xi's round-off (2^-52 C / rho: 4.9e-4 loss units at C = 4395 on
    near-duplicate constraints, where the sum was below C and the optimum needs d_k =
    0; tests/test_ssvm_qp.py). Step 3's pinned solve costs about 12% more quadprog time
    than step 2 on Struct(F1)'s noisy fits, where step 2 is exact, hence the order."""
    F = _factor(H)
    if F.shape[1] == 0:  # H = 0: the QP is linear, and the slack solve is exact
        return _solve_slack(F, delta, C)
    tried_hard = False
    if guess is not None and guess.max() > 0 and guess.sum() < C * (1 - 1e-6):
        tried_hard = True
        alpha = _solve_hard(F, delta, C)
        if alpha is not None:
            return alpha
    approx = _solve_slack(F, delta, C)
    if np.max(kkt_violation(H, delta, approx, C)) <= tol:
        return approx
    if not tried_hard and approx.sum() < C * (1 - 1e-6):
        alpha = _solve_hard(F, delta, C)
        if alpha is not None:
            return alpha
    alpha = _solve_pinned(F, delta, C, int(np.argmax(approx)))
    return approx if alpha is None else alpha


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
    return _violations(*_gradient(H, delta, alpha, C), alpha)


def _violations(d: np.ndarray, lam: float, alpha: np.ndarray) -> np.ndarray:
    """:func:`kkt_violation` from the gradient ``d`` and multiplier ``lam``."""
    return np.where(alpha > 0, np.abs(d - lam), d - lam)


def solve_dual(H: np.ndarray, delta: np.ndarray, C: float,
               start: np.ndarray | None = None) -> np.ndarray:
    """The optimal dual variables ``alpha`` (length K) of the working-set QP.

    An active-set loop around quadprog: quadprog solves the QP restricted to a set of
    candidate constraints (all of them, or with ``start``, the previous solution, those
    with a positive dual variable plus the new ones) exactly (:func:`_solve_exact`);
    then a zero variable whose gradient says it should be positive joins the set, and a
    positive one whose gradient is below the others' (round-off of nearly dependent
    constraints, where quadprog's answer can keep a dual variable of 1e-7 that should be
    0) leaves it, and the restricted QP is solved again. It stops when nothing joins or
    leaves; the answer is then checked against the optimality conditions of the whole
    QP (:func:`kkt_violation`: no zero variable's d_k above the multiplier lam and every
    positive one's d_k equal to it, to 1e-9 loss units times max(1, max delta)), so it
    is the optimum of the whole QP; restricting only saves factorising the columns of
    constraints that stay inactive. Should a restricted solve itself miss those
    conditions (not seen on the tests' random and saved real working sets), the least
    violating solution seen is returned.
    """
    K = delta.size
    if K == 0:
        return np.zeros(0)
    H = np.asarray(H, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    active = np.ones(K, bool)
    guess = None
    if start is not None:
        guess = np.zeros(K)
        guess[: start.size] = start
        active[: start.size] = start > 0
        if not active.any():  # a zero start over all K constraints
            active[:] = True
    tol = KKT_TOL * max(1.0, float(np.max(np.abs(delta))))
    if start is not None:
        alpha = _warm_solve(H, delta, C, active.copy(), tol)
        if alpha is not None:
            return alpha
    best, best_viol = None, np.inf
    for _ in range(MAX_ROUNDS):
        idx = np.flatnonzero(active)
        alpha = np.zeros(K)
        alpha[idx] = _solve_exact(H[np.ix_(idx, idx)], delta[idx], C, tol,
                                  None if guess is None else guess[idx])
        d, lam = _gradient(H, delta, alpha, C)
        pos = alpha > 0
        enter = ~active & (d - lam > tol)
        leave = pos & (alpha <= SMALL * alpha.sum()) & (d < lam - LEAVE_TOL * tol / KKT_TOL)
        viol = max(0.0, float(np.max(_violations(d, lam, alpha))))
        if viol < best_viol:
            best, best_viol = alpha, viol
        if not enter.any() and not leave.any():
            return alpha if viol <= tol else best
        active = (active & ~leave) | enter
        guess = alpha
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
