"""The numba kernels against brute force (also run with NUMBA_DISABLE_JIT=1 in CI)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from naive_mctbn import (
    all_vectors,
    best_branching,
    branching_score,
    enumerate_instance,
    fit_logistic_gradient,
    fit_logistic_objective,
    tree_log_proba,
)

from mlw_mctbn import _kernels, _logistic
from mlw_mctbn._learning import children_lists, topological_order


def random_tree(rng: np.random.Generator, d: int) -> np.ndarray:
    """A random forest over d nodes: each node's parent is an earlier node of a random
    order, or none."""
    order = rng.permutation(d)
    parent = np.full(d, -1, dtype=np.int64)
    for t in range(1, d):
        if rng.random() < 0.8:
            parent[order[t]] = order[rng.integers(0, t)]
    return parent


def random_mixture(rng, n, K, d):
    """Logits with the parent at 0 and their change at parent 1, both varying by row
    (as a switching factor's; a parent-as-feature factor's V is constant over rows)."""
    A = rng.normal(scale=2.0, size=(n, K, d))
    V = rng.normal(scale=3.0, size=(n, K, d))
    parents = np.stack([random_tree(rng, d) for _ in range(K)])
    orders = np.stack([topological_order(p) for p in parents])
    lam = rng.dirichlet(np.ones(K))
    return A, V, parents, orders, lam


@pytest.mark.parametrize("K, d", [(1, 1), (1, 5), (3, 4), (2, 8)])
def test_log_proba_marginals_map_against_enumeration(K, d):
    rng = np.random.default_rng(K * 10 + d)
    n = 4
    A, V, parents, orders, lam = random_mixture(rng, n, K, d)
    Ys = all_vectors(d)
    cand, cand_val = _kernels.tree_map(A, V, parents, orders)
    marg = _kernels.mixture_marginals(A, V, parents, orders, lam)
    for r in range(n):
        Yall, P, ref_marg, _ = enumerate_instance(A[r], V[r], parents, lam)
        # the mixture sums to 1 over all 2^d vectors
        assert P.sum() == pytest.approx(1.0, abs=1e-12)
        lp = _kernels.mixture_log_proba(np.repeat(A[r:r + 1], len(Ys), axis=0),
                                        np.repeat(V[r:r + 1], len(Ys), axis=0), parents,
                                        np.log(lam), Ys)
        np.testing.assert_allclose(np.exp(lp), P, rtol=1e-10, atol=1e-300)
        np.testing.assert_allclose(marg[r], ref_marg, rtol=1e-10, atol=1e-12)
        # per tree: max-sum MAP equals the enumerated argmax of that tree
        for k in range(K):
            tree_lp = np.array([tree_log_proba(A[r, k], V[r, k], parents[k], y) for y in Ys])
            assert cand_val[r, k] == pytest.approx(tree_lp.max(), abs=1e-10)
            assert tree_log_proba(A[r, k], V[r, k], parents[k], cand[r, k]) == pytest.approx(
                tree_lp.max(), abs=1e-10)


def test_component_log_proba_against_naive():
    rng = np.random.default_rng(5)
    A, V, parents, _, _ = random_mixture(rng, 6, 3, 5)
    Y = rng.integers(0, 2, size=(6, 5)).astype(np.uint8)
    comp = _kernels.component_log_proba(A, V, parents, Y)
    for r in range(6):
        for k in range(3):
            assert comp[r, k] == pytest.approx(tree_log_proba(A[r, k], V[r, k], parents[k],
                                                              Y[r]))


def test_annealing_finds_the_enumerated_mixture_map_in_most_seeds():
    rng = np.random.default_rng(11)
    n, K, d = 30, 4, 7
    A, V, parents, orders, lam = random_mixture(rng, n, K, d)
    ptr, ch = children_lists(parents)
    truth = np.array([enumerate_instance(A[r], V[r], parents, lam)[3] for r in range(n)])
    start = np.zeros((n, d), dtype=np.uint8)  # a poor start, to make the search work
    hits = []
    for seed in range(5):
        Y, lp = _kernels.anneal_map(A, V, parents, ptr, ch, np.log(lam), start, 150, 1.0,
                                    0.05, seed)
        ref = _kernels.mixture_log_proba(A, V, parents, np.log(lam), Y)
        np.testing.assert_allclose(lp, ref, rtol=1e-9)
        hits.append(np.mean(np.all(Y == truth, axis=1)))
    assert min(hits) >= 0.9, hits


def test_annealing_never_returns_worse_than_its_start():
    rng = np.random.default_rng(2)
    A, V, parents, orders, lam = random_mixture(rng, 20, 3, 6)
    ptr, ch = children_lists(parents)
    start = rng.integers(0, 2, size=(20, 6)).astype(np.uint8)
    Y, lp = _kernels.anneal_map(A, V, parents, ptr, ch, np.log(lam), start, 3, 1.0, 0.05, 0)
    assert np.all(lp >= _kernels.mixture_log_proba(A, V, parents, np.log(lam), start) - 1e-12)


@pytest.mark.parametrize("d", [1, 2, 3, 5, 6])
def test_max_branching_against_brute_force(d):
    rng = np.random.default_rng(d)
    for _ in range(5):
        W = rng.normal(size=(d, d))
        parent = _kernels.max_branching(W)
        best, _ = best_branching(W)
        assert branching_score(W, parent) == pytest.approx(best, abs=1e-12)
        assert np.all(topological_order(parent) >= 0)  # a forest (raises on a cycle)


def _design(X, sparse):
    return _logistic.Design.from_matrix(sp.csr_matrix(X) if sparse else X)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("use_parent", [False, True])
def test_logistic_solver_reaches_the_optimum(sparse, use_parent):
    from scipy.optimize import minimize

    rng = np.random.default_rng(3)
    n, m = 60, 4
    X = rng.normal(size=(n, m)) * np.array([1.0, 10.0, 0.1, 3.0])
    X[rng.random((n, m)) < 0.3] = 0.0
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(np.float64)
    p = (rng.random(n) < 0.5).astype(np.float64)
    s = rng.random(n) * 2
    rows = np.sort(rng.choice(n, 45, replace=False)).astype(np.int64)
    design = _design(X, sparse)
    theta = np.zeros(m + 2)
    f, _ = _kernels.fit_logistic(theta, *design.args(), y, s, p, use_parent, rows, 0.5, 500,
                                 1e-10, 10)
    ref = minimize(fit_logistic_objective, np.zeros(m + 2),
                   args=(X, design.scale, y, s, p, use_parent, rows, 0.5), method="BFGS",
                   options={"gtol": 1e-10})
    assert f == pytest.approx(ref.fun, rel=1e-8)
    assert f == pytest.approx(fit_logistic_objective(theta, X, design.scale, y, s, p,
                                                     use_parent, rows, 0.5), rel=1e-12)
    if not use_parent:
        assert theta[m] == 0.0
    ll = _kernels.log_lik_rows(theta, *design.args(), y, s, p, use_parent, rows)
    reg = 0.25 * (theta[:m] @ theta[:m] + (theta[m] ** 2 if use_parent else 0.0))
    assert -ll + reg == pytest.approx(f, rel=1e-10)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("use_parent", [False, True])
def test_objective_gradient_and_log_lik_against_naive(sparse, use_parent):
    # pins the kernel's evaluation (scaled weights once per call, dot products with
    # reassociation, one exp per row, the feature gradient scaled at the end; session
    # 11) to the pure-Python objective and gradient, with 40 features so the
    # vectorised dot products run more than one lane block
    rng = np.random.default_rng(7)
    n, m = 70, 40
    X = rng.normal(size=(n, m)) * rng.uniform(0.1, 20.0, size=m)
    X[rng.random((n, m)) < 0.6] = 0.0
    y = (rng.random(n) < 0.4).astype(np.float64)
    p = (rng.random(n) < 0.5).astype(np.float64)
    s = rng.random(n) * 2
    s[::7] = 0.0
    rows = np.sort(rng.choice(n, 50, replace=False)).astype(np.int64)
    design = _design(X, sparse)
    for scale in (1.0, 8.0):
        theta = rng.normal(size=m + 2) * scale
        z, grad, w = np.empty(rows.size), np.empty(m + 2), np.empty(m)
        f = _kernels._objective(theta, *design.args(), y, s, p, use_parent, rows, 0.7, z,
                                grad, w)
        assert f == pytest.approx(fit_logistic_objective(theta, X, design.scale, y, s, p,
                                                         use_parent, rows, 0.7), rel=1e-12)
        ref = fit_logistic_gradient(theta, X, design.scale, y, s, p, use_parent, rows, 0.7)
        np.testing.assert_allclose(grad, ref, rtol=1e-10, atol=1e-12)
        ll = _kernels.log_lik_rows(theta, *design.args(), y, s, p, use_parent, rows)
        reg = 0.35 * (theta[:m] @ theta[:m] + (theta[m] ** 2 if use_parent else 0.0))
        assert -ll + reg == pytest.approx(f, rel=1e-12)


def test_logistic_warm_start_never_increases_the_objective():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 5))
    y = (X[:, 1] > 0).astype(np.float64)
    s = np.ones(80)
    rows = np.arange(80, dtype=np.int64)
    design = _design(X, False)
    theta = rng.normal(size=7)
    theta[5] = 0.0
    before = fit_logistic_objective(theta, X, design.scale, y, s, y, False, rows, 1.0)
    for it in (1, 2, 5):
        t = theta.copy()
        f, _ = _kernels.fit_logistic(t, *design.args(), y, s, y, False, rows, 1.0, it, 1e-8, 10)
        assert f <= before + 1e-12
    # zero weights: nothing to fit, theta unchanged
    t = theta.copy()
    f, its = _kernels.fit_logistic(t, *design.args(), y, np.zeros(80), y, False, rows, 1.0,
                                   50, 1e-8, 10)
    assert its == 0 and np.array_equal(t, theta)
