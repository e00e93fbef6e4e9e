"""Every shared real dataset loads with the right shape, labels and representation, and
agrees value for value with the slow pure-Python reference reader."""

from __future__ import annotations

import bz2
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import mlw
from mlw.io import DatasetWarning, read_label_xml

# file -> (instances, features, labels, sparse)
EXPECTED = {
    "mulan/emotions-train.arff": (391, 72, 6, False),
    "mulan/emotions-test.arff": (202, 72, 6, False),
    "mulan/scene-train.arff": (1211, 294, 6, False),
    "mulan/scene-test.arff": (1196, 294, 6, False),
    "mulan/yeast-train.arff": (1500, 103, 14, False),
    "mulan/yeast-test.arff": (917, 103, 14, False),
    # flags: 19 attributes -> 43 columns (landmass 6, zone 4, language 10, religion 8
    # values one-hot; the {0,1} ones stay one column)
    "mulan/flags-train.arff": (129, 43, 7, False),
    "mulan/flags-test.arff": (65, 43, 7, False),
    # birds: 258 numeric + hasSegments {0,1} (1 column) + location (12 values, one-hot)
    "mulan/birds-train.arff": (322, 271, 19, False),
    "mulan/birds-test.arff": (323, 271, 19, False),
    # genbase: protein (identifier) dropped, 1185 {YES,NO} features one column each
    "mulan/genbase-train.arff": (463, 1185, 27, False),
    "mulan/genbase-test.arff": (199, 1185, 27, False),
    "mulan/medical.arff": (1954, 1909, 45, True),
    "mulan/enron-train.arff": (1123, 1001, 53, True),
    "mulan/enron-test.arff": (579, 1001, 53, True),
    "mulan/slashdot-train.arff": (3025, 3125, 20, True),
    "mulan/slashdot-test.arff": (757, 3125, 20, True),
    "mulan/bibtex-train.arff": (4880, 1836, 159, True),
    "mulan/bibtex-test.arff": (2515, 1836, 159, True),
    # The shared Music.arff holds 592 rows and 77 attributes (liac-arff agrees); the
    # README's 593x72 describes the original MEKA file, not this copy.
    "meka/Music.arff": (592, 71, 6, False),
    "meka/Yeast.arff.bz2": (2417, 103, 14, False),
}


def _load(datasets_dir: Path, rel: str) -> mlw.Dataset:
    with pytest.warns(DatasetWarning) if "genbase" in rel else _nullcontext():
        return mlw.load_dataset(datasets_dir / rel)


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_every_shared_file_is_covered(datasets_dir):
    files = {str(p.relative_to(datasets_dir)) for p in datasets_dir.glob("*/*.arff*")}
    assert files == set(EXPECTED) | {"meka/Imdb.arff.bz2"}


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_shape_and_representation(datasets_dir, rel):
    n, d, L, sparse = EXPECTED[rel]
    ds = _load(datasets_dir, rel)
    assert ds.X.shape == (n, d) and ds.Y.shape == (n, L)
    assert len(ds.feature_names) == d and len(ds.label_names) == L
    assert sp.issparse(ds.X) == sparse and sp.issparse(ds.Y) == sparse
    assert ds.X.dtype == np.float64 and ds.Y.dtype == np.uint8
    if sparse:
        assert ds.X.format == "csr" and ds.X.has_canonical_format
    assert ds.Y.sum() > 0
    # every label column is a real 0/1 column, and names are unique
    assert len(set(ds.label_names)) == L and len(set(ds.feature_names)) == d


def test_exact_checks_of_the_brief(datasets_dir, mulan_dir, meka_dir):
    em = mlw.load_dataset(mulan_dir / "emotions-train.arff")
    assert (em.n_instances, em.n_features, em.n_labels) == (391, 72, 6)
    med = mlw.load_dataset(mulan_dir / "medical.arff")
    assert (med.n_instances, med.n_labels) == (1954, 45)
    with pytest.warns(DatasetWarning, match="protein"):
        gb = mlw.load_dataset(mulan_dir / "genbase-train.arff")
    assert (gb.n_instances, gb.n_labels) == (463, 27)
    assert "protein" not in gb.feature_names
    assert gb.provenance["dropped"][0]["attribute"] == "protein"
    assert "identifier" in gb.provenance["dropped"][0]["reason"]
    assert any("protein" in w for w in gb.provenance["warnings"])
    music = mlw.load_dataset(meka_dir / "Music.arff")
    assert music.provenance["label_source"] == "meka"
    assert music.label_names[0] == "amazed-suprised" and music.n_labels == 6


