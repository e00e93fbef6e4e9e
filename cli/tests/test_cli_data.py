"""Resolving --data/--test/--cv into an evaluation plan (mlw_cli.data)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw_cli.data import DEFAULT_CV, bundled_datasets, concat, resolve


def _ds(X, Y, name="d", labels=("a", "b")) -> mlw.Dataset:
    return mlw.Dataset(X, Y, [f"f{i}" for i in range(X.shape[1])], list(labels), name)


def test_concat_keeps_sparse_sparse_and_checks_names() -> None:
    a = _ds(sp.csr_matrix(np.eye(2)), np.array([[1, 0], [0, 1]]))
    b = _ds(np.ones((1, 2)), sp.csr_matrix(np.array([[1, 1]])))
    joined = concat(a, b, name="ab")
    assert sp.issparse(joined.X) and sp.issparse(joined.Y)
    np.testing.assert_array_equal(joined.Y.toarray(), [[1, 0], [0, 1], [1, 1]])
    dense = concat(_ds(np.eye(2), np.eye(2)), _ds(np.eye(2), np.eye(2)), name="dd")
    assert isinstance(dense.X, np.ndarray) and dense.n_instances == 4
    with pytest.raises(ValueError, match="cannot join 'd' and 'd': their features or labels"):
        concat(a, _ds(np.eye(2), np.eye(2), labels=("a", "c")), name="x")


def test_default_is_the_bundled_emotions_split() -> None:
    assert "emotions" in [b["name"] for b in bundled_datasets()]
    plan = resolve(None, None, None)
    assert (plan.kind, plan.dataset, plan.train.n_instances, plan.test.n_instances) == (
        "holdout", "emotions", 391, 202)
    cv = resolve("emotions", None, 5)
    assert (cv.kind, cv.k, cv.train.n_instances, cv.test) == ("cv", 5, 593, None)


def test_a_file_alone_gets_10_fold_cv_with_a_note(mulan_dir) -> None:
    plan = resolve(str(mulan_dir / "emotions-train.arff"), None, None)
    assert (plan.kind, plan.k) == ("cv", DEFAULT_CV)
    assert plan.note and "10-fold cross-validation" in plan.note


def test_conflicting_options() -> None:
    with pytest.raises(ValueError, match="either --test"):
        resolve("emotions", "x.arff", 3)
    with pytest.raises(ValueError, match="--cv must be at least 2"):
        resolve("emotions", None, 0)
