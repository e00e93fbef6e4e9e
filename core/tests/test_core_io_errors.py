"""Malformed files raise a one-line ValueError naming the file, the line and the reason."""

from __future__ import annotations

import pytest

import mlw
from mlw.io import DataFormatError, load_arff
from mlw.io.tabular import load_csv
from mlw.io.xc import load_xc

HEAD = ("@relation 'r: -C 1'\n@attribute lab {0,1}\n@attribute x numeric\n"
        "@attribute c {a,b,c}\n@data\n")
# data rows start on line 6


def fails(tmp_path, text, pattern, name="bad.arff", loader=load_arff, **kw):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(ValueError, match=pattern) as info:
        loader(p, **kw)
    msg = str(info.value)
    assert "\n" not in msg, msg
    assert msg.startswith(name), msg
    return info.value


@pytest.mark.parametrize("row,pattern", [
    ("1,2", r"bad\.arff:7: expected 3 values, found 2"),
    ("1,2,a,4", r"bad\.arff:7: more than 3 values"),
    ("1,2,zz", r"bad\.arff:7: unknown value 'zz' for nominal attribute 'c' \(declared: a, b, c\)"),
    ("1,2.5x,a", r"bad\.arff:7: cannot parse '2\.5x' as a number \(numeric attribute 'x'\)"),
    ("1,1_000,a", r"bad\.arff:7: cannot parse '1_000' as a number"),
    ("1,nan,a", r"bad\.arff:7: cannot parse 'nan' as a number"),
    ("1,,a", r"bad\.arff:7: empty value for attribute 'x'"),
    ("1,2,", r"bad\.arff:7: empty value for attribute 'c'"),
    ("1,2,'a", r"bad\.arff:7: unterminated quoted value"),
    ("1,2 3,a", r"bad\.arff:7: cannot parse '2 3' as a number"),
    ("1,2,'a' x", r"bad\.arff:7: unexpected text"),
    ("{1 2, 5 1}", r"bad\.arff:7: sparse index 5 out of range .*indices 0\.\.2\)"),
    ("{1 2, 1 3}", r"bad\.arff:7: sparse index 1 appears twice"),
    ("{x 2}", r"bad\.arff:7: bad sparse entry 'x'"),
    ("{1}", r"bad\.arff:7: malformed sparse row"),
    ("{1 2", r"bad\.arff:7: malformed sparse row"),
    ("{1 2} junk", r"bad\.arff:7: unexpected text 'junk'"),
    ("{2 d}", r"bad\.arff:7: unknown value 'd' for nominal attribute 'c'"),
    ("?,1,a", r"bad\.arff:7: missing value '\?' for label 'lab'"),
])
def test_bad_rows(tmp_path, row, pattern):
    err = fails(tmp_path, HEAD + "0,1,b\n" + row + "\n", pattern)
    assert isinstance(err, DataFormatError) and err.line == 7


def test_error_line_counts_comments_and_blank_lines(tmp_path):
    text = HEAD + "\n% comment\n0,1,b\n\n1,x,a\n"
    fails(tmp_path, text, r"bad\.arff:10: cannot parse 'x'")


@pytest.mark.parametrize("text,pattern", [
    ("@attribute x numeric\n@data\n", r"bad\.arff:1: @attribute before @relation"),
    ("hello\n", r"bad\.arff:1: not an ARFF header: file does not start with @relation"),
    ("@relation r\n@attribute x numeric\n", r"bad\.arff:2: no @data section"),
    ("@relation r\n@attribute x banana\n@data\n", r"bad\.arff:2: unknown type 'banana'"),
    ("@relation r\n@attribute x relational\n@data\n", r"bad\.arff:2: relational attributes"),
    ("@relation r\n@attribute x numeric\n@attribute x numeric\n@data\n",
     r"bad\.arff:3: attribute 'x' is declared twice"),
    ("@relation r\n@attribute x {a,b\n@data\n", r"bad\.arff:2: nominal value list has no"),
    ("@relation r\n@attribute x {a,a}\n@data\n", r"bad\.arff:2: nominal value 'a' is declared"),
    ("@relation r\n@attribute 'x numeric\n@data\n", r"bad\.arff:2: unterminated quoted name"),
    ("@relation r\n@data\n", r"bad\.arff:2: no @attribute declarations"),
    ("@relation r\n@attribute x\n@data\n", r"bad\.arff:2: attribute 'x' has no type"),
])
def test_bad_headers(tmp_path, text, pattern):
    fails(tmp_path, text, pattern)


def test_c_larger_than_the_attribute_count(tmp_path):
    text = "@relation 'r: -C 5'\n@attribute a {0,1}\n@attribute x numeric\n@data\n1,2\n"
    fails(tmp_path, text, r"bad\.arff:1: the relation name says -C 5 but the header declares "
                          r"2 attributes")


def test_n_labels_larger_than_the_attribute_count(tmp_path):
    text = "@relation r\n@attribute a {0,1}\n@attribute x numeric\n@data\n1,2\n"
    fails(tmp_path, text, r"bad\.arff: n_labels is 3 but", n_labels=3)


def test_missing_xml_label_names_the_xml_file_and_line(tmp_path):
    (tmp_path / "bad.xml").write_text('<?xml version="1.0"?>\n<labels>\n<label name="lab"/>\n'
                                      '<label name="ghost"/>\n</labels>\n')
    text = "@relation r\n@attribute x numeric\n@attribute lab {0,1}\n@data\n1,0\n"
    p = tmp_path / "bad-train.arff"
    p.write_text(text)
    with pytest.raises(ValueError, match=r"^bad\.xml:4: label 'ghost' is not an attribute of "
                                         r"bad-train\.arff$"):
        load_arff(p)


