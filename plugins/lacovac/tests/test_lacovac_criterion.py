"""The exact LaCova criterion and its bounds, the leaf kernels, the feature draws and the
whole-tree builder against pure-Python references (runs in .ci/run's no-JIT step too:
keep it small)."""

from __future__ import annotations

import naive_lacovac as naive
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from mlw_lacovac import _kernels as K
from mlw_lacovac._kernels import leaves as KL
from mlw_lacovac._kernels.criterion import (
    context_buffers,
    lacova_bound,
    node_context,
    rest_bound,
)
from mlw_lacovac._reference import ReferenceTreeBuilder, _leaf_arrays
from mlw_lacovac._tree import TreeBuilder

# splitmix64 (the forest's feature draws) wraps around 2**64 by design; without the JIT
# (.ci/run's NUMBA_DISABLE_JIT step) numpy's uint64 scalars warn that they do
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


def _labels(seed, n, L, rate=0.35):
    rng = np.random.default_rng(seed)
    base = rng.random((n, 1))
    return ((rng.random((n, L)) + 0.6 * base) > 1 - rate).astype(np.uint8)


def _stats(Y):
    Yc = sp.csr_matrix(Y)
    rows = np.arange(Y.shape[0], dtype=np.int64)
    lm = np.arange(Y.shape[1], dtype=np.int64)
    yp, yi = Yc.indptr.astype(np.int64), Yc.indices.astype(np.int64)
    counts, co = K.node_label_stats(yp, yi, rows, lm, Y.shape[1])
    lptr, _ = K.local_labels(yp, yi, rows, lm)
    return counts, co, lptr


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 30), st.integers(2, 6))
def test_exact_criterion_forms_equal_brute_force(seed, n, L):
    """Both ways of summing |covariances| (the moved side's pairs + the node's G table
    with corrections, or one loop over the node's pairs) give the brute-force value."""
    Y = _labels(seed, n, L)
    left = np.random.default_rng(seed + 1).random(n) < 0.3
    if left.sum() in (0, n):
        return
    tc, tC, _ = _stats(Y)
    cl, Cl, _ = _stats(Y[left])
    want = naive.split_quality(Y, left, K.CRIT_LACOVA)
    for form in ("list", "loop"):
        got = K.split_quality(int(left.sum()), cl, Cl, n, tc, tC, K.CRIT_LACOVA, form=form)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 30), st.integers(2, 6))
def test_bounds_never_exceed_the_exact_criterion(seed, n, L):
    Y = _labels(seed, n, L)
    moved = np.random.default_rng(seed + 2).random(n) < 0.25
    nm = int(moved.sum())
    if nm in (0, n):
        return
    tc, tC, lptr = _stats(Y)
    c, _, _ = _stats(Y[moved])
    k = Y[moved].sum(axis=1).astype(float)
    a0, a1, a2, a4 = float(c.sum()), float((c * c).sum()), float((tc * c).sum()), float(
        (k * k).sum())
    ctx = context_buffers(n, L)
    node_context(tc, tC, None, np.arange(n), lptr, float(n), *ctx)
    q_bound = lacova_bound(nm, n, a0, a1, a2, a4, ctx[-1])[0]
    assert q_bound <= naive.split_quality(Y, moved, K.CRIT_LACOVA) + 1e-12
    # the rest's |covariance| numerator, F = n_r^2 sum_{j<k} |cov_jk|
    rest = Y[~moved].astype(float)
    f_rest = naive.abs_covariance_sum(rest) * (n - nm) ** 2
    touched = np.flatnonzero(c > 0).astype(np.int64)
    pj, pk, ptc, pidx, adj_ptr, adj_k, adj_p, adj_b, adj_w, gb, gtc, gpp, tot = ctx
    b = rest_bound(n - nm, a0, a1, a2, a4, c.astype(float), touched, touched.size, tc,
                   adj_ptr, adj_b, adj_w, gb, gtc, gpp, tot)
    assert b <= f_rest + 1e-6


def test_leaf_subsets_equal_a_dict_of_observed_subsets():
    Y = _labels(5, 40, 5, rate=0.3)
    Yc = sp.csr_matrix(Y)
    yp, yi = Yc.indptr.astype(np.int64), Yc.indices.astype(np.int64)
    rows = np.arange(3, 37, dtype=np.int64)
    labels = np.array([0, 2, 3], np.int64)
    lm = np.full(5, -1, np.int64)
    lm[labels] = np.arange(3)
    bufs = KL.leaf_buffers(rows.size, 5)
    nsub = KL.leaf_subsets(yp, yi, np.ones(40), rows, lm, *bufs)
    htab, _, sub_ptr, sub_row, cnt, _, lab = bufs
    assert np.all(htab == -1)  # the hash table is left empty
    subsets, counts = _leaf_arrays(yp, yi, rows, labels, 5)
    # first-appearance order, then the reference's (count desc, ties first seen) order
    got = [tuple(lab[sub_ptr[s]:sub_ptr[s + 1]]) for s in range(nsub)]
    order = np.argsort(-cnt[:nsub], kind="stable")
    assert [got[s] for s in order] == [tuple(np.flatnonzero(s)) for s in subsets]
    assert cnt[:nsub][order].tolist() == counts.tolist()
    assert sub_row[0] == 0


