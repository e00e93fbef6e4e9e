"""Model files are safe to load: a planted payload never runs, a changed byte or a header
from another learner is refused."""

from __future__ import annotations

import fractions
import functools
import json
import os
import pickle
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw import persistence
from mlw.persistence import (
    ModelFileError,
    ModelTrustWarning,
    ModelVersionError,
    UntrustedModelError,
    load_model,
    read_header,
    save_model,
    untrusted_types,
)


class FreqLearner(mlw.MultiLabelLearner):
    def __init__(self, threshold: str = "fixed") -> None:
        self.threshold = threshold

    def _fit(self, X, Y):
        Y = np.asarray(Y)
        self.p_ = Y.mean(axis=0)
        self.extra_ = None

    def _predict_proba(self, X):
        return np.tile(self.p_, (X.shape[0], 1))


class OtherLearner(FreqLearner):
    pass


class _Plugin:
    @staticmethod
    @mlw.hookimpl
    def mlw_register_learners(register):
        register(mlw.LearnerSpec("safe_freq", FreqLearner, "frequencies"))
        register(mlw.LearnerSpec("safe_other", OtherLearner, "frequencies too"))


@pytest.fixture
def pm(fresh_plugins):
    fresh_plugins.register(_Plugin(), name="safe", distribution="mlw-safe", version="1.0.0")
    return fresh_plugins


def _fit(cls=FreqLearner):
    Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=np.uint8)
    return cls().fit(np.arange(8.0).reshape(4, 2), Y)


def _split(path: Path) -> tuple[dict, bytes]:
    blob = path.read_bytes()
    nl = blob.index(b"\n", len(b"MLWMODEL\n"))
    size = int(blob[len(b"MLWMODEL\n"):nl])
    return json.loads(blob[nl + 1:nl + 1 + size]), blob[nl + 1 + size:]


def _forge(path: Path, header: dict, payload: bytes) -> None:
    """Write a model file as an attacker would: any header, any payload, and a checksum
    that matches (it is not a secret)."""
    header = dict(header)
    header["payload_bytes"] = len(payload)
    header["sha256"] = persistence._digest(header, payload)
    blob = json.dumps(header).encode()
    path.write_bytes(b"MLWMODEL\n" + str(len(blob)).encode() + b"\n" + blob + payload)


class _System:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class _Popen:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (subprocess.Popen, (["touch", str(self.marker)],))


class _Eval:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (eval, (f"open({str(self.marker)!r}, 'w').close()",))


class _Partial:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (functools.partial(os.system, f"touch {self.marker}"), ())


def _nested(marker: Path) -> object:
    """A genuine model whose state hides a gadget two levels down."""
    model = _fit()
    model.extra_ = {"notes": ["fine", {"deeper": _System(marker)}]}
    return model


def _protocol0(marker: Path) -> bytes:
    return f"cos\nsystem\n(Vtouch {marker}\ntR.".encode()


def _memo_trick(marker: Path) -> bytes:
    # module and name pushed, memoised, and fetched back before STACK_GLOBAL
    return (b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00"
            b"\x8c\x02os\x94\x8c\x06system\x94h\x00h\x01\x93\x94"
            + b"\x8c" + bytes([len(f"touch {marker}")]) + f"touch {marker}".encode()
            + b"\x85R.")


GADGETS = {
    "os.system": lambda m: pickle.dumps(_System(m), protocol=5),
    "subprocess.Popen": lambda m: pickle.dumps(_Popen(m), protocol=5),
    "builtins.eval": lambda m: pickle.dumps(_Eval(m), protocol=5),
    "functools.partial": lambda m: pickle.dumps(_Partial(m), protocol=5),
    "nested reduce": lambda m: pickle.dumps(_nested(m), protocol=5),
    "protocol 0 GLOBAL": _protocol0,
    "memoised STACK_GLOBAL": _memo_trick,
}


@pytest.mark.parametrize("gadget", sorted(GADGETS))
def test_planted_payload_is_refused_and_never_runs(pm, tmp_path, gadget) -> None:
    real = save_model(_fit(), tmp_path / "real.mlw")
    header, _ = _split(real)
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.mlw"
    _forge(evil, header, GADGETS[gadget](marker))
    with pytest.raises(UntrustedModelError) as info:
        load_model(evil)
    msg = str(info.value)
    assert "\n" not in msg and "refused" in msg
    assert not marker.exists()
    # the gadget is named; for the pickled ones the exact callable
    names = {"os.system": "posix.system", "subprocess.Popen": "subprocess.Popen",
             "builtins.eval": "builtins.eval", "functools.partial": "functools.partial",
             "protocol 0 GLOBAL": "os.system", "memoised STACK_GLOBAL": "os.system"}
    if gadget in names:
        assert names[gadget] in msg
    # and the restricted unpickler refuses it too, even if the static reading missed it
    with pytest.raises(UntrustedModelError):
        persistence._RestrictedUnpickler(
            __import__("io").BytesIO(GADGETS[gadget](marker)),
            persistence._trusted(persistence._learner_spec("safe_freq")), evil).load()
    assert not marker.exists()


def test_changed_bytes_are_refused_by_the_checksum(pm, tmp_path) -> None:
    path = save_model(_fit(), tmp_path / "m.mlw")
    blob = bytearray(path.read_bytes())
    for offset in range(1, 9):  # 8 changed bytes in the payload
        blob[-offset * 7] ^= 0x01
    path.write_bytes(bytes(blob))
    with pytest.raises(ModelFileError, match="checksum mismatch: the file was changed or "
                                             "damaged"):
        load_model(path)


