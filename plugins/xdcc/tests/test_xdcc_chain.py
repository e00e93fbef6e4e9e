"""The dynamic chain: Eq. (8) propagation and freezing, separate-and-conquer, Eq. (9)
cumulation, staged predictions; and the classifier chain's joint probability."""

from __future__ import annotations

import itertools

import naive_xdcc as naive
import numpy as np
import pytest

from mlw_xdcc import CCXGB, XDCC, BoosterParams, fit_ensemble
from mlw_xdcc.binning import bin_matrix, cuts_of
from mlw_xdcc.xdcc import ChainState, propagate_one


def _toy(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    Y = np.c_[X[:, 0] > 0, X[:, 1] > 0.3, (X[:, 0] + X[:, 2]) > 0.5,
              X[:, 3] > 1.0].astype(np.uint8)
    return X, Y


def test_propagation_rule_and_freezing_on_four_labels():
    """The extremes over the open labels: one label per instance and round."""
    P = np.array([[0.9, 0.6, 0.2, 0.4],
                  [0.3, 0.1, 0.45, 0.2]])
    st = ChainState(2, 4, over_all=False)
    expected = [  # (chosen label, value) per instance and round
        [(0, 1.0), (1, 0.0)],    # highest >= 0.5 -> 1 ; else lowest -> 0
        [(1, 1.0), (3, 0.0)],
        [(2, 0.0), (0, 0.0)],    # 0.4 < 0.5: the lowest remaining (0.2) -> 0
        [(3, 0.0), (2, 0.0)],
    ]
    for r, exp in enumerate(expected):
        st.step(P)
        for i, (j, v) in enumerate(exp):
            assert st.chosen[i] == j
            assert st.values[i, j] == v
            assert st.frozen[i, j] == 1
            assert st.prob_at[i, j] == P[i, j]
        assert st.frozen.sum() == 2 * (r + 1)
    st.step(P)                              # every label frozen: nothing left to choose
    assert list(st.chosen) == [-1, -1]
    np.testing.assert_array_equal(st.decision(True), [[1, 1, 0, 0], [0, 0, 0, 0]])


def test_propagation_over_all_labels_as_eq8_prints_it():
    """Eq. (8): p_ij takes the prediction when p_ij was unknown AND label j is the most
    probable of all labels (max >= 0.5) or the least probable of all (max < 0.5); when
    that label was propagated before, nothing is propagated ("Otherwise, no additional
    label is propagated").  The label-feature then holds the probability."""
    st = ChainState(2, 4)                   # over_all=True is the default
    st.step(np.array([[0.9, 0.6, 0.2, 0.4], [0.3, 0.1, 0.45, 0.2]]))
    assert list(st.chosen) == [0, 1]        # instance 0: 0.9 -> 1; instance 1: 0.1 -> 0
    st.step(np.array([[0.8, 0.7, 0.2, 0.4], [0.3, 0.05, 0.45, 0.2]]))
    assert list(st.chosen) == [-1, -1]      # both extremes were propagated before
    st.step(np.array([[0.3, 0.7, 0.2, 0.4], [0.3, 0.2, 0.45, 0.1]]))
    assert list(st.chosen) == [1, 3]        # label 1 (0.7) -> 1 ; label 3 (0.1) -> 0
    feats = st.label_features(probability=True)
    np.testing.assert_array_equal(feats, [[0.9, 0.7, np.nan, np.nan], [np.nan, 0.1, np.nan, 0.1]])
    np.testing.assert_array_equal(st.label_features(probability=False),
                                  [[1.0, 1.0, np.nan, np.nan], [np.nan, 0.0, np.nan, 0.0]])
    # XDCC-std: only the propagated labels count (unknown ones are negative)
    np.testing.assert_array_equal(st.decision(False), [[1, 1, 0, 0], [0, 0, 0, 0]])


@pytest.mark.parametrize("over_all", [False, True])
def test_propagation_matches_naive(over_all):
    rng = np.random.default_rng(3)
    n, L = 50, 6
    frozen = np.zeros((n, L), np.uint8)
    values = np.full((n, L), np.nan)
    prob_at = np.zeros((n, L))
    fz, vl = frozen.tolist(), values.tolist()
    for _ in range(L + 1):
        P = rng.random((n, L)).round(2)          # rounding creates ties
        chosen = np.empty(n, np.int64)
        propagate_one(P, frozen, values, prob_at, chosen, over_all)
        expected = naive.propagate_one(P.tolist(), fz, vl, over_all)
        assert chosen.tolist() == expected
        np.testing.assert_array_equal(frozen, np.array(fz))
        np.testing.assert_array_equal(values, np.array(vl, dtype=float))
        for i, j in enumerate(expected):
            if j >= 0:
                assert prob_at[i, j] == P[i, j]


def test_cumulated_and_standard_decisions():
    st = ChainState(1, 3, over_all=False)
    st.step(np.array([[0.9, 0.6, 0.1]]))    # label 0 propagated as 1
    st.step(np.array([[0.2, 0.3, 0.4]]))    # label 1 propagated as 0 (0.4 < .5 -> lowest 0.3)
    # label 2 is free: last round 0.4, max over rounds 0.4 ; label 1 had 0.6 before
    np.testing.assert_array_equal(st.decision(True), [[1, 0, 0]])
    np.testing.assert_allclose(st.proba(True), [[0.9, 0.3, 0.4]])
    st2 = ChainState(1, 3, over_all=False)
    st2.step(np.array([[0.9, 0.2, 0.7]]))   # label 0 -> 1
    st2.step(np.array([[0.1, 0.45, 0.3]]))  # max free 0.45 < .5 -> lowest free: label 2 (0.3)
    np.testing.assert_array_equal(st2.frozen, [[1, 0, 1]])
    # label 1 free: cumulated max(0.2, 0.45) < .5 in both; check proba selection
    np.testing.assert_allclose(st2.proba(True), [[0.9, 0.45, 0.3]])
    st3 = ChainState(1, 3, over_all=False)
    st3.step(np.array([[0.9, 0.8, 0.1]]))   # label 0 -> 1 ; label 1 had 0.8
    st3.step(np.array([[0.2, 0.3, 0.05]]))  # label 2 -> 0 (lowest)
    assert st3.decision(True)[0, 1] == 1 and st3.decision(False)[0, 1] == 0


def test_separate_and_conquer_masks_gradients():
    X, Y = _toy()
    e, eo = cuts_of(X, 64)
    mask = np.ones_like(Y)
    mask[:, 2] = 0                         # label 2 frozen for every instance
    mask[:100, 0] = 0                      # label 0 frozen for half of them
    ens, margin = fit_ensemble(bin_matrix(X, e, eo), Y, BoosterParams(n_estimators=5),
                               mask=mask)
    assert np.all(ens.value[:, 2] == 0.0)  # no gradient, no weight
    np.testing.assert_allclose(margin[:, 2], ens.base_margin[2])
    # label 0 is learned from the unmasked half only: flipping the masked half's labels
    # changes nothing
    Y2 = Y.copy()
    Y2[:100, 0] = 1 - Y2[:100, 0]
    ens2, _ = fit_ensemble(bin_matrix(X, e, eo), Y2, BoosterParams(n_estimators=5),
                           mask=mask, base_margin=ens.base_margin)
    np.testing.assert_allclose(ens2.value, ens.value)


@pytest.mark.pipeline
def test_xdcc_fit_staged_and_both_variants():
    X, Y = _toy(300)
    m = XDCC(n_estimators=15, max_depth=3, chain_length=3, threshold=None).fit(X, Y)
    assert m.chain_length_ == 3 and len(m.ensembles_) == 3
    staged = list(m.staged_predict(X))
    assert len(staged) == 3
    np.testing.assert_array_equal(staged[-1], m.predict(X))
    # after r rounds every instance has at most r frozen labels (Eq. 8 over all labels)
    assert np.all(m.train_state_.frozen.sum(axis=1) <= 3)
    assert np.all(XDCC(n_estimators=3, max_depth=2, chain_length=3, extremes_over="open")
                  .fit(X[:100], Y[:100]).train_state_.frozen.sum(axis=1) == 3)
    both = m.predict_all(X)
    np.testing.assert_array_equal(both["cum"], m.predict(X))
    std = XDCC(n_estimators=15, max_depth=3, chain_length=3, cumulated=False,
               threshold=None).fit(X, Y)
    np.testing.assert_array_equal(both["std"], std.predict(X))
    P = m.predict_proba(X)
    assert P.shape == Y.shape and np.all((P >= 0) & (P <= 1))
    np.testing.assert_array_equal(m.predict(X), (P >= 0.5).astype(np.uint8))
    assert (m.predict(X) == Y).mean() > 0.9
    # the default chain length: ceil(cardinality) + 1, at most 2 and at most L
    d = XDCC(n_estimators=3, max_depth=2).fit(X, Y)
    assert d.chain_length_ == min(2, int(np.ceil(Y.sum(1).mean())) + 1) == 2
    assert len(d.round_seconds_) == d.chain_length_
    assert all(np.diff(d.round_seconds_) >= 0)


def test_xdcc_and_cc_default_decision_is_the_core_default():
    """By default XDCC and CC-XGB decide with the core's DEFAULT_THRESHOLD on
    their marginals (the chain's 0.5 decision left rows empty); staged_predict's last
    stage is predict, and threshold=None gives back the chain's own decision."""
    from mlw.thresholds import DEFAULT_THRESHOLD

    X, Y = _toy(200)
    for cls, kw in ((XDCC, {"chain_length": 2}), (CCXGB, {})):
        m = cls(n_estimators=6, max_depth=2, **kw).fit(X, Y)
        assert m.threshold == DEFAULT_THRESHOLD
        expected = m.threshold_.predict(m.predict_proba(X))
        np.testing.assert_array_equal(m.predict(X), expected)
        staged = (list(m.staged_predict(X)) if cls is XDCC
                  else list(m.staged_predict(X, [3, 6])))
        np.testing.assert_array_equal(staged[-1], m.predict(X))
        own = cls(n_estimators=6, max_depth=2, threshold=None, **kw).fit(X, Y)
        np.testing.assert_array_equal(own.predict_proba(X), m.predict_proba(X))
        np.testing.assert_array_equal(own.predict(X), own._predict(X))


def test_default_chain_length_is_bounded_on_high_cardinality():
    """12 labels, 10 per instance (ceil + 1 = 11) train only 2 rounds (the cap,
    MAX_DEFAULT_CHAIN_LENGTH); one label, or no label in any row, trains one round (ML-XGB);
    an explicit chain_length is not capped."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    Y = (rng.random((40, 12)) < 0.85).astype(np.uint8)
    from mlw_xdcc.xdcc import MAX_DEFAULT_CHAIN_LENGTH

    assert MAX_DEFAULT_CHAIN_LENGTH == 2
    d = XDCC(n_estimators=2, max_depth=2).fit(X, Y)
    assert d.chain_length_ == 2 and len(d.ensembles_) == len(d.round_seconds_) == 2
    assert XDCC(n_estimators=2, max_depth=2).fit(X, Y[:, :1]).chain_length_ == 1
    assert XDCC(n_estimators=2, max_depth=2).fit(X, np.zeros_like(Y)).chain_length_ == 1
    assert XDCC(n_estimators=2, max_depth=2, chain_length=7).fit(X, Y).chain_length_ == 7


@pytest.mark.parametrize("features", ["probability", "binary"])
@pytest.mark.parametrize("sparse", [False, True])
def test_prediction_on_the_training_rows_replays_the_training_chain(features, sparse):
    """The label-features are binned with quantile cuts for training and compared with
    raw thresholds at prediction: walking the chain on the training rows reproduces the
    training propagation exactly (dense and CSR)."""
    import scipy.sparse as sps

    X, Y = _toy(120)
    X = np.abs(X)
    Xin = sps.csr_matrix(np.where(X < 0.3, 0.0, X)) if sparse else X
    m = XDCC(n_estimators=4, max_depth=3, chain_length=3, label_features=features).fit(Xin, Y)
    replay = m._final(Xin)
    np.testing.assert_array_equal(replay.frozen, m.train_state_.frozen)
    np.testing.assert_array_equal(replay.values, m.train_state_.values)
    np.testing.assert_array_equal(replay.prob_at, m.train_state_.prob_at)
    if features == "probability":   # later rounds split on propagated probabilities
        thr = np.concatenate([e.threshold[e.feature >= X.shape[1]] for e in m.ensembles_])
        assert np.any((thr > 0) & (thr < 1))


def test_xdcc_rounds_see_label_features():
    """Every round's booster is trained on [x, p]: d + L features; in round 1 all
    label-features are missing, so no tree of round 1 can split on them."""
    X, Y = _toy(200)
    m = XDCC(n_estimators=10, max_depth=3, chain_length=3).fit(X, Y)
    d, L = X.shape[1], Y.shape[1]
    assert all(e.n_features == d + L for e in m.ensembles_)
    assert not np.any(m.ensembles_[0].feature >= d)


def test_cc_log_proba_is_a_distribution():
    X, Y = _toy(150)
    Y = Y[:, :3]
    m = CCXGB(n_estimators=10, max_depth=2, random_state=2, threshold=None).fit(X, Y)
    total = np.zeros(X.shape[0])
    for bits in itertools.product([0, 1], repeat=3):
        Yb = np.tile(np.array(bits, np.uint8), (X.shape[0], 1))
        total += np.exp(m.log_proba_of(X, Yb))
    np.testing.assert_allclose(total, 1.0, rtol=1e-9)
    # the greedy decision is the chain's own and follows its probabilities
    np.testing.assert_array_equal(m.predict(X), (m.predict_proba(X) >= 0.5).astype(np.uint8))


def test_cc_order_validation():
    X, Y = _toy(50)
    with pytest.raises(ValueError, match="permutation"):
        CCXGB(n_estimators=2, order=[0, 0, 1, 2]).fit(X, Y)
    m = CCXGB(n_estimators=2, order=[3, 2, 1, 0]).fit(X, Y)
    assert m.order_.tolist() == [3, 2, 1, 0]


@pytest.mark.pipeline
@pytest.mark.parametrize("label_features", ["probability", "binary"])
@pytest.mark.parametrize("cumulated", [True, False])
def test_xdcc_training_scores_reuse_the_training_state(label_features, cumulated):
    """In-sample propagation: the threshold's training scores are the training state's
    marginals, equal to predict_proba on the training rows (no second chain pass)."""
    X, Y = _toy()
    m = XDCC(n_estimators=10, label_features=label_features, cumulated=cumulated).fit(X, Y)
    np.testing.assert_array_equal(m._training_scores(X, Y), m.predict_proba(X))


@pytest.mark.pipeline
def test_xdcc_out_of_fold_training_scores_are_predict_proba():
    """Out-of-fold propagation's training state is not the chain's pass over the training
    rows, so the threshold is tuned on predict_proba, recomputed."""
    X, Y = _toy()
    m = XDCC(n_estimators=10, propagation="out_of_fold", propagation_folds=3).fit(X, Y)
    np.testing.assert_array_equal(m._training_scores(X, Y), m.predict_proba(X))


@pytest.mark.parametrize("sparse", [False, True])
def test_chain_of_length_one_grows_ml_xgbs_trees(sparse):
    """The paper (Section 4.2): "length 1 corresponds to ML-XGB".  Round 1's 0 label-
    features are missing in every row, are never binned, and do not count in the rule
    that chooses between building a child from its rows and subtracting (when they did,
    the trees' histogram sums were added in another order and split
    near-ties parted, test margins up to 1.0 apart after 10 trees); so the trees, leaf
    values and scores are bit for bit ML-XGB's.  With enough rows and labels that
    the two counts disagreed on many nodes (300 rows x 40 features, 30 labels)."""
    import scipy.sparse as sps

    from mlw_xdcc import MLXGB

    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 40))
    Y = (X[:, :30] + 0.8 * rng.normal(size=(300, 30)) > 0.6).astype(np.uint8)
    Xin = sps.csr_matrix(np.where(np.abs(X) < 0.4, 0.0, X)) if sparse else X
    kw = dict(n_estimators=8, max_depth=5, subsample=0.8, random_state=2)
    ml = MLXGB(**kw).fit(Xin, Y)
    ch = XDCC(chain_length=1, **kw).fit(Xin, Y)
    a, b = ml.ensemble_, ch.ensembles_[0]
    for name in ("base_margin", "roots", "feature", "threshold", "default_left", "left",
                 "right", "value"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_array_equal(ml.predict_proba(Xin), ch.predict_proba(Xin))
