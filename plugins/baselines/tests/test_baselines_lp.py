"""Label powerset on a real dataset (emotions, Mulan split) and on unseen label sets."""

from __future__ import annotations

import numpy as np
import pytest
from baselines_testdata import correlated
from sklearn.linear_model import LogisticRegression

import mlw
from mlw_baselines import LabelPowerset
from mlw_baselines._base_estimator import LOG_PROBA_FLOOR


@pytest.fixture(scope="module")
def emotions(mulan_dir):
    tr = mlw.load_dataset(mulan_dir / "emotions-train.arff")
    te = mlw.load_dataset(mulan_dir / "emotions-test.arff")
    lp = LabelPowerset().fit(tr.X, tr.Y)
    return tr, te, lp


def test_lp_on_emotions_predicts_training_label_sets(emotions):
    tr, te, lp = emotions
    seen = {row.tobytes() for row in np.asarray(tr.Y, dtype=np.uint8)}
    assert lp.label_sets_.shape == (len(seen), 6)
    assert int(lp.class_counts_.sum()) == tr.X.shape[0]
    P = lp.predict(te.X)
    assert all(row.tobytes() in seen for row in P)
    # the decision is the label set of the most probable class
    C = lp.predict_classes(te.X)
    np.testing.assert_allclose(C.sum(axis=1), 1.0, rtol=1e-9)
    np.testing.assert_array_equal(P, lp.label_sets_[np.argmax(C, axis=1)])
    # marginals are the class distribution summed over the sets holding each label
    np.testing.assert_allclose(lp.predict_proba(te.X), C @ lp.label_sets_, rtol=1e-12)


def test_lp_on_emotions_beats_the_most_frequent_label_set(emotions):
    tr, te, lp = emotions
    scores = mlw.evaluate(te.Y, lp.predict(te.X), scores=lp.predict_proba(te.X),
                          metrics=["subset_accuracy", "hamming_loss", "f1_example"])
    majority = lp.label_sets_[np.argmax(lp.class_counts_)]
    base = mlw.evaluate(te.Y, np.tile(majority, (te.X.shape[0], 1)),
                        metrics=["subset_accuracy", "hamming_loss", "f1_example"])
    assert scores["subset_accuracy"] > base["subset_accuracy"] + 0.1
    assert scores["hamming_loss"] < base["hamming_loss"]
    assert scores["f1_example"] > base["f1_example"]


def test_lp_log_proba_of_seen_and_unseen_sets(emotions):
    tr, te, lp = emotions
    C = lp.predict_classes(te.X[:5])
    for k in (0, len(lp.label_sets_) - 1):
        Yk = np.tile(lp.label_sets_[k], (5, 1))
        np.testing.assert_allclose(lp.log_proba_of(te.X[:5], Yk),
                                   np.log(np.maximum(C[:, k], 1e-12)), rtol=1e-12)
    all_ones = np.ones((5, 6), dtype=np.uint8)
    assert all_ones[0].tobytes() not in {r.tobytes() for r in lp.label_sets_}
    np.testing.assert_array_equal(lp.log_proba_of(te.X[:5], all_ones), LOG_PROBA_FLOOR)
    # log P summed over every seen set is log 1
    total = sum(np.exp(lp.log_proba_of(te.X[:3], np.tile(s, (3, 1)))) for s in lp.label_sets_)
    np.testing.assert_allclose(total, 1.0, rtol=1e-9)


def test_lp_equals_a_multiclass_classifier_on_set_ids():
    X, Y = correlated(n=120, d=4, L=3, seed=4)
    template = LogisticRegression(max_iter=500)
    lp = LabelPowerset(base_estimator=template).fit(X, Y)
    sets, ids = np.unique(Y, axis=0, return_inverse=True)
    ref = LogisticRegression(max_iter=500).fit(X, ids.ravel())
    np.testing.assert_array_equal(lp.label_sets_, sets)
    np.testing.assert_allclose(lp.predict_classes(X), ref.predict_proba(X), rtol=1e-9)
    np.testing.assert_array_equal(lp.predict(X), sets[ref.predict(X)])


def test_lp_with_a_margin_classifier_uses_the_softmax():
    X, Y = correlated(n=120, d=4, L=3, seed=4)
    lp = LabelPowerset(base_estimator="linear_svc").fit(X, Y)
    C = lp.predict_classes(X)
    np.testing.assert_allclose(C.sum(axis=1), 1.0)
    np.testing.assert_array_equal(lp.predict(X),
                                  lp.label_sets_[lp.estimator_.predict(X)])