def test_changed_header_is_refused_by_the_checksum(pm, tmp_path) -> None:
    path = save_model(_fit(), tmp_path / "m.mlw", metadata={"label_names": ["a", "b"]})
    path.write_bytes(path.read_bytes().replace(b'"a", "b"', b'"b", "a"'))
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        load_model(path)


def test_header_of_another_learner_is_refused(pm, tmp_path) -> None:
    freq = save_model(_fit(), tmp_path / "freq.mlw")
    other = save_model(_fit(OtherLearner), tmp_path / "other.mlw")
    freq_header, _ = _split(freq)
    _, other_payload = _split(other)
    # spliced as is: the checksum no longer matches
    swapped = tmp_path / "swapped.mlw"
    blob = freq.read_bytes()
    swapped.write_bytes(blob[:len(blob) - freq_header["payload_bytes"]] + other_payload)
    with pytest.raises(ModelFileError):
        load_model(swapped)
    # forged checksum: OtherLearner is not model state of a safe_freq model
    _forge(swapped, freq_header, other_payload)
    with pytest.raises(UntrustedModelError, match="OtherLearner"):
        load_model(swapped)
    # a header that claims the other class under the first name
    _forge(swapped, {**freq_header, "learner_class": f"{__name__}.OtherLearner"}, other_payload)
    with pytest.raises(ModelFileError, match="the header says learner 'safe_freq' is "
                                             ".*OtherLearner, but 'safe_freq' is .*FreqLearner"):
        load_model(swapped)


def test_untrusted_types_need_trusted_and_saving_warns(pm, tmp_path) -> None:
    model = _fit()
    model.extra_ = fractions.Fraction(1, 3)
    assert untrusted_types(model) == ["fractions.Fraction"]
    with pytest.warns(ModelTrustWarning, match=r"trusted=\['fractions.Fraction'\]"):
        path = save_model(model, tmp_path / "m.mlw")
    assert "fractions.Fraction" in read_header(path)["types"]
    with pytest.raises(UntrustedModelError, match="fractions.Fraction"):
        load_model(path)
    assert load_model(path, trusted=["fractions:Fraction"]).extra_ == fractions.Fraction(1, 3)
    assert load_model(path, trusted=[fractions.Fraction]).extra_ == fractions.Fraction(1, 3)


def test_core_model_state_round_trips(pm, tmp_path) -> None:
    model = _fit()
    rng = np.random.default_rng(3)
    model.extra_ = {"rng": rng, "legacy": np.random.RandomState(1),
                    "csr": sp.random(5, 4, density=0.5, format="csr", random_state=0),
                    "arr": sp.csr_array(np.eye(3)), "obj": np.array([1, "a"], dtype=object),
                    "scalar": np.float32(2.5), "c": 1 + 2j}
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("error")
        path = save_model(model, tmp_path / "m.mlw")
    back = load_model(path)
    assert back.extra_["rng"].random() == np.random.default_rng(3).random()
    assert (back.extra_["csr"] != model.extra_["csr"]).nnz == 0
    assert back.extra_["obj"].tolist() == [1, "a"]


def test_invalid_sparse_structure_is_refused(pm, tmp_path) -> None:
    model = _fit()
    bad = sp.csr_matrix(np.eye(3))
    model.extra_ = bad
    path = save_model(model, tmp_path / "m.mlw")
    header, _ = _split(path)
    bad.indices[0] = 1000  # an index beyond the matrix, as a crafted file could hold
    _forge(path, header, pickle.dumps(model, protocol=5))
    with pytest.raises(ModelFileError, match="an invalid sparse matrix"):
        load_model(path)


def test_format_1_files_are_refused_as_unsafe(pm, tmp_path) -> None:
    header = json.dumps({"format": 1, "learner": "safe_freq"}).encode()
    path = tmp_path / "old.mlw"
    path.write_bytes(b"MLWMODEL\n" + str(len(header)).encode() + b"\n" + header
                     + pickle.dumps(_fit()))
    with pytest.raises(ModelVersionError, match="model format 1: no checksum, unrestricted "
                                                "pickle.*fit and save the model again"):
        load_model(path)


@pytest.mark.parametrize("mutate", ["trailing", "huge_header", "bad_json", "not_object",
                                    "bad_field"])
def test_malformed_headers_are_model_file_errors(pm, tmp_path, mutate) -> None:
    path = save_model(_fit(), tmp_path / "m.mlw")
    header, payload = _split(path)
    if mutate == "trailing":
        path.write_bytes(path.read_bytes() + b"x")
        pattern = "has extra bytes after the model"
    elif mutate == "huge_header":
        path.write_bytes(b"MLWMODEL\n99999999999\n{}")
        pattern = "corrupt model header"
    elif mutate == "bad_json":
        path.write_bytes(b"MLWMODEL\n5\n{[}]}")
        pattern = "corrupt model header"
    elif mutate == "not_object":
        path.write_bytes(b"MLWMODEL\n2\n[]")
        pattern = "not a JSON object"
    else:
        _forge(path, {**header, "learner_class": 5}, payload)
        pattern = "'learner_class' is missing or has the wrong type"
    with pytest.raises(ModelFileError, match=pattern):
        load_model(path)
