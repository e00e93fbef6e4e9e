"""``sample_weight`` in ``fit`` for XDCC, ML-XGB and BR-XGB: an integer weight
acts as that many copies of the row, a weight of 0 as dropping it."""

from __future__ import annotations

import numpy as np
import pytest

from mlw_xdcc import BRXGB, MLXGB, XDCC
from mlw_xdcc.binning import cuts_of

# small boosters; max_bin below the number of distinct values, so the weighted quantile
# cuts are exercised, not only the "every value its own bin" case
PARAMS = dict(n_estimators=8, max_depth=3, max_bin=16, learning_rate=0.5)
LEARNERS = [
    pytest.param(lambda: XDCC(chain_length=3, threshold=None, **PARAMS), id="xdcc"),
    pytest.param(lambda: XDCC(chain_length=2, label_features="binary", extremes_over="open",
                              threshold=None, **PARAMS), id="xdcc-binary"),
    pytest.param(lambda: MLXGB(threshold="fixed", **PARAMS), id="ml_xgb"),
    pytest.param(lambda: BRXGB(threshold="fixed", **PARAMS), id="br_xgb"),
]


def _data(n=90, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[rng.random((n, 4)) < 0.1] = np.nan          # missing values take a learned side
    Y = np.c_[X[:, 0] > 0, X[:, 1] > 0.3, np.nan_to_num(X[:, 0] + X[:, 2]) > 0.5
              ].astype(np.uint8)
    flip = rng.random(Y.shape) < 0.1
    return X, np.where(flip, 1 - Y, Y).astype(np.uint8), rng.normal(size=(40, 4))


# BR-XGB is left out here: on this data its first label's booster meets a node where
# sending the missing values left or right gains the same up to the last bits, and the
# weighted fit (gradient 2g) and the repeated one (g + g, summed in another order)
# round that tie differently.  Equal up to rounding, as the docstrings say; not bit for
# bit.  The zero-weight test below is exact for all four.
@pytest.mark.pipeline
@pytest.mark.parametrize("make", LEARNERS[:3])
def test_integer_weights_equal_repeated_rows(make):
    X, Y, X_test = _data()
    w = np.random.default_rng(0).integers(0, 4, size=X.shape[0])
    weighted = make().fit(X, Y, sample_weight=w)
    repeated = make().fit(np.repeat(X, w, axis=0), np.repeat(Y, w, axis=0))
    np.testing.assert_allclose(weighted.predict_proba(X_test),
                               repeated.predict_proba(X_test), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(weighted.predict(X_test), repeated.predict(X_test))


@pytest.mark.pipeline
@pytest.mark.parametrize("make", LEARNERS)
def test_zero_weight_equals_dropping_the_row(make):
    X, Y, X_test = _data()
    w = np.ones(X.shape[0])
    w[::4] = 0.0
    weighted = make().fit(X, Y, sample_weight=w)
    dropped = make().fit(X[w > 0], Y[w > 0])
    np.testing.assert_array_equal(weighted.predict_proba(X_test), dropped.predict_proba(X_test))
    np.testing.assert_array_equal(weighted.predict(X_test), dropped.predict(X_test))


@pytest.mark.pipeline
def test_weights_change_the_model_and_unit_weights_do_not():
    X, Y, X_test = _data()
    plain = XDCC(chain_length=2, **PARAMS).fit(X, Y).predict_proba(X_test)
    ones = XDCC(chain_length=2, **PARAMS).fit(X, Y, sample_weight=np.ones(X.shape[0]))
    np.testing.assert_array_equal(ones.predict_proba(X_test), plain)
    w = np.where(Y[:, 0] == 1, 5.0, 0.2)      # label 0's positives weigh 25x more
    heavy = XDCC(chain_length=2, **PARAMS).fit(X, Y, sample_weight=w).predict_proba(X_test)
    assert heavy[:, 0].mean() > plain[:, 0].mean() + 0.05


def test_weighted_cuts_are_the_cuts_of_the_repeated_values():
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(300, 3)), 2)
    w = rng.integers(0, 5, size=300)
    for max_bin in (2, 7, 32, 256):
        e_w, off_w = cuts_of(X, max_bin, w.astype(np.float64))
        e_r, off_r = cuts_of(np.repeat(X, w, axis=0), max_bin)
        np.testing.assert_array_equal(off_w, off_r)
        np.testing.assert_array_equal(e_w, e_r)


def test_out_of_fold_weights_zero_on_a_whole_fold_is_refused():
    X, Y, _ = _data(n=20)
    folds = np.random.default_rng(0).permutation(20) % 2     # XDCC's draw for seed 0
    w = np.where(folds == 0, 0.0, 1.0)
    with pytest.raises(ValueError, match="zero on every training row outside propagation fold 1"):
        XDCC(propagation="out_of_fold", propagation_folds=2, chain_length=1,
             **PARAMS).fit(X, Y, sample_weight=w)
