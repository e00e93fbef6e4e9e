"""The booster's split finding: Table 1's criteria by hand, histogram search against an
exact brute-force search, whole trees against an exact recursive builder."""

from __future__ import annotations

import math

import naive_xdcc as naive
import numpy as np
import pytest
import scipy.sparse as sp

from mlw_xdcc import _kernels as K
from mlw_xdcc.binning import bin_matrix, cuts_of
from mlw_xdcc.booster import SPLIT_CRITERIA, BoosterParams, CodeMatrix, fit_ensemble, pool_slots

# Table 1's example node: predictions y_hat = (0.8, 0.2, 0.9, 0.1), truth y = (1, 1, 0, 0)
YHAT = np.array([0.8, 0.2, 0.9, 0.1])
YTRUE = np.array([1, 1, 0, 0])

# every number Table 1 prints: G = y_hat - y (Eq. 7) and, "for convenience", H + eps = 1
TABLE1_G = [-0.2, -0.8, 0.9, 0.1]
TABLE1 = {                      # criterion: (printed per-label terms, printed value)
    "sum_gain": ([0.2**2, 0.8**2, 0.9**2, 0.1**2], 0.2**2 + 0.8**2 + 0.9**2 + 0.1**2),
    "max_gain": ([0.2**2, 0.8**2, 0.9**2, 0.1**2], 0.9**2),
    "sum_weight": ([0.2, 0.8, -0.9, -0.1], 0.2 + 0.8 - 0.9 - 0.1),
    "max_weight": ([0.2, 0.8, -0.9, -0.1], 0.8),
    "sum_abs_g": ([0.2, 0.8, 0.9, 0.1], 0.2 + 0.8 + 0.9 + 0.1),
    "max_abs_g": ([0.2, 0.8, 0.9, 0.1], 0.9),
}


def _node_scores(G, H, crit, lam):
    out = np.empty(len(G))
    GH = np.r_[G, H, 1.0]
    agg = K.node_scores(GH, len(G), SPLIT_CRITERIA.index(crit), lam, out)
    return agg, out


def test_table1_printed_example():
    """The paper's Table 1, number for number: the gradients of the example and each
    criterion's terms and value with H + eps = 1 (here H = 0, lambda = 1)."""
    np.testing.assert_allclose(YHAT - YTRUE, TABLE1_G, atol=1e-15)
    for crit, (terms, value) in TABLE1.items():
        agg, per_label = _node_scores(np.array(TABLE1_G), np.zeros(4), crit, 1.0)
        np.testing.assert_allclose(per_label, terms, atol=1e-15)
        assert agg == pytest.approx(value, abs=1e-15), crit
        assert naive.node_score(TABLE1_G, [0.0] * 4, crit, 1.0) == pytest.approx(value, abs=1e-15)
    # the printed values themselves: 1.5, 0.81, 0, 0.8, 2.0, 0.9
    assert [round(v, 12) for _, v in TABLE1.values()] == [1.5, 0.81, 0.0, 0.8, 2.0, 0.9]
    # the text: maxGain picks lambda_3 (largest error), maxGrad (maxWeight) lambda_2
    assert int(np.argmax(_node_scores(np.array(TABLE1_G), np.zeros(4), "max_gain", 1.0)[1])) == 2
    assert int(np.argmax(_node_scores(np.array(TABLE1_G), np.zeros(4), "max_weight", 1.0)[1])) == 1


def test_table1_example_with_the_real_hessians():
    """The same node with Eq. 7's hessians h = y_hat (1 - y_hat) and lambda = 1 (what the
    booster computes), by hand."""
    g = YHAT - YTRUE
    h = YHAT * (1 - YHAT)
    np.testing.assert_allclose(h, [0.16, 0.16, 0.09, 0.09])
    by_hand = {
        "gain": [0.04 / 1.16, 0.64 / 1.16, 0.81 / 1.09, 0.01 / 1.09],
        "weight": [0.2 / 1.16, 0.8 / 1.16, -0.9 / 1.09, -0.1 / 1.09],
        "abs_g": [0.2 / 1.16, 0.8 / 1.16, 0.9 / 1.09, 0.1 / 1.09],
    }
    for code, name in enumerate(SPLIT_CRITERIA):
        kind = name.split("_", 1)[1]
        scores = [K.label_score(g[j], h[j], code, 1.0) for j in range(4)]
        np.testing.assert_allclose(scores, by_hand[kind], rtol=1e-12)
    expected = {"sum_gain": 1.3385, "max_gain": 0.7431, "sum_weight": -0.0554,
                "max_weight": 0.6897, "sum_abs_g": 1.7795, "max_abs_g": 0.8257}
    for crit, value in expected.items():
        assert _node_scores(g, h, crit, 1.0)[0] == pytest.approx(value, abs=5e-5), crit


