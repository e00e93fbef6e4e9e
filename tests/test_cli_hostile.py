"""Hostile inputs through the command, end to end: each is exit 2, one line
on stderr naming the file (and the limit, when one applies), one JSON object on stdout
with ``mlw fit --json``, and nothing run, allocated or written. (The core tests pin each
mechanism; these pin what a user of ``mlw`` sees.)"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlw import persistence
from mlw_cli.main import app


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def _refused(result, path: Path, *needles: str) -> str:
    """Exit 2, one line on stderr naming ``path``; with ``--json`` (``mlw fit``), one
    JSON object on stdout naming it as ``file``."""
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, \
        result.stderr
    message = result.stderr[len("error: "):-1]
    assert path.name in message
    if result.stdout:
        assert result.stdout.count("\n") == 1, result.stdout
        error = json.loads(result.stdout)["error"]
        assert error["kind"] == "bad_input" and error["file"] == str(path), error
        assert error["message"] == message
    for needle in needles:
        assert needle in message, (needle, message)
    return message


def _data_case(tmp_path: Path, monkeypatch, case: str) -> tuple[Path, tuple[str, ...]]:
    if case == "xc header declaring 4e9 labels":
        p = tmp_path / "huge.xc"
        p.write_text("20 5 4000000000\n0 1:1\n")
        return p, ("4,000,000,000", "max_columns", "MLW_MAX_COLUMNS")
    if case == "gzip bomb":
        from mlw.io import _common
        from mlw.io import _limits as limits_module

        monkeypatch.setattr(limits_module, "RATIO_FLOOR", 1 << 20)  # a small bomb will do
        monkeypatch.setattr(_common, "_READ_CHUNK", 1 << 18)
        p = tmp_path / "bomb.arff.gz"
        with gzip.open(p, "wb") as fh:
            fh.write(b"@relation 'r: -C 1'\n@attribute y {0,1}\n@attribute x numeric\n@data\n")
            fh.write(b"\n" * (8 << 20))
        return p, ("decompresses to more than 200 times its size", "max_ratio",
                   "MLW_MAX_RATIO")
    if case == "nominal attribute declaring 20,000 values":
        values = ",".join(f"v{i}" for i in range(20000))
        p = tmp_path / "wide.arff"
        p.write_text(f"@relation 'r: -C 1'\n@attribute y {{0,1}}\n@attribute c {{{values}}}\n"
                     f"@data\n0,v1\n1,v2\n")
        return p, ("declares 20,000 values", "max_onehot", "MLW_MAX_ONEHOT")
    if case == "MemoryError while loading":
        import mlw.io._kernels as kernels

        def no_memory(*args, **kwargs):
            raise MemoryError

        monkeypatch.setattr(kernels, "parse_arff_rows", no_memory)
        p = tmp_path / "small.arff"
        p.write_text("@relation 'r: -C 1'\n@attribute y {0,1}\n@attribute x numeric\n@data\n"
                     "0,1.5\n1,2.5\n")
        return p, ("small.arff: ran out of memory while loading the file", "max_memory")
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["xc header declaring 4e9 labels", "gzip bomb",
                                  "nominal attribute declaring 20,000 values",
                                  "MemoryError while loading"])
def test_oversized_data_is_exit_2_naming_file_and_limit(install_plugins, tmp_path,
                                                        monkeypatch, case) -> None:
    install_plugins(good="mlwtest_good")
    path, needles = _data_case(tmp_path, monkeypatch, case)
    result = invoke("fit", "-l", "fixture_prior", "--data", str(path), "--json")
    _refused(result, path, *needles)


@pytest.fixture
def model(install_plugins, tmp_path) -> Path:
    install_plugins(good="mlwtest_good")
    path = tmp_path / "real.mlw"
    assert invoke("fit", "-l", "fixture_prior", "-m", "hamming_loss", "--save",
                  str(path)).exit_code == 0
    return path


def _split(path: Path) -> tuple[dict, bytes]:
    blob = path.read_bytes()
    nl = blob.index(b"\n", len(b"MLWMODEL\n"))
    size = int(blob[len(b"MLWMODEL\n"):nl])
    return json.loads(blob[nl + 1:nl + 1 + size]), blob[nl + 1 + size:]


def _write(path: Path, header: dict, payload: bytes) -> None:
    blob = json.dumps(header).encode()
    path.write_bytes(b"MLWMODEL\n" + str(len(blob)).encode() + b"\n" + blob + payload)


class _Gadget:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_planted_model_payload_is_refused_and_never_runs(model, tmp_path) -> None:
    import pickle

    header, _ = _split(model)
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Gadget(marker), protocol=5)
    header = dict(header, payload_bytes=len(payload))
    header["sha256"] = persistence._digest(header, payload)  # an attacker can compute it
    evil = tmp_path / "evil.mlw"
    _write(evil, header, payload)
    result = invoke("predict", "--model", str(evil), "--data", "emotions")
    assert "refused" in _refused(result, evil, "posix.system")
    assert not marker.exists()


def test_a_changed_byte_in_a_model_is_refused(model, tmp_path) -> None:
    blob = bytearray(model.read_bytes())
    blob[-20] ^= 0x01
    changed = tmp_path / "changed.mlw"
    changed.write_bytes(bytes(blob))
    result = invoke("predict", "--model", str(changed), "--data", "emotions")
    _refused(result, changed, "checksum mismatch")


def test_a_text_typo_in_a_numeric_csv_column_names_row_and_column(model, tmp_path) -> None:
    typo = tmp_path / "typo.csv"
    typo.write_text("x,z\n" + "".join(f"{i}.5,{i}\n" for i in range(30)) + "3.x,7\n")
    result = invoke("predict", "--model", str(model), "--data", str(typo))
    _refused(result, typo, "typo.csv:32: column 'x', data row 31: '3.x' is not a number")


def test_a_corrupt_parquet_file_is_one_line_on_fd_2_and_exit_2(install_plugins, tmp_path,
                                                                capfd) -> None:
    """A polars panic is one line: Rust's panic text (a backtrace with RUST_BACKTRACE=1)
    never reaches fd 2 (capfd: fd level, as a terminal sees it)."""
    import polars as pl

    install_plugins(good="mlwtest_good")
    seed = tmp_path / "seed.parquet"
    pl.DataFrame({"x": [0.5, 1.5] * 10, "y": [0, 1] * 10}).write_parquet(
        seed, compression="uncompressed")
    data = bytearray(seed.read_bytes())
    at = data.index(b"\x2c\x15\x28\x15\x00", 4)  # 1st data page: 20 values, encoding PLAIN
    data[at + 4] = 0x7F                          # encoding -64: polars panics
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(bytes(data))
    result = invoke("fit", "-l", "fixture_prior", "--data", str(bad), "--n-labels", "-1",
                    "--json")
    _refused(result, bad, "cannot read as Parquet")
    assert capfd.readouterr().err == ""
