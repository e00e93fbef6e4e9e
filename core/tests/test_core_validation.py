"""Input validation: one-line errors naming the problem; sparse stays sparse."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from mlw import Dataset
from mlw.validation import check_scores, check_X, check_Y


def test_check_X_dense_and_sparse_kinds():
    X = check_X([[1, 2], [3, 4]])
    assert isinstance(X, np.ndarray) and X.dtype == np.float64 and X.flags.c_contiguous
    S = check_X(sp.coo_matrix(np.eye(3)))
    assert sp.issparse(S) and S.format == "csr" and S.dtype == np.float64


def test_check_X_canonicalises_duplicates_without_densifying():
    S = sp.csr_matrix((np.array([1.0, 2.0]), np.array([1, 1]), np.array([0, 2])), shape=(1, 3))
    out = check_X(S)
    assert sp.issparse(out) and out.has_canonical_format
    assert out.toarray().tolist() == [[0.0, 3.0, 0.0]]


@pytest.mark.parametrize(
    "X, message",
    [
        (np.array([1.0, 2.0]), "expected a 2-D matrix"),
        (np.array([[1.0, np.inf]]), "infinite"),
        (np.array([[1.0, np.nan]]), "NaN"),
        (sp.csr_matrix(np.array([[0.0, np.nan]])), "NaN"),
        ([["a", "b"]], "cannot be read as a numeric matrix"),
    ],
)
def test_check_X_rejects_with_one_line(X, message):
    with pytest.raises(ValueError, match=message) as info:
        check_X(X)
    assert "\n" not in str(info.value)


def test_check_X_allows_nan_when_asked_and_checks_width():
    assert np.isnan(check_X([[np.nan, 1.0]], allow_nan=True)).any()
    with pytest.raises(ValueError, match="has 2 features, but the model was fitted with 3"):
        check_X([[1.0, 2.0]], n_features=3)


def test_check_Y_kinds_and_errors():
    Y = check_Y([[True, False], [False, True]])
    assert Y.dtype == np.uint8 and Y.tolist() == [[1, 0], [0, 1]]
    C = check_Y(sp.csr_matrix(np.array([[1, 0], [0, 0]])))
    assert sp.issparse(C) and C.dtype == np.uint8 and C.nnz == 1
    with pytest.raises(ValueError, match="only 0 and 1"):
        check_Y([[2, 0]])
    with pytest.raises(ValueError, match="only 0 and 1"):
        check_Y(sp.csr_matrix(np.array([[0.5, 0.0]])))
    with pytest.raises(ValueError, match="1-D"):
        check_Y([1, 0, 1])
    with pytest.raises(ValueError, match="NaN"):
        check_Y([[np.nan, 1.0]])
    with pytest.raises(ValueError, match="has 1 rows but X has 2"):
        check_Y([[1, 0]], n_rows=2)


def test_check_scores_rejects_nan():
    with pytest.raises(ValueError, match="NaN or infinite"):
        check_scores([[0.1, np.nan]])
    assert check_scores(sp.csr_matrix([[0.0, 0.3]])).format == "csr"


def test_dataset_checks_names_and_keeps_sparse():
    X = sp.random(5, 4, density=0.5, format="csr", random_state=0)
    Y = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 1], [0, 0], [1, 0]]))
    ds = Dataset(X, Y, ["a", "b", "c", "d"], ["l1", "l2"], "toy")
    assert sp.issparse(ds.X) and sp.issparse(ds.Y)
    assert ds.n_instances == 5 and ds.n_features == 4 and ds.n_labels == 2
    assert ds.cardinality == pytest.approx(5 / 5)
    assert ds.density == pytest.approx(5 / 10)
    sub = ds.subset(np.array([0, 2]))
    assert sub.n_instances == 2 and sp.issparse(sub.X)
    assert "toy" in repr(ds) and "CSR" in repr(ds)
    with pytest.raises(ValueError, match="3 feature names for 4 feature columns"):
        Dataset(X, Y, ["a", "b", "c"], ["l1", "l2"], "toy")
    with pytest.raises(ValueError, match="1 label names for 2 label columns"):
        Dataset(X, Y, ["a", "b", "c", "d"], ["l1"], "toy")
    with pytest.raises(ValueError, match="has 4 rows but X has 5"):
        Dataset(X, Y[:4], ["a", "b", "c", "d"], ["l1", "l2"], "toy")
