"""ARFF policies and quirks on small hand-written files (one quirk per test)."""

from __future__ import annotations

import bz2
import gzip
import lzma
import math

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw.io import DatasetWarning, load_arff
from mlw.io.arff import IDENTIFIER_MIN_VALUES, binary_one_index
from mlw.io.arff_header import unquote


def arff(tmp_path, text, name="t.arff", xml=None):
    p = tmp_path / name
    p.write_text(text)
    if xml is not None:
        stem = name.split("-")[0].replace(".arff", "")
        (tmp_path / f"{stem}.xml").write_text(xml)
    return p


def mulan_xml(*labels, ns=True):
    body = "".join(f'<label name="{lab}"></label>' for lab in labels)
    xmlns = ' xmlns="http://mulan.sourceforge.net/labels"' if ns else ""
    return f'<?xml version="1.0" encoding="utf-8"?><labels{xmlns}>{body}</labels>'


def dense(M):
    return M.toarray() if sp.issparse(M) else np.asarray(M)


def test_comments_blank_lines_crlf_and_tabs(tmp_path):
    text = ("% a comment before the relation\r\n@RELATION 'r: -C 1'\r\n\r\n"
            "% comment between attributes\r\n@ATTRIBUTE lab {0,1}\r\n"
            "@attribute\tx\tNUMERIC\r\n@attribute y real\r\n\r\n@data\r\n\r\n"
            "% a comment row\r\n1, 2.5 ,\t-3\r\n\r\n0,1e3,4\r\n   \r\n")
    ds = load_arff(arff(tmp_path, text))
    np.testing.assert_array_equal(ds.X, [[2.5, -3.0], [1000.0, 4.0]])
    np.testing.assert_array_equal(ds.Y, [[1], [0]])
    assert ds.feature_names == ["x", "y"] and ds.label_names == ["lab"]


def test_utf8_byte_order_mark_and_non_ascii_names(tmp_path):
    text = ("\ufeff@relation 'r: -C 1'\n@attribute 'étiquette' {non,oui}\n"
            "@attribute x numeric\n@data\noui,2\n")
    p = tmp_path / "bom.dat"
    p.write_text(text, encoding="utf-8")
    ds = mlw.load_dataset(p)  # sniffed despite the BOM
    assert ds.label_names == ["étiquette"] and ds.Y[0, 0] == 1


def test_quoted_names_are_unescaped_unquoted_keep_backslashes(tmp_path):
    text = ("@relation r\n@attribute 'Swainson\\'s Thrush' {0,1}\n"
            "@attribute \"double \\\"q\\\"\" {0,1}\n@attribute '50\\%' numeric\n"
            "@attribute a\\b numeric\n@attribute 'sp ace, comma' numeric\n@data\n"
            "1,0,0.5,1,2\n")
    ds = load_arff(arff(tmp_path, text), n_labels=2)
    assert ds.label_names == ["Swainson's Thrush", 'double "q"']
    assert ds.feature_names == ["50%", "a\\b", "sp ace, comma"]


def test_unquote_escapes():
    assert unquote("'a\\'b'") == "a'b"
    assert unquote("'tab\\tnew\\nline'") == "tab\tnew\nline"
    assert unquote("'keep \\x as is'") == "keep \\x as is"
    assert unquote("'back\\\\slash'") == "back\\slash"


def test_xml_decides_the_labels_and_their_order(tmp_path):
    text = ("@relation 'r: -C 2'\n@attribute f1 numeric\n@attribute f2 numeric\n"
            "@attribute B {0,1}\n@attribute A {0,1}\n@data\n1,2,1,0\n3,4,0,1\n")
    p = arff(tmp_path, text, "toy-train.arff", xml=mulan_xml("A", "B"))
    ds = load_arff(p)
    assert ds.label_names == ["A", "B"] and ds.feature_names == ["f1", "f2"]
    np.testing.assert_array_equal(ds.Y, [[0, 1], [1, 0]])
    assert ds.provenance["label_source"] == "xml"
    assert "contradicts" in ds.provenance["notes"][0]
    # without the XML, -C 2 makes the first two attributes labels, and f2 = 2 is no label
    with pytest.raises(ValueError, match=r"toy-train\.arff:7: label 'f2' has value 2"):
        load_arff(p, xml=False)