def test_malformed_xml(tmp_path):
    (tmp_path / "bad.xml").write_text("<labels>\n<label name='a'>\n</labels>")
    (tmp_path / "bad.arff").write_text("@relation r\n@attribute a {0,1}\n@data\n1\n")
    with pytest.raises(ValueError, match=r"^bad\.xml:3: malformed XML"):
        load_arff(tmp_path / "bad.arff")


def test_no_way_to_tell_the_labels(tmp_path):
    fails(tmp_path, "@relation r\n@attribute x numeric\n@data\n1\n",
          r"bad\.arff: cannot tell which attributes are labels")


def test_label_with_three_values(tmp_path):
    text = "@relation 'r: -C 1'\n@attribute lab {a,b,c}\n@attribute x numeric\n@data\na,1\n"
    fails(tmp_path, text, r"bad\.arff:2: label 'lab' is nominal with 3 values")


def test_unknown_label_column(tmp_path):
    text = "@relation r\n@attribute lab {0,1}\n@attribute x numeric\n@data\n1,2\n"
    fails(tmp_path, text, r"bad\.arff: label column 'nope' is not an attribute",
          label_columns=["nope"])


def test_truncated_bz2(tmp_path):
    import bz2
    data = bz2.compress(b"@relation 'r: -C 1'\n@attribute a {0,1}\n@data\n" + b"1\n" * 1000)
    p = tmp_path / "bad.arff.bz2"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"^bad\.arff\.bz2: cannot read the file"):
        load_arff(p)


# -- XC ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,pattern", [
    ("2 3\n0 1:1\n", r"bad\.txt:1: expected the header 'instances features labels'"),
    ("1 3 2\n5 1:1\n", r"bad\.txt:2: label index 5 out of range \(the header declares 2 labels\)"),
    ("1 3 2\n0 7:1\n", r"bad\.txt:2: feature index 7 out of range"),
    ("1 3 2\n0 1=1\n", r"bad\.txt:2: malformed feature '1=1'"),
    ("1 3 2\n0,x 1:1\n", r"bad\.txt:2: malformed label 'x'"),
    ("1 3 2\n0, 1:1\n", r"bad\.txt:2: malformed label"),
    ("1 3 2\n0 1:abc\n", r"bad\.txt:2: cannot parse 'abc' as a number"),
    ("1 3 2\n0 1:1\n1 2:1\n", r"bad\.txt:3: more rows than the 1 the header declares"),
    ("3 3 2\n0 1:1\n1 2:1\n", r"bad\.txt: the header declares 3 instances but the file has "
                              r"only 2 rows"),
    ("1 3 2\n0 1:1 1:2\n", r"bad\.txt:2: instance 0 \(0-based\) lists feature 1 twice"),
    ("1 3 2\n0,0 1:1\n", r"bad\.txt:2: instance 0 \(0-based\) lists label 0 twice"),
])
def test_bad_xc(tmp_path, text, pattern):
    fails(tmp_path, text, pattern, name="bad.txt", loader=load_xc)


# -- CSV -------------------------------------------------------------------------------

@pytest.mark.parametrize("text,kw,pattern", [
    ("a,b,y\n1,2,0\n3,4,2\n", {"label_columns": ["y"]}, r"bad\.csv:3: label 'y' has value 2"),
    ("a,b,y\n1,2,0\n3,4,\n", {"label_columns": ["y"]}, r"bad\.csv:3: missing value for label"),
    ("a,b,y\n1,2,0\n", {"label_columns": ["z"]}, r"bad\.csv:1: label column 'z' is not a"),
    ("a,b,y\n1,2,0\n", {"n_labels": 4}, r"bad\.csv:1: n_labels=4 but the file has 3 columns"),
    ("a,b,y\n1,2,x\n", {"label_columns": ["y"]}, r"bad\.csv: label column 'y' has type"),
])
def test_bad_csv(tmp_path, text, kw, pattern):
    fails(tmp_path, text, pattern, name="bad.csv", loader=load_csv, **kw)


def test_csv_needs_label_columns(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,y\n1,0\n")
    with pytest.raises(ValueError, match="label_columns"):
        mlw.load_dataset(p)


# -- found by the fuzz suite --------------------------------------------------


@pytest.mark.parametrize("value", ["9" * 400, "1e999", "-1e400"])
def test_number_too_large_for_a_float_names_line_and_attribute(tmp_path, value):
    err = fails(tmp_path, HEAD + "0,1,b\n" + f"1,{value},a\n",
                r"bad\.arff:7: '.*' is too large for a float64 \(numeric attribute 'x'\)")
    assert err.line == 7


def test_xc_number_too_large_for_a_float(tmp_path):
    fails(tmp_path, "2 3 2\n0 1:2\n1 0:1e999\n", r"bad\.xc:3: '1e999' is too large for a "
                                                 r"float64", name="bad.xc", loader=load_xc)


@pytest.mark.parametrize("value", ["1e999", "inf", "-inf"])
def test_csv_infinite_value_names_line_and_column(tmp_path, value):
    fails(tmp_path, f"x,y\n1,0\n{value},1\n", r"bad\.csv:3: column 'x', data row 2: -?inf is "
                                              r"not a finite number", name="bad.csv",
          loader=load_csv, label_columns=["y"])


def test_xml_with_an_unknown_encoding(tmp_path):
    (tmp_path / "r.arff").write_text(HEAD + "0,1,b\n")
    (tmp_path / "r.xml").write_text('<?xml version="1.0" encoding="utf999"?><labels/>')
    with pytest.raises(DataFormatError, match=r"^r\.xml: malformed XML \(LookupError: unknown "
                                              r"encoding"):
        load_arff(tmp_path / "r.arff")
