"""Dataset writers share mlw._atomic.atomic_write: a failure mid-write leaves the
previous file intact and no temporary file behind."""

from __future__ import annotations

import numpy as np
import pytest

import mlw
from mlw.io import arff_writer, write_arff, write_label_xml, write_xc


def _toy() -> mlw.Dataset:
    X = np.arange(12, dtype=float).reshape(4, 3)
    Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=np.uint8)
    return mlw.Dataset(X, Y, ["a", "b", "c"], ["l1", "l2"], "toy")


def test_arff_failure_mid_write_keeps_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "toy.arff"
    target.write_text("old contents\n")
    calls = {"n": 0}
    real_fmt = arff_writer._fmt

    def failing_fmt(v: float) -> str:
        calls["n"] += 1
        if calls["n"] > 5:
            raise RuntimeError("disk on fire")
        return real_fmt(v)

    monkeypatch.setattr(arff_writer, "_fmt", failing_fmt)
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_arff(_toy(), target, sparse=False, layout="meka")
    assert target.read_text() == "old contents\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy.arff"]


def test_writers_leave_only_their_files(tmp_path):
    ds = _toy()
    write_xc(ds, tmp_path / "toy.xc")
    write_label_xml(tmp_path / "toy.xml", ds.label_names)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy.xc", "toy.xml"]
    back = mlw.load_dataset(tmp_path / "toy.xc", format="xc")
    assert np.array_equal(back.X.toarray(), ds.X) and np.array_equal(back.Y.toarray(), ds.Y)
    assert (tmp_path / "toy.xml").read_text(encoding="utf-8").count("<label ") == 2
