"""Property tests of the thresholding strategies (docs/guide/thresholds.md): fixed, pcut,
cardinality and one_threshold, for dense and CSR scores."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score, hamming_loss

import mlw
from mlw.thresholds import (
    COARSE_GRID,
    FINE_OFFSETS,
    CardinalityMatching,
    FixedThreshold,
    OneThreshold,
    PCut,
    apply_threshold,
)

SETTINGS = settings(max_examples=50, deadline=None)


@st.composite
def scored(draw, max_n=30, max_l=8):
    """Scores in [0, 1] (with exact zeros and, sometimes, many ties) and labels."""
    n = draw(st.integers(1, max_n))
    L = draw(st.integers(1, max_l))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):
        S = rng.integers(0, 11, size=(n, L)) / 10.0  # ties, and values on the grid
    else:
        S = rng.random((n, L))
    S[rng.random((n, L)) < draw(st.sampled_from([0.0, 0.3, 0.7]))] = 0.0
    Y = (rng.random((n, L)) < draw(st.sampled_from([0.1, 0.3, 0.6]))).astype(np.uint8)
    return S, Y


def _naive_predict(S, t, top_label):
    """Slow reference of the decision rule: score >= t and positive; top label (lowest
    index on ties) for an empty row with a positive maximum."""
    P = np.zeros(S.shape, dtype=np.uint8)
    for i in range(S.shape[0]):
        for j in range(S.shape[1]):
            if S[i, j] >= t and S[i, j] > 0:
                P[i, j] = 1
        if top_label and not P[i].any() and S.shape[1] and S[i].max() > 0:
            P[i, int(np.argmax(S[i]))] = 1
    return P


def _dense(P):
    return P.toarray() if sp.issparse(P) else P


def _searched(best_coarse):
    fine = np.round(best_coarse + FINE_OFFSETS, 10)
    return fine[(fine >= 0) & (fine <= 1)]


def _naive_two_pass(values):
    """The search by brute force: ``values(t)`` over the coarse grid, the first best;
    then the fine grid around it; the fine winner only if strictly better."""
    coarse_v = [values(t) for t in COARSE_GRID]
    tc = float(COARSE_GRID[int(np.argmax(coarse_v))])
    fine = _searched(tc)
    fine_v = [values(t) for t in fine]
    tf = float(fine[int(np.argmax(fine_v))])
    return (tf if max(fine_v) > max(coarse_v) else tc), coarse_v, fine, fine_v


@SETTINGS
@given(scored(), st.floats(0, 1), st.booleans())
def test_apply_threshold_matches_the_reference_for_dense_and_csr(data, t, top_label):
    S, _ = data
    expected = _naive_predict(S, t, top_label)
    dense = apply_threshold(S, t, top_label=top_label)
    csr = apply_threshold(mlw.validation.check_scores(sp.csr_matrix(S)), t,
                          top_label=top_label)
    assert dense.dtype == np.uint8 and not sp.issparse(dense)
    assert sp.issparse(csr) and csr.dtype == np.uint8
    np.testing.assert_array_equal(dense, expected)
    np.testing.assert_array_equal(csr.toarray(), expected)


@SETTINGS
@given(scored(), st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.booleans())
def test_fixed_threshold(data, t, top_label):
    S, Y = data
    th = FixedThreshold(t, top_label=top_label).fit(S, Y)
    assert th.threshold_ == t
    P = th.predict(S)
    np.testing.assert_array_equal(P, _naive_predict(S, t, top_label))
    if top_label:  # every instance with a positive score gets at least one label
        assert (P.sum(axis=1) >= (S.max(axis=1) > 0)).all()
    np.testing.assert_array_equal(th.predict(sp.csr_matrix(S)).toarray(), P)


def test_fixed_threshold_default_and_bad_value():
    assert mlw.get_threshold("fixed").fit().threshold_ == 0.5
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        FixedThreshold(1.5).fit()


@SETTINGS
@given(scored(), scored())
def test_pcut_matches_the_training_density_on_the_scored_set_up_to_ties(train, test):
    _, Y_train = train
    S, _ = test
    L = min(Y_train.shape[1], S.shape[1])  # the scored set has other rows, same labels
    Y_train, S = Y_train[:, :L], S[:, :L]
    th = PCut().fit(None, Y_train)
    card = Y_train.sum() / Y_train.shape[0]
    assert th.density_ == pytest.approx(card / Y_train.shape[1])
    P = th.predict(S)
    k = int(np.floor(card * S.shape[0] + 0.5))
    positive = S[S > 0]
    predicted = int(P.sum())
    if k == 0 or positive.size == 0:
        assert predicted == 0
    elif k >= positive.size:
        assert predicted == positive.size  # every positive score, never a zero
    else:
        t = th.cut(S)
        # the k largest, plus the ties of the k-th: #(> t) < k <= #(>= t) = predicted
        assert int((positive > t).sum()) < k <= predicted == int((positive >= t).sum())
        if np.unique(positive).size == positive.size:  # no ties: the density is exact
            assert predicted == k
    np.testing.assert_array_equal(P, _naive_predict(S, th.cut(S), False))
    np.testing.assert_array_equal(th.predict(sp.csr_matrix(S)).toarray(), P)
    assert not hasattr(th, "threshold_")  # predict writes no state


def test_pcut_rounds_half_up_like_meka():
    Y = np.array([[1, 0], [0, 0]])  # cardinality 0.5
    S = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3]])  # round(0.5 * 3) = 2 (not 1)
    np.testing.assert_array_equal(PCut().fit(None, Y).predict(S), [[1, 0], [1, 0], [0, 0]])


def _cardinality(S, t, top_label):
    return _naive_predict(S, t, top_label).sum() / S.shape[0]


@SETTINGS
@given(scored(), st.booleans())
def test_cardinality_is_the_best_of_the_search_and_within_one_step(data, top_label):
    S, Y = data
    th = CardinalityMatching(top_label=top_label).fit(S, Y)
    target = Y.sum() / Y.shape[0]
    assert th.target_cardinality_ == pytest.approx(target)

    def closeness(t):
        return -abs(_cardinality(S, t, top_label) - target)

    expected_t, coarse_v, fine, fine_v = _naive_two_pass(closeness)
    assert th.threshold_ == expected_t
    best = closeness(th.threshold_)
    assert best >= max(coarse_v) and best >= max(fine_v)  # best of the searched grid
    # the predicted cardinality on the training scores is what fit reports
    got = th.predict(S).sum() / S.shape[0]
    assert got == pytest.approx(th.cardinality_)
    assert abs(got - target) == pytest.approx(-best)
    # within one search step: when the target lies between the cardinalities of two
    # neighbouring coarse thresholds a < b, the error is at most the jump between them
    f = [_cardinality(S, t, top_label) for t in COARSE_GRID]
    assert all(f[i] >= f[i + 1] for i in range(len(f) - 1))  # monotone in t
    for a in range(len(f) - 1):
        if f[a + 1] <= target <= f[a]:
            assert abs(got - target) <= f[a] - f[a + 1] + 1e-12
    # dense and CSR scores: same threshold, same predictions
    th_csr = CardinalityMatching(top_label=top_label).fit(sp.csr_matrix(S), sp.csr_matrix(Y))
    assert th_csr.threshold_ == th.threshold_
    np.testing.assert_array_equal(th_csr.predict(sp.csr_matrix(S)).toarray(), th.predict(S))


def test_cardinality_fine_pass_refines_the_coarse_winner():
    # 100 rows with scores 0.00..0.99 on one label, target cardinality 0.37: the coarse
    # pass picks 0.6 (0.40), the fine pass 0.63 (exactly 0.37)
    S = (np.arange(100) / 100.0).reshape(-1, 1)
    Y = np.zeros((100, 1), dtype=np.uint8)
    Y[:37] = 1
    th = CardinalityMatching(top_label=False).fit(S, Y)
    assert th.threshold_ == pytest.approx(0.63)
    assert th.cardinality_ == pytest.approx(0.37)
    assert [t for t, _ in th.search_][:11] == list(COARSE_GRID)


@SETTINGS
@given(scored(), st.booleans(), st.sampled_from(["f1_micro", "hamming_loss"]))
def test_one_threshold_is_the_best_of_the_searched_grid(data, top_label, metric):
    S, Y = data
    assume(Y.shape[1] >= 2 and Y.any())  # scikit-learn's multi-label metrics

    def value(t):
        P = _naive_predict(S, t, top_label)
        if metric == "f1_micro":
            return f1_score(Y, P, average="micro", zero_division=0.0)
        return -hamming_loss(Y, P)

    th = OneThreshold(metric, top_label=top_label).fit(S, Y)
    expected_t, coarse_v, fine, fine_v = _naive_two_pass(value)
    assert th.threshold_ == expected_t
    assert value(th.threshold_) >= max(coarse_v + fine_v) - 1e-12
    assert th.score_ == pytest.approx(abs(value(th.threshold_)), abs=1e-12)
    th_csr = OneThreshold(metric, top_label=top_label).fit(sp.csr_matrix(S), Y)
    assert th_csr.threshold_ == th.threshold_
    np.testing.assert_array_equal(th_csr.predict(sp.csr_matrix(S)).toarray(), th.predict(S))


def test_one_threshold_rejects_a_score_metric():
    with pytest.raises(ValueError, match="label-set metric"):
        OneThreshold("ranking_loss").fit(np.eye(2), np.eye(2))


@pytest.mark.parametrize("name", ["fixed", "pcut", "cardinality", "one_threshold"])
def test_every_strategy_is_registered_and_needs_fitting(name):
    assert name in mlw.list_thresholds()
    th = mlw.get_threshold(name)
    with pytest.raises(ValueError, match="not fitted"):
        th.predict(np.eye(2))


def test_strategies_need_what_they_learn_from():
    with pytest.raises(ValueError, match="training label matrix"):
        PCut().fit(np.eye(2), None)
    with pytest.raises(ValueError, match="training scores and labels"):
        CardinalityMatching().fit(None, np.eye(2))
    with pytest.raises(ValueError, match="Y has shape .* but the training scores"):
        CardinalityMatching().fit(np.eye(2), np.eye(3))
    with pytest.raises(ValueError, match="has 3 labels, expected 2"):
        PCut().fit(None, np.eye(2)).predict(np.eye(3))


def test_strategy_objects_work_as_learner_parameters():
    from sklearn.base import clone

    class Scores(mlw.MultiLabelLearner):
        """Scores are the first L features: the smallest possible learner."""

        def __init__(self, threshold="cardinality"):
            self.threshold = threshold

        def _fit(self, X, Y):
            pass

        def _predict_proba(self, X):
            return X[:, : self.n_labels_]

    rng = np.random.default_rng(3)
    X = rng.random((40, 3))
    Y = (X > 0.6).astype(np.uint8)
    learner = Scores(threshold=CardinalityMatching(top_label=False))
    assert repr(learner.threshold) == "CardinalityMatching(top_label=False)"
    fitted = clone(learner).fit(X, Y)
    assert learner.threshold is not fitted.threshold_  # a fitted copy, not the parameter
    np.testing.assert_array_equal(fitted.predict(X),
                                  apply_threshold(X, fitted.threshold_.threshold_))
    by_name = Scores(threshold="one_threshold").fit(X, Y)
    assert isinstance(by_name.threshold_, OneThreshold)
    np.testing.assert_array_equal(by_name.predict(X), Y)  # 0.6 separates perfectly


@pytest.mark.parametrize("top_label", [False, True])
def test_stored_zero_scores_never_predict_a_label(top_label):
    S = np.array([[0.0, 0.0, 0.0], [0.0, 0.2, 0.0], [0.7, 0.0, 0.7]])
    full = sp.csr_matrix(np.ones_like(S))
    full.data = S.ravel().copy()
    for t in (0.0, 0.5):
        expected = _naive_predict(S, t, top_label)
        np.testing.assert_array_equal(apply_threshold(S, t, top_label=top_label), expected)
        got = apply_threshold(mlw.validation.check_scores(full), t, top_label=top_label)
        np.testing.assert_array_equal(got.toarray(), expected)
    # at t = 0 every positive score is predicted, the zeros are not
    np.testing.assert_array_equal(apply_threshold(S, 0.0), [[0, 0, 0], [0, 1, 0], [1, 0, 1]])
    # the top-label rule picks the lowest index among tied maxima
    np.testing.assert_array_equal(apply_threshold(S, 0.9, top_label=True),
                                  [[0, 0, 0], [0, 1, 0], [1, 0, 0]])


def test_a_spec_reads_whether_training_scores_are_needed_from_the_strategy_class():
    needs = {name: spec.needs_training_scores for name, spec in mlw.list_thresholds().items()
             if name in {"fixed", "pcut", "cardinality", "one_threshold"}}
    assert needs == {"fixed": False, "pcut": False, "cardinality": True, "one_threshold": True}
    for name in needs:
        spec = mlw.list_thresholds()[name]
        assert spec.create().needs_training_scores is spec.needs_training_scores


@pytest.mark.parametrize("top_label", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_cardinality_fit_blocks_equals_fit_on_stacked_scores(top_label: bool, seed: int) -> None:
    """Block-wise fitting (learners at extreme scale) decides exactly what fit does."""
    rng = np.random.default_rng(seed)
    S = np.round(rng.random((47, 9)) ** 2, 2 + seed % 3) * (rng.random((47, 9)) < 0.5)
    S[:3] = 0.0  # rows without any score
    Y = (rng.random((47, 9)) < 0.1 + 0.05 * seed).astype(np.uint8)
    whole = CardinalityMatching(top_label=top_label).fit(S, Y)
    for blocks in ([S[i:i + 10] for i in range(0, 47, 10)],
                   [sp.csr_matrix(S[i:i + 7]) for i in range(0, 47, 7)]):
        part = CardinalityMatching(top_label=top_label).fit_blocks(
            iter(blocks), n_rows=47, n_positive=int(Y.sum()))
        assert part.threshold_ == whole.threshold_
        assert part.target_cardinality_ == whole.target_cardinality_
        assert part.search_ == whole.search_
        assert part.cardinality_ == whole.cardinality_
    with pytest.raises(ValueError, match="at least one training instance"):
        CardinalityMatching().fit_blocks([], n_rows=0, n_positive=0)


@pytest.mark.parametrize("name", ["fixed", "pcut", "cardinality", "one_threshold"])
def test_strategies_are_sklearn_estimators_and_predict_writes_no_state(name):
    from sklearn.base import clone

    rng = np.random.default_rng(4)
    S = rng.random((40, 5))
    Y = (rng.random((40, 5)) < S).astype(np.uint8)
    strategy = mlw.get_threshold(name)
    assert set(strategy.get_params()) == set(clone(strategy).get_params())
    fitted = strategy.fit(S, Y)
    before = {k: repr(v) for k, v in vars(fitted).items()}
    first = fitted.predict(S[:10])
    fitted.predict(rng.random((25, 5)))  # another scored set
    assert {k: repr(v) for k, v in vars(fitted).items()} == before
    np.testing.assert_array_equal(fitted.predict(S[:10]), first)


def test_top_label_auto_follows_the_training_empty_sets():
    from mlw.thresholds import EMPTY_SET_TOLERANCE, CardinalityMatching, resolve_top_label

    S = np.array([[0.9, 0.1], [0.2, 0.3], [0.05, 0.02], [0.6, 0.7]])
    full = np.array([[1, 0], [0, 1], [1, 0], [1, 1]])
    some_empty = np.array([[1, 0], [0, 1], [0, 0], [1, 1]])
    assert CardinalityMatching().top_label == "auto"  # the default
    assert mlw.get_threshold("cardinality").top_label == "auto"
    assert resolve_top_label("auto", full) and not resolve_top_label("auto", some_empty)
    assert resolve_top_label("auto", sp.csr_matrix(full))
    assert CardinalityMatching(top_label="auto").fit(S, full).top_label_
    th = CardinalityMatching(top_label="auto").fit(S, some_empty)
    assert not th.top_label_
    # with the rule off, a row whose scores are all below the threshold stays empty
    assert th.predict(S).sum(axis=1).min() == 0 or th.threshold_ <= 0.05
    n = 1000
    few = np.ones((n, 1), dtype=np.uint8)
    few[: int(EMPTY_SET_TOLERANCE * n)] = 0
    assert resolve_top_label("auto", few)
    few[: int(EMPTY_SET_TOLERANCE * n) + 1] = 0
    assert not resolve_top_label("auto", few)
    with pytest.raises(ValueError, match="must be True, False or 'auto'"):
        resolve_top_label("sometimes", full)