def test_xml_without_namespace_and_nested_labels(tmp_path):
    xml = ('<labels><label name="top"><label name="child"></label></label>'
           '<label name="other"/></labels>')
    text = ("@relation r\n@attribute x numeric\n@attribute top {0,1}\n"
            "@attribute child {0,1}\n@attribute other {0,1}\n@data\n1,1,1,0\n")
    ds = load_arff(arff(tmp_path, text, "h.arff", xml=xml))
    assert ds.label_names == ["top", "child", "other"]


def test_meka_negative_c_means_last_labels(tmp_path):
    text = ("@relation 'r: -C -2'\n@attribute x numeric\n@attribute a {0,1}\n"
            "@attribute b {0,1}\n@data\n5,1,0\n")
    ds = load_arff(arff(tmp_path, text))
    assert ds.label_names == ["a", "b"] and ds.feature_names == ["x"]


def test_n_labels_and_label_columns_override(tmp_path):
    text = ("@relation 'r: -C 1'\n@attribute a {0,1}\n@attribute b {0,1}\n"
            "@attribute x numeric\n@data\n1,0,5\n0,1,6\n")
    p = arff(tmp_path, text)
    assert load_arff(p, n_labels=2).label_names == ["a", "b"]
    ds = load_arff(p, label_columns=["b", "a"])
    assert ds.label_names == ["b", "a"]
    np.testing.assert_array_equal(ds.Y, [[0, 1], [1, 0]])


def test_sparse_rows_including_slashdot_empty_first_token(tmp_path):
    text = ("@relation 'r: -C -1'\n@attribute x0 numeric\n@attribute x1 numeric\n"
            "@attribute lab {0,1}\n\n@data\n\n{,2 1}\n{0 1.5, 1 -2}\n{}\n{ 1 3 ,, 2 1 }\n")
    ds = load_arff(arff(tmp_path, text))
    assert sp.issparse(ds.X) and sp.issparse(ds.Y)
    np.testing.assert_array_equal(dense(ds.X), [[0, 0], [1.5, -2], [0, 0], [0, 3]])
    np.testing.assert_array_equal(dense(ds.Y), [[1], [0], [0], [1]])


def test_mixed_dense_and_sparse_rows_give_sparse(tmp_path):
    text = ("@relation 'r: -C 1'\n@attribute lab {0,1}\n@attribute x numeric\n@data\n"
            "1,2\n{1 3}\n")
    ds = load_arff(arff(tmp_path, text))
    assert sp.issparse(ds.X)
    np.testing.assert_array_equal(dense(ds.X), [[2], [3]])
    np.testing.assert_array_equal(dense(ds.Y), [[1], [0]])


def test_sparse_option_forces_either_representation(tmp_path):
    text = "@relation 'r: -C 1'\n@attribute lab {0,1}\n@attribute x numeric\n@data\n1,2\n"
    p = arff(tmp_path, text)
    assert sp.issparse(load_arff(p, sparse=True).X)
    sp_text = "@relation 'r: -C 1'\n@attribute lab {0,1}\n@attribute x numeric\n@data\n{1 2}\n"
    ds = load_arff(arff(tmp_path, sp_text, "s.arff"), sparse=False)
    assert isinstance(ds.X, np.ndarray) and isinstance(ds.Y, np.ndarray)


@pytest.mark.parametrize("values,one", [
    (["0", "1"], 1), (["1", "0"], 0), (["NO", "YES"], 1), (["YES", "NO"], 0),
    (["false", "true"], 1), (["True", "False"], 0), (["a", "b"], 1), (["b", "a"], 1),
    (["-1", "1"], 1), (["1", "-1"], 0),
])
def test_binary_one_index(values, one):
    assert binary_one_index(values) == one


