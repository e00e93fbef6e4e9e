"""The working-set dual QP: optimality (KKT) conditions, the primal-dual gap, the
incremental solve against a fresh one, and degenerate (dependent) constraints."""

from __future__ import annotations

import numpy as np
import pytest

from mlw_ssvm._qp import (
    KKT_TOL,
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
