"""The learners on real data: exact inference against enumeration, EM, conventions."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from naive_mctbn import all_vectors
from sklearn.base import clone

import mlw
from mlw_mctbn import CTBN, MixtureOfCTBNs, _learning, _logistic
from mlw_mctbn._learning import Mixture


@pytest.fixture(scope="module")
def emotions(mulan_dir):
    tr = mlw.load_dataset(mulan_dir / "emotions-train.arff")
    te = mlw.load_dataset(mulan_dir / "emotions-test.arff")
    return tr.X, np.asarray(tr.Y), te.X[:40], np.asarray(te.Y[:40])


@pytest.fixture(scope="module")
def mc(emotions):
    X, Y, _, _ = emotions
    return MixtureOfCTBNs(C=1.0, n_trees=3, em_max_iter=10, keep_path=True).fit(X, Y)


def _enumerate(model, X):
    """P(y | x) of all 2^d vectors for every row, from log_proba_of."""
    d = model.n_labels_
    Ys = all_vectors(d)
    return Ys, np.column_stack([np.exp(model.log_proba_of(X, np.tile(y, (X.shape[0], 1))))
                                for y in Ys])


def test_mixture_is_a_distribution_with_exact_marginals_and_map(mc, emotions):
    _, _, Xte, Yte = emotions
    assert mc.n_trees_ == 3 and mc.mixture_weights_.sum() == pytest.approx(1.0)
    Ys, P = _enumerate(mc, Xte)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-10)
    np.testing.assert_allclose(mc.predict_proba(Xte), P @ Ys, rtol=1e-9, atol=1e-12)
    # annealing from the best tree MAP finds the enumerated mixture MAP on most rows
    Yhat = mc.predict(Xte)
    exact = Ys[P.argmax(axis=1)]
    assert np.mean(np.all(Yhat == exact, axis=1)) >= 0.95
    # and is never worse than the best tree MAP it started from
    lp_hat = mc.log_proba_of(Xte, Yhat)
    start = MixtureOfCTBNs(**{**mc.get_params(), "n_anneal_iter": 0})
    start.__dict__.update({k: v for k, v in mc.__dict__.items() if k.endswith("_")})
    assert np.all(lp_hat >= start.log_proba_of(Xte, start.predict(Xte)) - 1e-12)


def test_one_pass_prediction_agrees(mc, emotions):
    _, _, Xte, _ = emotions
    Yp, S = mc.predict_with_scores(Xte)
    np.testing.assert_array_equal(Yp, mc.predict(Xte))
    np.testing.assert_allclose(S, mc.predict_proba(Xte))


def test_ctbn_map_is_exact(emotions):
    X, Y, Xte, _ = emotions
    model = CTBN(C=1.0).fit(X, Y)
    assert model.parents_.shape == (1, 6) and model.C_search_ == {}
    Ys, P = _enumerate(model, Xte)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-10)
    np.testing.assert_array_equal(model.predict(Xte), Ys[P.argmax(axis=1)])
    np.testing.assert_allclose(model.predict_proba(Xte), P @ Ys, rtol=1e-9, atol=1e-12)


def _naive_log_proba(model, X, Y):
    """log P(y | x) of every row straight from each factor's coefficients (a switching
    factor: the regression of its parent's value), summed over the trees."""
    X = np.asarray(X, dtype=np.float64)
    out = np.empty(X.shape[0])
    for r in range(X.shape[0]):
        per_tree = []
        for k in range(model.n_trees_):
            total = 0.0
            for i in range(model.n_labels_):
                pa = model.parents_[k, i]
                z = X[r] @ model.coef_[k, i] + model.intercept_[k, i]
                if pa >= 0 and Y[r, pa] == 1:
                    z += model.parent_coef_[k, i]
                    if model.switch_coef_ is not None:
                        z += X[r] @ model.switch_coef_[k, i] + model.switch_intercept_[k, i]
                p1 = 1.0 / (1.0 + np.exp(-z))
                total += np.log(p1 if Y[r, i] == 1 else 1.0 - p1)
            per_tree.append(np.log(model.mixture_weights_[k]) + total)
        out[r] = np.logaddexp.reduce(per_tree)
    return out


