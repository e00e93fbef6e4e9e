"""The registered learners: plugin registration, determinism, bad input, sparse input
without densifying, sklearn conventions, real data."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import mlw
from mlw_xdcc import BRXGB, CCXGB, MLXGB, XDCC

ALL = (MLXGB, BRXGB, CCXGB, XDCC)


def _toy(n=160, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    Y = np.c_[X[:, 0] > 0, X[:, 1] > 0.3, (X[:, 0] + X[:, 2]) > 0.5].astype(np.uint8)
    return X, Y


def test_registered_with_tags():
    learners = mlw.list_learners()
    for name in ("xdcc", "ml_xgb", "br_xgb", "cc_xgb"):
        assert name in learners
    assert learners["xdcc"].tags.joint and not learners["ml_xgb"].tags.joint
    assert learners["cc_xgb"].tags.log_proba
    assert all(learners[n].tags.allow_nan for n in ("xdcc", "ml_xgb", "br_xgb", "cc_xgb"))
    m = mlw.get_learner("xdcc", n_estimators=5)
    assert isinstance(m, XDCC) and m.n_estimators == 5


@pytest.mark.parametrize("cls", ALL)
def test_deterministic_under_seed(cls):
    X, Y = _toy()
    kw = dict(n_estimators=8, max_depth=3, subsample=0.7, colsample_bytree=0.6)
    a = cls(random_state=3, **kw).fit(X, Y).predict_proba(X)
    b = cls(random_state=3, **kw).fit(X, Y).predict_proba(X)
    c = cls(random_state=4, **kw).fit(X, Y).predict_proba(X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("cls", ALL)
def test_bad_input(cls):
    X, Y = _toy()
    Xn = X.copy()
    Xn[::7, 1] = np.nan                    # NaN is a missing value: accepted
    m = cls(n_estimators=4, max_depth=2).fit(Xn, Y)
    assert m.predict(Xn).shape == Y.shape
    Xi = X.copy()
    Xi[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        cls(n_estimators=2).fit(Xi, Y)
    with pytest.raises(ValueError, match="infinite"):
        m.predict(Xi)
    with pytest.raises(ValueError, match="features"):
        m.predict(X[:, :4])
    with pytest.raises(ValueError, match="split"):
        cls(n_estimators=2, split="gini").fit(X, Y)
    with pytest.raises(ValueError, match="max_depth"):
        cls(max_depth=-1).fit(X, Y)


def test_xdcc_bad_chain_length():
    X, Y = _toy()
    with pytest.raises(ValueError, match="chain_length"):
        XDCC(chain_length=0).fit(X, Y)
    assert XDCC(n_estimators=2, chain_length=99).fit(X, Y).chain_length_ == Y.shape[1]


@pytest.mark.parametrize("cls", ALL)
def test_csr_equals_dense_with_missing(cls):
    """CSR input is never densified: an absent entry is missing, exactly like NaN in the
    dense matrix, so both give the same model."""
    rng = np.random.default_rng(5)
    X, Y = _toy()
    X[rng.random(X.shape) < 0.5] = 0.0
    S = sp.csr_matrix(X)                  # zeros are absent
    D = np.where(X == 0.0, np.nan, X)     # ... i.e. missing
    kw = dict(n_estimators=6, max_depth=3)
    a = cls(**kw).fit(S, Y)
    b = cls(**kw).fit(D, Y)
    np.testing.assert_allclose(a.predict_proba(S), b.predict_proba(D), rtol=1e-12)
    np.testing.assert_array_equal(a.predict(S), b.predict(D))


def test_sklearn_clone_and_sparse_labels():
    X, Y = _toy()
    m = clone(XDCC(n_estimators=3, chain_length=2))
    assert m.get_params()["chain_length"] == 2
    m.fit(X, sp.csr_matrix(Y))
    assert m.predict(X).shape == Y.shape


def test_ml_xgb_inspectable_trees():
    X, Y = _toy()
    m = MLXGB(n_estimators=3, max_depth=2).fit(X, Y)
    t = m.ensemble_.tree(0)
    internal = t["left"] >= 0
    assert internal[0] and t["value"].shape[1] == Y.shape[1]
    assert np.all(t["feature"][internal] >= 0) and np.all(t["gain"][internal] > 0)
    np.testing.assert_allclose(m.decision_function(X)[:, 0] > 0, m.predict_proba(X)[:, 0] > .5)


def test_real_data_emotions(mulan_dir):
    tr = mlw.load_dataset(mulan_dir / "emotions-train.arff")
    te = mlw.load_dataset(mulan_dir / "emotions-test.arff")
    res = {}
    for name in ("ml_xgb", "xdcc"):
        m = mlw.get_learner(name, n_estimators=30, max_depth=3, learning_rate=0.2).fit(tr.X,
                                                                                          tr.Y)
        res[name] = mlw.evaluate(te.Y, m.predict(te.X), scores=m.predict_proba(te.X),
                                 metrics=["hamming_loss", "f1_example"])
    # a 6-label problem where predicting all-zero scores hamming 0.31 and F1 0
    for r in res.values():
        assert r["hamming_loss"] < 0.25 and r["f1_example"] > 0.5


def test_sparse_text_enron_stays_sparse(mulan_dir, monkeypatch):
    tr = mlw.load_dataset(mulan_dir / "enron-train.arff")
    assert sp.issparse(tr.X)
    Y = np.asarray(tr.Y.todense() if sp.issparse(tr.Y) else tr.Y)[:400]  # labels may be dense
    X = tr.X[:400]

    def no_dense(*a, **k):  # pragma: no cover - fails the test if called
        raise AssertionError("X was densified")

    monkeypatch.setattr(sp.csr_matrix, "toarray", no_dense)
    monkeypatch.setattr(sp.csr_matrix, "todense", no_dense)
    m = XDCC(n_estimators=5, max_depth=3, chain_length=2).fit(X, Y)
    assert m.predict(X).shape == Y.shape


@pytest.mark.parametrize("cls", ALL)
def test_pickle_round_trip(cls):
    import pickle

    X, Y = _toy()
    m = cls(n_estimators=4, max_depth=3).fit(X, Y)
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m2.predict(X), m.predict(X))
    np.testing.assert_array_equal(m2.predict_proba(X), m.predict_proba(X))


@pytest.mark.parametrize("cls", [XDCC, CCXGB])
def test_predict_with_scores_walks_the_chain_once(cls, monkeypatch):
    """The joint learners' decision and marginals come from one pass of the
    chain: as many booster evaluations as ``predict`` alone, and the same values."""
    from mlw_xdcc.booster import TreeEnsemble

    X, Y = _toy()
    m = cls(n_estimators=4, max_depth=3, **({"chain_length": 3} if cls is XDCC else {}))
    m.fit(X, Y)
    calls = []
    original = TreeEnsemble.decision_function

    def counting(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(TreeEnsemble, "decision_function", counting)
    D = m.predict(X)
    one_pass = len(calls)
    assert one_pass == 3           # three labels (CC) or three rounds (XDCC)
    calls.clear()
    P = m.predict_proba(X)
    calls.clear()
    D2, S = m.predict_with_scores(X)
    assert len(calls) == one_pass
    np.testing.assert_array_equal(D2, D)
    np.testing.assert_array_equal(S, P)


def test_booster_parameters_are_declared_once():
    """Every learner takes the same booster parameters, with the same defaults
    and documentation, from one declaration (BoosterParams)."""
    import dataclasses
    import inspect

    from mlw.docstrings import parameter_docs
    from mlw_xdcc import BoosterParams

    booster = {f.name: f.default for f in dataclasses.fields(BoosterParams)}
    learners = mlw.list_learners()
    for name, cls in (("xdcc", XDCC), ("ml_xgb", MLXGB), ("br_xgb", BRXGB), ("cc_xgb", CCXGB)):
        sig = inspect.signature(cls).parameters
        assert {k: sig[k].default for k in booster} == booster, name
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in sig.values()), name
        spec = learners[name]
        docs = {p.name: p.doc for p in spec.params}
        assert all(docs.values()), name
        # the booster's parameters are documented once, on BoosterParams
        assert all(docs[k] == parameter_docs(BoosterParams)[k] for k in booster), name
        assert repr(cls(max_depth=3)) == f"{cls.__name__}(max_depth=3)"


@pytest.mark.parametrize(("param", "value", "message"), [
    ("n_estimators", 0, "parameter 'n_estimators' must be an integer >= 1, got 0"),
    ("learning_rate", 0.0, "parameter 'learning_rate' must be a number > 0, got 0.0"),
    ("subsample", 1.5, "parameter 'subsample' must be a number > 0 and <= 1, got 1.5"),
    ("split", "max", "parameter 'split' must be a string one of 'sum_gain'"),
    ("max_bin", 1, "parameter 'max_bin' must be an integer >= 2 and <= 65535, got 1"),
])
def test_booster_parameter_checks(param, value, message):
    X, Y = _toy(40)
    for cls in ALL:
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            cls(**{"n_estimators": 2, param: value}).fit(X, Y)


@pytest.mark.parametrize("cls", [MLXGB, BRXGB])
def test_threshold_is_tuned_on_the_final_training_margins(cls):
    """fit_ensemble's final training margins are the training rows' scores: the
    default threshold is tuned on them, equal to tuning on predict_proba(X)."""
    from mlw.learner import fit_threshold
    from mlw.thresholds import DEFAULT_THRESHOLD

    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 6))
    X[rng.random(X.shape) < 0.1] = np.nan
    Y = (X[:, :3] > 0).astype(np.uint8)
    for data in (X, sp.csr_matrix(np.nan_to_num(X))):
        model = cls(n_estimators=8, max_depth=3, subsample=0.8).fit(data, Y)
        assert "_fit_scores" not in vars(model)
        again = fit_threshold(DEFAULT_THRESHOLD, lambda m=model, d=data: m.predict_proba(d), Y)
        S = model.predict_proba(data)
        np.testing.assert_array_equal(model.threshold_.predict(S), again.predict(S))
