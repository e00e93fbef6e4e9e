"""ML-kNN, BRkNN and IBLR: ML-kNN's posterior worked out by hand on 8 instances, all
three against loop-by-loop references over a brute-force neighbour search, sparse
input kept sparse."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest
import scipy.sparse as sp
from baselines_testdata import correlated, sparse_text
from naive_baselines import brute_neighbours, mlknn_by_hand

from mlw_baselines import IBLR, BinaryRelevance, BRkNN, MLkNN
from mlw_baselines.knn import IBLR_BASE_ESTIMATOR

# 8 instances on a line, two labels; k = 2, s = 1, Euclidean, leave-one-out neighbours:
# 0:{1,2} 1:{0,2} 2:{1,3} 3:{2,1} 4:{5,6} 5:{4,6} 6:{5,7} 7:{6,5} (ties: lower index)
X8 = np.array([[0.0], [1.0], [2.0], [3.0], [10.0], [11.0], [12.0], [13.0]])
Y8 = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 1], [0, 0], [1, 0]])


def test_mlknn_posterior_by_hand_on_eight_instances():
    model = MLkNN(k=2, s=1.0).fit(X8, Y8)
    # label 0: 4 of 8 positive -> prior (1 + 4) / (2 + 8) = 1/2. Neighbour counts
    # (instances 0..7): 2 2 1 2 0 0 1 0; with the label (0, 1, 2, 7): c = 2, 2, 1, 0
    # -> a = [1, 1, 2]; without (3, 4, 5, 6): c = 2, 0, 0, 1 -> b = [2, 1, 1].
    # P(c | H1) = (1 + a[c]) / (1 * 3 + 4) = [2/7, 2/7, 3/7]; P(c | H0) = [3/7, 2/7, 2/7]
    # label 1: 3 of 8 -> prior 4/10. Counts: 0 0 1 0 1 1 1 1; with (3, 4, 5): 0, 1, 1
    # -> a = [1, 2, 0]; without: 0, 0, 1, 1, 1 -> b = [2, 3, 0].
    # P(c | H1) = (1 + a) / (3 + 3) = [2/6, 3/6, 1/6]; P(c | H0) = (1 + b) / 8
    np.testing.assert_allclose(model.prior_, [0.5, 0.4])
    np.testing.assert_allclose(model.likelihood_[1, 0], [2 / 7, 2 / 7, 3 / 7])
    np.testing.assert_allclose(model.likelihood_[0, 0], [3 / 7, 2 / 7, 2 / 7])
    np.testing.assert_allclose(model.likelihood_[1, 1], [2 / 6, 3 / 6, 1 / 6])
    np.testing.assert_allclose(model.likelihood_[0, 1], [3 / 8, 4 / 8, 1 / 8])

    def post(prior, on, off):
        return float(prior * on / (prior * on + (1 - prior) * off))

    # x = 0.5: neighbours {0, 1} (tie, lower index first): c = (2, 0)
    # x = 12.6: neighbours {7, 6}: c = (1, 0); x = 10.4: neighbours {4, 5}: c = (0, 2)
    expected = [
        [post(F(1, 2), F(3, 7), F(2, 7)), post(F(2, 5), F(2, 6), F(3, 8))],   # 3/5, 16/43
        [post(F(1, 2), F(2, 7), F(2, 7)), post(F(2, 5), F(2, 6), F(3, 8))],   # 1/2, 16/43
        [post(F(1, 2), F(2, 7), F(3, 7)), post(F(2, 5), F(1, 6), F(1, 8))],   # 2/5, 8/17
    ]
    assert expected[0] == pytest.approx([3 / 5, 16 / 43])
    assert expected[2] == pytest.approx([2 / 5, 8 / 17])
    Xq = np.array([[0.5], [12.6], [10.4]])
    np.testing.assert_allclose(model.predict_proba(Xq), expected, rtol=1e-12)
    # the MAP decision: P(H1) P(c|H1) >= P(H0) P(c|H0), so the tie at 1/2 is a 1
    np.testing.assert_array_equal(model.predict(Xq), [[1, 0], [1, 0], [0, 0]])
    np.testing.assert_allclose(model.predict_proba(Xq), mlknn_by_hand(X8, Y8, Xq, k=2))


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_mlknn_equals_the_loop_reference(metric):
    X, Y = correlated(n=90, d=5, L=4, seed=3)
    model = MLkNN(k=5, s=0.5, metric=metric).fit(X[:60], Y[:60])
    ref = mlknn_by_hand(X[:60], Y[:60], X[60:], k=5, s=0.5, metric=metric)
    np.testing.assert_allclose(model.predict_proba(X[60:]), ref, rtol=1e-12)


def test_sparse_input_is_searched_sparse_and_equals_dense():
    X, Y = sparse_text(n=120, d=50, L=4, density=0.15)
    for cls in (MLkNN, BRkNN, IBLR):
        sparse = cls(k=4, metric="cosine").fit(X[:90], Y[:90])
        assert sparse.index_.sparse
        dense = cls(k=4, metric="cosine").fit(X[:90].toarray(), Y[:90])
        np.testing.assert_allclose(sparse.predict_proba(X[90:]),
                                   dense.predict_proba(X[90:].toarray()), rtol=1e-9)
        np.testing.assert_array_equal(sparse.predict(X[90:]), dense.predict(X[90:].toarray()))
    # against the loop reference with real-valued words (0/1 words tie too often for
    # rounding-free comparisons of similarities)
    X = X.copy()
    X.data = np.random.default_rng(0).random(X.nnz) + 0.5
    ref = mlknn_by_hand(X[:90], Y[:90], X[90:], k=4, metric="cosine")
    np.testing.assert_allclose(MLkNN(k=4, metric="cosine").fit(X[:90], Y[:90])
                               .predict_proba(X[90:]), ref, rtol=1e-12)


def test_brknn_a_and_b_by_hand():
    X, Y = correlated(n=80, d=4, L=5, seed=8)
    Xtr, Ytr, Xte = X[:60], Y[:60], X[60:]
    a = BRkNN(k=4, variant="a", top_label=True).fit(Xtr, Ytr)  # the paper's extension
    b = BRkNN(k=4, variant="b").fit(Xtr, Ytr)
    Pa, Sa = a.predict(Xte), a.predict_proba(Xte)
    Pb = b.predict(Xte)
    for i, nb in enumerate(brute_neighbours(Xtr, Xte, 4)):
        conf = Ytr[nb].sum(axis=0) / 4
        np.testing.assert_allclose(Sa[i], conf)
        want = (conf >= 0.5).astype(int)
        if not want.any():
            want[int(np.argmax(conf))] = 1
        np.testing.assert_array_equal(Pa[i], want)
        size = int(np.floor(Ytr[nb].sum() / 4 + 0.5))
        top = sorted(range(5), key=lambda j: (-conf[j], j))[:size]
        np.testing.assert_array_equal(np.flatnonzero(Pb[i]), sorted(top))
    # BRkNN-a's extension (the top label for a row with none) follows the adaptive
    # top-label rule: off when the training set has empty label sets
    Ye = Ytr.copy()
    Ye[::3] = 0
    auto, forced = BRkNN(k=4).fit(Xtr, Ye), BRkNN(k=4, top_label=True).fit(Xtr, Ye)
    assert a.top_label_ and not auto.top_label_
    S = auto.predict_proba(Xte)
    np.testing.assert_array_equal(auto.predict(Xte), (S >= 0.5).astype(auto.predict(Xte).dtype))
    assert not auto.predict(Xte).any(axis=1).all()
    # forced: every row with a neighbour's label gets one (a row whose neighbours are all
    # unlabelled has no top label and stays empty, as the core's rule leaves it)
    np.testing.assert_array_equal(forced.predict(Xte).any(axis=1), (S > 0).any(axis=1))


def test_brknn_extension_is_the_core_top_label_rule():
    # X8 with instances 6 and 7 unlabelled (Y8 has 6 so already), k = 2: 12.6 ->
    # neighbours {7, 6}, no label among them: all shares 0, and the rule (forced on)
    # leaves the row empty; 2.6 -> {3, 2}: shares (1/2, 1/2) -> {0, 1}.
    Y7 = Y8.copy()
    Y7[7] = 0
    Xq = np.array([[12.6], [2.6]])
    a = BRkNN(k=2, top_label=True).fit(X8, Y7)
    np.testing.assert_array_equal(a.predict_proba(Xq), [[0, 0], [0.5, 0.5]])
    np.testing.assert_array_equal(a.predict(Xq), [[0, 0], [1, 1]])
    # variant b, k = 4, instance 4 unlabelled too: 12.6 -> {7, 6, 5, 4}, one label
    # (5's label 1) among them: s = round(1/4) = 0, the paper's b predicts nothing;
    # with the rule the row gets its top share, label 1
    Yb = Y7.copy()
    Yb[4] = 0
    q = np.array([[12.6]])
    np.testing.assert_array_equal(BRkNN(k=4, variant="b", top_label=False).fit(X8, Yb)
                                  .predict(q), [[0, 0]])
    np.testing.assert_array_equal(BRkNN(k=4, variant="b", top_label=True).fit(X8, Yb)
                                  .predict(q), [[0, 1]])
    # the rule on the decision is the core's: the scores' top label for a row left
    # empty, exactly mlw.thresholds.apply_threshold(S, inf, top_label=True) -- here with
    # every third training row unlabelled, so both kinds of empty row occur
    from mlw.thresholds import apply_threshold

    X, Yc = correlated(n=80, d=4, L=5, seed=8)
    Yc[:60:3] = 0
    m = BRkNN(k=4, top_label=True).fit(X[:60], Yc[:60])
    S = m.predict_proba(X[60:])
    want = (S >= 0.5).astype(np.uint8)
    empty = ~want.any(axis=1)
    top = S[empty].max(axis=1)
    assert (top > 0).any() and (top == 0).any()
    want[empty] = apply_threshold(S[empty], np.inf, top_label=True)
    P, S2 = m.predict_with_scores(X[60:])
    np.testing.assert_array_equal(S2, S)
    np.testing.assert_array_equal(P, want)
    np.testing.assert_array_equal(m.predict(X[60:]), want)
    # a model saved before top_label existed (no top_label/top_label_) kept the
    # extension on for variant a only: unpickled, it still does
    import pickle

    for variant, on in (("a", True), ("b", False)):
        old = BRkNN(k=4, variant=variant).fit(X[:60], Yc[:60])
        del old.top_label, old.top_label_
        new = pickle.loads(pickle.dumps(old))
        assert new.top_label is on and new.top_label_ is on
        ref = BRkNN(k=4, variant=variant, top_label=on).fit(X[:60], Yc[:60])
        np.testing.assert_array_equal(new.predict(X[60:]), ref.predict(X[60:]))


def test_iblr_is_binary_relevance_on_the_neighbourhood_label_fractions():
    X, Y = correlated(n=120, d=4, L=4, seed=5)
    Xtr, Ytr, Xte = X[:90], Y[:90], X[90:]
    model = IBLR(k=5).fit(Xtr, Ytr)
    phi_tr = np.array([Ytr[nb].sum(axis=0) / 5
                       for nb in brute_neighbours(Xtr, Xtr, 5, leave_one_out=True)])
    phi_te = np.array([Ytr[nb].sum(axis=0) / 5 for nb in brute_neighbours(Xtr, Xte, 5)])
    br = BinaryRelevance(base_estimator=IBLR_BASE_ESTIMATOR).fit(phi_tr, Ytr)
    np.testing.assert_allclose(model.predict_proba(Xte), br.predict_proba(phi_te), rtol=1e-9)
    plus = IBLR(k=5, add_features=True).fit(Xtr, Ytr)
    br_plus = BinaryRelevance(base_estimator=IBLR_BASE_ESTIMATOR).fit(np.hstack([Xtr, phi_tr]),
                                                                       Ytr)
    np.testing.assert_allclose(plus.predict_proba(Xte),
                               br_plus.predict_proba(np.hstack([Xte, phi_te])), rtol=1e-9)
    sparse = IBLR(k=5, add_features=True).fit(sp.csr_matrix(Xtr), Ytr)
    np.testing.assert_allclose(sparse.predict_proba(sp.csr_matrix(Xte)),
                               plus.predict_proba(Xte), rtol=1e-6)


def test_k_larger_than_the_training_set_and_pcut_thresholds():
    X, Y = correlated(n=12, d=3, L=3, seed=1)
    for cls in (MLkNN, BRkNN, IBLR):
        model = cls(k=50).fit(X, Y)
        assert model.k_ == 12 and model.predict(X).shape == (12, 3)
    model = MLkNN(k=3, threshold="pcut").fit(X, Y)
    assert not hasattr(model, "_train_scores")
    assert model.predict(X).shape == (12, 3)


@pytest.mark.parametrize("cls,params,message", [
    (MLkNN, {"k": 0}, "'k' must be"),
    (MLkNN, {"s": 0}, "'s' must be"),
    (MLkNN, {"metric": "manhattan"}, "'metric' must be"),
    (BRkNN, {"variant": "c"}, "'variant' must be"),
    (IBLR, {"add_features": "yes"}, "'add_features' must be"),
])
def test_bad_parameters(cls, params, message):
    with pytest.raises(ValueError, match=message):
        cls(**params).fit(X8, Y8)