@pytest.mark.parametrize("factor", ["feature", "switching"])
def test_factor_forms_against_enumeration(emotions, factor):
    X, Y, Xte, Yte = emotions
    for model in (CTBN(C=1.0, factor=factor).fit(X, Y),
                  MixtureOfCTBNs(C=1.0, n_trees=2, em_max_iter=5, factor=factor).fit(X, Y)):
        assert (model.switch_coef_ is None) == (factor == "feature")
        np.testing.assert_allclose(model.log_proba_of(Xte, Yte),
                                   _naive_log_proba(model, Xte, Yte), rtol=1e-9)
        Ys, P = _enumerate(model, Xte)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-10)
        np.testing.assert_allclose(model.predict_proba(Xte), P @ Ys, rtol=1e-9, atol=1e-12)
        exact = Ys[P.argmax(axis=1)]
        if isinstance(model, CTBN):  # max-sum: the exact MAP
            np.testing.assert_array_equal(model.predict(Xte), exact)
        else:
            assert np.mean(np.all(model.predict(Xte) == exact, axis=1)) >= 0.95


def test_switching_is_the_default_factor(emotions):
    """factor="switching" is both learners' default: a default fit holds
    the per-parent-value regressions and equals an explicit switching fit."""
    X, Y, Xte, Yte = emotions
    for cls, kw in ((CTBN, {}), (MixtureOfCTBNs, {"n_trees": 2, "em_max_iter": 5})):
        default = cls(C=1.0, **kw).fit(X, Y)
        assert default.factor == "switching" and default.switch_coef_ is not None
        np.testing.assert_array_equal(
            default.log_proba_of(Xte, Yte),
            cls(C=1.0, factor="switching", **kw).fit(X, Y).log_proba_of(Xte, Yte))


def test_switching_factor_is_one_regression_per_parent_value(emotions):
    from sklearn.linear_model import LogisticRegression

    X, Y, Xte, _ = emotions
    model = CTBN(C=1.0, factor="switching").fit(X, Y)
    scale = model.feature_scale_
    child = int(np.flatnonzero(model.parents_[0] >= 0)[0])
    pa = model.parents_[0, child]
    for value in (0, 1):
        rows = Y[:, pa] == value
        ref = LogisticRegression(C=1.0, tol=1e-10, max_iter=10_000).fit(
            X[rows] * scale, Y[rows, child])
        z = Xte @ model.coef_[0, child] + model.intercept_[0, child]
        if value:
            z = z + Xte @ model.switch_coef_[0, child] + model.switch_intercept_[0, child]
        np.testing.assert_allclose(1 / (1 + np.exp(-z)),
                                   ref.predict_proba(Xte * scale)[:, 1], atol=2e-3)
    # a root has one regression: no switch
    root = int(np.flatnonzero(model.parents_[0] < 0)[0])
    assert not model.switch_coef_[0, root].any() and model.switch_intercept_[0, root] == 0


@pytest.mark.parametrize("factor", ["feature", "switching"])
def test_edge_models_at_edge_tol_choose_the_converged_tree(emotions, factor):
    # the structure search's edge models stop at the looser EDGE_TOL: on
    # emotions the tree is the one of edge models solved to 1e-8, each edge weight
    # within 1 of its converged value (hold-out log-likelihoods of 117 rows, -20 to
    # -70; measured 0.54 feature / 0.34 switching, against 0.13 / 0.11 at TOL), and the
    # self-loop models (the tree's warm start, at TOL) do not depend on it
    X, Y, _, _ = emotions
    design = _logistic.Design.from_matrix(X)
    Yt = np.ascontiguousarray(Y.T, dtype=np.float64)
    rows = np.arange(X.shape[0], dtype=np.int64)
    lam = np.ones(Y.shape[1])
    sw = factor == "switching"
    out = {tol: _learning.learn_structure(design, Yt, np.ones(X.shape[0]), rows, lam, 0.3,
                                          np.random.default_rng(1), sw, tol)
           for tol in (_logistic.EDGE_TOL, 1e-8)}
    assert _logistic.EDGE_TOL > _logistic.TOL
    (p_edge, W_edge, t_edge), (p_conv, W_conv, t_conv) = out[_logistic.EDGE_TOL], out[1e-8]
    np.testing.assert_array_equal(p_edge, p_conv)
    np.testing.assert_allclose(W_edge, W_conv, atol=1.0)
    assert not np.allclose(W_edge, W_conv, rtol=0, atol=1e-6)  # the tolerance is used
    np.testing.assert_array_equal(t_edge, t_conv)


def test_ctbn_edge_models_stop_at_edge_tol_and_mc_keeps_tol(emotions, monkeypatch):
    # ctbn's structure search stops its edge models at EDGE_TOL; mc's keep
    # TOL (at EDGE_TOL mc's EMA fell on emotions in the quality protocol; README)
    import inspect

    learn = _learning.learn_structure
    default = inspect.signature(learn).parameters["edge_tol"].default
    seen: list[float] = []

    def spy(*args, **kwargs):
        seen.append(kwargs.get("edge_tol", default))
        return learn(*args, **kwargs)

    monkeypatch.setattr(_learning, "learn_structure", spy)
    X, Y, _, _ = emotions
    CTBN().fit(X, Y)
    assert len(seen) >= 3 and set(seen) == {_logistic.EDGE_TOL}
    seen.clear()
    MixtureOfCTBNs(n_trees=2, em_max_iter=2, em_weights="gamma").fit(X, Y)
    assert len(seen) >= 3 and set(seen) == {_logistic.TOL}


