"""Every registered learner's fitted model is saved and loaded through the safe model
format with nothing but what its plugin declares (LearnerSpec.model_types), so a plugin
that forgets a model-state type fails here, not in a user's mlw predict."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mlw
from mlw.persistence import ModelTrustWarning, untrusted_types

LEARNERS = sorted(mlw.list_learners())
#: Smaller ensembles keep the test quick; the state's types do not depend on the size.
FAST = {"n_estimators": 3, "n_rounds": 3, "max_components": 2, "n_components": 2}


@pytest.fixture(scope="module")
def data():
    train = mlw.load_dataset("emotions")
    return train.X[:80], train.Y[:80]


def _fitted(name, data, **params):
    spec = mlw.list_learners()[name]
    sig = spec.signature_params()
    kw = {k: v for k, v in FAST.items() if k in sig}
    kw.update(params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mlw.get_learner(name, **kw).fit(*data)


@pytest.mark.parametrize("name", LEARNERS)
def test_model_state_is_declared_and_round_trips(name, data, tmp_path) -> None:
    model = _fitted(name, data)
    assert untrusted_types(model) == [], "add these to the plugin's LearnerSpec.model_types"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelTrustWarning)
        path = mlw.save_model(model, tmp_path / f"{name}.mlw")
    back = mlw.load_model(path)
    assert type(back) is type(model)
    X = data[0][:20]
    np.testing.assert_array_equal(_dense(back.predict(X)), _dense(model.predict(X)))


def _dense(Y):
    return np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y)


@pytest.mark.parametrize("base", ["decision_tree", "random_forest", "linear_svc",
                                  "bernoulli_nb"])
def test_baselines_shortcut_classifiers_are_declared(base, data) -> None:
    assert untrusted_types(_fitted("br", data, base_estimator=base)) == []


def test_an_undeclared_base_estimator_needs_trusted(data, tmp_path) -> None:
    from sklearn.neighbors import KNeighborsClassifier

    model = _fitted("br", data, base_estimator=KNeighborsClassifier(n_neighbors=3))
    with pytest.warns(ModelTrustWarning, match="KNeighborsClassifier"):
        path = mlw.save_model(model, tmp_path / "knn.mlw")
    with pytest.raises(mlw.persistence.UntrustedModelError, match="KNeighborsClassifier"):
        mlw.load_model(path)
    back = mlw.load_model(path, trusted=["sklearn.neighbors:KNeighborsClassifier"])
    np.testing.assert_array_equal(back.predict(data[0][:5]), model.predict(data[0][:5]))
