"""RAkEL: the labelsets it draws, its votes against a hand-rolled ensemble of label
powersets, RAkEL-d as a concatenation of LPs, and parallel fitting."""

from __future__ import annotations

import math

import numpy as np
import pytest
from baselines_testdata import correlated
from joblib import parallel_config
from naive_baselines import hand_rolled_lp, rakel_by_hand
from sklearn.linear_model import LogisticRegression

from mlw_baselines import LabelPowerset, RandomKLabelsets
from mlw_baselines.rakel import disjoint_labelsets, overlapping_labelsets


@pytest.fixture(scope="module")
def data():
    X, Y = correlated(n=150, d=4, L=6, seed=4)
    return X[:100], Y[:100], X[100:], Y[100:]


@pytest.mark.parametrize("L,k", [(6, 3), (7, 3), (5, 5), (4, 1)])
def test_disjoint_labelsets_partition_the_labels(L, k):
    sets = disjoint_labelsets(L, k, np.random.default_rng(L))
    assert len(sets) == math.ceil(L / k)
    assert sorted(int(v) for s in sets for v in s) == list(range(L))
    assert [len(s) for s in sets[:-1]] == [k] * (len(sets) - 1)


@pytest.mark.parametrize("L,k,m", [(6, 3, 12), (6, 3, 20), (40, 3, 80), (5, 2, 3)])
def test_overlapping_labelsets_are_distinct_k_sets_covering_the_labels(L, k, m):
    sets = overlapping_labelsets(L, k, m, np.random.default_rng(m))
    keys = {tuple(s) for s in sets}
    assert len(keys) == len(sets) == min(m, math.comb(L, k))
    assert all(len(s) == k and list(s) == sorted(s) for s in sets)
    if m * k >= L:
        assert {int(v) for s in sets for v in s} == set(range(L))


def test_overlapping_votes_and_scores_equal_a_hand_rolled_ensemble(data):
    Xtr, Ytr, Xte, _ = data
    lr = LogisticRegression(C=1.0, max_iter=1000)
    rakel = RandomKLabelsets(base_estimator=lr, labelset_size=3, n_estimators=7,
                             random_state=5).fit(Xtr, Ytr)
    assert len(rakel.labelsets_) == 7
    members = [hand_rolled_lp(lr, Xtr, Ytr[:, labels]) for labels in rakel.labelsets_]
    votes, decisions, marg = rakel_by_hand(members, rakel.labelsets_, Xte, 6)
    np.testing.assert_allclose(rakel.predict_votes(Xte), votes, atol=1e-12)
    np.testing.assert_array_equal(rakel.predict(Xte), decisions)
    np.testing.assert_allclose(rakel.predict_proba(Xte), marg, rtol=1e-6, atol=1e-8)
    # the default ensemble: min(2L, C(L, k)) = 12 models, every label covered
    default = RandomKLabelsets(base_estimator=lr).fit(Xtr, Ytr)
    assert len(default.labelsets_) == 12 and np.all(default.coverage_ > 0)
    P, S = default.predict_with_scores(Xte)
    np.testing.assert_array_equal(P, default.predict(Xte))
    np.testing.assert_allclose(S, default.predict_proba(Xte))


def test_vote_threshold_is_inclusive_and_uncovered_labels_are_never_predicted(data):
    Xtr, Ytr, Xte, _ = data
    # one labelset of 2 labels out of 6: four labels uncovered
    rakel = RandomKLabelsets(labelset_size=2, n_estimators=1, vote_threshold=0.0,
                             random_state=1).fit(Xtr, Ytr)
    uncovered = rakel.coverage_ == 0
    assert uncovered.sum() == 4
    P, S = rakel.predict(Xte), rakel.predict_proba(Xte)
    assert np.all(P[:, uncovered] == 0) and np.all(S[:, uncovered] == 0)
    assert np.all(P[:, ~uncovered] == 1)  # vote >= 0 for every covered label


def test_disjoint_is_the_concatenation_of_its_label_powersets(data):
    Xtr, Ytr, Xte, _ = data
    rakel = RandomKLabelsets(mode="disjoint", labelset_size=4, random_state=2).fit(Xtr, Ytr)
    assert [len(s) for s in rakel.labelsets_] == [4, 2]
    P, S = rakel.predict(Xte), rakel.predict_proba(Xte)
    for labels in rakel.labelsets_:
        lp = LabelPowerset().fit(Xtr, Ytr[:, labels])
        np.testing.assert_array_equal(P[:, labels], lp.predict(Xte))
        np.testing.assert_allclose(S[:, labels], lp.predict_proba(Xte), rtol=1e-9)


def test_labelset_size_at_least_L_is_label_powerset(data):
    Xtr, Ytr, Xte, _ = data
    lp = LabelPowerset().fit(Xtr, Ytr)
    for mode in ("overlapping", "disjoint"):
        rakel = RandomKLabelsets(mode=mode, labelset_size=9).fit(Xtr, Ytr)
        assert len(rakel.labelsets_) == 1
        np.testing.assert_array_equal(rakel.predict(Xte), lp.predict(Xte))


def test_parallel_fit_equals_serial_fit(data):
    Xtr, Ytr, Xte, _ = data
    serial = RandomKLabelsets(random_state=3).fit(Xtr, Ytr)
    # joblib's thread backend: the same code path as processes without their start-up
    # cost (pickling is tested in test_baselines_sklearn)
    with parallel_config(backend="threading"):
        parallel = RandomKLabelsets(random_state=3, n_jobs=2).fit(Xtr, Ytr)
    assert [s.tolist() for s in serial.labelsets_] == [s.tolist() for s in parallel.labelsets_]
    np.testing.assert_array_equal(serial.predict(Xte), parallel.predict(Xte))
    np.testing.assert_allclose(serial.predict_proba(Xte), parallel.predict_proba(Xte))


@pytest.mark.parametrize("params,message", [
    ({"mode": "o"}, r"parameter 'mode' must be .*'overlapping', 'disjoint', got 'o'"),
    ({"labelset_size": 0}, r"parameter 'labelset_size' must be an integer >= 1, got 0"),
    ({"n_estimators": 0}, r"parameter 'n_estimators' must be"),
    ({"vote_threshold": 1.5}, r"parameter 'vote_threshold' must be"),
])
def test_bad_parameters(data, params, message):
    Xtr, Ytr, _, _ = data
    with pytest.raises(ValueError, match=message):
        RandomKLabelsets(**params).fit(Xtr, Ytr)
