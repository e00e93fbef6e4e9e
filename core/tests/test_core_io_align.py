"""A test set is aligned with its training set by column name and nominal value, or
refused naming the column; a numeric CSV column with a text typo is an error
naming the line and the column."""

from __future__ import annotations

import json
import warnings

import numpy as np
import polars as pl
import pytest

import mlw
from mlw.io import DatasetWarning, align, reference_of

HEAD = ("@relation r\n@attribute x numeric\n@attribute c {{{c}}}\n@attribute b {{{b}}}\n"
        "@attribute y {{0,1}}\n@data\n")
ROWS = "1.5,x,YES,1\n2,y,NO,0\n3,z,YES,1\n4,?,?,0\n"


def arff(tmp_path, name, text, **kw):
    p = tmp_path / name
    p.write_text(text)
    return mlw.load_dataset(p, n_labels=-1, **kw)


@pytest.mark.parametrize("sparse", [False, True])
def test_reordered_nominal_values_are_aligned_not_misread(tmp_path, sparse):
    train = arff(tmp_path, "train.arff", HEAD.format(c="x,y,z", b="NO,YES") + ROWS,
                 sparse=sparse)
    test = arff(tmp_path, "test.arff", HEAD.format(c="z,y,x", b="YES,NO") + ROWS,
                sparse=sparse)
    dense = (lambda M: M.toarray()) if sparse else np.asarray
    # the raw encodings differ: columns c=... reordered, b inverted
    assert test.feature_names != train.feature_names
    assert not np.array_equal(dense(test.X), dense(train.X), equal_nan=True)
    aligned = align(test, train)
    assert aligned.feature_names == train.feature_names
    np.testing.assert_array_equal(dense(aligned.X), dense(train.X))
    assert type(aligned.X) is type(train.X)
    assert align(train, train) is train  # nothing to do: the same object


def test_reordered_attributes_and_labels_are_matched_by_name(tmp_path):
    train = arff(tmp_path, "train.arff", HEAD.format(c="x,y,z", b="NO,YES") + ROWS)
    text = ("@relation r\n@attribute b {NO,YES}\n@attribute c {x,y,z}\n@attribute x numeric\n"
            "@attribute y {0,1}\n@data\n")
    rows = "".join(",".join([r[2], r[1], r[0], r[3]]) + "\n"
                   for r in (line.split(",") for line in ROWS.split()))
    test = arff(tmp_path, "test.arff", text + rows)
    np.testing.assert_array_equal(align(test, train).X, train.X)


def test_unknown_nominal_value_is_refused_naming_column_value_and_instance(tmp_path):
    train = arff(tmp_path, "train.arff", HEAD.format(c="x,y,z", b="NO,YES") + ROWS)
    test = arff(tmp_path, "test.arff", HEAD.format(c="x,y,w", b="NO,YES") + "1,x,NO,1\n2,w,NO,0\n")
    with pytest.raises(ValueError, match=r"^test: column 'c' has value 'w' \(instance 1, "
                                         r"0-based\), which the training data's 'c' does not "
                                         r"have \(values: x, y, z\)$"):
        align(test, train)
    # a declared but unused value is harmless
    unused = arff(tmp_path, "unused.arff", HEAD.format(c="x,y,w", b="NO,YES") + "1,x,NO,1\n")
    np.testing.assert_array_equal(align(unused, train).X, [[1.0, 1, 0, 0, 0]])


def test_missing_column_and_kind_change_are_refused_naming_the_column(tmp_path):
    train = arff(tmp_path, "train.arff", HEAD.format(c="x,y,z", b="NO,YES") + ROWS)
    no_x = arff(tmp_path, "nox.arff", "@relation r\n@attribute c {x,y,z}\n@attribute b {NO,YES}\n"
                                      "@attribute y {0,1}\n@data\nx,NO,1\n")
    with pytest.raises(ValueError, match=r"^nox: column 'x' of the training data is missing$"):
        align(no_x, train)
    c_numeric = arff(tmp_path, "cnum.arff", "@relation r\n@attribute x numeric\n@attribute c "
                                            "numeric\n@attribute b {NO,YES}\n@attribute y {0,1}"
                                            "\n@data\n1,2,NO,1\n")
    with pytest.raises(ValueError, match=r"column 'c' is numeric here but nominal in the "
                                         r"training data"):
        align(c_numeric, train)