def test_yeast_label_order_follows_the_xml(mulan_dir):
    ds = mlw.load_dataset(mulan_dir / "yeast-train.arff")
    xml = read_label_xml(mulan_dir / "yeast.xml")
    assert ds.label_names == xml
    # the XML order differs from the ARFF order (Class6 before Class4)
    assert ds.label_names[:5] == ["Class1", "Class2", "Class3", "Class6", "Class4"]
    # and the columns really moved: compare with the label-by-position reading
    by_position = mlw.load_dataset(mulan_dir / "yeast-train.arff", n_labels=-14)
    for j, name in enumerate(ds.label_names):
        k = by_position.label_names.index(name)
        np.testing.assert_array_equal(ds.Y[:, j], by_position.Y[:, k])
    assert not np.array_equal(ds.Y, by_position.Y)


def test_enron_label_order_follows_the_xml(mulan_dir):
    ds = mlw.load_dataset(mulan_dir / "enron-train.arff")
    assert ds.label_names == read_label_xml(mulan_dir / "enron.xml")


def test_slashdot_labels_are_the_last_20_per_the_xml(mulan_dir):
    ds = mlw.load_dataset(mulan_dir / "slashdot-train.arff")
    assert ds.provenance["relation"] == "slashdot: -C 20"
    assert ds.label_names == read_label_xml(mulan_dir / "slashdot.xml")
    assert ds.label_names[-1] == "Apache" and ds.n_features == 3125
    assert ds.provenance["label_source"] == "xml"
    assert any("-C 20" in note for note in ds.provenance["notes"])
    # the quirk row "{,3125 1}" (line 4374) is read as label Idle (attribute 3125) only
    row = _row_of_line(mulan_dir / "slashdot-train.arff", 4374)
    assert ds.X[row].nnz == 0
    assert ds.Y[row].indices.tolist() == [ds.label_names.index("Idle")]


def _row_of_line(path: Path, line_no: int) -> int:
    lines = path.read_text().splitlines()
    data_start = next(i for i, ln in enumerate(lines) if ln.strip().lower() == "@data")
    return sum(1 for ln in lines[data_start + 1:line_no - 1] if ln.strip())


def test_birds_label_names_are_unescaped(mulan_dir):
    ds = mlw.load_dataset(mulan_dir / "birds-train.arff")
    assert "Swainson's Thrush" in ds.label_names
    assert "MacGillivray's Warbler" in ds.label_names
    assert ds.label_names == read_label_xml(mulan_dir / "birds.xml")
    # many birds recordings have no label at all
    assert (np.asarray(ds.Y).sum(axis=1) == 0).sum() > 100


def test_medical_quoted_feature_with_escaped_percent(mulan_dir):
    ds = mlw.load_dataset(mulan_dir / "medical.arff")
    assert "50%" in ds.feature_names
    assert not any("\\" in f for f in ds.feature_names)
    assert ds.provenance["relation"].startswith("medical-corrected")


def test_word_features_declared_nominal_stay_one_sparse_column(mulan_dir):
    for name, d in (("bibtex-train", 1836), ("enron-train", 1001), ("medical", 1909)):
        ds = mlw.load_dataset(mulan_dir / f"{name}.arff")
        assert ds.n_features == d and sp.issparse(ds.X)
        assert set(np.unique(ds.X.data).tolist()) == {1.0}
        assert ds.X.nnz < 0.1 * ds.X.shape[0] * ds.X.shape[1]


def test_genbase_yes_no_features_are_one_column_yes_is_one(mulan_dir):
    with pytest.warns(DatasetWarning):
        ds = mlw.load_dataset(mulan_dir / "genbase-test.arff")
    assert set(np.unique(ds.X).tolist()) == {0.0, 1.0}
    # first test row: PS00010.. are mostly NO; compare one value with the raw text
    lines = (mulan_dir / "genbase-test.arff").read_text().splitlines()
    first = lines[next(i for i, ln in enumerate(lines) if ln.lower().startswith("@data")) + 1]
    values = first.split(",")[1:1186]
    np.testing.assert_array_equal(ds.X[0], [1.0 if v == "YES" else 0.0 for v in values])


def test_genbase_duplicate_rows_are_kept(mulan_dir):
    with pytest.warns(DatasetWarning):
        tr = mlw.load_dataset(mulan_dir / "genbase-train.arff")
        te = mlw.load_dataset(mulan_dir / "genbase-test.arff")
    train_rows = {r.tobytes() for r in tr.X}
    assert sum(r.tobytes() in train_rows for r in te.X) == 157


@pytest.mark.parametrize("rel,n_labels", [
    ("mulan/emotions-train.arff", None), ("mulan/flags-train.arff", None),
    ("mulan/birds-test.arff", None), ("mulan/enron-test.arff", None),
    ("mulan/slashdot-test.arff", None), ("meka/Music.arff", 6),
    ("mulan/yeast-test.arff", None),
])
def test_values_agree_with_the_naive_reader(datasets_dir, rel, n_labels):
    import naive_io_arff

    path = datasets_dir / rel
    ds = mlw.load_dataset(path)
    labels = None if n_labels else read_label_xml(path.with_name(
        path.name.split("-")[0].replace(".arff", "") + ".xml"))
    X, Y, fnames, lnames = naive_io_arff.read(path.read_text(), labels, n_labels)
    assert ds.feature_names == fnames and ds.label_names == lnames
    Xd = ds.X.toarray() if sp.issparse(ds.X) else ds.X
    Yd = ds.Y.toarray() if sp.issparse(ds.Y) else ds.Y
    np.testing.assert_array_equal(Xd, np.array(X, dtype=np.float64))
    np.testing.assert_array_equal(Yd, np.array(Y, dtype=np.uint8))


