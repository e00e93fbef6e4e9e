"""The working-set dual QP: optimality (KKT) conditions, the primal-dual gap, the
incremental solve against a fresh one, and degenerate (dependent) constraints; the
optimum against two independent solvers (tests/naive_ssvm.py: NNLS with a bisection on
the multiplier, and an enumeration of supports for small K) on random working sets,
near-duplicate ones among them, and on working sets saved from real fits."""

from __future__ import annotations

from pathlib import Path

import naive_ssvm as naive
import numpy as np
import pytest

from mlw_ssvm._qp import (
    KKT_TOL,
    _factor,
    _solve_hard,
    _solve_pinned,
    _warm_solve,
    dual_objective,
    kkt_violation,
    solve_dual,
    working_set_slack,
)


def _problem(seed: int, K: int, dim: int, duplicates: bool = False):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(K, dim))
    if duplicates:
        G[K // 2] = G[0]  # an identical constraint
        G[K // 2 + 1] = 0.5 * G[1] + 0.5 * G[2]  # a dependent one
    delta = rng.uniform(0.2, 1.0, size=K)
    return G, G @ G.T, delta


def _check_kkt(G, H, delta, alpha, C):
    assert (alpha >= 0).all()
    assert alpha.sum() <= C * (1 + 1e-9)
    viol = kkt_violation(H, delta, alpha, C)
    assert viol[alpha == 0].max(initial=0) <= 1e-7  # no constraint should enter
    assert viol[alpha > 0].max(initial=0) <= 1e-6  # positive ones share the multiplier
    assert np.all(alpha[alpha > 0] > 1e-9 * alpha.sum())  # no round-off dual variables
    # the positive alphas share one gradient value (the multiplier of sum <= C, or 0)
    d = delta - H @ alpha
    pos = alpha > 1e-9 * alpha.sum()
    if pos.any():
        top = d[pos]
        assert top.max() - top.min() <= 2e-6
        if alpha.sum() < C * (1 - 1e-9):
            assert abs(top.max()) <= 1e-6
    # primal 1/2 |w|^2 + C xi equals the dual at the optimum
    w = alpha @ G
    xi = working_set_slack(H, delta, alpha)
    primal = 0.5 * w @ w + C * xi
    assert primal - dual_objective(H, delta, alpha) <= 1e-6 * max(1.0, abs(primal))


@pytest.mark.parametrize("C", [1e-2, 0.3, 1e4])
@pytest.mark.parametrize("duplicates", [False, True])
def test_solution_satisfies_kkt_and_closes_the_gap(C, duplicates):
    for seed in range(4):
        G, H, delta = _problem(seed, 12, 30, duplicates)
        _check_kkt(G, H, delta, solve_dual(H, delta, C), C)


def test_more_constraints_than_dimensions():
    G, H, delta = _problem(3, 40, 6)  # H has rank 6
    for C in (0.1, 1e5):
        _check_kkt(G, H, delta, solve_dual(H, delta, C), C)


def test_incremental_solve_equals_fresh_solve():
    G, H, delta = _problem(5, 30, 50)
    C = 1e3
    alpha = solve_dual(H[:1, :1], delta[:1], C)
    for k in range(2, 31):
        alpha = solve_dual(H[:k, :k], delta[:k], C, start=alpha)
        fresh = solve_dual(H[:k, :k], delta[:k], C)
        assert dual_objective(H[:k, :k], delta[:k], alpha) == pytest.approx(
            dual_objective(H[:k, :k], delta[:k], fresh), rel=1e-9, abs=1e-12)
        _check_kkt(G[:k], H[:k, :k], delta[:k], alpha, C)


def test_sum_constraint_binds_for_small_C():
    G, H, delta = _problem(9, 8, 20)
    alpha = solve_dual(H, delta, 1e-3)
    assert alpha.sum() == pytest.approx(1e-3)
    assert solve_dual(np.zeros((0, 0)), np.zeros(0), 1.0).size == 0


def test_warm_path_answers_a_cutting_plane_like_sequence_with_the_optimum():
    # constraints added one at a time, as in a cutting-plane run: the linear-solve fast
    # path must answer (it is what makes large-C fits affordable) and agree with quadprog
    G, H, delta = _problem(11, 40, 60)
    C, alpha, answered = 1e2, solve_dual(H[:1, :1], delta[:1], 1e2), 0
    for k in range(2, 41):
        Hk, dk = H[:k, :k], delta[:k]
        active = np.ones(k, bool)
        active[: alpha.size] = alpha > 0
        warm = _warm_solve(Hk, dk, C, active, KKT_TOL * max(1.0, float(np.abs(dk).max())))
        if warm is not None:
            answered += 1
            _check_kkt(G[:k], Hk, dk, warm, C)
            assert dual_objective(Hk, dk, warm) == pytest.approx(
                dual_objective(Hk, dk, solve_dual(Hk, dk, C)), rel=1e-9, abs=1e-12)
        alpha = solve_dual(Hk, dk, C, start=alpha)
    assert answered >= 30


#: The stated precision of solve_dual: the KKT residual of the whole QP
#: (naive.qp_kkt_residual) at most twice its internal tolerance KKT_TOL (loss units,
#: scaled by max(1, max delta): the warm path accepts |d_k - lam| <= KKT_TOL with its own
#: lam, and the residual measures against the midpoint), and the dual objective within
#: OBJ_TOL (relative to max(1, |objective|)) of an independent solver's.
OBJ_TOL = 1e-9


def _kkt_tol(delta) -> float:
    return 2 * KKT_TOL * max(1.0, float(np.abs(delta).max()))


def _check_against_references(H, delta, C, alpha):
    assert (alpha >= 0).all() and alpha.sum() <= C * (1 + 1e-12)
    assert naive.qp_kkt_residual(H, delta, alpha, C) <= _kkt_tol(delta)
    ours = dual_objective(H, delta, alpha)
    ref = dual_objective(H, delta, naive.qp_reference(H, delta, C))
    assert naive.qp_kkt_residual(H, delta, naive.qp_reference(H, delta, C), C) <= \
        _kkt_tol(delta)  # the reference is itself optimal
    assert abs(ours - ref) <= OBJ_TOL * max(1.0, abs(ref)), (ours, ref)
    if delta.size <= 8:
        brute = naive.qp_brute_force(H, delta, C)
        assert abs(ours - brute) <= OBJ_TOL * max(1.0, abs(brute)), (ours, brute)


def test_near_duplicate_constraints_with_the_sum_below_C():
    # a working set met while checking the SMO solver on real fits: K = 76, half
    # the constraints near-duplicates of the other half, C = 4395, sum(alpha) = 45 < C.
    # solve_dual returned a positive alpha with d_k = 4.9e-4 where the optimum needs
    # d_k = 0 (quadprog's slack ended at 2^-11 instead of 0: round-off of C / RHO) and a
    # dual objective 6e-7 (relative) below the optimum.
    H, delta, C, _ = list(naive.random_working_sets(29))[28]
    assert delta.size == 76 and round(C) == 4395
    alpha = solve_dual(H, delta, C)
    assert alpha.sum() < 0.02 * C
    _check_against_references(H, delta, C, alpha)


def test_random_working_sets_meet_the_independent_solvers():
    # the selfcheck's 200 random working sets (near-duplicate constraints in every
    # second one, C from 1e-2 to 1e5), solved cold and from their start
    for H, delta, C, start in naive.random_working_sets(200):
        _check_against_references(H, delta, C, solve_dual(H, delta, C))
        _check_against_references(H, delta, C, solve_dual(H, delta, C, start=start))


def _real_sets():
    z = np.load(Path(__file__).parent / "data" / "qp_real_sets.npz")
    for i in range(len([k for k in z.files if k.startswith("what")])):
        delta = z[f"delta{i}"]
        H = np.zeros((delta.size, delta.size))
        H[np.triu_indices(delta.size)] = z[f"H{i}"]
        H = H + np.triu(H, 1).T
        yield str(z[f"what{i}"]), H, delta, float(z[f"C{i}"]), z[f"start{i}"]


def test_real_working_sets_meet_the_independent_solvers():
    # benchmarks/bench_ssvm_qp.py record: from each of six fits (Struct(F1), Struct(Hl),
    # Struct(01); L = 10 noise free and Swap 0.4, and the speed benchmark's L = 50), the
    # warm-started working set of 12-48 constraints with the worst-conditioned H
    # (cond 1.9e5 to 7.9e6), the sum at C and below it; solved from the previous solve's
    # alpha as in the fit, and cold
    sets = list(_real_sets())
    assert len(sets) == 6
    for what, H, delta, C, start in sets:
        for alpha in (solve_dual(H, delta, C, start=start), solve_dual(H, delta, C)):
            try:
                _check_against_references(H, delta, C, alpha)
            except AssertionError as exc:  # pragma: no cover - names the set
                raise AssertionError(f"{what}: {exc}") from None


def test_each_exact_route_meets_the_reference():
    # _solve_exact's routes, each forced on the random working sets: xi = 0 (when the
    # optimum's sum is below C), and xi eliminated on an active constraint (the
    # reference's largest alpha); pinning a constraint that is inactive at the optimum
    # is refused
    refused = tried = 0
    for H, delta, C, _ in naive.random_working_sets(60):
        ref = naive.qp_reference(H, delta, C)
        F, tol = _factor(H), _kkt_tol(delta)
        hard = _solve_hard(F, delta, C)
        assert (hard is None) == (ref.sum() > C * (1 - 1e-9))
        if hard is not None:
            assert naive.qp_kkt_residual(H, delta, hard, C) <= tol
        pinned = _solve_pinned(F, delta, C, int(np.argmax(ref)))
        assert naive.qp_kkt_residual(H, delta, pinned, C) <= tol
        zero = np.flatnonzero(H @ ref - delta > 1e-3)  # constraints met with room
        if zero.size:
            tried += 1
            refused += _solve_pinned(F, delta, C, int(zero[0])) is None
    assert refused == tried >= 50


def test_zero_gram_matrix_cold_and_warm():
    # all constraint vectors 0: the QP is linear (all of C on the largest delta); a warm
    # start whose sum is below C once sent it to the xi = 0 route, which has no variable
    H, delta = np.zeros((3, 3)), np.array([0.5, 0.2, 0.1])
    for start in (None, np.array([0.1, 0.0, 0.0]), np.array([0.1, 0.0])):
        alpha = solve_dual(H, delta, 2.0, start=start)
        assert alpha == pytest.approx([2.0, 0.0, 0.0])
        assert naive.qp_kkt_residual(H, delta, alpha, 2.0) <= _kkt_tol(delta)
