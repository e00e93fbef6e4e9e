"""Model files: versioned header, version checks, atomic writes."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import mlw
from mlw import persistence
from mlw.persistence import (
    ModelFileError,
    ModelVersionError,
    ModelVersionWarning,
    atomic_write,
    load_model,
    read_header,
    save_model,
)


class FrequencyLearner(mlw.MultiLabelLearner):
    """Label frequencies as scores (module level, so it pickles by reference)."""

    def __init__(self, threshold: str = "fixed", alpha: float = 1.0) -> None:
        self.threshold = threshold
        self.alpha = alpha

    def _fit(self, X, Y):
        Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y)
        self.p_ = (Y.sum(axis=0) + self.alpha) / (Y.shape[0] + 2 * self.alpha)

    def _predict_proba(self, X):
        return np.tile(self.p_, (X.shape[0], 1))


class _PersistencePlugin:
    @staticmethod
    @mlw.hookimpl
    def mlw_register_learners(register):
        register(mlw.LearnerSpec("persist_freq", FrequencyLearner, "frequencies"))


@pytest.fixture
def pm(fresh_plugins):
    fresh_plugins.register(_PersistencePlugin(), name="persist", distribution="mlw-persist",
                           version="1.2.3")
    return fresh_plugins


def _fitted() -> FrequencyLearner:
    rng = np.random.default_rng(0)
    Y = (rng.random((30, 4)) < 0.6).astype(np.uint8)
    return FrequencyLearner(alpha=0.5).fit(rng.normal(size=(30, 3)), Y)


def test_round_trip_keeps_predictions_and_records_versions(pm, tmp_path) -> None:
    model = _fitted()
    path = save_model(model, tmp_path / "m.mlw", metadata={"dataset": "toy", "n": 30})
    X = np.ones((5, 3))
    np.testing.assert_array_equal(load_model(path).predict(X), model.predict(X))
    header = read_header(path)
    assert header["learner"] == "persist_freq"
    assert header["learner_distribution"] == "mlw-persist"
    assert header["params"] == {"threshold": "fixed", "alpha": 0.5}
    assert header["mlw_version"] == pm.versions()["mlw-core"]
    assert header["plugins"]["mlw-persist"] == "1.2.3"
    assert header["metadata"] == {"dataset": "toy", "n": 30}
    assert path.read_bytes().startswith(b"MLWMODEL\n")


def _versions(monkeypatch, pm, **changes) -> None:
    current = pm.versions()
    current.update(changes)
    for key in [k for k, v in changes.items() if v is None]:
        del current[key]
    monkeypatch.setattr(type(pm), "versions", lambda self: dict(current))


@pytest.mark.parametrize("changes", [{"mlw-core": "0.1.7"}, {"mlw-core": "0.2.0"},
                                     {"mlw-persist": "1.3.0"}, {"mlw-persist": "1.2.4"}])
def test_minor_or_patch_change_warns(pm, tmp_path, monkeypatch, changes) -> None:
    path = save_model(_fitted(), tmp_path / "m.mlw")
    _versions(monkeypatch, pm, **changes)
    with pytest.warns(ModelVersionWarning, match="saved with"):
        assert load_model(path).p_.shape == (4,)


@pytest.mark.parametrize("changes, message", [
    ({"mlw-core": "1.0.0"}, "saved with mlw-core 0.1.0, but 1.0.0 is installed (a different major"),
    ({"mlw-persist": "2.0.0"}, "saved with mlw-persist 1.2.3, but 2.0.0 is installed"),
    ({"mlw-persist": None}, "needs the plugin distribution 'mlw-persist' (version 1.2.3), "
                            "which is not installed"),
])
def test_major_change_or_missing_plugin_refuses(pm, tmp_path, monkeypatch, changes,
                                                message) -> None:
    path = save_model(_fitted(), tmp_path / "m.mlw")
    _versions(monkeypatch, pm, **changes)
    with pytest.raises(ModelVersionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_model(path)
    assert load_model(path, check=False).p_.shape == (4,)


def test_unrelated_plugins_do_not_matter(pm, tmp_path, monkeypatch) -> None:
    _versions(monkeypatch, pm, **{"mlw-other": "3.0.0"})
    path = save_model(_fitted(), tmp_path / "m.mlw")
    _versions(monkeypatch, pm, **{"mlw-other": None})
    load_model(path)  # no error, no warning needed for a plugin the model does not use


def test_not_a_model_file_and_truncated_files(pm, tmp_path) -> None:
    other = tmp_path / "data.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(ModelFileError, match="not an mlw model file"):
        load_model(other)
    path = save_model(_fitted(), tmp_path / "m.mlw")
    data = path.read_bytes()
    path.write_bytes(data[:-20])
    with pytest.raises(ModelFileError, match=r"the file is truncated \(the header says \d+ "
                                             r"bytes of model data, the file has \d+\)"):
        load_model(path)
    path.write_bytes(b"MLWMODEL\n12\n{not json!!}")
    with pytest.raises(ModelFileError, match="corrupt model header"):
        load_model(path)
    with pytest.raises(FileNotFoundError, match="model file not found"):
        load_model(tmp_path / "missing.mlw")


def test_model_whose_code_is_gone_is_refused_clearly(pm, tmp_path, monkeypatch) -> None:
    path = save_model(_fitted(), tmp_path / "m.mlw")
    monkeypatch.delattr(sys.modules[__name__], "FrequencyLearner")  # the class moved away
    with pytest.raises(ModelVersionError, match="the model needs code that is not installed "
                                                "or has changed"):
        load_model(path, check=False)


def test_header_is_read_without_unpickling(pm, tmp_path) -> None:
    path = save_model(_fitted(), tmp_path / "m.mlw")
    blob = path.read_bytes()
    header_end = blob.index(b"\n", len(b"MLWMODEL\n")) + 1
    size = int(blob[len(b"MLWMODEL\n"):header_end - 1])
    path.write_bytes(blob[:header_end + size] + b"garbage that is not a pickle")
    assert read_header(path)["learner"] == "persist_freq"
    assert json.loads(blob[header_end:header_end + size])["format"] == 2


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_interrupted_save_leaves_no_file_and_keeps_the_old_one(pm, tmp_path, monkeypatch,
                                                               error) -> None:
    target = tmp_path / "m.mlw"
    save_model(_fitted(), target)
    before = target.read_bytes()

    def dump_then_fail(obj, fh, protocol=None):
        fh.write(b"x" * 1000)  # half a pickle
        raise error("interrupted while pickling")

    monkeypatch.setattr(persistence.pickle, "dump", dump_then_fail)
    with pytest.raises(error):
        save_model(_fitted(), target)
    assert target.read_bytes() == before
    assert _leftovers(tmp_path) == []
    with pytest.raises(error):
        save_model(_fitted(), tmp_path / "new.mlw")
    assert not (tmp_path / "new.mlw").exists()


def test_killed_process_never_leaves_a_half_written_model(tmp_path) -> None:
    """SIGKILL in the middle of a save: the destination is absent or the old file."""
    script = textwrap.dedent(f"""
        import time, numpy as np
        from mlw.persistence import save_model

        class Slow:
            def __reduce__(self):
                open({str(tmp_path / "started")!r}, "w").close()
                time.sleep(60)
                return (dict, ())

        save_model({{"payload": np.zeros(10000), "slow": Slow()}}, {str(tmp_path / "m.mlw")!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists():
            assert proc.poll() is None, "the writer exited early"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert len(_leftovers(tmp_path)) == 1  # the temporary file is being written
        proc.kill()
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not (tmp_path / "m.mlw").exists()


def test_atomic_write_text_and_missing_folder(tmp_path) -> None:
    target = tmp_path / "out.csv"
    with atomic_write(target, "w", encoding="utf-8") as fh:
        fh.write("a,b\n")
        assert not target.exists()  # nothing visible until the write completes
    assert target.read_text() == "a,b\n"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        with atomic_write(tmp_path / "no" / "out.csv", "w"):
            pass
    with pytest.raises(ValueError, match="supports modes"):
        with atomic_write(target, "a"):
            pass
    assert _leftovers(tmp_path) == []


def test_model_of_an_unregistered_class_still_round_trips(fresh_plugins, tmp_path) -> None:
    path = save_model({"weights": [1, 2]}, tmp_path / "d.mlw")
    assert read_header(path)["learner"] is None
    assert load_model(path) == {"weights": [1, 2]}
    assert pickle.loads(pickle.dumps(_fitted())).p_.shape == (4,)
    assert os.path.getsize(path) > 0