@pytest.mark.parametrize("split", SPLIT_CRITERIA)
def test_depth1_tree_gain_and_leaves_by_hand(split):
    """Two instances share Table 1's predictions; A has y = (1,1,0,0), B y = (1,0,1,1).
    The one split separates them; its gain and leaf weights are computed by hand.  (With
    B the complement of A the signed weights of sum_weight cancel: gain 0, no split.)"""
    X = np.array([[0.0], [1.0]])
    Y = np.array([[1, 1, 0, 0], [1, 0, 1, 1]], dtype=np.uint8)
    base = np.log(YHAT / (1 - YHAT))
    params = BoosterParams(n_estimators=1, max_depth=1, learning_rate=1.0, reg_lambda=1.0,
                           min_child_weight=0.0, split=split)
    e, eo = cuts_of(X, 256)
    ens, _ = fit_ensemble(bin_matrix(X, e, eo), Y, params, base_margin=base)
    gA = [-0.2, -0.8, 0.9, 0.1]
    gB = [-0.2, 0.2, -0.1, -0.9]
    hA = hB = [0.16, 0.16, 0.09, 0.09]
    gP = [a + b for a, b in zip(gA, gB, strict=False)]       # (-0.4, -0.6, 0.8, -0.8)
    hP = [a + b for a, b in zip(hA, hB, strict=False)]       # (0.32, 0.32, 0.18, 0.18)
    kind = split.split("_", 1)[1]
    if kind == "gain":
        s = lambda G, H: G * G / (H + 1.0)  # noqa: E731
    elif kind == "weight":
        s = lambda G, H: -G / (H + 1.0)  # noqa: E731
    else:
        s = lambda G, H: abs(G) / (H + 1.0)  # noqa: E731
    agg = max if split.startswith("max") else sum
    # score(left) + score(right) - score(parent), each aggregated over the labels
    expected = (agg(s(gA[j], hA[j]) for j in range(4)) + agg(s(gB[j], hB[j]) for j in range(4))
                - agg(s(gP[j], hP[j]) for j in range(4)))
    assert expected > 0.1      # (the only such B: every criterion splits A from B)
    tree = ens.tree(0)

    def _w(g, h):
        return [-gj / (hj + 1) for gj, hj in zip(g, h, strict=True)]

    assert tree["feature"][0] == 0
    assert tree["gain"][0] == pytest.approx(expected, rel=1e-9)
    assert tree["threshold"][0] == 1.0        # x < 1 goes left
    left, right = tree["left"][0], tree["right"][0]
    np.testing.assert_allclose(tree["value"][left], _w(gA, hA))
    np.testing.assert_allclose(tree["value"][right], _w(gB, hB))
    np.testing.assert_allclose(tree["value"][0], _w(gP, hP))


def test_criteria_disagree_where_the_table_says_they_should():
    """Feature 0 separates one strongly mispredicted label, feature 1 two mildly
    mispredicted ones: max_* prefers the first, sum_gain the second."""
    n = 8
    X = np.c_[np.r_[np.zeros(4), np.ones(4)], np.tile([0.0, 1.0], 4)]
    rng = np.random.default_rng(0)
    X = X[rng.permutation(n)]
    g = np.zeros((n, 3))
    g[:, 0] = np.where(X[:, 0] == 0, -0.7, 0.7)
    g[:, 1] = np.where(X[:, 1] == 0, -0.6, 0.6)
    g[:, 2] = np.where(X[:, 1] == 0, -0.6, 0.6)
    h = np.full((n, 3), 0.2)
    chosen = {}
    for crit in ("sum_gain", "max_gain", "max_abs_g"):
        chosen[crit] = _root_split(X, g, h, crit)[1]
    assert chosen["sum_gain"] == 1
    assert chosen["max_gain"] == 0
    assert chosen["max_abs_g"] == 0


def _gh(g, h):
    n, L = g.shape
    return np.ascontiguousarray(np.hstack([g, h, np.ones((n, 1))]))


