"""conf_INS, conf_FL, LCIF and LCIF2 on a hand-made 8-instance example, against a
direct transcription of the paper's formulas (naive_lcif) and a few hand-computed
numbers."""

from __future__ import annotations

import naive_lcif as naive
import numpy as np
import pytest
import scipy.sparse as sp

from mlw_lcif import LCIF, LCIF2, FeatureKNN, InstanceKNN

# 8 training instances, 5 features already in [0, 1] (every column reaches 1, so the
# scaling to [0, 1] leaves them unchanged), 4 labels.
X8 = np.array([
    [1.0, 0.5, 0.0, 0.0, 0.0],
    [1.0, 0.0, 0.5, 0.0, 0.0],
    [0.5, 1.0, 0.0, 0.0, 0.5],
    [0.0, 1.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.5, 0.0],
    [0.0, 0.0, 0.5, 1.0, 1.0],
    [0.0, 0.5, 0.0, 1.0, 0.0],
    [0.5, 0.0, 0.0, 0.0, 1.0],
])
Y8 = np.array([
    [1, 0, 0, 0],
    [1, 1, 0, 0],
    [1, 0, 1, 0],
    [0, 1, 1, 0],
    [0, 1, 0, 0],
    [0, 0, 0, 1],
    [0, 0, 1, 1],
    [1, 0, 0, 1],
], dtype=np.uint8)
Q3 = np.array([
    [1.0, 0.5, 0.5, 0.0, 0.0],
    [0.0, 0.0, 0.0, 1.0, 0.5],
    [0.0, 0.0, 0.0, 0.0, 0.0],
])


def test_conf_ins_by_hand() -> None:
    # query 2 ([0,0,0,1,.5]) with k=2: cosines with rows 5 and 6 are the largest
    m = InstanceKNN(k_ins=2).fit(X8, Y8)
    idx, sim = m.kneighbors(Q3[1:2])
    q = Q3[1]
    c5 = q @ X8[5] / (np.linalg.norm(q) * np.linalg.norm(X8[5]))
    c6 = q @ X8[6] / (np.linalg.norm(q) * np.linalg.norm(X8[6]))
    assert sorted(idx[0].tolist()) == [5, 6]
    expected = (c5 * Y8[5] + c6 * Y8[6]) / (c5 + c6)
    np.testing.assert_allclose(m.predict_proba(Q3[1:2])[0], expected, rtol=1e-12)


def test_conf_fl_by_hand() -> None:
    # k_feat = 1: the candidates are the most similar label of each non-zero feature
    # (Eq. 3); each candidate's score sums sim_FL over ALL the query's non-zero
    # features, as printed: conf_FL(x, y) = sum_j f_j sim_FL(f_j, y) / sum_j f_j
    m = FeatureKNN(k_feat=1, feature_votes="all").fit(X8, Y8)
    S = naive.feature_label_sims(X8, Y8)
    q = Q3[0]
    nz = np.flatnonzero(q)
    cand = sorted({int(S[j].argmax()) for j in nz})
    assert cand == [0, 1, 2]  # the top labels of features 0, 1, 2: 0, 2, 1
    expected = np.zeros(4)
    for y in cand:
        expected[y] = sum(q[j] * S[j, y] for j in nz) / q.sum()
    np.testing.assert_allclose(m.predict_proba(Q3[:1])[0], expected, rtol=1e-12)
    # feature 0 votes for labels 1 and 2 too, though neither is its top label; label 3
    # co-occurs with all three features but is nobody's top label: no score
    assert S[0, 1] > 0 and S[0, 2] > 0 and expected[3] == 0 and S[:3, 3].min() > 0


def test_sim_all_is_the_printed_formula_for_binary_features() -> None:
    # Section III-A4: (x_i.x_j + Y_i.Y_j) / (sqrt(|x_i|_1 + |Y_i|_1) sqrt(|x_j|_1 + |Y_j|_1))
    from mlw.neighbors import NeighborIndex
    from mlw_lcif import _prep as P

    Xb = (X8 > 0).astype(float)
    Z = P.sim_all_matrix(sp.csr_matrix(Xb), sp.csr_matrix(Y8))
    idx, sim = NeighborIndex(Z).query(k=8, exclude_self=False)
    for i in range(8):
        assert idx[i, 0] == i and sim[i, 0] == pytest.approx(1.0)  # itself first
        listed = set(idx[i][idx[i] >= 0].tolist())
        for r in range(8):
            want = naive.sim_all(Xb[i], Y8[i], Xb[r], Y8[r])
            got = sim[i][idx[i] == r][0] if r in listed else 0.0  # absent: no overlap
            assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("k_ins,k_feat,lam", [(1, 1, 0.5), (3, 2, 0.3), (5, 4, 0.8), (8, 4, 0.0)])
def test_lcif_matches_transcription(k_ins: int, k_feat: int, lam: float) -> None:
    m = LCIF(k_ins=k_ins, k_feat=k_feat, lam=lam).fit(X8, Y8)
    want = naive.lcif_scores(X8, Y8, Q3, k_ins, k_feat, lam)
    np.testing.assert_allclose(m.predict_proba(Q3), want, rtol=1e-12, atol=1e-15)
    # the threshold is tuned on leave-one-out training scores
    loo = naive.lcif_scores(X8, Y8, X8, k_ins, k_feat, lam, leave_one_out=True)
    np.testing.assert_allclose(m._training_scores(X8, Y8), loo, rtol=1e-12, atol=1e-15)


