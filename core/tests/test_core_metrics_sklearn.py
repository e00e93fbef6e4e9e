"""Property tests: mlw's metrics against scikit-learn, for dense and CSR inputs.

Where scikit-learn defines a value (no ``UndefinedMetricWarning``) ours is equal to
1e-12. Where it does not (a zero denominator), ours follows the documented convention
(docs/guide/metrics.md), which is scikit-learn's value with ``zero_division=1.0`` where the
prediction is perfect (tp = fp = fn = 0) and with ``zero_division=0.0`` otherwise; the
expected value is built from those two scikit-learn runs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm
from sklearn.exceptions import UndefinedMetricWarning

import mlw
from mlw import metrics as M

TOL = 1e-12
SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def label_pairs(draw, min_n=2, max_n=12, min_l=2, max_l=7):
    n = draw(st.integers(min_n, max_n))
    L = draw(st.integers(min_l, max_l))
    dens = draw(st.sampled_from([0.1, 0.3, 0.6]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, L)) < dens).astype(np.uint8)
    if draw(st.booleans()):  # predictions close to the truth
        P = Y ^ (rng.random((n, L)) < 0.15).astype(np.uint8)
    else:
        P = (rng.random((n, L)) < dens).astype(np.uint8)
    if draw(st.booleans()):  # force some empty rows, and empty columns
        Y[rng.random(n) < 0.3] = 0
        P[rng.random(n) < 0.3] = 0
        Y[:, 0] = 0
        P[:, 0] = 0
    return Y, P


def _formats(Y, P):
    """The same pair as dense/dense, CSR/CSR, dense/CSR and CSR/dense."""
    return [(Y, P), (sp.csr_matrix(Y), sp.csr_matrix(P)), (Y, sp.csr_matrix(P)),
            (sp.csr_matrix(Y), P)]


def _sk_defined(fn, *args, **kw):
    """scikit-learn's value and whether it is defined (no UndefinedMetricWarning)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        v = fn(*args, **kw)
    return v, not any(issubclass(x.category, UndefinedMetricWarning) for x in w)


def _sk_convention(fn, Y, P, average):
    """scikit-learn's per-row / per-label / pooled values mixed by our convention."""
    if average == "samples":
        A, B = Y.T, P.T  # a row of Y is a "label" of the transpose
        per = "samples"
    else:
        A, B = Y, P
        per = average
    if per == "micro":
        v0 = fn(A, B, average="micro", zero_division=0.0)
        v1 = fn(A, B, average="micro", zero_division=1.0)
        return v1 if not (A.any() or B.any()) else v0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v0 = fn(A, B, average=None, zero_division=0.0)
        v1 = fn(A, B, average=None, zero_division=1.0)
    perfect = ~(A.any(axis=0) | B.any(axis=0))
    return float(np.mean(np.where(perfect, v1, v0)))


PRF = {
    "precision": skm.precision_score,
    "recall": skm.recall_score,
    "f1": skm.f1_score,
}
AVERAGES = {"samples": "example", "micro": "micro", "macro": "macro"}


@SETTINGS
@given(label_pairs())
def test_hamming_and_subset_accuracy_equal_sklearn(pair):
    Y, P = pair
    for Yt, Yp in _formats(Y, P):
        assert abs(M.hamming_loss(Yt, Yp) - skm.hamming_loss(Y, P)) <= TOL
        assert abs(M.subset_accuracy(Yt, Yp) - skm.accuracy_score(Y, P)) <= TOL


@settings(max_examples=40, deadline=None)
@given(label_pairs())
def test_precision_recall_f1_equal_sklearn(pair):
    Y, P = pair
    defined, convention = {}, {}
    for what, fn in PRF.items():
        for avg, suffix in AVERAGES.items():
            name = f"{what}_{suffix}"
            sk, ok = _sk_defined(fn, Y, P, average=avg)
            if ok:
                defined[name] = sk
            convention[name] = _sk_convention(fn, Y, P, avg)
    for Yt, Yp in _formats(Y, P):
        got = mlw.evaluate(Yt, Yp)
        for name, sk in defined.items():
            assert abs(got[name] - sk) <= TOL, name
        for name, expected in convention.items():
            assert abs(got[name] - expected) <= TOL, name


@SETTINGS
@given(label_pairs())
def test_example_accuracy_equals_jaccard_samples(pair):
    Y, P = pair
    sk, defined = _sk_defined(skm.jaccard_score, Y, P, average="samples")
    for Yt, Yp in _formats(Y, P):
        got = M.accuracy(Yt, Yp)
        if defined:
            assert abs(got - sk) <= TOL
        # Jaccard's denominator is 0 only when both sets are empty: zero_division=1.0
        assert abs(got - skm.jaccard_score(Y, P, average="samples", zero_division=1.0)) <= TOL


