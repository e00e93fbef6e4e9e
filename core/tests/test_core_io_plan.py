"""Resolving a dataset, a test file or a number of folds into an evaluation plan
(mlw.plan_data), and joining datasets (Dataset.concat)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw.io import bundled_datasets
from mlw.io.plan import DEFAULT_CV


def _ds(X, Y, name="d", labels=("a", "b")) -> mlw.Dataset:
    return mlw.Dataset(X, Y, [f"f{i}" for i in range(X.shape[1])], list(labels), name)


def test_concat_keeps_sparse_sparse_and_checks_names() -> None:
    a = _ds(sp.csr_matrix(np.eye(2)), np.array([[1, 0], [0, 1]]))
    b = _ds(np.ones((1, 2)), sp.csr_matrix(np.array([[1, 1]])))
    joined = mlw.Dataset.concat([a, b], name="ab")
    assert sp.issparse(joined.X) and sp.issparse(joined.Y)
    np.testing.assert_array_equal(joined.Y.toarray(), [[1, 0], [0, 1], [1, 1]])
    dense = mlw.Dataset.concat([_ds(np.eye(2), np.eye(2)), _ds(np.eye(2), np.eye(2))], name="dd")
    assert isinstance(dense.X, np.ndarray) and dense.n_instances == 4
    with pytest.raises(ValueError, match="cannot join 'd' and 'd': their labels differ"):
        mlw.Dataset.concat([a, _ds(np.eye(2), np.eye(2), labels=("a", "c"))], name="x")


def test_default_is_the_bundled_emotions_split() -> None:
    assert "emotions" in [b["name"] for b in bundled_datasets()]
    plan = mlw.plan_data()
    assert (plan.kind, plan.dataset, plan.train.n_instances, plan.test.n_instances) == (
        "holdout", "emotions", 391, 202)
    cv = mlw.plan_data("emotions", cv=5)
    assert (cv.kind, cv.k, cv.train.n_instances, cv.test) == ("cv", 5, 593, None)


def test_a_file_alone_gets_10_fold_cv_with_a_note(mulan_dir) -> None:
    plan = mlw.plan_data(str(mulan_dir / "emotions-train.arff"))
    assert (plan.kind, plan.k) == ("cv", DEFAULT_CV)
    assert plan.note and "10-fold cross-validation" in plan.note


def test_conflicting_options() -> None:
    with pytest.raises(ValueError, match="either a test set"):
        mlw.plan_data("emotions", test="x.arff", cv=3)
    with pytest.raises(ValueError, match="number of folds must be an integer of at least 2"):
        mlw.plan_data("emotions", cv=0)
    with pytest.raises(ValueError, match="the dataset name or path is empty"):
        mlw.plan_data("")
    with pytest.raises(mlw.DatasetNotFoundError, match="no such file or dataset"):
        mlw.plan_data("no-such-dataset")


def test_split_all_joins_train_and_test_and_a_file_is_itself(mulan_dir) -> None:
    assert mlw.load_dataset("emotions", split="all").n_instances == 593
    whole = mlw.load_dataset(str(mulan_dir / "yeast"), split="all")
    assert (whole.n_instances, whole.name) == (2417, "yeast")
    one = mlw.load_dataset(str(mulan_dir / "medical.arff"), split="all")
    assert one.n_instances == 1954


def test_generated_splits_are_written_as_one_mulan_dataset(tmp_path) -> None:
    """NAME-train/validation/test.arff beside one NAME.xml, which each split finds."""
    rng = np.random.default_rng(0)

    def ds(n: int) -> mlw.Dataset:
        return _ds(rng.random((n, 3)), (rng.random((n, 2)) < 0.5).astype(np.uint8))

    splits = {"train": ds(5), "validation": ds(4), "test": ds(3)}
    folder = tmp_path / "new" / "folder"
    written = mlw.io.write_mulan_splits(splits, folder, "toy")
    assert sorted(p.name for p in written) == ["toy-test.arff", "toy-train.arff",
                                               "toy-validation.arff", "toy.xml"]
    back = mlw.load_dataset(str(folder / "toy-validation.arff"))
    assert back.n_instances == 4 and back.label_names == ["a", "b"]


def test_label_columns_by_name_or_count_for_files(tmp_path) -> None:
    import polars as pl

    frame = pl.DataFrame({"f1": [0.1, 0.5, 0.2, 0.9] * 3, "f2": [1.0, 0.0, 2.0, 1.0] * 3,
                          "a": [1, 0, 1, 0] * 3, "b": [0, 1, 1, 0] * 3})
    frame.write_csv(tmp_path / "t.csv")
    last = mlw.plan_data(str(tmp_path / "t.csv"), cv=2, n_labels=-2)
    assert list(last.train.label_names) == ["a", "b"] and last.train.n_features == 2
    named = mlw.plan_data(str(tmp_path / "t.csv"), test=str(tmp_path / "t.csv"),
                          labels="b,a")
    assert list(named.train.label_names) == ["b", "a"]
    assert list(named.test.label_names) == ["b", "a"]  # the test file too
    with pytest.raises(ValueError, match="not both"):
        mlw.plan_data(str(tmp_path / "t.csv"), labels=["a"], n_labels=1)
    with pytest.raises(ValueError, match="non-zero integer"):
        mlw.plan_data(str(tmp_path / "t.csv"), n_labels=0)
    with pytest.raises(ValueError, match="named twice"):
        mlw.plan_data(str(tmp_path / "t.csv"), labels="a,a")
    with pytest.raises(ValueError, match="generated dataset"):
        mlw.plan_data("synthetic:labels=4", n_labels=2)
    with pytest.raises(ValueError, match="--labels NAME,... or --n-labels N"):
        mlw.plan_data(str(tmp_path / "t.csv"))