def test_label_columns_are_matched_by_name(tmp_path):
    X = np.arange(6.0).reshape(3, 2)
    Y = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.uint8)
    train = mlw.Dataset(X, Y, ["a", "b"], ["l1", "l2"], "train")
    swapped = mlw.Dataset(X, Y[:, ::-1].copy(), ["a", "b"], ["l2", "l1"], "test")
    np.testing.assert_array_equal(align(swapped, train).Y, Y)
    other = mlw.Dataset(X, Y, ["a", "b"], ["l1", "zz"], "test")
    with pytest.raises(ValueError, match=r"^test: label 'l2' of the training data is not a "
                                         r"label of this data; it has 'zz' instead$"):
        align(other, train)
    unlabelled = mlw.Dataset(X[:, ::-1], np.zeros((3, 0), np.uint8), ["b", "a"], [], "new")
    out = align(unlabelled, train)
    np.testing.assert_array_equal(out.X, X)
    assert out.n_labels == 0


def test_extra_columns_are_ignored_with_a_warning():
    X = np.arange(6.0).reshape(2, 3)
    Y = np.zeros((2, 1), np.uint8)
    train = mlw.Dataset(X[:, :2], Y, ["a", "b"], ["l"], "train")
    test = mlw.Dataset(X, Y, ["a", "b", "new"], ["l"], "test")
    with pytest.warns(DatasetWarning, match=r"test: ignored 1 column\(s\) the training data "
                                            r"does not have: 'new'"):
        out = align(test, train)
    np.testing.assert_array_equal(out.X, X[:, :2])


def test_csv_category_drift_gets_the_training_encoding(tmp_path):
    (tmp_path / "train.csv").write_text("x,c,y\n1,a,1\n2,b,0\n3,c,1\n")
    (tmp_path / "test.csv").write_text("x,c,y\n1,c,1\n2,a,0\n")  # two values: one column
    train = mlw.load_dataset(tmp_path / "train.csv", label_columns=["y"])
    test = mlw.load_dataset(tmp_path / "test.csv", label_columns=["y"])
    assert test.feature_names == ["x", "c"]
    out = align(test, train)
    assert out.feature_names == ["x", "c=a", "c=b", "c=c"]
    np.testing.assert_array_equal(out.X, [[1, 0, 0, 1], [2, 1, 0, 0]])


def test_reference_survives_json_as_stored_in_a_model_file(tmp_path):
    train = arff(tmp_path, "train.arff", HEAD.format(c="x,y,z", b="NO,YES") + ROWS)
    test = arff(tmp_path, "test.arff", HEAD.format(c="z,y,x", b="YES,NO") + ROWS)
    ref = json.loads(json.dumps(reference_of(train)))
    np.testing.assert_array_equal(align(test, ref).X, train.X)


def test_datasets_without_a_schema_are_matched_by_name():
    a = mlw.Dataset(np.eye(3), np.eye(3, dtype=np.uint8), ["p", "q", "r"], ["1", "2", "3"], "a")
    b = mlw.Dataset(np.eye(3)[:, [2, 0, 1]], np.eye(3, dtype=np.uint8), ["r", "p", "q"],
                    ["1", "2", "3"], "b")
    np.testing.assert_array_equal(align(b, a).X, np.eye(3))


# -- CSV: a text typo in a numeric column ----------------------------------------------