def test_two_valued_nominals_are_one_column(tmp_path):
    text = ("@relation 'r: -C 1'\n@attribute lab {0,1}\n@attribute yn {YES,NO}\n"
            "@attribute ab {a,b}\n@attribute bin {0,1}\n@data\n"
            "1,YES,a,1\n0,NO,b,0\n0,?,?,?\n")
    ds = load_arff(arff(tmp_path, text))
    assert ds.feature_names == ["yn", "ab", "bin"]
    np.testing.assert_array_equal(ds.X[:2], [[1, 0, 1], [0, 1, 0]])
    assert np.isnan(ds.X[2]).all()


def test_sparse_absent_nominal_is_its_first_value(tmp_path):
    # absent in a sparse row = index 0 = YES here, so the YES/NO column is 1
    text = ("@relation 'r: -C 1'\n@attribute lab {0,1}\n@attribute yn {YES,NO}\n"
            "@attribute w {0,1}\n@data\n{1 NO, 2 1}\n{0 1}\n")
    ds = load_arff(arff(tmp_path, text))
    np.testing.assert_array_equal(dense(ds.X), [[0, 1], [1, 0]])
    np.testing.assert_array_equal(dense(ds.Y), [[0], [1]])


def test_inverted_binary_label(tmp_path):
    text = ("@relation 'r: -C -1'\n@attribute x numeric\n@attribute lab {YES,NO}\n@data\n"
            "{0 1}\n{0 2, 1 NO}\n1,YES\n")
    ds = load_arff(arff(tmp_path, text))
    np.testing.assert_array_equal(dense(ds.Y), [[1], [0], [1]])


def test_numeric_labels_must_be_zero_or_one(tmp_path):
    text = "@relation 'r: -C 1'\n@attribute lab numeric\n@attribute x numeric\n@data\n1,2\n0,3\n"
    np.testing.assert_array_equal(load_arff(arff(tmp_path, text)).Y, [[1], [0]])
    bad = text + "2,4\n"
    with pytest.raises(ValueError, match=r"t\.arff:7: label 'lab' has value 2"):
        load_arff(arff(tmp_path, bad))


def test_three_or_more_values_are_one_hot_missing_is_nan(tmp_path):
    text = ("@relation 'r: -C 1'\n@attribute lab {0,1}\n@attribute c {red,'dark green',blue}\n"
            "@attribute x numeric\n@data\n1,red,1\n0,'dark green',2\n1,blue,?\n0,?,4\n")
    ds = load_arff(arff(tmp_path, text))
    assert ds.feature_names == ["c=red", "c=dark green", "c=blue", "x"]
    expected = [[1, 0, 0, 1], [0, 1, 0, 2], [0, 0, 1, np.nan], [np.nan, np.nan, np.nan, 4]]
    np.testing.assert_array_equal(ds.X, expected)
    assert ds.provenance["one_hot"] == ["c"] and ds.provenance["missing_values"] == 2


def test_one_hot_in_sparse_rows(tmp_path):
    text = ("@relation 'r: -C 1'\n@attribute lab {0,1}\n@attribute c {u,v,w}\n@data\n"
            "{1 w}\n{0 1}\n{1 ?}\n")
    ds = load_arff(arff(tmp_path, text))
    assert sp.issparse(ds.X)
    np.testing.assert_array_equal(dense(ds.X), [[0, 0, 1], [1, 0, 0], [np.nan] * 3])


def test_identifier_like_nominal_is_dropped_with_a_warning(tmp_path):
    n = 2 * IDENTIFIER_MIN_VALUES + 2
    ids = [f"id{i}" for i in range(n)]
    rows = "".join(f"{ids[i]},{i},{i % 2}\n" for i in range(n))
    text = (f"@relation 'r: -C -1'\n@attribute protein {{{','.join(ids)}}}\n"
            f"@attribute x numeric\n@attribute lab {{0,1}}\n@data\n{rows}")
    with pytest.warns(DatasetWarning, match="protein"):
        ds = load_arff(arff(tmp_path, text))
    assert ds.feature_names == ["x"]
    assert ds.provenance["dropped"][0]["attribute"] == "protein"
    kept = load_arff(arff(tmp_path, text), drop_identifiers=False)
    assert kept.n_features == n + 1