def test_feature_votes_neighbours_matches_transcription() -> None:
    # each feature votes only for its own k_feat labels
    m = LCIF(k_ins=3, k_feat=2, lam=0.4, feature_votes="neighbours").fit(X8, Y8)
    want = naive.lcif_scores(X8, Y8, Q3, 3, 2, 0.4, feature_votes="neighbours")
    np.testing.assert_allclose(m.predict_proba(Q3), want, rtol=1e-12, atol=1e-15)
    printed = naive.lcif_scores(X8, Y8, Q3, 3, 2, 0.4, feature_votes="all")
    assert not np.allclose(want, printed)  # the readings differ on this example
    assert not np.allclose(want, naive.lcif_scores(X8, Y8, Q3, 3, 2, 0.4))


def test_conf_fl_neighbour_mean_by_hand() -> None:
    # feature_votes="neighbour_mean": conf_FL(x, y) is the mean similarity of the
    # features voting for y, sum_{j: y in kNN(f_j)} f_j sim_FL(f_j, y) / sum of those f_j.
    # With k_feat = 1 the query's features 0, 1, 2 vote for labels 0, 2, 1, one each:
    # each candidate's score is its one voter's similarity, the feature's value cancels
    m = FeatureKNN(k_feat=1).fit(X8, Y8)  # the default reading
    S = naive.feature_label_sims(X8, Y8)
    expected = np.array([S[0, 0], S[2, 1], S[1, 2], 0.0])
    np.testing.assert_allclose(m.predict_proba(Q3[:1])[0], expected, rtol=1e-12)
    # the printed formula divides the same voter's sum by all of x (1 + 0.5 + 0.5) and
    # adds the other features' similarities: a different score for every candidate
    printed = FeatureKNN(k_feat=1, feature_votes="all").fit(X8, Y8).predict_proba(Q3[:1])[0]
    assert np.all(np.abs(printed[:3] - expected[:3]) > 1e-3)


@pytest.mark.parametrize("k_ins,k_feat,lam", [(1, 1, 0.5), (3, 2, 0.3), (4, 4, 0.0)])
def test_feature_votes_neighbour_mean_matches_transcription(k_ins: int, k_feat: int,
                                                            lam: float) -> None:
    want = naive.lcif_scores(X8, Y8, Q3, k_ins, k_feat, lam, feature_votes="neighbour_mean")
    dense = LCIF(k_ins=k_ins, k_feat=k_feat, lam=lam, feature_votes="neighbour_mean")
    np.testing.assert_allclose(dense.fit(X8, Y8).predict_proba(Q3), want, rtol=1e-12,
                               atol=1e-15)
    sparse = LCIF(k_ins=k_ins, k_feat=k_feat, lam=lam, feature_votes="neighbour_mean")
    S = sparse.fit(sp.csr_matrix(X8), sp.csr_matrix(Y8)).predict_proba(sp.csr_matrix(Q3))
    np.testing.assert_allclose(S.toarray(), want, rtol=1e-12, atol=1e-15)
    loo = naive.lcif_scores(X8, Y8, X8, k_ins, k_feat, lam, leave_one_out=True,
                            feature_votes="neighbour_mean")
    np.testing.assert_allclose(dense._training_scores(X8, Y8), loo, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("k_ins,k_feat,lam", [(2, 2, 0.5), (3, 1, 1.0), (4, 3, 0.7)])
def test_lcif2_matches_transcription(k_ins: int, k_feat: int, lam: float) -> None:
    m = LCIF2(k_ins=k_ins, k_feat=k_feat, lam=lam).fit(X8, Y8)
    want = naive.lcif_scores(X8, Y8, Q3, k_ins, k_feat, lam, second=True)
    np.testing.assert_allclose(m.predict_proba(Q3), want, rtol=1e-12, atol=1e-15)


def test_second_order_scores_by_hand() -> None:
    # with k = 1 an instance's only sim_ALL neighbour is itself: its own labels
    m = LCIF2(k_ins=1, k_feat=1, lam=1.0).fit(X8, Y8)
    np.testing.assert_allclose(m.votes_.toarray(), Y8)
    m3 = LCIF2(k_ins=3, k_feat=1, lam=1.0).fit(X8, Y8)
    np.testing.assert_allclose(m3.votes_.toarray(), naive.second_order(X8, Y8, 3), rtol=1e-12)


def test_lcif_is_the_convex_combination_of_its_parts() -> None:
    a = InstanceKNN(k_ins=3).fit(X8, Y8).predict_proba(Q3)
    b = FeatureKNN(k_feat=2).fit(X8, Y8).predict_proba(Q3)
    c = LCIF(k_ins=3, k_feat=2, lam=0.4).fit(X8, Y8).predict_proba(Q3)
    np.testing.assert_allclose(c, 0.4 * a + 0.6 * b, rtol=1e-12, atol=1e-15)
    assert np.all(c[2] == 0)  # the all-zero query has no neighbour and no feature


def test_sparse_labels_give_csr_scores_equal_to_dense() -> None:
    dense = LCIF(k_ins=3, k_feat=2).fit(X8, Y8)
    sparse = LCIF(k_ins=3, k_feat=2).fit(sp.csr_matrix(X8), sp.csr_matrix(Y8))
    S = sparse.predict_proba(sp.csr_matrix(Q3))
    assert sp.issparse(S) and sp.issparse(sparse.predict(sp.csr_matrix(Q3)))
    np.testing.assert_allclose(S.toarray(), dense.predict_proba(Q3), rtol=1e-12)
    assert np.array_equal(sparse.predict(Q3).toarray(), dense.predict(Q3))