def _grow(B, g, h, crit, lam=1.0, mcw=0.0, depth=1, eta=1.0, slots=None):
    n, L = g.shape
    GH = _gh(g, h)
    d = B.n_features
    max_nodes = min(2 ** (depth + 1) - 1, 2 * n - 1)
    slots = depth + 3 if slots is None else slots
    arrs = dict(nf=np.empty(max_nodes, np.int32), nb=np.empty(max_nodes, np.int32),
                ndl=np.empty(max_nodes, np.bool_), nl=np.empty(max_nodes, np.int32),
                nr=np.empty(max_nodes, np.int32), ng=np.empty(max_nodes),
                nv=np.empty((max_nodes, L)))
    pool = np.full((slots, B.total_bins, 2 * L + 1), np.nan)   # dirty on purpose
    k = K.grow_tree(*B.kernel_layout(), B.feat_off,
                    np.ones(d, np.bool_), np.arange(d, dtype=np.int64), B.total_bins, GH,
                    np.arange(n, dtype=np.int64), L, depth, SPLIT_CRITERIA.index(crit), lam,
                    0.0, mcw, eta, pool, np.zeros(slots, np.bool_), np.empty(n, np.int64),
                    np.full((max_nodes, 2 * L + 1), np.nan), *arrs.values())
    return k, arrs


def _root_split(X, g, h, crit, lam=1.0, mcw=0.0, sparse=False):
    Xin = sp.csr_matrix(np.nan_to_num(X, nan=0.0)) if sparse else X
    if sparse:  # absent entries are missing: NaN in X marks them, stored zeros are values
        mask = ~np.isnan(X)
        Xin = sp.csr_matrix((X[mask], np.nonzero(mask)[1], np.r_[0, np.cumsum(mask.sum(1))]),
                            shape=X.shape)
    e, eo = cuts_of(Xin, 256)
    B = bin_matrix(Xin, e, eo)
    k, a = _grow(B, g, h, crit, lam, mcw)
    if k == 1:
        return None
    f, b = int(a["nf"][0]), int(a["nb"][0])
    return a["ng"][0], f, B.threshold(f, b), bool(a["ndl"][0])


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("split", SPLIT_CRITERIA)
def test_histogram_split_equals_exact_search(split, sparse):
    """With fewer distinct values than bins the histogram's candidates are the exact
    ones: best gain, feature, threshold and missing side must agree."""
    rng = np.random.default_rng(SPLIT_CRITERIA.index(split) + 10 * sparse)
    for trial in range(6):
        n, d, L = 30, 4, 3
        X = rng.integers(0, 6, size=(n, d)).astype(float)
        X[rng.random((n, d)) < 0.2] = np.nan
        g = rng.normal(size=(n, L))
        h = rng.uniform(0.05, 0.25, size=(n, L))
        mcw = [0.0, 0.5][trial % 2]
        got = _root_split(X, g, h, split, mcw=mcw, sparse=sparse)
        exp = naive.exact_best_split(X.tolist(), list(range(n)), g.tolist(), h.tolist(),
                                     split, 1.0, mcw)
        if exp is None:
            assert got is None
            continue
        assert got is not None
        assert got[0] == pytest.approx(exp[0], rel=1e-9)
        # equal-gain alternatives are possible; the partition's gain must be the best
        gain_f, f, thr, dl = got
        rows = list(range(n))
        left = [i for i in rows if naive.goes_left(X[i, f], thr, dl)]
        right = [i for i in rows if not naive.goes_left(X[i, f], thr, dl)]
        assert naive.split_gain(left, right, g.tolist(), h.tolist(), split, 1.0) == \
            pytest.approx(exp[0], rel=1e-9)


