"""The core's top-label rule on a joint learner's own decision: only rows the
decision leaves empty change, each gets its top-scoring label, and ``"auto"`` turns the
rule off when the training set has empty label sets."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import mlw

L = 4


class ColumnJoint(mlw.MultiLabelLearner):
    """Joint decision: label j when feature j > 0.5; marginal of label j: feature L + j
    (so a test can set the decision and the scores independently)."""

    _joint_prediction = True
    _sparse_output = True

    def __init__(self, top_label="auto") -> None:
        self.top_label = top_label

    def _fit(self, X, Y):
        pass

    def _predict(self, X):
        D = (np.asarray(X)[:, :L] > 0.5).astype(np.uint8)
        return sp.csr_matrix(D) if self.sparse_labels_ else D

    def _predict_proba(self, X):
        return np.asarray(X)[:, L:2 * L]


class NoScoresJoint(mlw.MultiLabelLearner):
    _joint_prediction = True

    def __init__(self, top_label="auto") -> None:
        self.top_label = top_label

    def _fit(self, X, Y):
        pass

    def _predict(self, X):
        return np.zeros((X.shape[0], self.n_labels_), dtype=np.uint8)


def _expected(X: np.ndarray) -> np.ndarray:
    """The rule by hand: the raw decision, and an empty row with a positive score gets
    its first highest-scoring label."""
    D = (X[:, :L] > 0.5).astype(np.uint8)
    S = X[:, L:]
    for i in np.flatnonzero(~D.any(axis=1)):
        if S[i].max() > 0:
            D[i, int(np.argmax(S[i]))] = 1
    return D


FULL = np.eye(L, dtype=np.uint8)  # training label sets, none empty
values = st.sampled_from([0.0, 0.2, 0.4, 0.6, 0.9])  # ties and zero scores are common


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 12), st.just(2 * L)), elements=values),
       st.booleans())
def test_only_empty_rows_change_and_get_their_top_label(X, sparse_labels) -> None:
    Ytr = sp.csr_matrix(FULL) if sparse_labels else FULL
    model = ColumnJoint().fit(np.full((L, 2 * L), 0.5), Ytr)
    assert model.top_label_ is True
    raw = (X[:, :L] > 0.5).astype(np.uint8)
    P = model.predict(X)
    P2, S = model.predict_with_scores(X)
    assert sp.issparse(P) == sparse_labels == sp.issparse(P2)
    P, P2 = (M.toarray() if sp.issparse(M) else M for M in (P, P2))
    np.testing.assert_array_equal(P, _expected(X))
    np.testing.assert_array_equal(P2, P)  # one pass and two passes agree
    np.testing.assert_array_equal(S, X[:, L:])  # the scores are never touched
    labelled = raw.any(axis=1)
    np.testing.assert_array_equal(P[labelled], raw[labelled])  # only empty rows change
    assert (P[~labelled].sum(axis=1) <= 1).all()


@pytest.mark.parametrize(("top_label", "empty_rows", "on"), [
    ("auto", 0, True), ("auto", 1, False), (False, 0, False), (True, 1, True)])
def test_auto_is_off_when_training_has_empty_sets(top_label, empty_rows, on) -> None:
    # 1 empty set of 5 training rows (20% > 1%) turns "auto" off
    Ytr = np.vstack([FULL, np.zeros((empty_rows, L), dtype=np.uint8)])
    model = ColumnJoint(top_label=top_label).fit(np.zeros((len(Ytr), 2 * L)), Ytr)
    assert model.top_label_ is on
    X = np.array([[0.0] * L + [0.1, 0.6, 0.6, 0.0]])  # empty decision, top label 1
    expected = [[0, 1, 0, 0]] if on else [[0, 0, 0, 0]]
    np.testing.assert_array_equal(model.predict(X), expected)
    np.testing.assert_array_equal(model.predict_with_scores(X)[0], expected)


def test_rule_needs_scores_and_a_valid_value() -> None:
    with pytest.raises(ValueError, match="predicts no label scores, so its top_label "
                                         "must be False"):
        NoScoresJoint().fit(np.zeros((L, 1)), FULL)
    assert NoScoresJoint(top_label=False).fit(np.zeros((L, 1)), FULL).top_label_ is False
    with pytest.raises(ValueError, match="'top_label' must be True, False or 'auto'"):
        ColumnJoint(top_label="yes").fit(np.zeros((L, 2 * L)), FULL)


def test_evaluation_names_the_rule() -> None:
    assert mlw.prepare_evaluation(ColumnJoint()).decision == "joint, top_label=auto"
    assert mlw.prepare_evaluation(ColumnJoint(top_label=False)).decision == "joint"