def _random_trees(X, Y, K, seed, switching=False):
    """K trees learned and fitted on random instance weights of all the rows, as an
    equal-weight mixture, with the arrays EM takes."""
    design = _logistic.Design.from_matrix(X)
    Yd = np.ascontiguousarray(Y, dtype=np.uint8)
    Yt = np.ascontiguousarray(Yd.T, dtype=np.float64)
    rows = np.arange(X.shape[0], dtype=np.int64)
    lam = np.ones(Yd.shape[1])
    rng = np.random.default_rng(seed)
    parents, thetas = [], []
    for _ in range(K):
        w = rng.random(X.shape[0]) * 2
        parent, _, theta = _learning.learn_structure(design, Yt, w, rows, lam, 0.3, rng,
                                                     switching)
        parents.append(parent)
        thetas.append(_learning.fit_tree(design, Yt, parent, w, rows, lam, theta))
    return design, Yd, Yt, rows, lam, Mixture(parents, thetas, np.full(K, 1 / K))


def test_em_with_switching_factors_never_decreases(emotions):
    X, Y, _, _ = emotions
    design, Yd, Yt, rows, lam, mix = _random_trees(X, Y, 2, 1, switching=True)
    assert mix.thetas[0].shape == (6, 2 * (design.m + 2))
    pen = np.array(_learning.em(design, X, Yd, Yt, mix, rows, lam, max_iter=10,
                                tol=0.0).penalised)
    assert np.all(np.diff(pen) >= -1e-8 * np.abs(pen[:-1])), np.diff(pen)
    assert pen[-1] > pen[0]


def test_em_never_decreases_the_penalised_log_likelihood(emotions):
    X, Y, _, _ = emotions
    # three different structures, factors fitted on random weights
    design, Yd, Yt, rows, lam, mix = _random_trees(X, Y, 3, 0)
    start = mix.copy()
    trace = _learning.em(design, X, Yd, Yt, mix, rows, lam, max_iter=20, tol=0.0)
    pen = np.array(trace.penalised)
    assert len(pen) == 21
    assert np.all(np.diff(pen) >= -1e-8 * np.abs(pen[:-1])), np.diff(pen)
    assert pen[-1] > pen[0]
    # (the observed log-likelihood alone may fall: EM here maximises it minus the L2
    # terms, MAP-EM; the README says so)
    # em_weights="normalised" (Eq. 10 literally): one M-step fits tree k on
    # gamma_k(n) N / Gamma_k and sets lam_k = Gamma_k / N
    z = _learning.component_log_proba(design, X, start, Yd, rows) + np.log(start.lam)
    gamma = np.exp(z - z.max(axis=1, keepdims=True))
    gamma /= gamma.sum(axis=1, keepdims=True)
    N, Gamma = X.shape[0], gamma.sum(axis=0)
    assert np.all(N / Gamma > 2)  # weights well apart from em_weights="gamma"'s
    norm = start.copy()
    _learning.em(design, X, Yd, Yt, norm, rows, lam, max_iter=1, tol=0.0, normalised=True)
    np.testing.assert_allclose(norm.lam, Gamma / N, rtol=1e-12)
    for k, (parent, theta) in enumerate(zip(start.parents, start.thetas, strict=True)):
        expect = _learning.fit_tree(design, Yt, parent, gamma[:, k] * N / Gamma[k], rows,
                                    lam, theta.copy())
        np.testing.assert_allclose(norm.thetas[k], expect, rtol=1e-6, atol=1e-7)
    plain = _learning.fit_tree(design, Yt, start.parents[0], gamma[:, 0], rows, lam,
                               start.thetas[0].copy())
    assert np.abs(plain - norm.thetas[0]).max() > 1e-2  # and differ from gamma weights'
    # the fitted learner's final EM too
    model = MixtureOfCTBNs(C=1.0, n_trees=2, em_max_iter=8, em_weights="gamma").fit(X, Y)
    assert np.all(np.diff(model.em_trace_.penalised) >= -1e-8 * np.abs(
        model.em_trace_.penalised[0]))


