"""Bad and degenerate input: constant labels, one label, zero weights, NaN, parameters."""

from __future__ import annotations

import numpy as np
import pytest

from mlw_mctbn import CTBN, MixtureOfCTBNs, _logistic


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    Y = np.column_stack([X[:, 0] > 0, (X[:, 0] + X[:, 1]) > 0, X[:, 2] > 0.5]).astype(int)
    return X, Y


@pytest.mark.parametrize("factor", ["feature", "switching"])
@pytest.mark.parametrize("value", [0, 1])
def test_a_constant_label_gets_the_smoothed_prior_and_no_edges(data, value, factor):
    X, Y = data
    Y = Y.copy()
    Y[:, 1] = value
    for model in (CTBN(C=1.0, factor=factor).fit(X, Y),
                  MixtureOfCTBNs(C=1.0, n_trees=2, factor=factor).fit(X, Y)):
        assert np.all(model.parents_[:, 1] == -1) and 1 not in model.parents_
        np.testing.assert_array_equal(model.coef_[:, 1], 0.0)
        if factor == "switching":
            np.testing.assert_array_equal(model.switch_coef_[:, 1], 0.0)
        p1 = model.predict_proba(X)[:, 1]
        assert np.all(p1 == p1[0]) and (p1[0] > 0.95 if value else p1[0] < 0.05)
        assert np.all(model.predict(X)[:, 1] == value)
        assert np.all(np.isfinite(model.log_proba_of(X, 1 - Y)))


@pytest.mark.parametrize("factor", ["feature", "switching"])
def test_one_label(data, factor):
    X, Y = data
    for model in (CTBN(factor=factor).fit(X, Y[:, :1]),
                  MixtureOfCTBNs(n_trees=2, factor=factor).fit(X, Y[:, :1])):
        assert model.parents_.shape[1] == 1 and np.all(model.parents_ == -1)
        P = model.predict_proba(X)
        lp1 = model.log_proba_of(X, np.ones((120, 1), dtype=int))
        np.testing.assert_allclose(np.exp(lp1), P[:, 0], rtol=1e-10)
        np.testing.assert_array_equal(model.predict(X)[:, 0], P[:, 0] > 0.5)


def test_switching_child_constant_under_one_parent_value():
    # y_1 = 1 whenever y_0 = 1: the parent-1 regression of y_1 has a constant target,
    # so it is the smoothed prior (k + 1) / (n + 2) of those rows (documented behaviour)
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    y0 = (X[:, 0] > 0.3).astype(int)
    y1 = np.where(y0 == 1, 1, (X[:, 1] > 0).astype(int))
    model = CTBN(C=1.0, factor="switching").fit(X, np.column_stack([y0, y1]))
    assert model.parents_[0, 1] == 0
    on = np.column_stack([np.ones(200, dtype=int), np.ones(200, dtype=int)])
    k = int(y0.sum())
    p = np.exp(model.log_proba_of(X, on) - model.log_proba_of(X, on * [1, 0]))
    np.testing.assert_allclose(p / (1 + p), (k + 1) / (k + 2), rtol=1e-12)


def test_all_zero_weights():
    # the solver leaves the parameters alone when every weight is zero
    X = np.ones((5, 2))
    design = _logistic.Design.from_matrix(X)
    theta = np.full(4, 0.5)
    y = np.array([0, 1, 0, 1, 0], dtype=float)
    _logistic.fit(design, y, np.zeros(5), None, np.arange(5), 1.0, theta)
    assert np.all(theta[-1] == theta[-1])  # constant target under zero weights: the prior
    # growth stops when every training instance is predicted with probability 1, the
    # weights 1 - P(y | x) all being zero (documented behaviour)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 2))
    Y = np.zeros((80, 2), dtype=int)
    model = MixtureOfCTBNs(C=1e6, max_trees=3).fit(X, Y)
    assert model.n_trees_ >= 1
    assert model.stopped_because_ in ("weights all zero", "validation")


def test_nan_in_X_is_a_one_line_error(data):
    X, Y = data
    X = X.copy()
    X[3, 2] = np.nan
    for cls in (CTBN, MixtureOfCTBNs):
        with pytest.raises(ValueError) as err:
            cls().fit(X, Y)
        assert "NaN" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("params, message", [
    ({"C": 0}, "parameter 'C' must be a number > 0 or None, got 0"),
    ({"Cs": ()}, "parameter 'Cs' must hold at least one value"),
    ({"Cs": "0.1,x"}, "parameter 'Cs' must be positive numbers"),
    ({"holdout_fraction": 1.0}, "parameter 'holdout_fraction' must be a number > 0 and < 1"),
    ({"max_trees": 0}, "parameter 'max_trees' must be an integer >= 1, got 0"),
    ({"n_trees": 1.5}, "parameter 'n_trees' must be an integer >= 1 or None"),
    ({"n_anneal_iter": -1}, "parameter 'n_anneal_iter' must be an integer >= 0"),
    ({"em_tol": float("nan")}, "parameter 'em_tol' must be a number >= 0"),
    ({"em_weights": "uniform"}, "parameter 'em_weights' must be a string one of"),
    ({"factor": "switch"}, "parameter 'factor' must be a string one of"),
])
def test_bad_parameters(data, params, message):
    X, Y = data
    with pytest.raises(ValueError, match=message):
        MixtureOfCTBNs(**params).fit(X, Y)


def test_bad_factor_for_ctbn(data):
    X, Y = data
    with pytest.raises(ValueError, match="parameter 'factor' must be a string one of") as err:
        CTBN(factor="both").fit(X, Y)
    assert "\n" not in str(err.value)


def test_cli_style_grid(data):
    X, Y = data
    model = CTBN(Cs="0.1, 1").fit(X, Y)
    assert set(model.C_search_) <= {0.1, 1.0} and model.C_ in (0.1, 1.0)