def test_leaf_mode_ties_go_to_q_then_to_the_first_seen():
    # one leaf, block of 2 labels, n = 5: subsets (1,0) x2, (0,1) x2, (1,1) x1 (the
    # paper's love = 1 leaf): equal counts and equal Q -> the first seen, (1,0)
    bits = np.array([1, 0, 0, 1, 1, 1], np.uint8)
    marg, mode, *_ = KL.leaf_models(np.array([0, 2]), np.array([0, 3]), np.array([0, 6]),
                                    np.array([2, 2, 1]), bits, np.array([5]), 1.0, True)
    assert mode.tolist() == [1, 0] and np.allclose(marg, [4 / 7, 4 / 7])
    # the same counts but label 1 more frequent elsewhere: Q decides for (0,1)
    bits = np.array([1, 0, 0, 1, 0, 1], np.uint8)
    _, mode, *_ = KL.leaf_models(np.array([0, 2]), np.array([0, 3]), np.array([0, 6]),
                                 np.array([2, 2, 1]), bits, np.array([5]), 1.0, True)
    assert mode.tolist() == [0, 1]


def test_feature_draws_are_distinct_sorted_and_seeded():
    def draws(seed):
        state = np.array([seed], np.uint64)
        perm = np.arange(20, dtype=np.int64)
        out = np.empty(6, np.int64)
        res = []
        for _ in range(4):
            K.draw_features(state, perm, 6, out)
            res.append(out.copy())
        return res

    a = draws(7)
    for d in a:
        assert np.all(np.diff(d) > 0) and d.min() >= 0 and d.max() < 20
    assert all(np.array_equal(x, y) for x, y in zip(a, draws(7), strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, draws(8), strict=True))


@pytest.mark.parametrize("method", ["lacovac", "lacova", "ml_c45"])
@pytest.mark.parametrize("sparse", [False, True])
def test_whole_tree_builder_equals_the_reference_on_a_small_problem(method, sparse):
    rng = np.random.default_rng(11)
    X = rng.integers(0, 3, (60, 5)).astype(float)
    X[rng.random(X.shape) < 0.4] = 0.0
    Y = sp.csr_matrix(_labels(11, 60, 4))
    if sparse:
        X = sp.csr_matrix(X)
    kw = dict(max_features=3, seed=5)
    rows = np.sort(rng.integers(0, 60, 60))
    fast = TreeBuilder(method, 4, 2, **kw).fit(X, Y, rows=rows)
    ref = ReferenceTreeBuilder(method, 4, 2, **kw).fit(X, Y, rows=rows)
    assert fast.n_nodes > 3 and fast.same_as(ref)


def test_prediction_walk_equals_the_routed_leaves():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 4))
    Y = sp.csr_matrix(_labels(2, 50, 4))
    t = TreeBuilder("lacovac", 4, 2).fit(X, Y)
    from mlw_lacovac._leaves import leaf_models, log_proba, predict

    lm = leaf_models(t, 1.0)
    P, M = predict(t, lm, X, 4)
    P2 = np.zeros((50, 4))
    M2 = np.zeros((50, 4), np.uint8)
    reached = t.route(X)

    def leaves_of(x, v=0):  # the tree's own arrays walked in Python, against the kernel
        kids = t.children[t.child_ptr[v]:t.child_ptr[v + 1]]
        if t.kind[v] == 0:
            return [int(t.leaf_id[v])]
        if t.kind[v] == 1:
            return leaves_of(x, kids[0] if x[t.feature[v]] <= t.threshold[v] else kids[1])
        return [lid for c in kids for lid in leaves_of(x, c)]

    assert t.n_nodes > 8 and (t.kind == 2).any()
    for i in range(50):
        assert sorted(reached[i][reached[i] >= 0].tolist()) == sorted(leaves_of(X[i]))
        for lid in reached[i][reached[i] >= 0]:
            a, b = lm.leaf_lab_ptr[lid], lm.leaf_lab_ptr[lid + 1]
            P2[i, lm.leaf_labels[a:b]] = lm.marg[a:b]
            M2[i, lm.leaf_labels[a:b]] = lm.mode[a:b]
    assert np.array_equal(P, P2) and np.array_equal(M, M2)
    Xs = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X))
    assert np.array_equal(predict(t, lm, Xs, 4)[0], predict(t, lm, Xs.toarray(), 4)[0])
    # log P(y | x): the leaves' smoothed subset probabilities, summed over blocks
    Yd = Y.toarray()
    lp = log_proba(t, lm, X, Y, 1.0)
    want = np.zeros(50)
    for i in range(50):
        for lid in reached[i][reached[i] >= 0]:
            leaf = t.leaf(int(lid))
            s = Yd[i, leaf.labels]
            q = (leaf.label_counts() + 1) / (leaf.n + 2)
            Q = np.prod(np.where(s == 1, q, 1 - q))
            hit = [c for sub, c in zip(leaf.subsets, leaf.counts, strict=True)
                   if np.array_equal(sub, s)]
            want[i] += np.log(((hit[0] if hit else 0) + Q) / (leaf.n + 1))
    assert np.allclose(lp, want, rtol=1e-12)