@st.composite
def label_scores(draw):
    Y, _ = draw(label_pairs())
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):  # few distinct values: many ties, many zeros
        S = rng.integers(0, 4, size=Y.shape) / 4.0
    else:
        S = rng.random(Y.shape)
        S[rng.random(Y.shape) < 0.3] = 0.0
    return Y, S


def _score_formats(Y, S):
    return [(Y, S), (sp.csr_matrix(Y), sp.csr_matrix(S)), (Y, sp.csr_matrix(S)),
            (sp.csr_matrix(Y), S)]


@SETTINGS
@given(label_scores())
def test_ranking_metrics_equal_sklearn(pair):
    Y, S = pair
    expected = {
        "coverage": skm.coverage_error(Y, S),
        "ranking_loss": skm.label_ranking_loss(Y, S),
        "average_precision": skm.label_ranking_average_precision_score(Y, S),
    }
    for Yt, St in _score_formats(Y, S):
        got = mlw.evaluate(Yt, scores=St, metrics=list(expected))
        for name, value in expected.items():
            assert abs(got[name] - value) <= TOL, name


@SETTINGS
@given(label_scores(), st.integers(1, 7))
def test_dense_ranking_table_is_the_csr_kernels_bit_for_bit(pair, block):
    """Dense scores are ranked with numpy, CSR scores with the numba kernel: the two
    tables agree exactly (not to a tolerance), whatever the numpy block size."""
    from mlw.metrics import ranking

    Y, S = pair
    csr = ranking.ranking_table(Y, sp.csr_matrix(S))
    assert np.array_equal(ranking.ranking_table(Y, S), csr)
    old = ranking.BLOCK_COMPARISONS
    ranking.BLOCK_COMPARISONS = block * S.shape[1]
    try:
        assert np.array_equal(ranking.ranking_table(sp.csr_matrix(Y), S), csr)
    finally:
        ranking.BLOCK_COMPARISONS = old


def _one_error_reference(Y, S):
    errors = []
    for y, s in zip(Y, S, strict=True):
        if not y.any():
            errors.append(0.0)
            continue
        top = s == s.max()
        errors.append(1.0 if (top & (y == 0)).any() else 0.0)
    return float(np.mean(errors))


@SETTINGS
@given(label_scores())
def test_one_error_matches_reference(pair):
    Y, S = pair
    for Yt, St in _score_formats(Y, S):
        assert abs(M.one_error(Yt, St) - _one_error_reference(Y, S)) <= TOL


def test_one_error_without_ties_is_the_argmax_rule():
    Y = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    S = np.array([[0.9, 0.2, 0.1], [0.5, 0.4, 0.0], [0.1, 0.2, 0.3]])
    assert M.one_error(Y, S) == pytest.approx(1 / 3)


@SETTINGS
@given(label_scores(), st.booleans())
def test_log_loss_equals_capped_formula(pair, extreme):
    Y, S = pair
    if extreme:  # certain and wrong: the terms hit the cap
        S = np.where(S > 0.5, 1.0, 0.0)
    n = Y.shape[0]
    p = np.where(Y == 1, S, 1.0 - S)
    with np.errstate(divide="ignore"):
        terms = np.minimum(-np.log(p), np.log(n))
    expected = float(terms.mean())
    for Yt, St in _score_formats(Y, S):
        assert abs(M.log_loss(Yt, St) - expected) <= TOL


def test_log_loss_rejects_scores_outside_unit_interval():
    with pytest.raises(ValueError, match="probabilities"):
        M.log_loss(np.array([[1, 0]]), np.array([[1.5, 0.0]]))


def test_cll_loss_is_the_negative_sum_of_log_probabilities():
    Y = np.array([[1, 0], [0, 1], [1, 1]])
    lp = np.log([0.5, 0.25, 0.125])
    assert M.cll_loss(Y, lp) == pytest.approx(-lp.sum(), abs=TOL)
    got = mlw.evaluate(Y, log_proba=lp)
    assert list(got) == ["cll_loss"]
    with pytest.raises(ValueError, match="above 0"):
        M.cll_loss(Y, [0.1, -1.0, -1.0])


