"""``sample_weight`` in ``fit`` for BR, CC, PCC and LP: passed to every base
classifier (the last step of a pipeline), so integer weights give the model fitted on
the rows repeated that many times; a base classifier without ``sample_weight`` and bad
weights are refused with a one-line ValueError."""

from __future__ import annotations

import numpy as np
import pytest

import mlw


@pytest.fixture(scope="module")
def data():
    ds = mlw.load_dataset("emotions")
    X, Y = np.asarray(ds.X[:80]), np.asarray(ds.Y[:80])
    # from 1: a zero weight keeps a row the scaler of the default base classifier sees
    w = np.random.default_rng(0).integers(1, 4, size=80)
    return X, Y, w


@pytest.mark.parametrize("name", ["br", "cc", "pcc", "lp"])
def test_integer_weights_equal_repeated_rows(data, name) -> None:
    X, Y, w = data
    weighted = mlw.get_learner(name, seed=0).fit(X, Y, sample_weight=w)
    repeated = mlw.get_learner(name, seed=0).fit(np.repeat(X, w, axis=0),
                                                 np.repeat(Y, w, axis=0))
    unweighted = mlw.get_learner(name, seed=0).fit(X, Y)
    p_w, p_r = weighted.predict_proba(X), repeated.predict_proba(X)
    np.testing.assert_allclose(p_w, p_r, atol=2e-3)
    assert np.abs(p_w - unweighted.predict_proba(X)).max() > 1e-2


def test_unit_weights_change_nothing(data) -> None:
    X, Y, _ = data
    a = mlw.get_learner("br").fit(X, Y, sample_weight=np.ones(len(X))).predict_proba(X)
    np.testing.assert_allclose(a, mlw.get_learner("br").fit(X, Y).predict_proba(X),
                               atol=1e-6)


def test_refusals(data) -> None:
    X, Y, w = data
    with pytest.raises(ValueError, match="KNeighborsClassifier does not take sample_weight"):
        mlw.get_learner("br", base_estimator="sklearn.neighbors.KNeighborsClassifier"
                        ).fit(X, Y, sample_weight=w)
    with pytest.raises(ValueError, match="does not support sample_weight"):
        mlw.get_learner("mlknn").fit(X, Y, sample_weight=w)
    for bad, match in ((-w, "non-negative"), (w[:-1], r"shape \(80,\)"),
                       (np.zeros(80), "all zero"), (w * np.nan, "finite")):
        with pytest.raises(ValueError, match=match):
            mlw.get_learner("br").fit(X, Y, sample_weight=bad)
