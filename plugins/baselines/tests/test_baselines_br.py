"""Binary relevance against a hand-rolled loop of classifiers."""

from __future__ import annotations

import numpy as np
import pytest
from baselines_testdata import correlated
from joblib import parallel_config
from naive_baselines import hand_rolled_br
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler
from sklearn.tree import DecisionTreeClassifier

import mlw
from mlw_baselines import BinaryRelevance
from mlw_baselines._base_estimator import proba_positive


@pytest.fixture(scope="module")
def data():
    X, Y = correlated(n=150, d=6, L=4, seed=3)
    return X[:100], Y[:100], X[100:], Y[100:]


def test_br_equals_a_loop_of_logistic_regressions(data):
    Xtr, Ytr, Xte, _ = data
    template = LogisticRegression(C=0.5, max_iter=500)
    br = BinaryRelevance(base_estimator=template, threshold="fixed").fit(Xtr, Ytr)
    models = hand_rolled_br(template, Xtr, Ytr)
    expected = np.column_stack([m.predict_proba(Xte)[:, 1] for m in models])
    np.testing.assert_allclose(br.predict_proba(Xte), expected, rtol=1e-10, atol=1e-12)
    # fixed threshold 0.5 gives the classifiers' own decisions
    np.testing.assert_array_equal(br.predict(Xte),
                                  np.column_stack([m.predict(Xte) for m in models]))
    # the template object itself is never fitted
    assert not hasattr(template, "coef_")


def test_br_default_is_maxabs_scaled_logistic_regression(data):
    Xtr, Ytr, Xte, _ = data
    br = BinaryRelevance().fit(Xtr, Ytr)
    models = hand_rolled_br(make_pipeline(MaxAbsScaler(), LogisticRegression(max_iter=1000)),
                            Xtr, Ytr)
    expected = np.column_stack([m.predict_proba(Xte)[:, 1] for m in models])
    np.testing.assert_allclose(br.predict_proba(Xte), expected, rtol=1e-9, atol=1e-12)


def test_br_linear_fast_path_equals_per_model_scores(data):
    Xtr, Ytr, Xte, _ = data
    br = BinaryRelevance().fit(Xtr, Ytr)
    assert br.linear_coef_ is not None and br.linear_coef_.shape == (4, 6)
    slow = np.column_stack([proba_positive(m, Xte) for m in br.estimators_])
    np.testing.assert_allclose(br.predict_proba(Xte), slow, rtol=1e-10, atol=1e-13)


def test_br_decision_tree_and_parallel_fit(data):
    Xtr, Ytr, Xte, _ = data
    tree = DecisionTreeClassifier(max_depth=3, random_state=0)
    seq = BinaryRelevance(base_estimator=tree).fit(Xtr, Ytr)
    with parallel_config(backend="threading"):  # same code path, no process start-up
        par = BinaryRelevance(base_estimator=tree, n_jobs=2).fit(Xtr, Ytr)
    assert seq.linear_coef_ is None
    models = hand_rolled_br(tree, Xtr, Ytr)
    expected = np.column_stack([m.predict_proba(Xte)[:, 1] for m in models])
    np.testing.assert_array_equal(seq.predict_proba(Xte), expected)
    np.testing.assert_array_equal(par.predict_proba(Xte), expected)


def test_br_shortcut_strings(data):
    Xtr, Ytr, Xte, _ = data
    for name in ("decision_tree", "linear_svc", "bernoulli_nb", "Logistic-Regression"):
        br = BinaryRelevance(base_estimator=name).fit(Xtr, Ytr)
        S = br.predict_proba(Xte)
        assert S.shape == (50, 4) and np.all((S >= 0) & (S <= 1))
        P = br.predict(Xte)
        assert P.dtype == np.uint8


def test_br_linear_svc_predicts_the_svm_decisions(data):
    Xtr, Ytr, Xte, _ = data
    br = BinaryRelevance(base_estimator="linear_svc", threshold="fixed").fit(Xtr, Ytr)
    assert br.linear_coef_ is not None  # sigmoid of the margin: folded into one product
    decisions = np.column_stack([m.predict(Xte) for m in br.estimators_])
    np.testing.assert_array_equal(br.predict(Xte), decisions)


@pytest.mark.parametrize("threshold", ["pcut", "cardinality", "one_threshold"])
def test_br_threshold_strategies(data, threshold):
    Xtr, Ytr, Xte, _ = data
    br = mlw.get_learner("br", threshold=threshold).fit(Xtr, Ytr)
    P = br.predict(Xte)
    S = br.predict_proba(Xte)
    assert P.shape == S.shape
    if threshold == "cardinality":
        t = br.threshold_.threshold_
        assert np.all(P[S >= t] == 1)


def test_br_log_proba_of_is_the_product_of_independent_marginals(data):
    Xtr, Ytr, Xte, Yte = data
    br = BinaryRelevance().fit(Xtr, Ytr)
    P = br.predict_proba(Xte)
    expected = np.log(np.where(Yte == 1, P, 1 - P)).sum(axis=1)
    np.testing.assert_allclose(br.log_proba_of(Xte, Yte), expected, rtol=1e-12)
    # a joint distribution: summed over all 2^L label vectors it is 1
    L = Ytr.shape[1]
    grid = ((np.arange(2 ** L)[:, None] >> np.arange(L)) & 1).astype(np.uint8)
    total = sum(np.exp(br.log_proba_of(Xte[:3], np.tile(v, (3, 1)))) for v in grid)
    np.testing.assert_allclose(total, 1.0, rtol=1e-12)
    # and evaluation reports cll_loss for it
    result = mlw.evaluate(Yte, br.predict(Xte), log_proba=br.log_proba_of(Xte, Yte))
    assert result["cll_loss"] == pytest.approx(-expected.sum())
