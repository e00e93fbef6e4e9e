"""The random forest of predictive clustering trees: its joint against a hand count of
the training label sets in each tree's leaves, and every quantity the decoders read
against brute-force enumeration of the 2^L label vectors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from baselines_testdata import correlated, sparse_text

import mlw
from mlw_baselines import PCTForest


def _all_vectors(L):
    return np.array(list(itertools.product([0, 1], repeat=L)), dtype=np.uint8)


def _joint_by_enumeration(forest, X):
    """P(y | x) of every one of the 2^L label vectors, from ``log_proba_of``."""
    V = _all_vectors(forest.n_labels_)
    return V, np.stack([np.exp(forest.log_proba_of(X, np.tile(v, (X.shape[0], 1))))
                        for v in V], axis=1)


def test_joint_is_the_mean_of_the_leaves_label_set_shares():
    X, Y = correlated(n=60, d=4, L=3, seed=2)
    forest = PCTForest(n_estimators=7, bootstrap=False, random_state=3).fit(X, Y)
    Xq = X[:15] + 0.05
    expected = np.zeros((Xq.shape[0], len(forest.label_sets_)))
    for tree in forest.estimators_:
        train_leaf, query_leaf = tree.apply(X.astype(np.float32)), tree.apply(
            Xq.astype(np.float32))
        for i, leaf in enumerate(query_leaf):
            rows = Y[train_leaf == leaf]
            for k, s in enumerate(forest.label_sets_):
                expected[i, k] += np.mean((rows == s).all(axis=1)) / len(forest.estimators_)
    np.testing.assert_allclose(forest.predict_classes(Xq), expected, atol=1e-12)


def test_bootstrapped_marginals_equal_the_trees_weighted_leaf_frequencies():
    """With bagging, each tree's leaf counts its rows by their bootstrap weight: the
    forest's marginals are then the mean of the trees' own per-label probabilities."""
    X, Y = correlated(n=80, d=5, L=4, seed=5)
    assert (Y.sum(axis=0) > 0).all() and (Y.sum(axis=0) < len(Y)).all()
    forest = PCTForest(n_estimators=9, random_state=1).fit(X, Y)
    Xq = X[:20].astype(np.float32)
    per_tree = np.mean([np.stack([p[:, 1] for p in tree.predict_proba(Xq)], axis=1)
                        for tree in forest.estimators_], axis=0)
    np.testing.assert_allclose(forest.predict_proba(X[:20]), per_tree, atol=1e-6)


@pytest.fixture(scope="module")
def small():
    X, Y = correlated(n=90, d=4, L=4, seed=7)
    return X, PCTForest(n_estimators=15, random_state=0).fit(X, Y)


def test_joint_sums_to_one_and_lives_on_training_label_sets(small):
    X, forest = small
    V, P = _joint_by_enumeration(forest, X[:10])
    seen = np.array([any((v == s).all() for s in forest.label_sets_) for v in V])
    np.testing.assert_allclose(P[:, seen].sum(axis=1), 1.0, atol=1e-9)
    assert (P[:, ~seen] <= 1e-12 * (1 + 1e-9)).all()


def test_mode_marginals_and_size_marginals_against_brute_force(small):
    X, forest = small
    Xq = X[::6]
    V, P = _joint_by_enumeration(forest, Xq)
    np.testing.assert_array_equal(forest.joint_mode(Xq), V[np.argmax(P, axis=1)])
    np.testing.assert_array_equal(forest.predict(Xq), V[np.argmax(P, axis=1)])
    np.testing.assert_allclose(forest.predict_proba(Xq), P @ V, atol=1e-9)
    sizes = V.sum(axis=1)
    S = forest.size_marginals(Xq)
    for s in range(1, forest.n_labels_ + 1):
        np.testing.assert_allclose(S[:, :, s - 1], P[:, sizes == s] @ V[sizes == s],
                                   atol=1e-9)


def test_f1_decoding_is_the_brute_force_expected_f1_optimum(small):
    X, forest = small
    Xq = X[::4]
    V, P = _joint_by_enumeration(forest, Xq)
    Vi = V.astype(np.int64)
    tp = Vi @ Vi.T                                   # [candidate, truth]
    size = V.sum(axis=1)
    den = size[:, None] + size[None, :]
    f1 = np.where(den > 0, 2 * tp / np.maximum(den, 1), 1.0)
    expected_f1 = P @ f1.T                           # [row, candidate]
    decoded = mlw.get_decoder("f1").decode_detailed(forest, Xq)
    assert decoded.route == "exact GFM"
    best = expected_f1.max(axis=1)
    got = np.array([expected_f1[i, np.flatnonzero((V == row).all(axis=1))[0]]
                    for i, row in enumerate(np.asarray(decoded.labels))])
    np.testing.assert_allclose(got, best, atol=1e-9)


def test_sparse_input_stays_sparse_and_gives_a_distribution():
    X, Y = sparse_text(n=120, d=50, L=4, seed=3)
    assert sp.issparse(X)
    forest = PCTForest(n_estimators=10).fit(X, Y)
    C = forest.predict_classes(X[:30])
    np.testing.assert_allclose(C.sum(axis=1), 1.0, atol=1e-12)
    # on its training rows a fully grown forest mostly returns their own label sets
    assert (forest.predict(X) == Y).all(axis=1).mean() > 0.8


def test_zero_weight_rows_are_in_no_leaf():
    X, Y = correlated(n=60, d=4, L=3, seed=2)
    Y = Y.copy()
    Y[0] = [1, 1, 1]
    weight = np.ones(len(Y))
    weight[(Y == 1).all(axis=1)] = 0.0
    forest = PCTForest(n_estimators=5, random_state=0).fit(X, Y, sample_weight=weight)
    k = [i for i, s in enumerate(forest.label_sets_) if s.all()][0]
    assert forest.predict_classes(X)[:, k].max() == 0.0


@pytest.mark.parametrize("params", [{"n_estimators": 0}, {"min_samples_leaf": 0},
                                    {"bootstrap": "yes"}])
def test_bad_parameters_are_one_line_errors(params):
    X, Y = correlated(n=30, d=3, L=2, seed=0)
    with pytest.raises(ValueError, match=next(iter(params))):
        PCTForest(**params).fit(X, Y)


@pytest.mark.parametrize("name", ["pct_forest", "lp"])
def test_samples_follow_the_class_distribution(name):
    X, Y = correlated(n=90, d=4, L=4, seed=7)
    learner = mlw.get_learner(name).fit(X, Y)
    S = learner.sample_labels(X[:3], n_samples=20000, random_state=5)
    assert S.shape == (3, 20000, 4) and S.dtype == np.uint8
    C = learner.predict_classes(X[:3])
    for i in range(3):
        counts = np.array([(S[i] == s).all(axis=1).mean() for s in learner.label_sets_])
        np.testing.assert_allclose(counts, C[i], atol=0.015)
        assert (counts[C[i] == 0] == 0).all()          # an impossible set is never drawn
    np.testing.assert_array_equal(S, learner.sample_labels(X[:3], n_samples=20000,
                                                           random_state=5))
