"""mlw learners under scikit-learn's conventions, with the baselines plugin: clone,
get/set_params, Pipeline, GridSearchCV with a multi-label scorer, cross_val_score,
pickling and model files."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score, hamming_loss, make_scorer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import mlw
from mlw import IterativeStratifiedKFold

BASELINES = ["br", "cc", "lp", "pcc"]
FAST = {"base_estimator": "decision_tree"}  # keeps these tests quick on a loaded machine


@pytest.fixture(scope="module")
def emotions() -> tuple[mlw.Dataset, mlw.Dataset]:
    return mlw.load_dataset("emotions", split="train"), mlw.load_dataset("emotions",
                                                                         split="test")


@pytest.fixture(autouse=True)
def _baselines_installed() -> None:
    if "br" not in mlw.list_learners():
        pytest.fail("the baselines plugin (mlw-baselines) is not installed: "
                    "pip install -e plugins/baselines")


@pytest.mark.parametrize("name", BASELINES)
def test_clone_get_set_params(name) -> None:
    learner = mlw.get_learner(name, **FAST)
    assert is_classifier(learner)
    params = learner.get_params()
    twin = clone(learner)
    assert twin is not learner and twin.get_params() == params
    assert set(params) == set(mlw.list_learners()[name].signature_params())
    twin.set_params(random_state=7)
    assert twin.get_params()["random_state"] == 7 and learner.get_params()["random_state"] == 0
    assert learner.__sklearn_tags__().classifier_tags.multi_label


@pytest.mark.parametrize("name", BASELINES)
def test_fit_returns_self_and_fitted_state_ends_in_underscore(name, emotions) -> None:
    train, test = emotions
    learner = mlw.get_learner(name, **FAST)
    with pytest.raises(NotFittedError):
        learner.predict(test.X)
    before = set(vars(learner))
    assert learner.fit(train.X, train.Y) is learner
    new = set(vars(learner)) - before
    # public fitted state ends in "_"; private helpers ("_index") are allowed, as in sklearn
    assert new and all(a.endswith("_") or a.startswith("_") for a in new), sorted(new)
    assert set(learner.get_params()) <= before
    P = learner.predict(test.X)
    S = learner.predict_proba(test.X)
    assert P.shape == S.shape == test.Y.shape
    assert set(np.unique(P)) <= {0, 1} and S.min() >= 0 and S.max() <= 1
    with pytest.raises(ValueError, match="has 5 features, but the model was fitted with 72"):
        learner.predict(test.X[:, :5])


@pytest.mark.parametrize("name", BASELINES)
def test_pickle_and_model_file_keep_predictions(name, emotions, tmp_path) -> None:
    train, test = emotions
    learner = mlw.get_learner(name, **FAST).fit(train.X, train.Y)
    expected = learner.predict(test.X)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(learner)).predict(test.X), expected)
    path = mlw.save_model(learner, tmp_path / f"{name}.mlw")
    header = mlw.read_header(path)
    assert header["learner"] == name and header["learner_distribution"] == "mlw-baselines"
    np.testing.assert_array_equal(mlw.load_model(path).predict(test.X), expected)


def test_grid_search_over_br_with_a_multilabel_scorer(emotions) -> None:
    train, _ = emotions
    grid = GridSearchCV(
        mlw.get_learner("br"),
        {"threshold": ["fixed", "pcut"],
         "base_estimator": [make_pipeline(StandardScaler(), LogisticRegression(C=c,
                                                                                max_iter=300))
                            for c in (0.01, 1.0)]},
        scoring=make_scorer(f1_score, average="micro"),
        cv=IterativeStratifiedKFold(n_splits=3, seed=0),
    )
    grid.fit(train.X, train.Y)
    assert len(grid.cv_results_["params"]) == 4
    assert grid.best_params_["threshold"] in ("fixed", "pcut")
    scores = grid.cv_results_["mean_test_score"]
    assert np.all((scores > 0.3) & (scores <= 1.0)), scores
    assert grid.best_score_ == pytest.approx(scores.max())
    assert grid.best_estimator_.predict(train.X[:10]).shape == (10, 6)


def test_cross_val_score_matches_mlw_cross_validate(emotions) -> None:
    train, _ = emotions
    learner = mlw.get_learner("cc", **FAST)
    sk = -cross_val_score(learner, train.X, train.Y, cv=IterativeStratifiedKFold(4, seed=2),
                          scoring=make_scorer(hamming_loss, greater_is_better=False))
    ours = mlw.cross_validate(learner, train, k=4, seed=2, metrics=["hamming_loss"])
    np.testing.assert_allclose(sk, [f.metrics["hamming_loss"] for f in ours.folds])


def test_pipeline_with_a_scaler(emotions) -> None:
    train, test = emotions
    pipe = make_pipeline(StandardScaler(), mlw.get_learner("br", threshold="pcut"))
    pipe.fit(train.X, train.Y)
    f1 = f1_score(test.Y, pipe.predict(test.X), average="micro")
    assert f1 > 0.5  # BR + logistic regression on emotions: about 0.6
