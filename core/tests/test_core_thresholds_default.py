"""The core's default decision for learners whose method prescribes none:
``mlw.thresholds.DEFAULT_THRESHOLD``, cardinality matching with the adaptive top-label
rule, named in text so ``mlw fit`` and ``--json`` show it, and ``fixed`` one parameter
away."""

from __future__ import annotations

import numpy as np
import pytest

import mlw
from mlw.learner import make_threshold
from mlw.metrics import empty_prediction_rate, empty_rate
from mlw.model_selection import prepare_evaluation
from mlw.params import parse_value
from mlw.thresholds import DEFAULT_THRESHOLD, CardinalityMatching


class ShyLearner(mlw.MultiLabelLearner):
    """Scores the true labels at 0.2-0.45 and the others at 0-0.2, i.e. every row below
    a 0.5 cut (what an under-confident scorer does on low-density text)."""

    def __init__(self, threshold=DEFAULT_THRESHOLD, seed: int = 0) -> None:
        self.threshold = threshold
        self.seed = seed

    def _fit(self, X, Y) -> None:
        self.Y_ = np.asarray(Y)

    def _predict_proba(self, X):
        rng = np.random.default_rng(self.seed)
        rows = np.asarray(X[:, 0], dtype=int) % self.Y_.shape[0]
        Y = self.Y_[rows]
        return np.where(Y == 1, rng.uniform(0.2, 0.45, Y.shape), rng.uniform(0, 0.2, Y.shape))


def _data(n: int, L: int, empty: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    Y = np.zeros((n, L), np.uint8)
    for i in range(n):
        if rng.random() >= empty:
            Y[i, rng.choice(L, size=rng.integers(1, 3), replace=False)] = 1
    X = np.arange(n, dtype=float)[:, None]
    return X, Y


def test_the_default_is_a_registered_strategy_named_with_its_options() -> None:
    strategy, needs_scores = make_threshold(DEFAULT_THRESHOLD)
    assert isinstance(strategy, CardinalityMatching) and needs_scores
    assert strategy.top_label == "auto"
    assert make_threshold("fixed:top_label=auto")[0].top_label == "auto"
    assert parse_value("top_label", "auto", True) == "auto"
    with pytest.raises(ValueError, match="expected true or false$"):
        parse_value("cumulated", "auto", True)  # only the top-label rule takes auto


def test_the_default_is_shown_and_fixed_is_one_parameter_away() -> None:
    setup = prepare_evaluation(ShyLearner())
    assert setup.decision == f"threshold {DEFAULT_THRESHOLD}"
    assert prepare_evaluation(ShyLearner(), None, "fixed").decision == "threshold fixed"


def test_no_empty_rows_where_the_training_set_has_none() -> None:
    X, Y = _data(300, 20, empty=0.0)
    P = ShyLearner().fit(X, Y).predict(X)
    assert empty_rate(Y) == 0 and empty_prediction_rate(Y, P) == 0
    assert empty_prediction_rate(Y, ShyLearner(threshold="fixed").fit(X, Y).predict(X)) == 1


def test_empty_rows_stay_possible_where_they_are_real() -> None:
    X, Y = _data(300, 20, empty=0.3)
    model = ShyLearner().fit(X, Y)
    assert model.threshold_.top_label_ is False
    rate = empty_prediction_rate(Y, model.predict(X))
    assert 0 < rate <= 2 * empty_rate(Y)


class ShyJointLearner(ShyLearner):
    """A joint learner whose own decision is 'nothing', with a threshold parameter."""

    _joint_prediction = True

    def __init__(self, threshold=DEFAULT_THRESHOLD, seed: int = 0) -> None:
        super().__init__(threshold=threshold, seed=seed)

    def _predict(self, X):
        return np.zeros((X.shape[0], self.Y_.shape[1]), np.uint8)


def test_a_joint_learner_with_a_threshold_decides_on_its_marginals() -> None:
    X, Y = _data(200, 10, empty=0.0)
    model = ShyJointLearner().fit(X, Y)
    P, S = model.predict_with_scores(X)
    np.testing.assert_array_equal(P, model.predict(X))
    np.testing.assert_array_equal(P, model.threshold_.predict(S))
    assert empty_prediction_rate(Y, P) == 0
    own = ShyJointLearner(threshold=None).fit(X, Y)
    assert not hasattr(own, "threshold_") and own.predict(X).sum() == 0
    assert own.predict_with_scores(X)[0].sum() == 0
    assert prepare_evaluation(own).decision == "joint"
    assert prepare_evaluation(model).decision == f"threshold {DEFAULT_THRESHOLD}"
    assert prepare_evaluation(own, None, "fixed").decision == "threshold fixed"


def test_pcut_takes_the_same_adaptive_top_label_rule() -> None:
    """``pcut:top_label=auto`` (LaCovaC's default): Pcut's cut, then the top label for a
    row left empty, only where the training set has (almost) no empty label sets; plain
    Pcut is unchanged."""
    from mlw.thresholds import PCut
    from mlw.thresholds._common import apply_threshold

    rng = np.random.default_rng(3)
    S = rng.uniform(0, 1, (200, 20)) ** 3  # skewed: Pcut's cut leaves many rows empty
    for empty, on in ((0.0, True), (0.3, False)):
        _, Y = _data(200, 20, empty=empty)
        plain = PCut().fit(None, Y)
        auto, _ = make_threshold("pcut:top_label=auto")
        auto.fit(None, Y)
        assert plain.top_label_ is False and auto.top_label_ is on
        cut = plain.cut(S)
        assert np.array_equal(plain.predict(S), apply_threshold(S, cut))
        assert np.array_equal(auto.predict(S), apply_threshold(S, cut, top_label=on))
        assert empty_prediction_rate(Y, plain.predict(S)) > 0.1
        assert (empty_prediction_rate(Y, auto.predict(S)) == 0) is on
