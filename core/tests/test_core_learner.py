"""The MultiLabelLearner base class: scikit-learn conventions, validation, thresholds."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import mlw
from mlw.thresholds import FixedThreshold


class ScoreLearner(mlw.MultiLabelLearner):
    """Score of label j = the sigmoid of feature j (so scores are easy to reason about)."""

    def __init__(self, threshold="fixed", scale: float = 1.0) -> None:
        self.threshold = threshold
        self.scale = scale

    def _fit(self, X, Y):
        self.fit_was_sparse_ = sp.issparse(X)
        self.fit_labels_sparse_ = sp.issparse(Y)

    def _predict_proba(self, X):
        X = X.toarray() if sp.issparse(X) else X
        return 1.0 / (1.0 + np.exp(-self.scale * X[:, : self.n_labels_]))


class JointLearner(mlw.MultiLabelLearner):
    _joint_prediction = True

    def _fit(self, X, Y):
        self.mode_ = (np.asarray(Y.mean(axis=0)).ravel() >= 0.5).astype(np.uint8)

    def _predict(self, X):
        return np.tile(self.mode_, (X.shape[0], 1))


X = np.array([[2.0, -2.0, 0.1], [-1.0, 3.0, -0.1], [0.5, 0.5, 4.0], [-3.0, -3.0, 0.0]])
Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 0]])


def test_fit_sets_the_documented_attributes() -> None:
    model = ScoreLearner().fit(X, Y)
    assert (model.n_features_in_, model.n_labels_) == (3, 3)
    assert model.label_cardinality_ == pytest.approx(6 / 4)
    assert [list(c) for c in model.classes_] == [[0, 1]] * 3
    assert isinstance(model.threshold_, FixedThreshold)
    np.testing.assert_array_equal(model.predict(X), (X >= 0).astype(np.uint8))


def test_sparse_input_reaches_fit_sparse() -> None:
    model = ScoreLearner().fit(sp.csr_matrix(X), sp.csr_matrix(Y))
    assert model.fit_was_sparse_ and model.fit_labels_sparse_ and model.sparse_labels_


@pytest.mark.parametrize("choice", ["pcut", "cardinality", "one_threshold",
                                    FixedThreshold(0.9)])
def test_threshold_by_name_or_object_is_fitted_on_a_copy(choice) -> None:
    model = ScoreLearner(threshold=choice).fit(X, Y)
    assert model.threshold_ is not choice
    assert model.predict(X).shape == Y.shape
    if isinstance(choice, FixedThreshold):
        assert not hasattr(choice, "threshold_")  # the given object is never fitted
        np.testing.assert_array_equal(model.predict(X), (model.predict_proba(X) >= 0.9))


def test_bad_threshold_choices() -> None:
    with pytest.raises(mlw.UnknownNameError, match="unknown threshold 'pcutt'; did you mean"):
        ScoreLearner(threshold="pcutt").fit(X, Y)
    with pytest.raises(ValueError, match="threshold must be a registered strategy name"):
        ScoreLearner(threshold=0.5).fit(X, Y)


def test_joint_learner_ignores_thresholds_and_predicts_its_decision() -> None:
    model = JointLearner().fit(X, Y)
    assert not hasattr(model, "threshold_")
    np.testing.assert_array_equal(model.predict(X[:2]), [[1, 1, 1], [1, 1, 1]])  # 2/4 >= 0.5


def test_unfitted_learner_raises_what_check_is_fitted_raises() -> None:
    # every public entry point of an unfitted learner raises scikit-learn's exception
    # with scikit-learn's message
    from sklearn.utils.validation import check_is_fitted

    with pytest.raises(NotFittedError) as sk:
        check_is_fitted(ScoreLearner(), "n_labels_")
    for call in ("predict", "predict_proba", "predict_with_scores"):
        with pytest.raises(NotFittedError) as ours:
            getattr(ScoreLearner(), call)(X)
        assert str(ours.value) == str(sk.value)


def test_validation_errors_are_one_line() -> None:
    with pytest.raises(NotFittedError):
        ScoreLearner().predict(X)
    with pytest.raises(ValueError, match="Y: has 3 rows but X has 4"):
        ScoreLearner().fit(X, Y[:3])
    with pytest.raises(ValueError, match="cannot fit on an empty dataset"):
        ScoreLearner().fit(X[:0], Y[:0])
    with pytest.raises(ValueError, match="contains NaN"):
        ScoreLearner().fit(np.where(X > 3, np.nan, X), Y)
    model = ScoreLearner().fit(X, Y)
    with pytest.raises(ValueError, match="has 2 features, but the model was fitted with 3"):
        model.predict(X[:, :2])


def test_clone_and_params() -> None:
    model = ScoreLearner(threshold="pcut", scale=2.0)
    assert clone(model).get_params() == {"threshold": "pcut", "scale": 2.0}
    assert repr(model) == "ScoreLearner(scale=2.0, threshold='pcut')"
    tags = model.__sklearn_tags__()
    assert tags.classifier_tags.multi_label and tags.input_tags.sparse


def test_evaluation_computes_a_thresholded_learners_scores_once() -> None:
    """predict + predict_proba in evaluation used to score the test set twice."""
    from mlw.model_selection import evaluate_fitted

    calls = {"n": 0}

    class Counting(ScoreLearner):
        def _predict_proba(self, X):
            calls["n"] += 1
            return super()._predict_proba(X)

    model = Counting().fit(X, Y)
    calls["n"] = 0
    Y_pred, scores = model.predict_with_scores(X)
    np.testing.assert_array_equal(Y_pred, model.predict(X))
    np.testing.assert_array_equal(scores, model.predict_proba(X))
    calls["n"] = 0
    values, _ = evaluate_fitted(model, X, Y, metrics=["hamming_loss", "log_loss"])
    assert calls["n"] == 1
    assert values["hamming_loss"] == mlw.evaluate(Y, model.predict(X),
                                                  metrics=["hamming_loss"])["hamming_loss"]
    joint = JointLearner().fit(X, Y)
    Y_joint, no_scores = joint.predict_with_scores(X)
    assert no_scores is None
    np.testing.assert_array_equal(Y_joint, joint.predict(X))


def test_scores_fit_computed_anyway_tune_the_threshold_and_are_dropped() -> None:
    """``_fit`` may leave ``_fit_scores``: the threshold is tuned on them (no second
    pass over the training rows), they are checked like any scores, and fit drops
    them so they never reach a model file."""
    calls = {"n": 0}

    class Leaves(ScoreLearner):
        def _fit(self, X, Y):
            super()._fit(X, Y)
            self._fit_scores = 1.0 / (1.0 + np.exp(-self.scale * X[:, :3]))

        def _predict_proba(self, X):
            calls["n"] += 1
            return super()._predict_proba(X)

    model = Leaves(threshold="cardinality").fit(X, Y)
    assert calls["n"] == 0 and "_fit_scores" not in vars(model)
    again = ScoreLearner(threshold="cardinality").fit(X, Y)
    np.testing.assert_array_equal(model.predict(X), again.predict(X))
    assert "_fit_scores" not in vars(Leaves(threshold=None).fit(X, Y))

    class Broken(Leaves):
        def _fit(self, X, Y):
            self._fit_scores = np.full((X.shape[0], 3), np.nan)

    with pytest.raises(mlw.PluginError):
        Broken(threshold="cardinality").fit(X, Y)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("allow_nan", [False, True])
def test_check_x_finiteness_agrees_with_the_per_value_check(fmt, allow_nan) -> None:
    """check_X proves finiteness by one sum and checks value by value only when the sum
    is not finite: it must refuse exactly what the per-value check refuses, including
    huge finite values whose sum overflows (accepted, and without a warning)."""
    import warnings

    from mlw.validation import check_X

    rng = np.random.default_rng(0)
    cases = {"plain": rng.normal(size=(30, 7)), "overflow": np.full((30, 7), 1e308),
             "mixed_signs": np.tile([1e308, -1e308], (30, 4))}
    for bad, value in (("nan", np.nan), ("inf", np.inf), ("-inf", -np.inf)):
        A = rng.normal(size=(30, 7))
        A[rng.integers(30), rng.integers(7)] = value
        cases[bad] = A
    both = rng.normal(size=(30, 7))
    both[1, 1], both[2, 2] = np.nan, np.inf
    cases["nan_and_inf"] = both
    for name, A in cases.items():
        M = sp.csr_matrix(A) if fmt == "csr" else A
        if np.isinf(A).any():
            expected = "infinite"
        elif np.isnan(A).any() and not allow_nan:
            expected = "NaN"
        else:
            expected = None
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            if expected is None:
                out = check_X(M, allow_nan=allow_nan)
                assert out.shape == A.shape, name
            else:
                with pytest.raises(ValueError, match=expected):
                    check_X(M, allow_nan=allow_nan)
