"""scikit-learn conventions (clone, GridSearchCV with a multi-label scorer, pickling),
registration, and one-line errors for bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from baselines_testdata import correlated
from sklearn.base import clone
from sklearn.metrics import f1_score, make_scorer
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

import mlw
from mlw_baselines import (
    BinaryRelevance,
    ClassifierChain,
    LabelPowerset,
    ProbabilisticClassifierChain,
)

ALL = [BinaryRelevance, ClassifierChain, LabelPowerset, ProbabilisticClassifierChain]
NAMES = {"br": BinaryRelevance, "cc": ClassifierChain, "lp": LabelPowerset,
         "pcc": ProbabilisticClassifierChain}


@pytest.fixture(scope="module")
def data():
    X, Y = correlated(n=120, d=5, L=3, seed=12)
    return X, Y


def test_registered_with_every_parameter_documented_and_tags():
    learners = mlw.list_learners()
    for name, cls in NAMES.items():
        spec = learners[name]
        assert spec.load() is cls
        assert all(p.doc.strip() for p in spec.params), name
        assert spec.tags.sparse_input and spec.tags.predicts_scores
        assert spec.tags.joint == cls._joint_prediction
        assert spec.tags.log_proba == hasattr(cls, "log_proba_of")
    owner = mlw.list_plugins()
    assert any(p.name == "baselines" and p.status == "ok" for p in owner)


@pytest.mark.parametrize("cls", ALL)
def test_clone_keeps_parameters_and_drops_fitted_state(data, cls):
    X, Y = data
    model = cls(base_estimator="decision_tree", random_state=3).fit(X, Y)
    twin = clone(model)
    assert twin.get_params() == model.get_params()
    assert not hasattr(twin, "n_labels_")
    np.testing.assert_array_equal(twin.fit(X, Y).predict(X), model.predict(X))


@pytest.mark.parametrize("cls", ALL)
def test_pickle_round_trip(data, cls):
    X, Y = data
    model = cls().fit(X, Y)
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    np.testing.assert_allclose(back.predict_proba(X), model.predict_proba(X))
    if hasattr(model, "log_proba_of"):
        np.testing.assert_allclose(back.log_proba_of(X, Y), model.log_proba_of(X, Y))


def test_grid_search_with_a_multilabel_scorer(data):
    X, Y = data
    scorer = make_scorer(f1_score, average="micro", zero_division=0)
    grid = GridSearchCV(
        ClassifierChain(),
        {"base_estimator": ["logistic_regression", "decision_tree"],
         "order": [None, [2, 1, 0]]},
        scoring=scorer, cv=KFold(3, shuffle=True, random_state=0))
    grid.fit(X, Y)
    assert set(grid.best_params_) == {"base_estimator", "order"}
    assert grid.cv_results_["mean_test_score"].shape == (4,)
    assert 0 < grid.best_score_ <= 1
    assert grid.predict(X).shape == Y.shape
    scores = cross_val_score(BinaryRelevance(threshold="pcut"), X, Y, scoring=scorer, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0)


@pytest.mark.parametrize("cls", ALL)
def test_wrong_feature_count_at_predict(data, cls):
    X, Y = data
    model = cls().fit(X, Y)
    with pytest.raises(ValueError, match="has 4 features, but the model was fitted with 5"):
        model.predict(X[:, :4])
    with pytest.raises(ValueError, match="features"):
        model.predict_proba(np.hstack([X, X]))


@pytest.mark.parametrize("cls", ALL)
def test_bad_base_estimator(data, cls):
    X, Y = data
    with pytest.raises(ValueError, match=r"base_estimator 'svm' is not a known shortcut; "
                                         r"use one of logistic_regression, decision_tree"):
        cls(base_estimator="svm").fit(X, Y)
    with pytest.raises(ValueError, match="base_estimator must be None, a shortcut name"):
        cls(base_estimator=42).fit(X, Y)


@pytest.mark.parametrize("name", ["br", "cc", "lp", "pcc"])
def test_log_proba_of_rejects_bad_label_matrices(data, name):
    X, Y = data
    model = mlw.get_learner(name).fit(X, Y)
    with pytest.raises(ValueError, match="labels, expected 3"):
        model.log_proba_of(X, Y[:, :2])
    with pytest.raises(ValueError, match="rows but X has"):
        model.log_proba_of(X, Y[:10])
    with pytest.raises(ValueError, match="only 0 and 1"):
        model.log_proba_of(X, Y * 2)


def test_unfitted_learner_refuses_to_predict(data):
    from sklearn.exceptions import NotFittedError

    X, _ = data
    for cls in ALL:
        with pytest.raises(NotFittedError):
            cls().predict(X)
    with pytest.raises(NotFittedError):
        ClassifierChain().log_proba_of(X, np.zeros((X.shape[0], 3)))


def test_get_learner_with_cli_style_string_parameters(data):
    X, Y = data
    model = mlw.get_learner("pcc", base_estimator="decision_tree", beam_width=4,
                            max_exact_labels=2)
    model.fit(X, Y)
    assert model.inference_ == "beam"
    with pytest.raises(ValueError, match="has no parameter 'beam'"):
        mlw.get_learner("pcc", beam=3)


@pytest.mark.parametrize("name, inner", [("cc", "_greedy"), ("pcc", "_infer"),
                                         ("lp", "_class_proba")])
def test_joint_learners_predict_decision_and_scores_in_one_pass(name, inner, monkeypatch):
    """predict_with_scores (what evaluation calls) runs the chain / the inference / the
    multi-class classifier once, and gives what predict and predict_proba give."""
    X, Y = correlated(n=120, d=5, L=3, seed=3)
    learner = mlw.get_learner(name).fit(X, Y)
    expected = learner.predict(X), learner.predict_proba(X)
    cls = type(learner)
    original = getattr(cls, inner)
    calls = []

    def counted(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, inner, counted)
    Y_pred, scores = learner.predict_with_scores(X)
    assert len(calls) == 1
    np.testing.assert_array_equal(Y_pred, expected[0])
    np.testing.assert_allclose(scores, expected[1])