def test_small_file_keeps_a_many_valued_nominal(tmp_path):
    # 4 distinct values in 4 rows is not an identifier: below the floor of 20
    text = ("@relation 'r: -C 1'\n@attribute lab {0,1}\n@attribute c {a,b,c,d}\n@data\n"
            "1,a\n0,b\n1,c\n0,d\n")
    ds = load_arff(arff(tmp_path, text))
    assert ds.n_features == 4


def test_string_and_date_attributes_are_dropped(tmp_path):
    text = ("@relation 'r: -C 1'\n@attribute lab {0,1}\n@attribute s string\n"
            "@attribute d date 'yyyy-MM-dd'\n@attribute x numeric\n@data\n"
            "1,'hello, world','2020-01-01',3\n0,bye,'2021-02-02',4\n")
    with pytest.warns(DatasetWarning, match="string attribute"):
        ds = load_arff(arff(tmp_path, text))
    assert ds.feature_names == ["x"]
    assert [d["attribute"] for d in ds.provenance["dropped"]] == ["s", "d"]


def test_quoted_nominal_values_in_data(tmp_path):
    text = ("@relation 'r: -C 1'\n@attribute lab {0,1}\n"
            "@attribute c {'it\\'s',\"a, b\",plain}\n@data\n1,'it\\'s'\n0,\"a, b\"\n1,plain\n")
    ds = load_arff(arff(tmp_path, text))
    np.testing.assert_array_equal(ds.X, np.eye(3))


def test_instance_weights_are_ignored_and_recorded(tmp_path):
    text = ("@relation 'r: -C 1'\n@attribute lab {0,1}\n@attribute x numeric\n@data\n"
            "1,2,{0.5}\n{1 3},{2}\n0,4\n")
    with pytest.warns(DatasetWarning, match="weights"):
        ds = load_arff(arff(tmp_path, text))
    np.testing.assert_array_equal(dense(ds.X), [[2], [3], [4]])
    assert "2 instance weights ignored" in ds.provenance["warnings"]


@pytest.mark.parametrize("token", ["1", "-0.5", "+3", ".5", "5.", "1e5", "1E-300", "-2.5e+10",
                                   "0.38208961486816406", "123456789012345678901234",
                                   "1.7976931348623157e308", "4.9e-324", "0.1", "007",
                                   "3.14159265358979323846264338327950288"])
def test_numbers_parse_exactly_like_float(tmp_path, token):
    text = f"@relation 'r: -C 1'\n@attribute lab {{0,1}}\n@attribute x numeric\n@data\n1,{token}\n"
    ds = load_arff(arff(tmp_path, text))
    assert ds.X[0, 0] == float(token)
    assert math.copysign(1, ds.X[0, 0]) == math.copysign(1, float(token))


@pytest.mark.parametrize("suffix,opener", [(".gz", gzip.open), (".bz2", bz2.open),
                                           (".xz", lzma.open)])
def test_compressed_files(tmp_path, suffix, opener):
    text = "@relation 'r: -C 1'\n@attribute lab {0,1}\n@attribute x numeric\n@data\n1,2\n"
    p = tmp_path / f"z-train.arff{suffix}"
    with opener(p, "wt") as fh:
        fh.write(text)
    ds = mlw.load_dataset(p)
    assert ds.name == "z-train" and ds.X[0, 0] == 2.0
    q = tmp_path / f"noext{suffix}"  # sniffed through the decompression
    q.write_bytes(p.read_bytes())
    assert mlw.load_dataset(q).X[0, 0] == 2.0


def test_xml_found_beside_a_compressed_file(tmp_path):
    text = "@relation r\n@attribute x numeric\n@attribute lab {0,1}\n@data\n2,1\n"
    p = tmp_path / "toy-test.arff.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(text)
    (tmp_path / "toy.xml").write_text(mulan_xml("lab"))
    ds = mlw.load_dataset(p)
    assert ds.label_names == ["lab"] and ds.provenance["xml"].endswith("toy.xml")


def test_empty_data_section(tmp_path):
    text = "@relation 'r: -C 1'\n@attribute lab {0,1}\n@attribute x numeric\n@data\n"
    ds = load_arff(arff(tmp_path, text))
    assert ds.X.shape == (0, 1) and ds.Y.shape == (0, 1)
