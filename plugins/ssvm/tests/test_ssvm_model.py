"""The learners: cutting-plane convergence on a separable toy, the objective and the
stopping rule, dense = sparse, scikit-learn conventions and parameter checks."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from mlw_ssvm import StructF1, StructHamming, StructSubset, StructuredSVM
from mlw_ssvm import _kernels as K
from mlw_ssvm._cutting_plane import scores


def _toy(n: int = 60, seed: int = 0):
    """Three labels, each a half-plane with a margin of 0.1 around it."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(4 * n, 2))
    Wt = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    M = X @ Wt.T + np.array([0.2, -0.1, 0.0])
    keep = (np.abs(M) / np.linalg.norm(Wt, axis=1) > 0.1).all(axis=1)
    X, M = X[keep][:n], M[keep][:n]
    return X, (M > 0).astype(np.uint8)


LEARNERS = [StructHamming, StructF1, StructSubset,
            lambda **kw: StructF1(measure="jaccard", **kw),
            lambda **kw: StructF1(beta=2.0, **kw)]


@pytest.mark.parametrize("make", LEARNERS)
def test_converges_to_zero_training_loss_on_a_separable_toy(make):
    X, Y = _toy()
    model = make(C=1e4, epsilon=0.01).fit(X, Y)
    assert model.converged_
    assert model.violation_ <= 0.01
    assert np.array_equal(model.predict(X), Y)
    # the working-set optimum: primal 1/2|w|^2 + C xi equals the dual
    w = model.W_.ravel()
    assert model.objective_ == pytest.approx(0.5 * w @ w + 1e4 * model.slack_, rel=1e-6)
    assert model.objective_ - model.dual_objective_ <= 1e-6 * model.objective_
    # the stopping rule holds for the true most violated constraint at the solution
    S = scores(X, model.W_, 1.0)
    code, beta2 = model._loss()
    Ybar, lo = K.most_violated(code, beta2, S, Y)
    assert lo.mean() - K.margin_gap(S, Y, Ybar) <= model.slack_ + 0.01 + 1e-9


def test_cache_and_no_cache_reach_the_same_optimum():
    X, Y = _toy(80, seed=3)
    a = StructF1(C=10.0, epsilon=0.001, cache_size=5).fit(X, Y)
    b = StructF1(C=10.0, epsilon=0.001, cache_size=0).fit(X, Y)
    assert a.n_oracle_passes_ < a.n_iter_ and b.n_oracle_passes_ == b.n_iter_ + 1
    # both are within epsilon of the optimum, so their objectives are close
    assert a.objective_ == pytest.approx(b.objective_, rel=0.05)


def test_dense_and_sparse_inputs_give_the_same_model():
    X, Y = _toy(50, seed=1)
    X = np.hstack([X, np.zeros((X.shape[0], 3))])
    a = StructSubset(C=100.0).fit(X, Y)
    b = StructSubset(C=100.0).fit(sp.csr_matrix(X), sp.csr_matrix(Y))
    assert np.allclose(a.coef_, b.coef_) and np.allclose(a.intercept_, b.intercept_)
    assert np.array_equal(b.predict(sp.csr_matrix(X)), a.predict(X))


def test_prediction_is_the_sign_of_the_margins_and_scores_their_sigmoid():
    X, Y = _toy(40, seed=2)
    model = StructHamming(C=10.0).fit(X, Y)
    M = model.decision_function(X)
    assert np.allclose(M, X @ model.coef_.T + model.intercept_)
    assert np.array_equal(model.predict(X), (M > 0).astype(np.uint8))
    assert np.allclose(model.predict_proba(X), expit(M))
    Yp, P = model.predict_with_scores(X)
    assert np.array_equal(Yp, model.predict(X)) and np.allclose(P, expit(M))


def test_no_bias_means_no_intercept():
    X, Y = _toy(40)
    assert np.all(StructF1(C=10.0, bias=0.0).fit(X, Y).intercept_ == 0)


def test_general_class_matches_the_named_learners():
    X, Y = _toy(40, seed=4)
    for loss, named in [("hamming", StructHamming), ("subset", StructSubset),
                        ("f_beta", StructF1)]:
        a = StructuredSVM(loss=loss, C=50.0).fit(X, Y)
        b = named(C=50.0).fit(X, Y)
        assert np.allclose(a.W_, b.W_)


def test_sklearn_conventions_clone_params_pickle():
    X, Y = _toy(40)
    model = StructF1(C=5.0, beta=0.5, measure="jaccard")
    assert clone(model).get_params() == model.get_params()
    model.fit(X, Y)
    again = pickle.loads(pickle.dumps(model))
    assert np.array_equal(again.predict(X), model.predict(X))
    assert model.n_iter_ >= 1 and model.n_features_in_ == 2 and model.n_labels_ == 3


