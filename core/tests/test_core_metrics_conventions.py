"""The documented conventions of mlw's metrics (docs/guide/metrics.md): empty sets, labels
never present, ties, registration, and one mechanism behind evaluate and the plain
functions."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw import metrics as M
from mlw.metrics.counts import confusion_counts
from mlw.validation import check_Y

DESIGN_NAMES = [
    "subset_accuracy", "hamming_loss", "accuracy", "precision_example", "recall_example",
    "f1_example", "f1_micro", "f1_macro", "precision_micro", "recall_micro",
    "precision_macro", "recall_macro", "log_loss", "cll_loss", "one_error", "coverage",
    "ranking_loss", "average_precision",
]
LOWER_IS_BETTER = {"hamming_loss", "log_loss", "cll_loss", "one_error", "coverage",
                   "ranking_loss"}


def test_every_design_metric_is_registered_with_direction_and_needs():
    specs = mlw.list_metrics()
    for name in DESIGN_NAMES:
        spec = specs[name]
        assert spec.greater_is_better is (name not in LOWER_IS_BETTER), name
        expected_needs = ("scores" if name in {"log_loss", "one_error", "coverage",
                                               "ranking_loss", "average_precision"}
                          else "joint" if name == "cll_loss" else "labels")
        assert spec.needs == expected_needs, name
        assert spec.description


def test_evaluate_without_scores_reports_exactly_the_label_set_metrics():
    Y = np.array([[1, 0], [0, 1]])
    got = mlw.evaluate(Y, Y)
    # plugins may add label-set metrics of their own after the core's
    assert [k for k in got if k in DESIGN_NAMES] == DESIGN_NAMES[:12]
    assert all(mlw.list_metrics()[k].needs == "labels" for k in got)
    assert got["subset_accuracy"] == 1.0 and got["hamming_loss"] == 0.0


def test_both_sets_empty_is_a_perfect_instance():
    Y = np.array([[0, 0, 0], [1, 0, 1]])
    P = np.array([[0, 0, 0], [1, 0, 1]])
    got = mlw.evaluate(Y, P)
    for name in ("accuracy", "precision_example", "recall_example", "f1_example",
                 "subset_accuracy", "f1_micro", "precision_micro", "recall_micro"):
        assert got[name] == 1.0, name
    # label 1 is never present nor predicted: it counts as perfect in the macro means
    for name in ("precision_macro", "recall_macro", "f1_macro"):
        assert got[name] == 1.0, name


def test_an_undefined_ratio_that_is_not_perfect_is_zero():
    # instance 0: labels but nothing predicted (precision 0/0 -> 0, recall 0);
    # instance 1: nothing true but a label predicted (recall 0/0 -> 0, precision 0)
    Y = np.array([[1, 0], [0, 0]])
    P = np.array([[0, 0], [0, 1]])
    got = mlw.evaluate(Y, P)
    assert got["precision_example"] == 0.0
    assert got["recall_example"] == 0.0
    assert got["f1_example"] == 0.0
    assert got["accuracy"] == 0.0
    # label 0 is present, never predicted: precision 0; label 1 predicted, never true:
    # recall 0
    assert got["precision_macro"] == 0.0
    assert got["recall_macro"] == 0.0


def test_all_empty_matrices_score_perfectly():
    Z = np.zeros((3, 4), dtype=np.uint8)
    got = mlw.evaluate(Z, Z, metrics=DESIGN_NAMES[:12])
    assert all(got[n] == 1.0 for n in got if n != "hamming_loss")
    assert got["hamming_loss"] == 0.0


def test_ranking_conventions_for_degenerate_rows():
    Y = np.array([[0, 0, 0], [1, 1, 1]])
    S = np.array([[0.3, 0.2, 0.1], [0.1, 0.1, 0.9]])
    got = mlw.evaluate(Y, scores=S, metrics=["one_error", "coverage", "ranking_loss",
                                             "average_precision"])
    # no true label: coverage 0, loss 0, AP 1, no one-error; all true: coverage L
    assert got == {"one_error": 0.0, "coverage": 1.5, "ranking_loss": 0.0,
                   "average_precision": 1.0}


def test_ties_count_against_the_prediction():
    Y = np.array([[1, 0, 0]])
    S = np.array([[0.5, 0.5, 0.1]])
    got = mlw.evaluate(Y, scores=S, metrics=["one_error", "coverage", "ranking_loss",
                                             "average_precision"])
    assert got == {"one_error": 1.0, "coverage": 2.0, "ranking_loss": 0.5,
                   "average_precision": 0.5}


def test_plain_functions_run_the_registered_compute():
    rng = np.random.default_rng(0)
    Y = (rng.random((30, 5)) < 0.3).astype(np.uint8)
    P = (rng.random((30, 5)) < 0.3).astype(np.uint8)
    S = rng.random((30, 5))
    got = mlw.evaluate(Y, P, scores=S, metrics=[n for n in DESIGN_NAMES if n != "cll_loss"])
    for name, value in got.items():
        fn = getattr(M, name)
        second = P if mlw.list_metrics()[name].needs == "labels" else S
        assert fn(Y, second) == value, name


def test_counts_are_identical_for_dense_and_csr_and_match_the_definitions():
    rng = np.random.default_rng(1)
    Y = (rng.random((500, 40)) < 0.1).astype(np.uint8)
    P = (rng.random((500, 40)) < 0.1).astype(np.uint8)
    dense = confusion_counts(check_Y(Y), check_Y(P))
    csr = confusion_counts(check_Y(sp.csr_matrix(Y)), check_Y(sp.csr_matrix(P)))
    np.testing.assert_array_equal(dense.instance, csr.instance)
    np.testing.assert_array_equal(dense.label, csr.label)
    tp, fp, fn = Y & P, (1 - Y) & P, Y & (1 - P)
    np.testing.assert_array_equal(dense.instance, np.stack(
        [tp.sum(1), fp.sum(1), fn.sum(1)], axis=1))
    np.testing.assert_array_equal(dense.label, np.stack(
        [tp.sum(0), fp.sum(0), fn.sum(0)], axis=1))


def test_csr_with_unsorted_indices_and_int64_indices_is_handled():
    Y = sp.csr_matrix((np.ones(3, np.uint8), np.array([2, 0, 1]), np.array([0, 2, 3])),
                      shape=(2, 3))
    assert not Y.has_sorted_indices
    P = sp.csr_matrix(np.array([[1, 0, 1], [0, 0, 0]], dtype=np.uint8))
    P.indices = P.indices.astype(np.int64)
    P.indptr = P.indptr.astype(np.int64)
    assert M.hamming_loss(Y, P) == pytest.approx(1 / 6)
    assert M.subset_accuracy(Y, P) == 0.5


@pytest.mark.parametrize("Y, P, match", [
    (np.zeros((0, 3)), np.zeros((0, 3)), "at least one instance"),
    (np.array([[1, 0]]), np.array([[1, 0, 0]]), "shape"),
    (np.array([[2, 0]]), np.array([[1, 0]]), "only 0 and 1"),
])
def test_bad_input_is_a_one_line_value_error(Y, P, match):
    with pytest.raises(ValueError, match=match) as info:
        M.f1_micro(Y, P)
    assert "\n" not in str(info.value)


def test_asking_for_a_metric_whose_input_is_missing_names_it():
    with pytest.raises(ValueError, match="needs scores"):
        mlw.evaluate(np.eye(2), np.eye(2), metrics=["ranking_loss"])


def test_explicitly_stored_zero_scores_mean_the_same_as_absent_ones():
    rng = np.random.default_rng(4)
    Y = (rng.random((40, 6)) < 0.3).astype(np.uint8)
    S = rng.random((40, 6))
    S[rng.random(S.shape) < 0.4] = 0.0
    full = sp.csr_matrix(np.ones_like(S))
    full.data = S.ravel().copy()  # every entry stored, zeros included
    assert full.nnz == S.size
    names = ["log_loss", "one_error", "coverage", "ranking_loss", "average_precision"]
    dense = mlw.evaluate(Y, scores=S, metrics=names)
    stored = mlw.evaluate(Y, scores=full, metrics=names)
    absent = mlw.evaluate(Y, scores=sp.csr_matrix(S), metrics=names)
    for name in names:
        assert dense[name] == pytest.approx(stored[name], abs=1e-12) == absent[name]


def test_cll_loss_marginals_is_the_floored_sum_over_labels_dense_and_csr():
    """-Σ log q, q = score of a true label, 1 - score of a false one, each log floored at
    ln 1e-12 (a true label scored 0, a false one scored 1); CSR in O(nnz) the same."""
    Y = np.array([[1, 0, 1], [0, 0, 1], [0, 1, 0]])
    P = np.array([[0.9, 0.2, 0.0], [0.5, 0.0, 1.0], [1.0, 0.7, 0.0]])
    floor = np.log(1e-12)
    ref = -(np.log(0.9) + np.log(0.8) + floor + np.log(0.5) + 0.0 + 0.0
            + floor + np.log(0.7) + 0.0)
    for y in (Y, sp.csr_matrix(Y)):
        for p in (P, sp.csr_matrix(P)):
            assert M.cll_loss_marginals(y, p) == pytest.approx(ref, rel=1e-12)
    spec = mlw.list_metrics()["cll_loss_marginals"]
    assert (spec.needs, spec.greater_is_better) == ("scores", False)
    with pytest.raises(ValueError, match="probabilities"):
        M.cll_loss_marginals(Y, P + 0.5)