@pytest.mark.parametrize("name", ["yeast", "scene"])
def test_all_metrics_equal_sklearn_on_real_label_matrices(mulan_dir, name):
    """Real test-set label matrices (yeast: 14 labels, scene: 6) against scores from a
    noisy copy of the truth and their 0.5-thresholded predictions."""
    Y = mlw.load_dataset(mulan_dir / f"{name}-test.arff").Y
    Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
    rng = np.random.default_rng(0)
    S = np.clip(0.35 * Y + rng.random(Y.shape) * 0.7, 0.0, 1.0)
    P = (S >= 0.5).astype(np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = {
            "subset_accuracy": skm.accuracy_score(Y, P),
            "hamming_loss": skm.hamming_loss(Y, P),
            "accuracy": skm.jaccard_score(Y, P, average="samples", zero_division=1.0),
            "coverage": skm.coverage_error(Y, S),
            "ranking_loss": skm.label_ranking_loss(Y, S),
            "average_precision": skm.label_ranking_average_precision_score(Y, S),
        }
        for what, fn in PRF.items():
            for avg, suffix in AVERAGES.items():
                expected[f"{what}_{suffix}"] = _sk_convention(fn, Y, P, avg)
        for avg in ("micro", "macro"):
            expected[f"auc_{avg}"] = skm.roc_auc_score(Y, S, average=avg)
            expected[f"average_precision_{avg}"] = skm.average_precision_score(Y, S,
                                                                               average=avg)
            expected[f"specificity_{avg}"] = skm.recall_score(1 - Y, 1 - P, average=avg,
                                                              zero_division=1.0)
    for Yt, Pt, St in [(Y, P, S), (sp.csr_matrix(Y), sp.csr_matrix(P), sp.csr_matrix(S))]:
        got = mlw.evaluate(Yt, Pt, scores=St, metrics=list(expected))
        for metric, value in expected.items():
            assert abs(got[metric] - value) <= TOL, metric


@SETTINGS
@given(label_scores(), st.integers(1, 3), st.booleans())
def test_score_metrics_equal_sklearn_where_it_defines_them(pair, decimals, sparse_scores):
    """ROC AUC and average precision, micro and macro, with ties (rounded scores), on
    dense and CSR scores; macro averages over the labels where the value is defined."""
    Y, S = pair
    S = np.round(S, decimals)
    St = sp.csr_matrix(S) if sparse_scores else S
    got = mlw.evaluate(Y, scores=St, metrics=["auc_micro", "auc_macro",
                                              "average_precision_micro",
                                              "average_precision_macro"])
    n = Y.shape[0]
    both = [j for j in range(Y.shape[1]) if 0 < Y[:, j].sum() < n]
    positive = [j for j in range(Y.shape[1]) if Y[:, j].sum() > 0]
    if both:
        assert abs(got["auc_macro"] - skm.roc_auc_score(Y[:, both], S[:, both],
                                                         average="macro")) <= TOL
    else:
        assert np.isnan(got["auc_macro"])
    if 0 < Y.sum() < Y.size:
        assert abs(got["auc_micro"] - skm.roc_auc_score(Y, S, average="micro")) <= TOL
    if positive:
        assert abs(got["average_precision_macro"] - skm.average_precision_score(
            Y[:, positive], S[:, positive], average="macro")) <= TOL
        assert abs(got["average_precision_micro"]
                   - skm.average_precision_score(Y, S, average="micro")) <= TOL
    else:
        assert np.isnan(got["average_precision_macro"])


@SETTINGS
@given(label_pairs())
def test_specificity_is_sklearns_recall_of_the_negatives(pair):
    Y, P = pair
    for Yt, Pt in _formats(Y, P):
        got = mlw.evaluate(Yt, Pt, metrics=["specificity_micro", "specificity_macro"])
        for avg in ("micro", "macro"):
            expected = skm.recall_score(1 - Y, 1 - P, average=avg, zero_division=1.0)
            assert abs(got[f"specificity_{avg}"] - expected) <= TOL


def test_per_label_table_agrees_with_the_averages(mulan_dir):
    Y = np.asarray(mlw.load_dataset(mulan_dir / "scene-test.arff").Y)
    rng = np.random.default_rng(1)
    S = np.clip(0.35 * Y + rng.random(Y.shape) * 0.7, 0.0, 1.0)
    P = (S >= 0.5).astype(np.uint8)
    table = mlw.evaluate(Y, P, scores=S, per_label=True,
                         label_names=[f"l{j}" for j in range(Y.shape[1])])
    averages = mlw.evaluate(Y, P, scores=S)
    assert table["label"].to_list() == [f"l{j}" for j in range(Y.shape[1])]
    assert table["support"].to_list() == Y.sum(axis=0).tolist()
    for column, metric in (("f1", "f1_macro"), ("precision", "precision_macro"),
                           ("recall", "recall_macro"), ("auc", "auc_macro"),
                           ("specificity", "specificity_macro"),
                           ("average_precision", "average_precision_macro")):
        assert abs(table[column].mean() - averages[metric]) <= TOL, column
    with pytest.raises(ValueError, match="2 label names for 6 labels"):
        mlw.evaluate(Y, P, per_label=True, label_names=["a", "b"])
