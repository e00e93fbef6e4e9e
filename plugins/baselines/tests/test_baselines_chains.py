"""Classifier chains: training, greedy inference and the chain rule against
hand-rolled chains of scikit-learn classifiers."""

from __future__ import annotations

import numpy as np
import pytest
from baselines_testdata import correlated
from naive_baselines import chain_link_proba, greedy_chain, hand_rolled_chain
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from mlw_baselines import ClassifierChain
from mlw_baselines._base_estimator import LOG_PROBA_FLOOR


@pytest.fixture(scope="module")
def data():
    X, Y = correlated(n=160, d=5, L=4, seed=7)
    return X[:110], Y[:110], X[110:], Y[110:]


LR = LogisticRegression(C=2.0, max_iter=500)


def test_cc_with_given_order_equals_a_hand_rolled_chain(data):
    Xtr, Ytr, Xte, _ = data
    order = [2, 0, 3, 1]
    cc = ClassifierChain(base_estimator=LR, order=order, threshold=None).fit(Xtr, Ytr)
    np.testing.assert_array_equal(cc.order_, order)
    models = hand_rolled_chain(LR, Xtr, Ytr, order)
    for mine, ref in zip(cc.estimators_, models, strict=True):
        np.testing.assert_allclose(mine.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    Yhat, P = greedy_chain(models, Xte, order)
    np.testing.assert_array_equal(cc.predict(Xte), Yhat)
    np.testing.assert_allclose(cc.predict_proba(Xte), P, rtol=1e-8, atol=1e-12)
    # the greedy decision is the 0.5-threshold of the link probabilities on its path
    np.testing.assert_array_equal(cc.predict(Xte), (cc.predict_proba(Xte) >= 0.5))


def test_cc_generic_path_with_decision_trees(data):
    Xtr, Ytr, Xte, _ = data
    tree = DecisionTreeClassifier(max_depth=4, random_state=0)
    order = [3, 1, 0, 2]
    cc = ClassifierChain(base_estimator=tree, order=order, threshold=None).fit(Xtr, Ytr)
    assert cc.linear_coef_ is None
    Yhat, P = greedy_chain(hand_rolled_chain(tree, Xtr, Ytr, order), Xte, order)
    np.testing.assert_array_equal(cc.predict(Xte), Yhat)
    np.testing.assert_array_equal(cc.predict_proba(Xte), P)


def test_cc_random_order_comes_from_the_seed(data):
    Xtr, Ytr, Xte, _ = data
    a = ClassifierChain(order="random", random_state=5).fit(Xtr, Ytr)
    b = ClassifierChain(order="random", random_state=5).fit(Xtr, Ytr)
    np.testing.assert_array_equal(a.order_, np.random.default_rng(5).permutation(4))
    np.testing.assert_array_equal(a.order_, b.order_)
    np.testing.assert_array_equal(a.predict(Xte), b.predict(Xte))
    orders = {tuple(ClassifierChain(order="random", random_state=s).fit(Xtr, Ytr).order_)
              for s in range(6)}
    assert len(orders) > 1
    assert ClassifierChain().fit(Xtr, Ytr).order_.tolist() == [0, 1, 2, 3]


def test_cc_log_proba_of_is_the_chain_rule(data):
    Xtr, Ytr, Xte, Yte = data
    order = [1, 3, 0, 2]
    cc = ClassifierChain(base_estimator=LR, order=order, threshold=None).fit(Xtr, Ytr)
    models = hand_rolled_chain(LR, Xtr, Ytr, order)
    got = cc.log_proba_of(Xte, Yte)
    for i in range(Xte.shape[0]):
        y = Yte[i, order]
        expected = 0.0
        for d in range(4):
            p = chain_link_proba(models, Xte[i:i + 1], list(y), d)
            expected += np.log(p if y[d] else 1.0 - p)
        assert got[i] == pytest.approx(expected, rel=1e-8, abs=1e-10)


def test_cc_linear_and_generic_paths_agree(data):
    """The numba fast path (linear links) against the batched oracle path."""
    from mlw_baselines import _inference

    Xtr, Ytr, Xte, Yte = data
    cc = ClassifierChain(order=[2, 3, 0, 1], threshold=None).fit(Xtr, Ytr)
    assert cc.linear_coef_ is not None
    oracle = cc._oracle(Xte)
    Yhat, P = _inference.greedy(oracle, Xte.shape[0], 4)
    np.testing.assert_array_equal(cc.predict(Xte), cc._to_labels(Yhat))
    np.testing.assert_allclose(cc.predict_proba(Xte), cc._to_labels(P), rtol=1e-9)
    slow = _inference.chain_log_proba(oracle, Yte[:, cc.order_])
    np.testing.assert_allclose(cc.log_proba_of(Xte, Yte), slow, rtol=1e-9)


def test_cc_log_proba_floor_for_certain_wrong_links(data):
    Xtr, Ytr, Xte, _ = data
    tree = DecisionTreeClassifier(random_state=0)  # leaves are pure: probabilities 0/1
    cc = ClassifierChain(base_estimator=tree).fit(Xtr, Ytr)
    Yflip = 1 - cc.predict(Xte)
    lp = cc.log_proba_of(Xte, Yflip)
    assert np.all(np.isfinite(lp))
    assert np.all(lp >= 4 * LOG_PROBA_FLOOR - 1e-9)
    assert np.all(lp <= LOG_PROBA_FLOOR + 1e-9)  # at least the first link is certain


def test_cc_order_as_a_cli_string(data):
    Xtr, Ytr, _, _ = data
    assert ClassifierChain(order="3, 1,0,2").fit(Xtr, Ytr).order_.tolist() == [3, 1, 0, 2]


@pytest.mark.parametrize("bad", [[0, 1, 2], [0, 1, 2, 2], "backwards", [0.5, 1, 2, 3],
                                 "0,1,2", "0,1,2,x"])
def test_cc_rejects_bad_orders(data, bad):
    Xtr, Ytr, _, _ = data
    with pytest.raises(ValueError, match="order"):
        ClassifierChain(order=bad).fit(Xtr, Ytr)
