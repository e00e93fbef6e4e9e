"""The ensemble and kNN learners (rakel, ecc, epcc, homer, mlknn, brknn, iblr) under
scikit-learn's conventions and on real data's quirks: registration with documented
parameters, clone, pickle, GridSearchCV, one-line errors, constant labels, and CSR
enron kept sparse."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from baselines_testdata import SparseOnlyLR, correlated
from sklearn.base import clone
from sklearn.metrics import f1_score, make_scorer
from sklearn.model_selection import GridSearchCV, KFold

import mlw
from mlw_baselines import (
    HOMER,
    IBLR,
    BRkNN,
    EnsembleOfClassifierChains,
    EnsembleOfProbabilisticClassifierChains,
    MLkNN,
    RandomKLabelsets,
)

SMALL = {  # name -> (class, small parameters that keep the tests fast)
    "rakel": (RandomKLabelsets, {"labelset_size": 2}),
    "ecc": (EnsembleOfClassifierChains, {"n_estimators": 3}),
    "epcc": (EnsembleOfProbabilisticClassifierChains, {"n_estimators": 3}),
    "homer": (HOMER, {"n_clusters": 2}),
    "mlknn": (MLkNN, {"k": 5}),
    "brknn": (BRkNN, {"k": 5}),
    "iblr": (IBLR, {"k": 5}),
}


@pytest.fixture(scope="module")
def data():
    X, Y = correlated(n=90, d=5, L=4, seed=21)
    return X, Y


def test_registered_with_every_parameter_documented():
    learners = mlw.list_learners()
    for name, (cls, _) in SMALL.items():
        spec = learners[name]
        assert spec.load() is cls
        assert spec.tags == mlw.LearnerTags.of(cls)
        assert all(p.doc.strip() for p in spec.params), name
        assert spec.description.strip()


@pytest.mark.parametrize("name", sorted(SMALL))
def test_clone_pickle_and_predict_with_scores(data, name):
    X, Y = data
    cls, params = SMALL[name]
    model = cls(**params).fit(X, Y)
    twin = clone(model)
    assert twin.get_params() == model.get_params() and not hasattr(twin, "n_labels_")
    np.testing.assert_array_equal(twin.fit(X, Y).predict(X), model.predict(X))
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    np.testing.assert_allclose(back.predict_proba(X), model.predict_proba(X))
    P, S = model.predict_with_scores(X)
    np.testing.assert_array_equal(P, model.predict(X))
    np.testing.assert_allclose(S, model.predict_proba(X))
    assert S.shape == Y.shape and np.all((S >= 0) & (S <= 1))
    with pytest.raises(ValueError, match="has 4 features, but the model was fitted with 5"):
        model.predict(X[:, :4])


def test_grid_search(data):
    X, Y = data
    scorer = make_scorer(f1_score, average="micro", zero_division=0)
    for estimator, grid in ((MLkNN(), {"k": [3, 7], "metric": ["euclidean", "cosine"]}),
                            (RandomKLabelsets(), {"mode": ["overlapping", "disjoint"]})):
        search = GridSearchCV(estimator, grid, scoring=scorer,
                              cv=KFold(3, shuffle=True, random_state=0)).fit(X, Y)
        assert 0 < search.best_score_ <= 1 and search.predict(X).shape == Y.shape


@pytest.mark.parametrize("name", sorted(SMALL))
def test_constant_labels(name):
    X, Y = correlated(n=80, d=4, L=4, seed=9)
    Y = Y.copy()
    Y[:, 1] = 0
    Y[:, 3] = 1
    cls, params = SMALL[name]
    model = cls(**params).fit(X, Y)
    P, S = model.predict(X), model.predict_proba(X)
    assert np.all(P[:, 1] == 0) and np.all(P[:, 3] == 1), name
    assert np.all(np.isfinite(S))
    if hasattr(model, "log_proba_of"):
        assert np.all(np.isfinite(model.log_proba_of(X, Y)))


def test_enron_slice_stays_sparse(mulan_dir):
    tr = mlw.load_dataset(mulan_dir / "enron-train.arff")
    te = mlw.load_dataset(mulan_dir / "enron-test.arff")
    Xtr, Ytr, Xte, Yte = tr.X[:250], tr.Y[:250, :6], te.X[:100], te.Y[:100, :6]
    assert sp.issparse(Xtr) and sp.issparse(Ytr)
    sparse_lr = SparseOnlyLR(max_iter=1000)
    for name, (cls, params) in SMALL.items():
        kwargs = dict(params)
        if "base_estimator" in cls().get_params():
            kwargs["base_estimator"] = sparse_lr
        if "metric" in cls().get_params():
            kwargs["metric"] = "cosine"
        if cls is IBLR:  # IBLR-ML+: [X, phi] as CSR (plain IBLR sees only the dense phi)
            kwargs["add_features"] = True
        model = cls(**kwargs).fit(Xtr, Ytr)
        P, S = model.predict_with_scores(Xte)
        assert P.shape == S.shape == (100, 6), name
        if hasattr(model, "index_"):
            assert model.index_.sparse, name
        scores = mlw.evaluate(Yte, P, scores=S, metrics=["hamming_loss"])
        assert 0 <= scores["hamming_loss"] < 0.5, name
