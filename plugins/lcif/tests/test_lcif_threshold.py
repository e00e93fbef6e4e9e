"""Cardinality-matching threshold of the LCIF learners, and the CV search's numba
replica of it."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw.thresholds import CardinalityMatching, apply_threshold
from mlw_lcif import LCIF, LCIF2, search_hyperparameters
from mlw_lcif import _kernels as K
from mlw_lcif import _prep as P
from mlw_lcif.search import METRICS, _threshold_grid


def _data(seed: int = 0, n: int = 300, d: int = 40, L: int = 8):
    rng = np.random.default_rng(seed)
    W = rng.random((d, L)) < 0.15
    X = (rng.random((n, d)) < 0.12).astype(float) * rng.random((n, d))
    Y = ((X @ W) + 0.3 * rng.random((n, L)) > 0.45).astype(np.uint8)
    return X, Y


def _cardinality(S, t: float) -> float:
    P_ = apply_threshold(S, t, top_label=True)
    return float(P_.sum()) / S.shape[0]


@pytest.mark.parametrize("cls", [LCIF, LCIF2])
@pytest.mark.parametrize("sparse", [False, True])
def test_training_cardinality_within_one_step(cls, sparse: bool) -> None:
    X, Y = _data(1)
    if sparse:
        X, Y = sp.csr_matrix(X), sp.csr_matrix(Y)
    m = cls(k_ins=7, k_feat=3, lam=0.6,
            threshold=CardinalityMatching(top_label=True)).fit(X, Y)
    assert isinstance(m.threshold_, CardinalityMatching) and m.threshold_.top_label_
    S = m._training_scores(X, Y)
    t = m.threshold_.threshold_
    target = float(Y.sum()) / Y.shape[0]
    lo, hi = _cardinality(S, min(t + 0.01, 1.0)), _cardinality(S, max(t - 0.01, 0.0))
    assert lo - 1e-12 <= target <= hi + 1e-12
    got = _cardinality(S, t)
    assert abs(got - target) <= max(abs(lo - target), abs(hi - target)) + 1e-12
    # the rule "top label when nothing passes": every instance with a score gets a label
    Ptr = m.threshold_.predict(S)
    has_score = (np.asarray(abs(S).sum(axis=1)).ravel() > 0)
    assert np.all(np.asarray(Ptr.sum(axis=1)).ravel()[has_score] >= 1)


@pytest.mark.parametrize("top_label", [True, False])
def test_cv_threshold_replica_equals_core_strategy(top_label: bool) -> None:
    X, Y = _data(2, n=200)
    rng = np.random.default_rng(0)
    A = rng.random((200, 8)) * (rng.random((200, 8)) < 0.5)
    B = rng.random((200, 8)) * (rng.random((200, 8)) < 0.5)
    A[:5] = 0.0
    B[:5] = 0.0
    is_val = (rng.random(200) < 0.2).astype(np.uint8)
    T, coarse, fine = _threshold_grid()
    tr = is_val == 0
    for lam in (0.0, 0.3, 1.0):
        S = lam * A + (1 - lam) * B
        core = CardinalityMatching(top_label=top_label).fit(S[tr], Y[tr]).threshold_
        target = float(Y[tr].sum()) / tr.sum()
        m = K._cardinality_threshold(A, B, lam, is_val, T, coarse, fine, target, top_label)
        assert T[m] == core


def test_search_equals_refitting_on_every_fold() -> None:
    """The cached CV gives exactly the metric of refitting LCIF fold by fold."""
    rng = np.random.default_rng(3)
    # binary features, each frequent: the [0, 1] scaling is the identity on every fold
    X = (rng.random((120, 20)) < 0.3).astype(float)
    Y = ((X @ (rng.random((20, 5)) < 0.2)) + rng.random((120, 5)) > 1.5).astype(np.uint8)
    Xs = P.FeatureScaler().fit(X).transform(X)
    res = search_hyperparameters(Xs, sp.csr_matrix(Y), kind="lcif", metric="accuracy",
                                 n_folds=3, seed=5, k_grid=(1, 3, 7), lam_grid=(0.0, 0.5, 1.0))
    from mlw_lcif.search import _folds

    fold = _folds(sp.csr_matrix(Y), 3, 5)
    for a, k_ins in enumerate(res["k_ins_grid"]):
        for b, k_feat in enumerate(res["k_feat_grid"]):
            for q, lam in enumerate(res["lam_grid"]):
                vals = []
                for f in range(3):
                    tr, va = fold != f, fold == f
                    m = LCIF(k_ins=k_ins, k_feat=k_feat, lam=lam).fit(Xs[tr], Y[tr])
                    P_ = m.predict(Xs[va])
                    P_ = P_.toarray() if sp.issparse(P_) else P_
                    vals.append(mlw.evaluate(Y[va], P_, metrics=list(METRICS)))
                for name, code in METRICS.items():
                    want = np.mean([v[name] for v in vals])
                    if name == "hamming_loss":
                        want = -want
                    assert res["all_scores"][a, b, q, code] == pytest.approx(want, abs=1e-12), name
    assert res["score"] == res["scores"].max()
    for name, best in res["best_by_metric"].items():
        assert best["score"] == res["all_scores"][..., METRICS[name]].max()


@pytest.mark.pipeline
def test_cv_parameter_in_fit_selects_from_grid() -> None:
    X, Y = _data(4, n=150)
    m = mlw.get_learner("lcif", cv=3, cv_metric="f1_micro").fit(X, Y)
    assert m.k_ins_ in range(1, 30, 2) and m.k_feat_ <= Y.shape[1]
    assert m.lam_ in [round(0.1 * i, 1) for i in range(11)]
    assert m.cv_results_["scores"].shape == (15, 5, 11)  # k_feat: 1,3,5,7 and 8 (capped)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("seed", [0, 5, 9])
def test_streamed_threshold_equals_core_fit_on_all_scores(sparse: bool, seed: int) -> None:
    X, Y = _data(seed, n=250)
    if sparse:
        X, Y = sp.csr_matrix(X), sp.csr_matrix(Y)
    m = LCIF(k_ins=5, k_feat=2, lam=0.4 + 0.05 * seed).fit(X, Y)  # top_label="auto"
    S = m._training_scores(X, Y)
    core = CardinalityMatching().fit(S, Y)
    assert m.threshold_.top_label_ == core.top_label_
    assert m.threshold_.threshold_ == core.threshold_
    assert m.threshold_.target_cardinality_ == core.target_cardinality_
    n_empty = int(np.count_nonzero(np.asarray(Y.sum(axis=1)).ravel() == 0))
    small = CardinalityMatching().fit_blocks(m._training_score_blocks(block=17),
                                             n_rows=250, n_positive=int(Y.sum()),
                                             n_empty=n_empty)
    assert small.threshold_ == core.threshold_
    # and for arbitrary score matrices, including rows without scores
    rng = np.random.default_rng(seed)
    R = rng.random((60, 7)) ** 3 * (rng.random((60, 7)) < 0.6)
    R[:4] = 0.0
    Yr = (rng.random((60, 7)) < 0.15 * (seed + 1) / 3).astype(np.uint8)
    for mat in (R, sp.csr_matrix(R)):
        core = CardinalityMatching().fit(mat, Yr)
        blocks = [sp.csr_matrix(mat[i:i + 13]) for i in range(0, 60, 13)]
        got = CardinalityMatching().fit_blocks(
            blocks, n_rows=60, n_positive=int(Yr.sum()),
            n_empty=int(np.count_nonzero(Yr.sum(axis=1) == 0)))
        assert got.threshold_ == core.threshold_


@pytest.mark.pipeline
def test_top_label_auto_follows_the_empty_label_sets_of_birds(mulan_dir) -> None:
    """With the core's adaptive rule (top_label="auto") LCIF predicts the
    empty set where the training data has empty label sets (birds: 47% of the
    training instances), and never on data without (the paper's rule, Section III-A1)."""
    tr = mlw.load_dataset(mulan_dir / "birds-train.arff")
    te = mlw.load_dataset(mulan_dir / "birds-test.arff")
    assert np.mean(np.asarray(tr.Y.sum(axis=1)).ravel() == 0) > 0.4
    auto = LCIF(k_ins=9, k_feat=3, lam=0.5, threshold=CardinalityMatching(top_label="auto"))
    on = LCIF(k_ins=9, k_feat=3, lam=0.5, threshold=CardinalityMatching(top_label=True))
    empty = {}
    for name, m in (("auto", auto), ("on", on)):
        m.fit(tr.X, tr.Y)
        P_ = m.predict(te.X)
        P_ = P_.toarray() if sp.issparse(P_) else P_
        empty[name] = float(np.mean(P_.sum(axis=1) == 0))
    assert auto.threshold_.top_label_ is False and on.threshold_.top_label_ is True
    # "on" leaves a row empty only when it has no positive score at all
    assert empty["on"] < 0.05 < empty["auto"]
    # the CV search resolves the same rule on each fold's training part
    Xs = P.FeatureScaler().fit(tr.X).transform(tr.X)
    Ycsr = sp.csr_matrix(tr.Y)
    kw = dict(kind="lcif", n_folds=3, seed=0, k_grid=(3, 9), lam_grid=(0.5,))
    res = {tl: search_hyperparameters(Xs, Ycsr, top_label=tl, **kw)["all_scores"]
           for tl in ("auto", False, True)}
    np.testing.assert_array_equal(res["auto"], res[False])
    assert not np.array_equal(res["auto"], res[True])
    # a training set without empty label sets keeps the rule on under "auto"
    X, Y = _data(6, n=120)
    Y[Y.sum(axis=1) == 0, 0] = 1
    m = LCIF(k_ins=5, k_feat=2, threshold=CardinalityMatching(top_label="auto")).fit(X, Y)
    assert m.threshold_.top_label_ is True