@pytest.mark.parametrize("split", ["sum_gain", "max_weight", "sum_abs_g"])
def test_depth3_tree_equals_exact_recursive_builder(split):
    """The subtraction trick and the row partitions give the exact tree."""
    rng = np.random.default_rng(7)
    n, d, L = 60, 3, 2
    X = rng.normal(size=(n, d)).round(1)
    X[rng.random((n, d)) < 0.15] = np.nan
    g = rng.normal(size=(n, L))
    h = rng.uniform(0.05, 0.25, size=(n, L))
    e, eo = cuts_of(X, 256)
    B = bin_matrix(X, e, eo)
    k, a = _grow(B, g, h, split, depth=3, eta=0.5, mcw=0.3)
    margin = np.zeros((n, L))
    CodeMatrix.of(B).add_tree(k, a["nf"], a["nb"], a["ndl"], a["nl"], a["nv"], margin)
    exp = naive.exact_tree_outputs(X.tolist(), g.tolist(), h.tolist(), split, 1.0, 0.3, 0.5, 3)
    np.testing.assert_allclose(margin, np.array(exp), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("split", ["sum_gain", "max_abs_g"])
def test_deep_tree_within_the_booster_buffer_pool(split):
    """max_depth 100 (the paper's grid): alternating gradients make a spine that peels
    one row per level, 39 levels deep, every node small enough to build its children
    from rows, grown with the booster's own buffer count (pool_slots: 10 for 40 rows),
    equals the exact tree."""
    n, L = 40, 2
    x = np.arange(n, dtype=float)
    X = np.c_[x, x[::-1] * 0.5]
    g = np.c_[(-1) ** x * (x + 1), -0.5 * (-1) ** x * (x + 1)] / 4
    h = np.full((n, L), 0.25)
    e, eo = cuts_of(X, 256)
    B = bin_matrix(X, e, eo)
    k, a = _grow(B, g, h, split, depth=100, eta=1.0, slots=pool_slots(n, 100))
    margin = np.zeros((n, L))
    CodeMatrix.of(B).add_tree(k, a["nf"], a["nb"], a["ndl"], a["nl"], a["nv"], margin)
    exp = naive.exact_tree_outputs(X.tolist(), g.tolist(), h.tolist(), split, 1.0, 0.0, 1.0,
                                   100)
    np.testing.assert_allclose(margin, np.array(exp), rtol=1e-9, atol=1e-12)
    depth = np.zeros(k, int)
    for i in range(k):
        if a["nl"][i] >= 0:
            depth[a["nl"][i]] = depth[a["nr"][i]] = depth[i] + 1
    assert depth.max() > 2 * pool_slots(n, 100)


def test_quantile_bins_cap_and_order():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 2))
    X[:, 1] = np.round(X[:, 1])          # few distinct values: one bin each
    e, eo = cuts_of(X, 16)
    B = bin_matrix(X, e, eo)
    assert B.feat_off[1] - B.feat_off[0] <= 16
    assert B.feat_off[2] - B.feat_off[1] == len(np.unique(X[:, 1]))
    # bins are monotone in the value and roughly equally filled
    order = np.argsort(X[:, 0])
    assert np.all(np.diff(B.codes[order, 0].astype(int)) >= 0)
    counts = np.bincount(B.codes[:, 0])
    assert counts.max() < 2 * 5000 / 16


def test_missing_values_learn_a_default_direction():
    """Rows with NaN behave like the high values: the split sends missing right."""
    n = 40
    x = np.r_[np.linspace(0, 1, 20), np.full(10, 5.0), np.full(10, np.nan)]
    X = x.reshape(-1, 1)
    g = np.where((x > 2) | np.isnan(x), 0.5, -0.5).reshape(-1, 1)
    h = np.full((n, 1), 0.25)
    gain, f, thr, dl = _root_split(X, g, h, "sum_gain")
    assert 1.0 < thr <= 5.0 and dl is False
    g2 = np.where(np.isnan(x), -0.5, g[:, 0]).reshape(-1, 1)   # now missing acts low
    gain, f, thr, dl = _root_split(X, g2, h, "sum_gain")
    assert dl is True and 1.0 < thr <= 5.0
    assert math.isfinite(gain)


@pytest.mark.parametrize("sparse", [False, True])
def test_boosting_rounds_equal_exact_boosting(sparse):
    """Several rounds (buffers reused and cleaned across trees) equal boosting with the
    exact recursive builder: logistic gradients, priors as base margins."""
    rng = np.random.default_rng(11)
    n, d, L = 80, 4, 3
    X = rng.normal(size=(n, d)).round(1)
    X[rng.random((n, d)) < 0.3] = np.nan
    Y = (rng.random((n, L)) < 0.4).astype(np.uint8)
    if sparse:
        mask = ~np.isnan(X)
        Xin = sp.csr_matrix((X[mask], np.nonzero(mask)[1], np.r_[0, np.cumsum(mask.sum(1))]),
                            shape=X.shape)
    else:
        Xin = X
    params = BoosterParams(n_estimators=4, max_depth=4, learning_rate=0.5, reg_lambda=1.0,
                           min_child_weight=0.2)
    e, eo = cuts_of(Xin, 256)
    ens, margin = fit_ensemble(bin_matrix(Xin, e, eo), Y, params)
    ref = np.tile(ens.base_margin, (n, 1))
    for _ in range(4):
        p = 1 / (1 + np.exp(-ref))
        g, h = p - Y, p * (1 - p)
        ref = ref + np.array(naive.exact_tree_outputs(X.tolist(), g.tolist(), h.tolist(),
                                                      "sum_gain", 1.0, 0.2, 0.5, 4))
    np.testing.assert_allclose(margin, ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ens.decision_function(Xin), ref, rtol=1e-9, atol=1e-9)