def test_max_iter_warns():
    X, Y = _toy(60)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        model = StructF1(C=1e4, epsilon=1e-4, max_iter=2).fit(X, Y)
    assert not model.converged_ and model.n_iter_ == 2


@pytest.mark.parametrize("params, match", [
    ({"C": 0}, "'C' must be a number > 0"),
    ({"C": float("inf")}, "'C' must be"),
    ({"epsilon": -1.0}, "'epsilon' must be"),
    ({"bias": -1.0}, "'bias' must be"),
    ({"cache_size": 1.5}, "'cache_size' must be an integer"),
    ({"max_iter": 0}, "'max_iter' must be an integer >= 1"),
    ({"beta": -1.0}, "'beta' must be"),
    ({"measure": "f2"}, "'measure' must be .*one of"),
])
def test_bad_parameters_are_one_line_value_errors(params, match):
    X, Y = _toy(20)
    with pytest.raises(ValueError, match=match) as err:
        StructF1(**params).fit(X, Y)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="'loss' must be .*one of"):
        StructuredSVM(loss="f1").fit(X, Y)


def test_warm_start_over_a_C_grid_meets_the_criterion_with_fewer_iterations():
    X, Y = _toy(80, seed=5)
    model = StructF1(C=1.0, epsilon=0.01, warm_start=True)
    cold_iters = 0
    for C in (1.0, 10.0, 100.0):
        model.set_params(C=C).fit(X, Y)
        cold = StructF1(C=C, epsilon=0.01).fit(X, Y)
        cold_iters += cold.n_iter_
        assert model.converged_ and model.violation_ <= 0.01
        # both are epsilon-optimal: their objectives are within C * epsilon
        assert abs(model.objective_ - cold.objective_) <= C * 0.01 + 1e-6
        warm_iters = model.n_iter_
    assert warm_iters < cold.n_iter_
    # other data: a cold start (the state is keyed by a checksum of X and Y)
    model.fit(X[:60], Y[:60])
    assert model.n_iter_ == StructF1(C=100.0, epsilon=0.01).fit(X[:60], Y[:60]).n_iter_


def _scaled_primal(model, X, Y, code, scale):
    """1/2 |W|^2 + C max(0, H(W)) of the problem trained with ``scale`` times the
    paper's loss ((b + c) / L for Hamming), H the most violated joint constraint's
    violation found by enumerating all 2^L label vectors (naive_ssvm.brute_force)."""
    import naive_ssvm as naive

    S = scores(X, model.W_, 1.0)
    units = Y.shape[1] if code == K.LOSS_HAMMING else 1.0  # the kernels' loss units
    r = scale / units
    H = np.mean([r * naive.brute_force(code, 1.0, S[i] / r, Y[i]) - S[i] @ Y[i]
                 for i in range(len(Y))])
    w = model.W_.ravel()
    return 0.5 * w @ w + model.C * max(0.0, H), H


@pytest.mark.parametrize("make, code", [(StructHamming, K.LOSS_HAMMING),
                                        (StructF1, K.LOSS_FBETA),
                                        (StructSubset, K.LOSS_SUBSET)])
def test_loss_scale_trains_on_the_scaled_loss(make, code):
    X, Y = _toy(40, seed=6)
    C, eps = 3.0, 0.1
    model = make(C=C, epsilon=eps, loss_scale=100.0).fit(X, Y)
    assert model.converged_ and model.loss_scale_ == 100.0
    primal, H = _scaled_primal(model, X, Y, code, 100.0)
    # the stopping rule of the scaled problem, against brute force
    assert H <= model.slack_ + eps + 1e-9
    assert model.objective_ == pytest.approx(0.5 * model.W_.ravel() @ model.W_.ravel()
                                             + C * model.slack_, rel=1e-9)
    # epsilon-optimal for that problem (P(W) <= P* + C eps): no rescaled W does better
    for t in (0.5, 0.8, 1.25, 2.0):
        other = clone(model)
        other.W_ = t * model.W_
        assert _scaled_primal(other, X, Y, code, 100.0)[0] >= primal - C * eps - 1e-9
    # the paper's C grid meets another trade-off at another scale
    unit = make(C=C, epsilon=eps, loss_scale=1.0).fit(X, Y)
    assert not np.allclose(unit.W_ * 100.0, model.W_)


def test_loss_scale_auto_is_the_count_for_hamming_and_one_for_the_others():
    X, Y = _toy(40, seed=7)
    assert np.array_equal(StructHamming(C=50.0).fit(X, Y).W_,
                          StructHamming(C=50.0, loss_scale=3.0).fit(X, Y).W_)
    assert np.array_equal(StructF1(C=50.0).fit(X, Y).W_,
                          StructF1(C=50.0, loss_scale=1.0).fit(X, Y).W_)
    for bad in (0.0, -1.0, "percent"):
        with pytest.raises(ValueError, match="'loss_scale' must be"):
            StructSubset(loss_scale=bad).fit(X, Y)