def test_bz2_gives_the_same_as_plain(meka_dir, tmp_path):
    plain = tmp_path / "Yeast.arff"
    plain.write_bytes(bz2.open(meka_dir / "Yeast.arff.bz2").read())
    a = mlw.load_dataset(meka_dir / "Yeast.arff.bz2")
    b = mlw.load_dataset(plain)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.Y, b.Y)
    assert a.name == b.name == "Yeast"


@pytest.fixture(scope="module")
def imdb(meka_dir):
    return mlw.load_dataset(meka_dir / "Imdb.arff.bz2")


@pytest.mark.slow
def test_imdb_scale(imdb):
    assert imdb.X.shape == (120919, 1001) and imdb.Y.shape == (120919, 28)
    assert sp.issparse(imdb.X) and sp.issparse(imdb.Y)
    assert imdb.X.format == "csr" and imdb.Y.format == "csr"
    assert imdb.label_names[0] == "Sci-Fi" and imdb.provenance["meka_c"] == 28
    assert set(np.unique(imdb.X.data).tolist()) == {1.0}
    assert imdb.X.nnz < 0.05 * 120919 * 1001


@pytest.mark.slow
def test_imdb_first_row_matches_the_text(imdb, meka_dir):
    with bz2.open(meka_dir / "Imdb.arff.bz2", "rt") as fh:
        for line in fh:
            if line.strip().lower() == "@data":
                break
        first = next(ln for ln in fh if ln.strip())
    idx = [int(e.split()[0]) for e in first.strip().strip("{}").split(",")]
    assert imdb.Y[0].indices.tolist() == [i for i in idx if i < 28]
    assert imdb.X[0].indices.tolist() == [i - 28 for i in idx if i >= 28]


NOMINAL_TYPES = [None, ["0", "1"], ["YES", "NO"], ["a", "b"], ["u", "v", "w", "x"],
                 ["1", "0"], ["lo", "mid", "hi"]]


@st.composite
def arff_texts(draw):
    """A random Mulan-style ARFF text (labels last) with numeric and nominal features,
    missing values, dense or sparse rows; and its number of labels."""
    d = draw(st.integers(1, 6))
    L = draw(st.integers(1, 3))
    n = draw(st.integers(1, 8))
    # a label declared {1,0} has its FIRST value true: absent from a sparse row, it is on
    types = ([draw(st.sampled_from(NOMINAL_TYPES)) for _ in range(d)]
             + [draw(st.sampled_from([["0", "1"], ["1", "0"]])) for _ in range(L)])
    sparse = draw(st.booleans())
    lines = ["@relation r"]
    for j, t in enumerate(types):
        name = f"f{j}" if j < d else f"y{j - d}"
        lines.append(f"@attribute {name} " + ("numeric" if t is None else "{" + ",".join(t) + "}"))
    lines.append("@data")
    for _ in range(n):
        vals = []
        for j, t in enumerate(types):
            missing = j < d and draw(st.integers(0, 9)) == 0
            if missing:
                vals.append("?")
            elif t is None:
                vals.append(repr(draw(st.sampled_from([0.0, 1.5, -2.0, 1e-3, 0.1, 7.0]))))
            else:
                vals.append(draw(st.sampled_from(t)))
        if sparse:
            entries = [f"{j} {v}" for j, (v, t) in enumerate(zip(vals, types, strict=True))
                       if not (v in ("0.0",) or (t is not None and v == t[0]))]
            lines.append("{" + ",".join(entries) + "}")
        else:
            lines.append(",".join(vals))
    return "\n".join(lines) + "\n", L


@settings(max_examples=60, deadline=None)
@given(arff_texts())
def test_random_nominal_files_agree_with_the_naive_reader(case):
    import tempfile

    import naive_io_arff

    text, L = case
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "r.arff"
        p.write_text(text)
        ds = mlw.load_dataset(p, n_labels=-L)
    X, Y, fnames, lnames = naive_io_arff.read(text, None, -L)
    assert ds.feature_names == fnames and ds.label_names == lnames
    Xd = ds.X.toarray() if sp.issparse(ds.X) else ds.X
    Yd = ds.Y.toarray() if sp.issparse(ds.Y) else ds.Y
    np.testing.assert_array_equal(Xd, np.array(X, dtype=np.float64).reshape(Xd.shape))
    np.testing.assert_array_equal(Yd, np.array(Y, dtype=np.uint8).reshape(Yd.shape))
