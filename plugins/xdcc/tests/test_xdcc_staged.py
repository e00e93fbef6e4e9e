"""Staged predictions equal fresh fits: what makes the paper's grid affordable.

The grid over boosting rounds {50, 100, 200} is scored from one 200-round fit per
setting (``staged_predict*``), and the chain length of XDCC from one long chain.  That is
only honest where a prefix of one fit *is* the shorter fit; these tests pin it, with row
and column subsampling on so that the random draws must line up too.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from mlw_xdcc import BRXGB, CCXGB, MLXGB, XDCC

PARAMS = dict(max_depth=3, learning_rate=0.3, subsample=0.8, colsample_bytree=0.7,
              random_state=5)
STAGES = [2, 5, 9]


def _data(n=160, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[rng.random(X.shape) < 0.1] = np.nan
    Y = np.c_[np.nan_to_num(X[:, 0]) > 0, np.nan_to_num(X[:, 1]) > 0.3,
              np.nan_to_num(X[:, 0] + X[:, 2]) > 0.5,
              np.nan_to_num(X[:, 3]) > 0.8].astype(np.uint8)
    if sparse:
        Xs = np.where(np.isnan(X), 0.0, X)
        Xs[np.abs(Xs) < 0.4] = 0.0
        return sp.csr_matrix(Xs), Y
    return X, Y


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("cls", [MLXGB, BRXGB])
def test_staged_proba_equals_fresh_fit(cls, sparse):
    X, Y = _data(sparse=sparse)
    Xte, _ = _data(60, seed=1, sparse=sparse)
    # a threshold that does not depend on the training scores: the staged decisions
    # then equal fresh fits' (the default cardinality matching is tuned per fit)
    long = cls(n_estimators=STAGES[-1], threshold="fixed", **PARAMS).fit(X, Y)
    staged = list(long.staged_predict_proba(Xte, STAGES))
    decisions = list(long.staged_predict(Xte, STAGES))
    assert len(staged) == len(STAGES)
    for k, P, D in zip(STAGES, staged, decisions, strict=True):
        fresh = cls(n_estimators=k, threshold="fixed", **PARAMS).fit(X, Y)
        np.testing.assert_array_equal(P, fresh.predict_proba(Xte))
        np.testing.assert_array_equal(D, fresh.predict(Xte))


@pytest.mark.parametrize("sparse", [False, True])
def test_cc_staged_predict_equals_fresh_fit(sparse):
    """CC's boosters train on the true earlier labels, so a label's booster does not
    depend on the rounds of the others; at prediction the chain walks with the
    decisions of the k-round boosters."""
    X, Y = _data(sparse=sparse)
    Xte, _ = _data(60, seed=1, sparse=sparse)
    long = CCXGB(n_estimators=STAGES[-1], threshold=None, **PARAMS).fit(X, Y)
    for k, D in zip(STAGES, long.staged_predict(Xte, STAGES), strict=True):
        fresh = CCXGB(n_estimators=k, threshold=None, **PARAMS).fit(X, Y)
        np.testing.assert_array_equal(D, fresh.predict(Xte))


def test_xdcc_chain_prefix_equals_shorter_chain():
    """Round r's booster only depends on rounds < r, so the staged decision after r
    rounds of one long chain is the decision of a chain of length r (both variants)."""
    X, Y = _data()
    Xte, _ = _data(60, seed=1)
    kw = dict(n_estimators=6, threshold=None, **PARAMS)
    long = XDCC(chain_length=4, **kw).fit(X, Y)
    for cumulated in (True, False):
        long.set_params(cumulated=cumulated)
        for r, D in enumerate(long.staged_predict(Xte), start=1):
            short = XDCC(chain_length=r, cumulated=cumulated, **kw).fit(X, Y)
            np.testing.assert_array_equal(D, short.predict(Xte))
    for r, both in enumerate(long.staged_predict_all(Xte), start=1):
        short = XDCC(chain_length=r, **kw).fit(X, Y)
        for variant, D in short.predict_all(Xte).items():
            np.testing.assert_array_equal(both[variant], D)


def test_staged_stages_are_validated():
    X, Y = _data()
    m = MLXGB(n_estimators=4, max_depth=2).fit(X, Y)
    with pytest.raises(ValueError, match="increasing"):
        list(m.staged_predict_proba(X, [3, 2]))
    with pytest.raises(ValueError, match="4 trees"):
        list(m.staged_predict_proba(X, [5]))
