"""The per-label and per-instance strategies (pcut_per_label, scut, fixed_per_label,
rcut, metalabeler) and the ``name:options`` syntax, against brute-force references."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import fbeta_score

import mlw
from mlw.learner import make_threshold
from mlw.thresholds import (
    FixedPerLabel,
    MetaLabeler,
    PCutPerLabel,
    RCut,
    SCut,
    best_fbeta_cut,
)

SETTINGS = settings(max_examples=50, deadline=None)


@st.composite
def scored(draw, max_n=25, max_l=6):
    n = draw(st.integers(1, max_n))
    L = draw(st.integers(1, max_l))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):
        S = rng.integers(0, 11, size=(n, L)) / 10.0  # ties
    else:
        S = rng.random((n, L))
    S[rng.random((n, L)) < draw(st.sampled_from([0.0, 0.3]))] = 0.0
    Y = (rng.random((n, L)) < draw(st.sampled_from([0.1, 0.4, 0.7]))).astype(np.uint8)
    return S, Y


def _both(strategy, S):
    dense = strategy.predict(S)
    sparse = strategy.predict(sp.csr_matrix(S))
    assert sp.issparse(sparse)
    np.testing.assert_array_equal(sparse.toarray(), dense)
    return dense


@SETTINGS
@given(scored(), scored())
def test_pcut_per_label_matches_each_labels_frequency_up_to_ties(train, test):
    _, Y = train
    S, _ = test
    L = min(Y.shape[1], S.shape[1])
    Y, S = Y[:, :L], S[:, :L]
    th = PCutPerLabel().fit(None, Y)
    P = _both(th, S)
    for j in range(L):
        k = int(np.floor(Y[:, j].mean() * S.shape[0] + 0.5))
        col = S[:, j]
        positive = col[col > 0]
        got = int(P[:, j].sum())
        if k == 0 or positive.size == 0:
            assert got == 0
        elif k >= positive.size:
            assert got == positive.size
        else:
            t = np.sort(positive)[::-1][k - 1]
            assert got == int((positive >= t).sum()) >= k
            assert np.all(P[col >= t, j][col[col >= t] > 0] == 1)
    assert not hasattr(th, "thresholds_")  # predict stores nothing


def _brute_fbeta(s, y, beta):
    """Every distinct positive score as a cut, and 'predict nothing'."""
    best_t, best = np.inf, (1.0 if not y.any() else 0.0)
    for t in sorted(set(s[s > 0].tolist()), reverse=True):
        p = ((s >= t) & (s > 0)).astype(int)
        f = fbeta_score(y, p, beta=beta, zero_division=1.0)
        if f > best + 1e-12:
            best_t, best = t, f
    return best_t, best


@SETTINGS
@given(scored(), st.sampled_from([0.5, 1.0, 2.0]))
def test_scut_is_the_per_label_optimum_of_f_beta(pair, beta):
    S, Y = pair
    th = SCut(beta=beta).fit(S, Y)
    for j in range(S.shape[1]):
        t, f = _brute_fbeta(S[:, j], Y[:, j], beta)
        assert th.scores_[j] == pytest.approx(f, abs=1e-12)
        assert th.thresholds_[j] == t
        assert best_fbeta_cut(S[:, j], Y[:, j], beta) == (th.thresholds_[j], th.scores_[j])
    _both(th, S)
    np.testing.assert_array_equal(SCut(beta=beta).fit(sp.csr_matrix(S), Y).thresholds_,
                                  th.thresholds_)


@SETTINGS
@given(scored(), st.integers(0, 4))
def test_rcut_gives_every_instance_its_k_best_positive_labels(pair, k):
    S, Y = pair
    P = _both(RCut(k=k).fit(None, Y), S)
    for i in range(S.shape[0]):
        expected = [j for j in sorted(range(S.shape[1]), key=lambda j: (-S[i, j], j))
                    if S[i, j] > 0][:k]
        assert sorted(np.flatnonzero(P[i]).tolist()) == sorted(expected)
    card = int(np.floor(Y.sum() / Y.shape[0] + 0.5))
    assert RCut().fit(None, Y).k_ == max(1, card)


@SETTINGS
@given(scored())
def test_metalabeler_gives_each_instance_its_predicted_count_of_top_labels(pair):
    S, Y = pair
    th = MetaLabeler().fit(S, Y)
    counts = th.counts(S)
    assert np.all((counts >= 0) & (counts <= S.shape[1]))
    P = _both(th, S)
    for i in range(S.shape[0]):
        assert P[i].sum() == min(counts[i], int((S[i] > 0).sum()))
        if P[i].any():  # the chosen labels outscore the others
            assert S[i, P[i] == 1].min() >= S[i, P[i] == 0].max(initial=0)


def test_metalabeler_learns_the_count_when_the_scores_tell_it():
    rng = np.random.default_rng(0)
    Y = (rng.random((300, 8)) < 0.3).astype(np.uint8)
    S = np.clip(0.6 * Y + 0.35 * rng.random(Y.shape), 0, 1)  # true labels score higher
    th = MetaLabeler(alpha=0.1).fit(S, Y)
    assert th.training_error_ < 0.3
    assert (th.predict(S) == Y).mean() > 0.95


def test_fixed_per_label_from_a_list_and_from_a_file(tmp_path):
    S = np.array([[0.2, 0.6, 0.9], [0.8, 0.4, 0.1]])
    Y = np.zeros((2, 3), dtype=np.uint8)
    got = FixedPerLabel([0.1, 0.5, 0.95]).fit(None, Y).predict(S)
    np.testing.assert_array_equal(got, [[1, 1, 0], [1, 0, 0]])
    path = tmp_path / "t.txt"
    path.write_text("0.1\n0.5, 0.95\n")
    np.testing.assert_array_equal(FixedPerLabel(str(path)).fit(None, Y).predict(S), got)
    with pytest.raises(ValueError, match="2 per-label thresholds for 3 labels"):
        FixedPerLabel([0.1, 0.2]).fit(None, Y)
    with pytest.raises(ValueError, match="needs thresholds"):
        FixedPerLabel().fit(None, Y)
    path.write_text("0.1 oops")
    with pytest.raises(ValueError, match="expected numbers"):
        FixedPerLabel(str(path)).fit(None, Y)


def test_strategies_by_name_with_options(tmp_path):
    fixed, needs = make_threshold("fixed:0.3")
    assert (fixed.threshold, needs) == (0.3, False)
    one, _ = make_threshold("one_threshold:metric=f1_example")
    assert one.metric == "f1_example"
    assert make_threshold("rcut:2")[0].k == 2
    assert make_threshold("scut:beta=2")[0].beta == 2.0
    (tmp_path / "thr.txt").write_text("0.2 0.4")
    per_label, _ = make_threshold(f"fixed_per_label:{tmp_path / 'thr.txt'}")
    assert per_label.thresholds == str(tmp_path / "thr.txt")
    with pytest.raises(ValueError, match="threshold 'fixed' has no parameter 'cut'"):
        make_threshold("fixed:cut=0.3")
    with pytest.raises(ValueError, match="threshold=abc: expected a number"):
        make_threshold("fixed:abc")
    with pytest.raises(ValueError, match="nothing after ':'"):
        make_threshold("fixed:")
    with pytest.raises(ValueError, match="takes no options"):
        make_threshold("pcut_per_label:3")
    # a learner takes the same text
    ds = mlw.load_dataset("emotions")
    br = mlw.get_learner("br", threshold="rcut:2").fit(ds.X, ds.Y)
    assert (br.predict(ds.X).sum(axis=1) == 2).all()


def test_a_learners_threshold_name_is_checked_when_it_is_built():
    """An unknown strategy or option given to ``get_learner`` raises there, naming it,
    not at the first ``fit``; the string "none" gets a hint towards ``None``."""
    from mlw.plugins import UnknownNameError

    with pytest.raises(UnknownNameError, match="unknown threshold 'bogus'.*known: "):
        mlw.get_learner("br", threshold="bogus")
    with pytest.raises(UnknownNameError, match="pass threshold=None, not a string"):
        mlw.get_learner("br", threshold="none")
    with pytest.raises(ValueError, match="threshold=abc: expected a number"):
        mlw.get_learner("br", threshold="fixed:abc")
    assert mlw.get_learner("br", threshold="fixed:0.3").threshold == "fixed:0.3"
    assert mlw.get_learner("br", threshold=None).threshold is None


@pytest.mark.parametrize("name", ["pcut_per_label", "scut", "rcut", "metalabeler"])
def test_new_strategies_are_registered_estimators(name):
    from sklearn.base import clone

    strategy = mlw.get_threshold(name)
    assert clone(strategy).get_params() == strategy.get_params()
    S = np.random.default_rng(2).random((30, 4))
    Y = (S > 0.6).astype(np.uint8)
    fitted = strategy.fit(S, Y)
    before = {k: repr(v) for k, v in vars(fitted).items()}
    fitted.predict(S[:7])
    assert {k: repr(v) for k, v in vars(fitted).items()} == before