def test_growth_by_validation_and_C_search(emotions):
    X, Y, _, _ = emotions
    model = MixtureOfCTBNs(Cs=(0.1, 1.0, 10.0), max_trees=4, em_max_iter=5).fit(X, Y)
    assert model.C_ in (0.1, 1.0, 10.0) and model.C_ in model.C_search_
    assert 1.0 in model.C_search_  # the search starts in the middle of the grid
    assert model.C_search_[model.C_] == max(model.C_search_.values())
    curve = model.validation_curve_
    assert model.patience == 2  # the default: stop after two trees in a row below the best
    if model.stopped_because_ == "validation":
        assert len(curve) == model.n_trees_ + 2
        assert max(curve[-2:]) < curve[model.n_trees_ - 1] == max(curve)
    else:  # max_trees = 4 reached; trailing trees below the best are dropped
        assert model.stopped_because_ == "max_trees" and len(curve) == 4
        assert curve[model.n_trees_ - 1] == max(curve)
    assert model.C_search_[model.C_] == curve[0]  # the first tree is the C search's
    # em_weights="auto" (the default) grew both readings and kept the better validation
    search = model.em_weights_search_
    assert set(search) == {"gamma", "normalised"}
    assert search[model.em_weights_] == max(search.values()) == curve[model.n_trees_ - 1]


def test_growth_patience_keeps_the_best_validated_mixture(emotions):
    X, Y, _, _ = emotions
    kw = dict(C=1.0, max_trees=5, em_max_iter=5, em_weights="normalised", keep_path=True)
    runs = {p: MixtureOfCTBNs(patience=p, **kw).fit(X, Y) for p in (1, 3)}
    for p, m in runs.items():
        curve = np.array(m.validation_curve_)
        # the kept mixture is the last one scoring the best validation value so far ...
        best = int(np.flatnonzero(curve == curve.max())[-1])
        assert m.n_trees_ == best + 1 and len(m.staged_models()) == m.n_trees_
        # ... and growth went on until `patience` trees in a row scored below it
        if m.stopped_because_ == "validation":
            assert len(curve) == m.n_trees_ + p and np.all(curve[best + 1:] < curve[best])
        else:
            assert m.stopped_because_ == "max_trees" and len(curve) == 5
    # the growth path is the same; patience only decides where it stops
    one, three = (np.array(runs[p].validation_curve_) for p in (1, 3))
    np.testing.assert_allclose(three[:len(one)], one)
    assert runs[3].n_trees_ >= runs[1].n_trees_


def test_dense_and_sparse_input_agree(emotions):
    X, Y, Xte, Yte = emotions
    X = X[:150]
    Y = Y[:150]
    X = np.where(np.abs(X) < 0.3, 0.0, X)
    a = MixtureOfCTBNs(C=1.0, n_trees=2, em_max_iter=5).fit(X, Y)
    b = MixtureOfCTBNs(C=1.0, n_trees=2, em_max_iter=5).fit(sp.csr_matrix(X), sp.csr_matrix(Y))
    np.testing.assert_array_equal(a.parents_, b.parents_)
    # the same solver on the same numbers; only the summation order differs, and the
    # solver stops at a gradient tolerance, so the fits agree to that tolerance
    np.testing.assert_allclose(a.coef_, b.coef_, atol=0.05)
    np.testing.assert_allclose(a.log_proba_of(Xte, Yte),
                               b.log_proba_of(sp.csr_matrix(Xte), Yte), rtol=1e-2)


def test_sklearn_conventions_and_pickle(mc, emotions):
    _, _, Xte, Yte = emotions
    fresh = clone(mc)
    assert fresh.get_params() == mc.get_params() and not hasattr(fresh, "n_trees_")
    back = pickle.loads(pickle.dumps(mc))
    np.testing.assert_allclose(back.log_proba_of(Xte, Yte), mc.log_proba_of(Xte, Yte))
    np.testing.assert_array_equal(back.predict(Xte), mc.predict(Xte))
    assert "tree 0: weight" in mc.to_text()


def test_registered_and_evaluated_with_cll_loss(mc, emotions):
    _, _, Xte, Yte = emotions
    spec = mlw.list_learners()["mc"]
    assert spec.tags.joint and spec.tags.log_proba
    assert "ctbn" in mlw.list_learners()
    Yp, S = mc.predict_with_scores(Xte)
    out = mlw.evaluate(Yte, Yp, scores=S, log_proba=mc.log_proba_of(Xte, Yte))
    assert out["cll_loss"] == pytest.approx(-mc.log_proba_of(Xte, Yte).sum())


def test_staged_models_follow_the_growth(mc, emotions):
    _, _, Xte, Yte = emotions
    staged = mc.staged_models()
    assert [m.n_trees_ for m in staged] == [1, 2, 3]
    for m in staged:
        _, P = _enumerate(m, Xte[:5])
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-10)
    with pytest.raises(ValueError, match="keep_path=True"):
        MixtureOfCTBNs(C=1.0, n_trees=1).fit(*emotions[:2]).staged_models()
