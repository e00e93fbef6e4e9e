"""HOMER: balanced k-means of the label columns, and prediction as the top-down walk
of the hierarchy, instance by instance."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from baselines_testdata import correlated

from mlw_baselines import HOMER, BinaryRelevance
from mlw_baselines.homer import balanced_kmeans


@pytest.mark.parametrize("n,k", [(7, 3), (9, 3), (10, 2), (4, 4)])
def test_balanced_kmeans_partitions_into_capped_clusters(n, k):
    V = np.random.default_rng(n).integers(0, 2, size=(n, 30)).astype(float)
    for M in (V, sp.csr_matrix(V)):
        clusters = balanced_kmeans(M, k, 10, np.random.default_rng(0))
        assert sorted(int(r) for c in clusters for r in c) == list(range(n))
        assert all(0 < len(c) <= -(-n // k) for c in clusters)


def test_balanced_kmeans_separates_labels_that_occur_together():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 2, size=40), rng.integers(0, 2, size=40)
    # labels 0, 2, 4 are copies of column a (one flipped bit each), 1, 3, 5 of column b
    rows = []
    for j in range(6):
        v = (a if j % 2 == 0 else b).copy()
        v[j] ^= 1
        rows.append(v)
    clusters = balanced_kmeans(np.array(rows, dtype=float), 2, 10, np.random.default_rng(3))
    assert sorted(c.tolist() for c in clusters) == [[0, 2, 4], [1, 3, 5]]


def _walk_by_hand(node, x_row, n_labels):
    """Down the tree for one instance: (decisions, path products)."""
    decision, score = np.zeros(n_labels, dtype=np.uint8), np.zeros(n_labels)

    def visit(nd, reach, ok):
        p = nd.model.predict_proba(x_row)[0]
        for c, (child, sub) in enumerate(zip(nd.children, nd.child_nodes, strict=False)):
            if sub is None:
                score[child[0]] = reach * p[c]
                decision[child[0]] = ok and p[c] >= 0.5
            else:
                visit(sub, reach * p[c], ok and p[c] >= 0.5)

    visit(node, 1.0, True)
    return decision, score


def test_homer_predicts_by_walking_down_its_hierarchy():
    X, Y = correlated(n=160, d=5, L=8, seed=11)
    Xtr, Ytr, Xte = X[:120], Y[:120], X[120:]
    homer = HOMER(n_clusters=2, random_state=2).fit(Xtr, Ytr)
    root = homer.root_
    assert sorted(int(v) for c in root.children for v in c) == list(range(8))
    assert root.n_train == 120 and homer.n_nodes_ >= 4
    # a child node is trained on the instances that have one of its labels
    for child, sub in zip(root.children, root.child_nodes, strict=False):
        if sub is not None:
            assert sub.n_train == int((Ytr[:, child].sum(axis=1) > 0).sum())
    P, S = homer.predict_with_scores(Xte)
    for i in range(Xte.shape[0]):
        d, s = _walk_by_hand(root, Xte[i:i + 1], 8)
        np.testing.assert_array_equal(P[i], d)
        np.testing.assert_allclose(S[i], s, rtol=1e-9)
    np.testing.assert_array_equal(P, homer.predict(Xte))


def test_homer_with_at_most_k_labels_is_binary_relevance():
    X, Y = correlated(n=80, d=4, L=3, seed=2)
    homer = HOMER(n_clusters=3).fit(X, Y)
    assert homer.n_nodes_ == 1
    np.testing.assert_allclose(homer.predict_proba(X), BinaryRelevance().fit(X, Y).predict_proba(X))


def test_homer_rejects_one_cluster():
    X, Y = correlated(n=40, d=3, L=4, seed=2)
    with pytest.raises(ValueError, match="'n_clusters' must be"):
        HOMER(n_clusters=1).fit(X, Y)
