"""The svmlight / LIBSVM multi-label reader and writer: scikit-learn's files, both index
bases, the XC header, comments, sniffing, round trips and one-line errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

import mlw
from mlw.io import load_svmlight, write_svmlight, write_xc
from mlw.io.svmlight import sniff_svmlight


def _random(seed, n=40, d=25, L=6):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, format="csr", random_state=seed)
    X.data = np.round(X.data * 100) / 8
    Y = sp.csr_matrix((rng.random((n, L)) < 0.3).astype(np.uint8))
    return X, Y


def _same(ds, X, Y):
    assert ds.X.shape == X.shape and ds.Y.shape == Y.shape
    assert abs(ds.X - X).max() == 0 if X.nnz else ds.X.nnz == 0
    assert (ds.Y != Y).nnz == 0
    assert ds.X.dtype == np.float64 and ds.Y.dtype == np.uint8


@pytest.mark.parametrize("zero_based", [True, False])
def test_reads_scikit_learns_files(tmp_path, zero_based):
    X, Y = _random(0)
    X, Y = X.tolil(), Y.tolil()
    X[0, 0] = 1.5  # an index 0, so "auto" can tell a zero-based file
    X[1, X.shape[1] - 1] = 2.0
    Y[2, Y.shape[1] - 1] = 1
    p = tmp_path / "d.svm"
    dump_svmlight_file(X.tocsr(), Y.tocsr(), str(p), multilabel=True, zero_based=zero_based,
                       comment="a test")
    ds = mlw.load_dataset(p)
    _same(ds, sp.csr_matrix(X), sp.csr_matrix(Y))
    assert ds.provenance["zero_based"] is zero_based
    Xs, ys = load_svmlight_file(str(p), multilabel=True, zero_based=zero_based)
    assert abs(ds.X - Xs).max() == 0


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.booleans(), st.booleans(), st.integers(1, 60))
def test_write_read_round_trip(tmp_path_factory, seed, zero_based, header, chunk):
    X, Y = _random(seed, n=15, d=7, L=4)
    X, Y = X.tolil(), Y.tolil()
    X[3] = 0  # a row without features, and one with nothing at all
    Y[3] = 0
    Y[5] = 0
    X, Y = X.tocsr(), Y.tocsr()
    X.eliminate_zeros()
    Y.eliminate_zeros()
    ds = mlw.Dataset(X, Y, [f"f{j}" for j in range(7)], [f"l{j}" for j in range(4)])
    p = tmp_path_factory.mktemp("rt") / "d.txt"
    if header and not zero_based:
        with pytest.raises(ValueError, match="zero-based"):
            write_svmlight(ds, p, zero_based=False, header=True)
        return
    write_svmlight(ds, p, zero_based=zero_based, header=header)
    back = load_svmlight(p, zero_based=zero_based, n_features=7, n_labels=4,
                         chunk_bytes=chunk)
    _same(back, X, Y)


def test_xc_header_and_sniffing(tmp_path):
    X, Y = _random(1)
    ds = mlw.Dataset(X, Y, [f"f{j}" for j in range(25)], [f"l{j}" for j in range(6)])
    a, b = tmp_path / "with_header.txt", tmp_path / "plain.txt"
    write_xc(ds, a)
    write_svmlight(ds, b)
    assert open(a).readline().split() == ["40", "25", "6"]
    for p, fmt in ((a, "xc"), (b, "svmlight")):
        got = mlw.load_dataset(p)
        assert got.provenance["format"] == fmt
        _same(mlw.load_dataset(p, format="svmlight", n_features=25, n_labels=6), X, Y)
    assert mlw.load_dataset(a, format="svmlight").provenance["format"] == "svmlight"
    c = tmp_path / "d.libsvm"
    c.write_bytes(b.read_bytes())
    _same(mlw.load_dataset(c, n_features=25, n_labels=6), X, Y)


@pytest.mark.parametrize("head, claimed", [
    (b"# c\n0,2 1:0.5 3:1\n 2:1\n", True),
    (b"1 2:3\n", True),
    (b"3 4 5\n0 1:1\n", False),          # the XC header: the xc loader's
    (b"1,2\n3\n", False),                # no index:value anywhere
    (b"a,b 1:1\n", False),
    (b"@relation x\n", False),
    (b"x,y\n1,2\n", False),
])
def test_sniff(head, claimed):
    assert sniff_svmlight(head) is claimed


def test_comments_blank_lines_and_widths(tmp_path):
    p = tmp_path / "c.svm"
    p.write_text("# header comment\n\n1 1:2 # trailing comment 5:5\n\n   \n0,3 2:1\n 1:4\n")
    ds = mlw.load_dataset(p)
    assert ds.X.toarray().tolist() == [[2, 0], [0, 1], [4, 0]]
    assert ds.Y.toarray().tolist() == [[0, 1, 0, 0], [1, 0, 0, 1], [0, 0, 0, 0]]
    wide = load_svmlight(p, n_features=5, n_labels=9)
    assert wide.X.shape == (3, 5) and wide.Y.shape == (3, 9)


@pytest.mark.parametrize("text, kw, pattern", [
    ("1 1:1\n\n# c\na,b 1:1\n", {}, r"m\.svm:4: malformed label 'a'"),
    ("1 1:1\n2 1:x\n", {}, r"m\.svm:2: cannot parse 'x' as a number"),
    ("1 1:1\n2 3\n", {}, r"m\.svm:2: malformed feature '3'"),
    ("1 0:1\n", {"zero_based": False}, r"feature index 0 in a one-based file"),
    ("1 1:1 1:2\n", {}, r"lists feature 0 twice"),
    ("1,1 1:1\n", {}, r"lists label 1 twice"),
    ("1 1:1\n", {"zero_based": "yes"}, r"zero_based must be"),
    ("1 2:1e999\n", {}, r"too large for a float64"),
])
def test_errors_name_file_and_line(tmp_path, text, kw, pattern):
    p = tmp_path / "m.svm"
    p.write_text(text)
    with pytest.raises(ValueError, match=pattern):
        mlw.load_dataset(p, **kw)


def test_cli_reads_a_svm_file_and_refuses_a_bad_one(tmp_path):
    from typer.testing import CliRunner

    from mlw_cli.main import app

    X, Y = _random(2, n=60)
    good, bad = tmp_path / "x.svm", tmp_path / "bad.svm"
    write_svmlight(mlw.Dataset(X, Y, [f"f{j}" for j in range(25)],
                               [f"l{j}" for j in range(6)]), good)
    bad.write_text("0 1:1\n1 1:1:1\n")
    r = CliRunner().invoke(app, ["fit", "--learner", "br", "--data", str(good), "--json"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(app, ["fit", "--learner", "br", "--data", str(bad)])
    assert r.exit_code == 2
    assert "bad.svm:2" in r.output
