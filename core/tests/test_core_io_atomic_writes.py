"""Dataset writers share mlw.files.atomic_write: a failure mid-write leaves the
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


# -- signals, stale temporary files, permissions -----------------------------

import os  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402

from mlw.files import atomic_write, sweep_stale_temporaries  # noqa: E402

_SLOW_WRITER = textwrap.dedent("""
    import importlib.util, sys, time
    # mlw/files.py alone (importing the mlw package would cost seconds per process)
    spec = importlib.util.spec_from_file_location("mlw_files", sys.argv[2])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with mod.atomic_write(sys.argv[1], "w") as fh:
        fh.write("partial")
        fh.flush()
        print("writing", flush=True)
        time.sleep(60)
""")


def _start_writer(target):
    import mlw.files

    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(target),
                             mlw.files.__file__],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    return proc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_like_sigint_removes_the_temporary_file(tmp_path, sig):
    target = tmp_path / "model.mlw"
    target.write_text("old\n")
    proc = _start_writer(target)
    assert len(list(tmp_path.iterdir())) == 2  # the target and the temporary file
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert ("Terminated" if sig == signal.SIGTERM else "KeyboardInterrupt") in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.mlw"]
    assert target.read_text() == "old\n"


def test_sigkill_leftovers_are_swept_by_the_next_write(tmp_path):
    target = tmp_path / "model.mlw"
    target.write_text("old\n")
    proc = _start_writer(target)
    proc.kill()
    proc.wait(timeout=30)
    left = [p for p in tmp_path.iterdir() if p.name != "model.mlw"]
    assert len(left) == 1 and left[0].name.startswith(".model.mlw.mlw-")
    assert target.read_text() == "old\n"
    with atomic_write(target, "w") as fh:
        fh.write("new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.mlw"]
    assert target.read_text() == "new\n"


def test_sweep_keeps_live_writers_and_other_files(tmp_path):
    target = tmp_path / "out.csv"
    mine = tmp_path / f".out.csv.mlw-{os.getpid()}-abc123.tmp"  # a live process: ours
    dead = tmp_path / ".out.csv.mlw-999999999-abc123.tmp"
    old_legacy = tmp_path / ".out.csv.k2j4h5g6.tmp"
    new_legacy = tmp_path / ".out.csv.a1b2c3d4.tmp"
    other = tmp_path / ".other.csv.mlw-999999999-abc123.tmp"
    unrelated = tmp_path / ".out.csv.notes.tmp"
    for p in (mine, dead, old_legacy, new_legacy, other, unrelated):
        p.write_text("x")
    day_ago = time.time() - 2 * 24 * 3600
    os.utime(old_legacy, (day_ago, day_ago))
    removed = sweep_stale_temporaries(target)
    assert sorted(p.name for p in removed) == sorted([dead.name, old_legacy.name])
    assert mine.exists() and new_legacy.exists() and other.exists() and unrelated.exists()


def test_new_files_respect_the_umask_and_replaced_files_keep_their_mode(tmp_path):
    old = os.umask(0o027)
    try:
        fresh = tmp_path / "fresh.txt"
        with atomic_write(fresh, "w") as fh:
            fh.write("x")
        assert fresh.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)
    kept = tmp_path / "kept.txt"
    kept.write_text("x")
    kept.chmod(0o604)
    with atomic_write(kept, "w") as fh:
        fh.write("y")
    assert kept.stat().st_mode & 0o777 == 0o604


def test_empty_or_folder_destinations_are_refused(tmp_path):
    with pytest.raises(ValueError, match="empty path"):
        with atomic_write("", "w"):
            pass
    with pytest.raises(IsADirectoryError, match="it is a folder"):
        with atomic_write(tmp_path, "w"):
            pass
