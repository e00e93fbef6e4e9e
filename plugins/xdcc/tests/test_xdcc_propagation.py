"""Out-of-fold training propagation (``XDCC(propagation="out_of_fold")``), an opt-in
extension: the training labels are propagated with held-out predictions instead of the
in-sample ones the paper uses (the default, pinned by ``test_xdcc_chain.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import mlw
from mlw_xdcc import XDCC, fit_ensemble
from mlw_xdcc._common import augment
from mlw_xdcc.binning import append_binary_block, append_block, bin_matrix, cuts_of
from mlw_xdcc.xdcc import ChainState

KW = dict(n_estimators=8, max_depth=3, learning_rate=0.3)
BINARY = dict(label_features="binary", extremes_over="open")


def _toy(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[rng.random(X.shape) < 0.05] = np.nan  # missing values take the learned side
    Y = np.c_[X[:, 0] > 0, X[:, 1] > 0.3, (X[:, 0] + X[:, 2]) > 0.5,
              X[:, 3] > 1.0].astype(np.uint8)
    return X, Y


def _naive_out_of_fold_state(model: XDCC, X, Y, k: int) -> ChainState:
    """The procedure written out: per round, k boosters on the other folds (the full
    data's quantile cuts, the same mask) predict their held-out fold, and those
    probabilities drive Eq. (8) on the training rows."""
    n, L = Y.shape
    params = model.booster_params()
    folds = np.random.default_rng(model.random_state).permutation(n) % k
    edges, off = cuts_of(X, model.max_bin)
    prob = model.label_features == "probability"
    state = ChainState(n, L, model.extremes_over == "all")
    for r in range(model.chain_length_):
        P = np.empty((n, L))
        p = state.label_features(prob)
        for f in range(k):
            tr, te = folds != f, folds == f
            B = bin_matrix(X[tr], edges, off)
            B = (append_block(B, p[tr], *cuts_of(p, model.max_bin)) if prob
                 else append_binary_block(B, p[tr]))
            ens, _ = fit_ensemble(B, Y[tr], params, seed=model.random_state + r,
                                  mask=1 - state.frozen[tr])
            P[te] = ens.predict_proba(augment(X[te], p[te]))
        state.step(P)
    return state


@pytest.mark.parametrize("chain", [{}, BINARY])
@pytest.mark.parametrize("k", [2, 3])
def test_out_of_fold_state_matches_the_procedure_written_out(k, chain):
    X, Y = _toy()
    m = XDCC(chain_length=3, propagation="out_of_fold", propagation_folds=k, **KW,
             **chain).fit(X, Y)
    ref = _naive_out_of_fold_state(m, X, Y, k)
    np.testing.assert_array_equal(m.train_state_.frozen, ref.frozen)
    np.testing.assert_array_equal(m.train_state_.values, ref.values)
    np.testing.assert_allclose(m.train_state_.prob_at, ref.prob_at, rtol=0, atol=1e-12)


def test_prediction_boosters_are_fit_on_all_rows():
    """Round 1 sees no label-feature yet, so its booster is the in-sample one; later
    boosters see the out-of-fold label-features of the training rows."""
    X, Y = _toy()
    a = XDCC(chain_length=3, **KW).fit(X, Y)
    b = XDCC(chain_length=3, propagation="out_of_fold", **KW).fit(X, Y)
    Xa = augment(X, np.full(Y.shape, np.nan))
    np.testing.assert_array_equal(a.ensembles_[0].decision_function(Xa),
                                  b.ensembles_[0].decision_function(Xa))
    assert len(b.ensembles_) == 3
    assert b.predict(X).shape == Y.shape


def test_out_of_fold_is_deterministic_under_a_seed():
    X, Y = _toy()
    p1 = XDCC(propagation="out_of_fold", random_state=3, **KW).fit(X, Y).predict_proba(X)
    p2 = XDCC(propagation="out_of_fold", random_state=3, **KW).fit(X, Y).predict_proba(X)
    np.testing.assert_array_equal(p1, p2)


def test_out_of_fold_training_propagation_is_as_wrong_as_on_test(mulan_dir):
    """The point of the option, on emotions: in-sample propagation is almost always
    right on the training rows (far more than on test rows); out-of-fold propagation
    is right about as often on both."""
    tr = mlw.load_dataset(mulan_dir / "emotions-train.arff")
    te = mlw.load_dataset(mulan_dir / "emotions-test.arff")
    Ytr = np.asarray(tr.Y.toarray() if hasattr(tr.Y, "toarray") else tr.Y)
    Yte = np.asarray(te.Y.toarray() if hasattr(te.Y, "toarray") else te.Y)
    kw = dict(n_estimators=30, max_depth=4, learning_rate=0.3)

    def accuracy(state, Y):
        f = state.frozen == 1
        return float(((state.values == 1.0) == (Y == 1))[f].mean())

    acc = {}
    for mode in ("in_sample", "out_of_fold"):
        m = XDCC(propagation=mode, **kw).fit(tr.X, Ytr)
        acc[mode] = (accuracy(m.train_state_, Ytr),
                     accuracy(m._final(m._validate_X(te.X, reset=False)), Yte))
    in_tr, in_te = acc["in_sample"]
    oof_tr, oof_te = acc["out_of_fold"]
    assert in_tr - in_te > 0.1          # in-sample: optimistic training label-features
    assert abs(oof_tr - oof_te) < 0.05  # out-of-fold: as reliable as at test time
    assert oof_tr < in_tr


@pytest.mark.parametrize("kw, msg", [
    (dict(propagation="oof"),
     "parameter 'propagation' must be a string one of 'in_sample', 'out_of_fold', got 'oof'"),
    (dict(propagation="out_of_fold", propagation_folds=1),
     "parameter 'propagation_folds' must be an integer >= 2, got 1"),
    (dict(propagation="out_of_fold", propagation_folds=2.5),
     "parameter 'propagation_folds' must be an integer >= 2, got 2.5"),
    (dict(propagation="out_of_fold", propagation_folds=500), "more than the 150"),
])
def test_bad_propagation_settings_are_clear_errors(kw, msg):
    X, Y = _toy()
    with pytest.raises(ValueError, match=msg):
        XDCC(**KW, **kw).fit(X, Y)


def test_cli_param_reaches_the_learner():
    params = {p.name: p for p in mlw.list_learners()["xdcc"].params}
    assert params["propagation"].default == "in_sample"
    assert params["propagation_folds"].doc
    m = mlw.get_learner("xdcc", propagation="out_of_fold", propagation_folds=3)
    assert (m.propagation, m.propagation_folds) == ("out_of_fold", 3)
