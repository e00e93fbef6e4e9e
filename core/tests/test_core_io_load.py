"""mlw.load_dataset: bundled names, path resolution, loader choice (format=, suffix,
sniffing), options, and loaders registered by plugins through the hook."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import mlw
from mlw.io import bundled_datasets
from mlw.io.bundled import BUNDLED, data_dir


def test_bundled_emotions_train_and_test():
    tr = mlw.load_dataset("emotions")
    te = mlw.load_dataset("emotions", split="test")
    assert tr.X.shape == (391, 72) and tr.Y.shape == (391, 6)
    assert te.X.shape == (202, 72) and te.Y.shape == (202, 6)
    assert tr.name == "emotions-train" and te.name == "emotions-test"
    assert tr.label_names == te.label_names and tr.provenance["label_source"] == "xml"
    assert isinstance(tr.X, np.ndarray) and tr.Y.dtype == np.uint8


def test_bundled_equals_the_shared_copy(mulan_dir):
    a = mlw.load_dataset("emotions", split="test")
    b = mlw.load_dataset(mulan_dir / "emotions-test.arff")
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.Y, b.Y)


def test_bundled_datasets_metadata_matches_the_files():
    listed = bundled_datasets()
    assert [d["name"] for d in listed] == ["emotions"]
    for d in listed:
        assert set(d) >= {"name", "splits", "shape", "description"}
        for split in d["splits"]:
            ds = mlw.load_dataset(d["name"], split=split)
            assert list(ds.X.shape) + [ds.n_labels] == d["shape"][split]


def test_bundled_files_are_inside_the_package():
    for meta in BUNDLED.values():
        for f in [*meta["files"].values(), meta["xml"]]:
            assert (data_dir() / f).is_file()


def test_unknown_split_and_unknown_name():
    with pytest.raises(ValueError, match="has no split 'valid'"):
        mlw.load_dataset("emotions", split="valid")
    with pytest.raises(FileNotFoundError, match="no dataset 'emotionz'.*bundled dataset"):
        mlw.load_dataset("emotionz")


@pytest.mark.pipeline
def test_stem_plus_split_and_data_path(mulan_dir, monkeypatch):
    ds = mlw.load_dataset(mulan_dir / "yeast", split="test")
    assert ds.name == "yeast-test" and ds.n_instances == 917
    monkeypatch.setenv("MLW_DATA_PATH", str(mulan_dir))
    assert mlw.load_dataset("scene").name == "scene-train"
    assert mlw.load_dataset("medical").n_instances == 1954


def test_format_by_sniffing_and_by_name(mulan_dir, tmp_path):
    p = tmp_path / "emotions-train.dat"
    shutil.copy(mulan_dir / "emotions-train.arff", p)
    shutil.copy(mulan_dir / "emotions.xml", tmp_path / "emotions.xml")
    ds = mlw.load_dataset(p)  # ".dat" is claimed by no loader: the content says ARFF
    assert ds.provenance["format"] == "arff" and ds.n_labels == 6
    q = tmp_path / "noext"
    q.write_text("2 3 2\n0 1:1\n1 2:2\n")
    assert mlw.load_dataset(q, format="xc").n_instances == 2
    assert mlw.load_dataset(q).provenance["format"] == "xc"


def test_unknown_format_and_unrecognised_content(tmp_path):
    p = tmp_path / "x.bin"
    p.write_bytes(b"\x00\x01garbage")
    with pytest.raises(ValueError, match=r"x\.bin: cannot tell the file format .*format="):
        mlw.load_dataset(p)
    with pytest.raises(mlw.UnknownNameError, match="unknown loader 'arf'; did you mean 'arff'"):
        mlw.load_dataset(p, format="arf")


def test_unknown_option_names_the_loader_options(mulan_dir):
    with pytest.raises(ValueError, match=r"loader 'arff' does not take option 'spare'.*sparse"):
        mlw.load_dataset(mulan_dir / "emotions-train.arff", spare=True)
    with pytest.raises(ValueError, match=r"loader 'xc' does not take option 'xml'"):
        _xc_with_xml(mulan_dir)


def _xc_with_xml(mulan_dir):
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "a.xc"
        p.write_text("1 1 1\n0 0:1\n")
        mlw.load_dataset(p, xml=mulan_dir / "emotions.xml")


def test_arff_options_pass_through(mulan_dir):
    ds = mlw.load_dataset(mulan_dir / "enron-test.arff", sparse=False, name="e")
    assert isinstance(ds.X, np.ndarray) and ds.name == "e"


def test_the_builtin_loaders_are_registered_through_the_hook():
    loaders = mlw.list_loaders()
    assert set(loaders) >= {"arff", "xc", "csv", "parquet"}
    owner = mlw.plugins.get_plugin_manager().owner("loader", "arff")
    assert owner is not None and owner.builtin


class _FooPlugin:
    @mlw.hookimpl
    def mlw_register_loaders(self, register):
        def load_foo(path, *, n_labels=1):
            rows = [list(map(float, ln.split())) for ln in open(path) if ln.strip()]
            arr = np.array(rows)
            return mlw.Dataset(arr[:, n_labels:], arr[:, :n_labels].astype(np.uint8),
                               [f"x{j}" for j in range(arr.shape[1] - n_labels)],
                               [f"y{j}" for j in range(n_labels)], "foo")

        register(mlw.LoaderSpec(name="foo", suffixes=(".foo",), load=load_foo,
                                description="space-separated, labels first",
                                sniff=lambda head: head.startswith(b"FOO")))


def test_a_plugin_loader_is_chosen_by_suffix(fresh_plugins, tmp_path):
    fresh_plugins.register(_FooPlugin(), name="foo-plugin")
    p = tmp_path / "d.foo"
    p.write_text("1 0.5 2\n0 1.5 3\n")
    ds = mlw.load_dataset(p)
    np.testing.assert_array_equal(ds.X, [[0.5, 2], [1.5, 3]])
    np.testing.assert_array_equal(ds.Y, [[1], [0]])
    assert mlw.load_dataset(p, n_labels=2).n_labels == 2
