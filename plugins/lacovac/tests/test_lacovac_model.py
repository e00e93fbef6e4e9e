"""LaCovaC, LaCova, ML-C4.5 and the forest as estimators: structure, predictions,
probabilities, inspection, pickling and bad input."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import mlw
from mlw_lacovac import MLC45, LaCova, LaCovaC, LaCovaCForest
from mlw_lacovac import _kernels as K

# Toy data in the spirit of Table 1 of the paper (12 movies; features love, dark;
# labels crime, horror, drama), constructed before the paper's text was at hand (the
# paper's own Table 1 is pinned in test_lacovac_table1.py), to have the properties
# the paper describes for Figure 1: crime and horror are
# correlated (phi = 0.707 > lambda_12 = 1.96 / sqrt(11) = 0.591), drama is
# uncorrelated with both (phi = 0), and `dark` separates crime/horror movies.
#            love dark  crime horror drama
TOY = np.array([
    [0, 1, 1, 1, 0],
    [0, 1, 1, 1, 0],
    [0, 1, 1, 1, 1],
    [1, 1, 1, 0, 1],
    [1, 1, 1, 1, 1],
    [1, 1, 1, 0, 0],
    [1, 0, 0, 0, 1],
    [1, 0, 0, 0, 1],
    [0, 0, 0, 0, 0],
    [0, 0, 0, 0, 1],
    [1, 0, 0, 0, 0],
    [0, 0, 0, 0, 0],
])
TOY_X = TOY[:, :2].astype(float)
TOY_Y = TOY[:, 2:].astype(np.uint8)
FEATURES = ["love", "dark"]
LABELS = ["crime", "horror", "drama"]


def _children(tree, v):
    return list(tree.children[tree.child_ptr[v]:tree.child_ptr[v + 1]])


def test_toy_data_gives_the_structure_of_figure_1():
    model = LaCovaC(min_samples=2, threshold=None).fit(TOY_X, TOY_Y)  # the leaf modes
    t = model.tree_
    # root: vertical split {crime, horror} | {drama}
    assert t.kind[0] == K.VSPLIT
    blocks = [t.labels[c].tolist() for c in _children(t, 0)]
    assert blocks == [[0, 1], [2]]
    # below {crime, horror}: the horizontal split on dark
    ch = _children(t, 0)[0]
    assert t.kind[ch] == K.HSPLIT and FEATURES[t.feature[ch]] == "dark"
    assert t.threshold[ch] == 0.5
    # below dark > 0.5 crime is constant (always 1): it is split off as a pure leaf
    dark = _children(t, ch)[1]
    assert t.kind[dark] == K.VSPLIT
    assert [t.labels[c].tolist() for c in _children(t, dark)] == [[1], [0]]
    pure = _children(t, dark)[1]
    assert t.kind[pure] == K.LEAF and t.leaves[t.leaf_id[pure]].subsets.tolist() == [[1]]
    # a dark, romantic movie: crime and drama, not horror
    assert model.predict(np.array([[1.0, 1.0]])).tolist() == [[1, 0, 1]]
    text = model.to_text(FEATURES, LABELS)
    assert text.splitlines()[0] == "VS {crime, horror} | {drama} (n=12)"
    assert "HS dark (n=12)" in text and "dark <= 0.5" in text and "dark > 0.5" in text
    assert "LEAF {crime, horror} n=6: {}: 1.00" in text


def test_lambda_decides_the_vertical_split():
    # phi(crime, horror) = 0.707: z just below / above 0.707 * sqrt(11) flips the root
    phi = 24 / np.sqrt(1152)
    z_edge = phi * np.sqrt(11)
    below = LaCovaC(min_samples=2, z=z_edge - 1e-6).fit(TOY_X, TOY_Y).tree_
    above = LaCovaC(min_samples=2, z=z_edge + 1e-6).fit(TOY_X, TOY_Y).tree_
    assert [below.labels[c].tolist() for c in _children(below, 0)] == [[0, 1], [2]]
    assert [above.labels[c].tolist() for c in _children(above, 0)] == [[0], [1], [2]]


def _all_leaves(model):
    return model.tree_.leaves


@pytest.mark.parametrize("cls", [LaCovaC, LaCova, MLC45])
def test_leaf_distributions_sum_to_one_and_cover_the_rows(cls):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 5))
    Y = (rng.random((120, 4)) < 0.3 + 0.3 * (X[:, :1] > 0)).astype(np.uint8)
    model = cls(min_samples=5).fit(X, Y)
    for leaf in _all_leaves(model):
        assert leaf.frequencies.sum() == pytest.approx(1.0)
        assert leaf.counts.sum() == leaf.n
        assert len({s.tobytes() for s in leaf.subsets}) == len(leaf.subsets)
        assert np.all(np.diff(leaf.counts) <= 0)
    # every label is modelled by exactly one leaf per row
    reached = model.tree_.route(X)
    for i in range(len(X)):
        labs = np.concatenate([model.tree_.leaves[j].labels for j in reached[i] if j >= 0])
        assert sorted(labs.tolist()) == [0, 1, 2, 3]


@pytest.mark.parametrize("cls", [LaCovaC, LaCova, MLC45])
@pytest.mark.parametrize("alpha", [0.0, 1.0, 3.0])
def test_joint_distribution_sums_to_one_and_matches_marginals(cls, alpha):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 3))
    Y = (rng.random((80, 3)) < 0.4).astype(np.uint8)
    Y[:, 1] |= Y[:, 0]
    mode = {"threshold": None} if cls is LaCovaC else {}  # predict: the leaf modes
    model = cls(min_samples=4, alpha=alpha, marginals="joint", **mode).fit(X, Y)
    Xq = rng.normal(size=(7, 3))
    combos = np.array(list(itertools.product([0, 1], repeat=3)), dtype=np.uint8)
    P = np.stack([np.exp(model.log_proba_of(Xq, np.repeat(c[None], 7, axis=0)))
                  for c in combos], axis=1)
    assert np.allclose(P.sum(axis=1), 1.0)
    # the marginals are those of the joint distribution
    assert np.allclose(P @ combos, model.predict_proba(Xq))
    # the joint decision (concatenated leaf modes) is the most probable label vector
    # (for alpha <= 1 an unseen subset can never outweigh an observed one)
    got = np.exp(model.log_proba_of(Xq, model.predict(Xq)))
    if alpha <= 1.0:
        assert np.allclose(got, P.max(axis=1))
    assert np.all(got > 0)


# -- the size rules: |D| < m -> leaf (paper, Algorithm 1); children of a horizontal split
#    need min_child rows on 0/1 features (default 1: no minimum, as Algorithm 1) and
#    min_child_numeric on numeric ones (default m, as the authors' code) ------------------
# 12 rows, one label; x0 (0/1) isolates the two positive rows
ISO_X = np.zeros((12, 1))
ISO_X[:2, 0] = 1.0
ISO_Y = np.zeros((12, 1), np.uint8)
ISO_Y[:2, 0] = 1


@pytest.mark.parametrize("cls", [LaCovaC, LaCova, MLC45])
def test_a_node_of_at_least_m_rows_splits_off_two_rows(cls):
    t = cls(min_samples=5).fit(ISO_X, ISO_Y).tree_
    assert t.kind[0] == K.HSPLIT and t.feature[0] == 0
    kids = _children(t, 0)
    assert sorted(t.n_rows[kids].tolist()) == [2, 10]
    assert all(t.kind[c] == K.LEAF for c in kids)
    mode = {"threshold": None} if cls is LaCovaC else {}  # the leaf modes
    assert cls(min_samples=5, **mode).fit(ISO_X, ISO_Y).predict(np.array([[1.0]])).tolist() \
        == [[1]]
    # the old rule (each child keeps m rows) cannot split at all here
    assert cls(min_samples=5, min_child=5).fit(ISO_X, ISO_Y).tree_.n_nodes == 1
    # one positive row: the default (no child minimum, as Algorithm 1) isolates it; the
    # authors' nominal rule (min_child=2) does not
    one = ISO_Y.copy()
    one[1, 0] = 0
    X1 = ISO_X.copy()
    X1[1, 0] = 0.0
    t1 = cls(min_samples=5).fit(X1, one).tree_
    assert t1.kind[0] == K.HSPLIT and sorted(t1.n_rows[_children(t1, 0)].tolist()) == [1, 11]
    assert cls(min_samples=5, min_child=2).fit(X1, one).tree_.n_nodes == 1
    # forest trees follow the same rule
    forest = LaCovaCForest(n_estimators=1, bootstrap=False, max_features=None).fit(ISO_X, ISO_Y)
    assert forest.trees_[0].kind[0] == K.HSPLIT


def test_a_node_of_fewer_than_m_rows_is_a_leaf_even_when_a_split_is_allowed():
    # x0 = 1 on rows 0-3 (y = 1 on rows 0, 1); x1 separates rows 0, 1 from 2, 3 but also
    # takes rows 4-7 (y = 0), so the root splits on x0 (weighted variance 1/12 < 1/9)
    X = np.zeros((12, 2))
    X[:4, 0] = 1.0
    X[[0, 1, 4, 5, 6, 7], 1] = 1.0
    Y = np.zeros((12, 1), np.uint8)
    Y[:2, 0] = 1
    for m, leaf in [(5, True), (4, False)]:
        t = LaCovaC(min_samples=m).fit(X, Y).tree_
        assert t.kind[0] == K.HSPLIT and t.feature[0] == 0
        small = [c for c in _children(t, 0) if t.n_rows[c] == 4][0]
        # the 4-row child has a varying label and a perfect 2 | 2 split on x1
        assert (t.kind[small] == K.LEAF) == leaf
        if not leaf:
            assert t.feature[small] == 1


def test_numeric_features_keep_min_child_numeric_rows_per_child():
    X = np.arange(12, dtype=float)[:, None]  # numeric: the two largest are positive
    Y = (X[:, 0] >= 10).astype(np.uint8)[:, None]
    t = LaCovaC(min_samples=5, max_bins=None).fit(X, Y).tree_  # default: m per child
    assert t.kind[0] == K.HSPLIT and min(t.n_rows[_children(t, 0)]) >= 5
    t2 = LaCovaC(min_samples=5, min_child_numeric=2, max_bins=None).fit(X, Y).tree_
    assert sorted(t2.n_rows[_children(t2, 0)].tolist()) == [2, 10]
    assert t2.threshold[0] == 9.5


def test_binary_features_are_recognised_dense_and_sparse():
    from mlw_lacovac._tree import child_sizes

    X = np.array([[0, 1, 0.5, 0], [1, 0, 2.0, 1], [1, 1, 0.0, 3]], float)
    want = [2, 2, 5, 5]
    assert child_sizes(X, 2, None, 5).tolist() == want
    assert LaCovaC().get_params()["min_child"] == 1
    assert child_sizes(sp.csr_matrix(X), 2, None, 5).tolist() == want
    assert child_sizes(X, 3, 4, 5).tolist() == [3, 3, 4, 4]


def test_mode_is_the_most_frequent_subset_of_the_leaf():
    X = np.zeros((6, 1))
    Y = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [1, 1]], np.uint8)
    model = LaCovaC(min_samples=1, threshold=None).fit(X, Y)  # X constant: no split
    assert model.predict(np.zeros((2, 1))).tolist() == [[1, 0], [1, 0]]
    c = np.array([4, 3])
    # default marginals: Laplace, (c_j + 1) / (n + 2)
    assert np.allclose(model.predict_proba(np.zeros((1, 1)))[0], (c + 1) / 8)
    # joint marginals, alpha = 1: (c_j + q_j) / (n + 1) with q_j = (c_j + 1) / (n + 2)
    joint = LaCovaC(min_samples=1, marginals="joint").fit(X, Y)
    assert np.allclose(joint.predict_proba(np.zeros((1, 1)))[0], (c + (c + 1) / 8) / 7)
    # a large alpha changes the probabilities, never the decision
    big = LaCovaC(min_samples=1, alpha=1e6, threshold=None).fit(X, Y)
    assert big.predict(np.zeros((1, 1))).tolist() == [[1, 0]]


def test_all_labels_constant_gives_a_single_pure_leaf():
    X = np.random.default_rng(0).normal(size=(20, 3))
    Y = np.zeros((20, 3), np.uint8)
    Y[:, 1] = 1
    model = LaCovaC(threshold=None).fit(X, Y)
    assert model.tree_.n_nodes == 1 and model.n_leaves_ == 1
    assert model.predict(X[:4]).tolist() == [[0, 1, 0]] * 4


@pytest.mark.parametrize("cls", [LaCovaC, LaCova, MLC45, LaCovaCForest])
def test_bad_input_is_rejected_with_one_line_errors(cls):
    X = np.random.default_rng(0).normal(size=(10, 2))
    Y = (X > 0).astype(np.uint8)
    with pytest.raises(ValueError, match="at least 2 training instances"):
        cls().fit(X[:1], Y[:1])
    with pytest.raises(ValueError, match="min_samples=11 is larger than the number"):
        cls(min_samples=11).fit(X, Y)
    with pytest.raises(ValueError, match="min_samples must be an integer"):
        cls(min_samples=0).fit(X, Y)
    with pytest.raises(ValueError, match="alpha"):
        cls(alpha=-1.0).fit(X, Y)
    with pytest.raises(ValueError, match="max_bins"):
        cls(max_bins=1).fit(X, Y)
    with pytest.raises(ValueError, match="marginals must be"):
        cls(marginals="raw").fit(X, Y)
    with pytest.raises(ValueError, match="min_child must be"):
        cls(min_child=0).fit(X, Y)
    with pytest.raises(ValueError, match="min_child_numeric must be"):
        cls(min_child_numeric=1.5).fit(X, Y)
    model = cls(min_samples=2).fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.zeros((2, 3)))
    with pytest.raises(ValueError):
        model.log_proba_of(X, Y[:, :1])


@pytest.mark.parametrize("cls", [LaCovaC, LaCova, MLC45])
def test_sparse_and_dense_input_grow_the_same_tree(cls):
    rng = np.random.default_rng(2)
    X = rng.integers(0, 3, (150, 12)).astype(float)
    X[rng.random(X.shape) < 0.5] = 0.0
    Y = (rng.random((150, 5)) < 0.2 + 0.5 * (X[:, :5] > 1)).astype(np.uint8)
    dense = cls(min_samples=3, max_bins=None).fit(X, Y)
    sparse = cls(min_samples=3, max_bins=None).fit(sp.csr_matrix(X), sp.csr_matrix(Y))
    assert dense.tree_.n_nodes == sparse.tree_.n_nodes
    assert np.array_equal(dense.tree_.kind, sparse.tree_.kind)
    assert np.array_equal(dense.tree_.feature, sparse.tree_.feature)
    # a zero/non-zero block can put the threshold on either side of a gap; the
    # partition of the training rows is what must agree
    assert np.array_equal(dense.predict(X), sparse.predict(sp.csr_matrix(X)))
    assert np.allclose(dense.predict_proba(X), sparse.predict_proba(sp.csr_matrix(X)))


def test_lacova_splits_vertically_only_for_independent_labels():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 2))
    indep = (rng.random((400, 3)) < 0.5).astype(np.uint8)
    t = LaCova(min_samples=5).fit(X, indep).tree_
    assert t.kind[0] == K.VSPLIT
    assert [t.labels[c].tolist() for c in _children(t, 0)] == [[0], [1], [2]]
    a = (X[:, 0] > 0).astype(np.uint8)
    dep = np.stack([a, a, 1 - a], axis=1)
    dep[rng.random(400) < 0.1, 1] ^= 1
    t2 = LaCova(min_samples=5).fit(X, dep).tree_
    assert t2.kind[0] == K.HSPLIT and t2.feature[0] == 0


def test_ml_c45_never_splits_vertically_and_stops_without_gain():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3))
    Y = (rng.random((200, 4)) < 0.3).astype(np.uint8)
    Y[:, 0] = X[:, 1] > 0
    t = MLC45().fit(X, Y).tree_
    assert not np.any(t.kind == K.VSPLIT)
    assert t.kind[0] == K.HSPLIT and t.feature[0] == 1
    # no information in X at all -> no split
    assert MLC45().fit(np.zeros((50, 2)), Y[:50]).tree_.n_nodes == 1


@pytest.mark.parametrize("cls", [LaCovaC, LaCovaCForest])
def test_pickle_round_trip_and_clone(cls):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 4))
    Y = (rng.random((60, 3)) < 0.4).astype(np.uint8)
    model = cls(min_samples=3).fit(X, Y)
    again = pickle.loads(pickle.dumps(model))
    assert np.array_equal(again.predict(X), model.predict(X))
    assert np.array_equal(again.predict_proba(X), model.predict_proba(X))
    assert np.array_equal(again.log_proba_of(X, Y), model.log_proba_of(X, Y))
    fresh = clone(model)
    assert fresh.get_params() == model.get_params() and not hasattr(fresh, "n_labels_")


def test_forest_is_reproducible_and_averages_trees():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(150, 6))
    Y = (rng.random((150, 4)) < 0.3 + 0.4 * (X[:, :4] > 0)).astype(np.uint8)
    f1 = LaCovaCForest(n_estimators=5, random_state=1).fit(X, Y)
    f2 = LaCovaCForest(n_estimators=5, random_state=1).fit(X, Y)
    assert np.array_equal(f1.predict_proba(X), f2.predict_proba(X))
    assert len(f1.trees_) == 5
    from mlw_lacovac._leaves import predict_marginals, predict_modes

    trees = list(zip(f1.trees_, f1.leaf_models_, strict=True))
    per_tree = [predict_marginals(t, m, X, 4) for t, m in trees]
    assert np.allclose(f1.predict_proba(X), np.mean(per_tree, axis=0))
    votes = np.stack([predict_modes(t, m, X, 4) for t, m in trees])
    pred = f1.predict(X)
    for i in range(len(X)):  # the predicted vector got the most votes
        count = {}
        for v in votes[:, i]:
            count[v.tobytes()] = count.get(v.tobytes(), 0) + 1
        assert count[pred[i].tobytes()] == max(count.values())
    lp = f1.log_proba_of(X, Y)
    assert np.all(lp <= 0) and np.all(np.isfinite(lp))


def test_registered_learners_build_through_mlw():
    for name, cls in [("lacovac", LaCovaC), ("lacova", LaCova), ("ml_c45", MLC45),
                      ("lacovac_forest", LaCovaCForest)]:
        assert isinstance(mlw.get_learner(name), cls)
    spec = mlw.list_learners()["lacovac"]
    assert spec.tags.joint and spec.tags.log_proba and spec.tags.sparse_input


def test_to_text_limits_and_checks_names():
    model = LaCovaC(min_samples=2).fit(TOY_X, TOY_Y)
    assert model.to_text().splitlines()[0] == "VS {y0, y1} | {y2} (n=12)"
    short = model.to_text(FEATURES, LABELS, max_depth=1)
    assert "... (n=12)" in short
    with pytest.raises(ValueError, match="feature names"):
        model.to_text(["a"], LABELS)


def test_forest_grown_in_threads_is_the_same_forest():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(120, 5))
    Y = (rng.random((120, 4)) < 0.3 + 0.4 * (X[:, :4] > 0)).astype(np.uint8)
    one = LaCovaCForest(n_estimators=6, random_state=2).fit(X, Y)
    two = LaCovaCForest(n_estimators=6, random_state=2, n_jobs=2).fit(X, Y)
    assert all(a.same_as(b) for a, b in zip(one.trees_, two.trees_, strict=True))
    assert np.array_equal(one.predict(X), two.predict(X))
    with pytest.raises(ValueError, match="n_jobs must be"):
        LaCovaCForest(n_jobs=0).fit(X, Y)


@pytest.mark.parametrize("name", ["lacovac", "lacovac_forest"])
def test_model_state_is_declared_for_model_files(name, tmp_path):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(60, 4))
    Y = (rng.random((60, 3)) < 0.4).astype(np.uint8)
    model = mlw.get_learner(name, min_samples=3).fit(X, Y)
    assert mlw.persistence.untrusted_types(model) == []
    mlw.save_model(model, tmp_path / "m.mlw")
    again = mlw.load_model(tmp_path / "m.mlw")
    assert np.array_equal(again.predict_proba(X), model.predict_proba(X))


# -- sample_weight ----------------------------------------------------------------
def _weight_data(sparse):
    rng = np.random.default_rng(4)
    n = 160
    X = rng.normal(size=(n, 6)).round(1)  # ties: repeated values in the quantile bins
    X[:, 5] = rng.random(n) < 0.4  # a 0/1 feature (min_child)
    if sparse:
        X[rng.random(X.shape) < 0.5] = 0.0
    base = X[:, :1] + rng.normal(0, 1, (n, 1))
    Y = ((rng.random((n, 4)) + 0.3 * base) > 0.7).astype(np.uint8)
    return (sp.csr_matrix(X) if sparse else X), Y, rng.integers(1, 4, n)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("cls", [LaCovaC, LaCova, MLC45])
def test_integer_weights_grow_the_tree_of_the_repeated_rows(cls, sparse):
    """Node for node (sizes, splits, criterion values, leaf counts) and the same
    predictions: a row of weight k is k copies of the row, with the default quantile bins
    (weighted quantiles) and the stopping rule, child minimum and lambda_n on weights."""
    X, Y, w = _weight_data(sparse)
    rep = np.repeat(np.arange(X.shape[0]), w)
    weighted = cls(min_samples=6).fit(X, Y, sample_weight=w)
    repeated = cls(min_samples=6).fit(X[rep], Y[rep])
    assert weighted.tree_.n_nodes > 9
    assert weighted.tree_.same_as(repeated.tree_)
    assert np.array_equal(weighted.predict_proba(X), repeated.predict_proba(X))
    assert np.array_equal(weighted.log_proba_of(X, Y), repeated.log_proba_of(X, Y))
    assert not cls(min_samples=6).fit(X, Y).tree_.same_as(weighted.tree_)


@pytest.mark.parametrize("sparse", [False, True])
def test_real_weights_grow_the_reference_tree(sparse):
    from mlw_lacovac._reference import ReferenceTreeBuilder
    from mlw_lacovac._tree import TreeBuilder, child_sizes

    X, Y, _ = _weight_data(sparse)
    w = np.random.default_rng(5).uniform(0.3, 2.5, X.shape[0])
    sizes = child_sizes(X, 1, None, 5)
    Yc = sp.csr_matrix(Y)
    fast = TreeBuilder("lacovac", 5, sizes, max_bins=16).fit(X, Yc, sample_weight=w)
    ref = ReferenceTreeBuilder("lacovac", 5, sizes, max_bins=16).fit(X, Yc, sample_weight=w)
    assert fast.n_nodes > 9 and fast.same_as(ref)
    assert fast.n_rows[0] == pytest.approx(w.sum())


def test_forest_with_integer_weights_is_the_forest_of_the_repeated_rows():
    X, Y, w = _weight_data(False)
    rep = np.repeat(np.arange(X.shape[0]), w)
    kw = dict(n_estimators=2, bootstrap=False, max_features=None)
    a = LaCovaCForest(**kw).fit(X, Y, sample_weight=w)
    b = LaCovaCForest(**kw).fit(X[rep], Y[rep])
    assert all(s.same_as(t) for s, t in zip(a.trees_, b.trees_, strict=True))


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("cls", [LaCovaC, LaCovaCForest])
def test_rows_of_weight_zero_are_rows_not_there(cls, sparse):
    """Weights are frequencies: weight 0 grows the tree of the other rows (scikit-learn's
    trees accept zero weights too), node for node."""
    X, Y, w = _weight_data(sparse)
    w[::3] = 0
    keep = w > 0
    kw = dict(n_estimators=2, bootstrap=False, max_features=None) if cls is LaCovaCForest \
        else {}
    a = cls(min_samples=6, **kw).fit(X, Y, sample_weight=w)
    b = cls(min_samples=6, **kw).fit(X[keep], Y[keep], sample_weight=w[keep])
    trees = (a.trees_, b.trees_) if cls is LaCovaCForest else ([a.tree_], [b.tree_])
    assert trees[0][0].n_nodes > 5
    assert all(s.same_as(t) for s, t in zip(*trees, strict=True))
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))


@pytest.mark.parametrize("cls", [LaCovaC, LaCova, MLC45, LaCovaCForest])
@pytest.mark.parametrize("w, message", [
    (np.r_[1.0, -1.0, np.ones(8)], "non-negative"),
    (np.r_[np.nan, np.ones(9)], "finite"),
    (np.ones(9), r"shape \(10,\)"),
])
def test_bad_sample_weight_gets_a_one_line_error(cls, w, message):
    X = np.random.default_rng(0).normal(size=(10, 2))
    Y = (X > 0).astype(np.uint8)
    with pytest.raises(ValueError, match=message) as err:
        cls(min_samples=2).fit(X, Y, sample_weight=w)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["yeast", "scene"])
def test_dense_rows_walked_together_predict_as_one_row_at_a_time(mulan_dir, name):
    """Dense rows walk the tree together (a segment of row ids per node), sparse rows
    one at a time: the same tree predicts the same marginals, modes, and,
    through the row walk of ``log_proba_of``, the same leaves, bit for bit, for the
    whole test split and for a few rows (segments below the row-walk size at once)."""
    tr = mlw.load_dataset(mulan_dir / f"{name}-train.arff")
    te = mlw.load_dataset(mulan_dir / f"{name}-test.arff")
    for model in (LaCovaC().fit(tr.X, tr.Y), LaCovaCForest(n_estimators=3).fit(tr.X, tr.Y)):
        for X in (te.X, te.X[:3], te.X[::-7]):
            Xs = sp.csr_matrix(X)
            Yd, Pd = model.predict_with_scores(X)
            Ys, Ps = model.predict_with_scores(Xs)
            assert np.array_equal(Pd, Ps) and np.array_equal(sp.csr_matrix(Yd).toarray(),
                                                             sp.csr_matrix(Ys).toarray())
            assert np.array_equal(model.predict_proba(X), Ps)