def test_numeric_csv_column_with_a_typo_is_an_error_naming_row_and_column(tmp_path):
    p = tmp_path / "typo.csv"
    p.write_text("x,z,y\n" + "".join(f"{i}.5,{i},{i % 2}\n" for i in range(30))
                 + "3.x,7,1\n")
    with pytest.raises(ValueError, match=r"^typo\.csv:32: column 'x', data row 31: '3\.x' is "
                                         r"not a number, though 30 of the column's values are"):
        mlw.load_dataset(p, label_columns=["y"])
    ds = mlw.load_dataset(p, label_columns=["y"], categorical=["x"], drop_identifiers=False)
    assert "x=3.x" in ds.feature_names


def test_missing_markers_in_a_numeric_csv_column_are_nan(tmp_path):
    p = tmp_path / "na.csv"
    p.write_text("x,y\n1.5,1\nNA,0\n?,1\n,0\n2,1\nnull,0\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = mlw.load_dataset(p, label_columns=["y"])
    assert ds.feature_names == ["x"]
    np.testing.assert_array_equal(np.isnan(ds.X[:, 0]), [0, 1, 1, 1, 0, 1])


def test_text_columns_stay_text(tmp_path):
    p = tmp_path / "text.csv"
    p.write_text("colour,y\nred,1\nblue,0\n3,1\nred,0\n")  # mostly words: a category
    ds = mlw.load_dataset(p, label_columns=["y"])
    assert ds.feature_names == ["colour=3", "colour=blue", "colour=red"]


def test_parquet_text_column_of_numbers_with_a_typo(tmp_path):
    p = tmp_path / "t.parquet"
    pl.DataFrame({"x": ["1", "2", "3", "oops"], "y": [0, 1, 0, 1]}).write_parquet(p)
    with pytest.raises(ValueError, match=r"^t\.parquet: column 'x', row 3 \(0-based\): 'oops' "
                                         r"is not a number"):
        mlw.load_dataset(p, label_columns=["y"])


class _LeastSquares(mlw.MultiLabelLearner):
    """Scores from a least-squares fit on the encoded columns: any misread column (a
    one-hot column in another place, an inverted 0/1 column) changes them."""

    def __init__(self, threshold: str = "fixed") -> None:
        self.threshold = threshold

    def _fit(self, X, Y):
        A = np.nan_to_num(np.asarray(X, dtype=float))
        self.W_ = np.linalg.lstsq(np.c_[A, np.ones(len(A))], np.asarray(Y, dtype=float),
                                  rcond=None)[0]

    def _predict_proba(self, X):
        A = np.nan_to_num(np.asarray(X, dtype=float))
        return np.clip(np.c_[A, np.ones(len(A))] @ self.W_, 0.0, 1.0)


def test_holdout_aligns_a_test_set_declared_in_another_order(tmp_path):
    """The issue's case: a test ARFF declaring ``{z,y,x}`` (and ``{YES,NO}``) gives the
    metrics of the same rows declared in the training order, through ``mlw.holdout``."""
    rng = np.random.default_rng(0)
    rows = "".join(f"{rng.normal():.3f},{rng.choice(list('xyz'))},{rng.choice(['YES', 'NO'])},"
                   f"{rng.integers(2)}\n" for _ in range(40))
    train = arff(tmp_path, "train.arff", HEAD.format(c="x,y,z", b="NO,YES") + rows)
    same = arff(tmp_path, "same.arff", HEAD.format(c="x,y,z", b="NO,YES") + rows)
    other = arff(tmp_path, "other.arff", HEAD.format(c="z,y,x", b="YES,NO") + rows)
    metrics = ["hamming_loss", "f1_micro"]
    expected = mlw.holdout(_LeastSquares(), train, same, metrics).metrics
    assert mlw.holdout(_LeastSquares(), train, other, metrics).metrics == expected
    # without the alignment the columns are misread: other scores
    misread = _LeastSquares().fit(train.X, train.Y).predict_proba(other.X)
    assert not np.allclose(misread, _LeastSquares().fit(train.X, train.Y).predict_proba(same.X))
