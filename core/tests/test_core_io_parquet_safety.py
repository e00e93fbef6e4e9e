"""Corrupt Parquet files are one-line errors, never a dead process or a Rust backtrace.
Found by fuzzing: one byte of a data page header, its value count set to
-64, made polars reserve ~2.3e18 bytes and abort the process (SIGABRT, uncatchable);
an out-of-range encoding in the same header makes it panic, and Rust prints the panic
(a whole backtrace with RUST_BACKTRACE=1) on fd 2 before Python sees the exception.
The files are made here from 20 rows of emotions, one byte changed."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

import mlw
from mlw.io import DataFormatError
from mlw.io._parquet_pages import check_parquet

ROWS = 20  # one-byte varints in the first page header


@functools.cache
def _frame():
    import polars as pl

    ds = mlw.load_dataset("emotions")
    X, Y = np.asarray(ds.X)[:ROWS, :4], np.asarray(ds.Y)[:ROWS]
    frame = {f"f{j}": X[:, j] for j in range(4)}
    frame["colour"] = ["red", "blue", None, "green"] * (ROWS // 4)
    frame.update({name: Y[:, j].astype(np.int64) for j, name in enumerate(ds.label_names)})
    return pl.DataFrame(frame)


def _write_small(path: Path, **options) -> Path:
    _frame().write_parquet(path, **options)
    return path


def _first_page_header(data: bytes) -> dict[str, int]:
    """Offsets of the first data page header's num_values and encoding (Thrift
    compact: type, sizes, then the DataPageHeader struct)."""
    pos, fields = 4, {}
    for name in ("type", "uncompressed", "compressed"):
        assert data[pos] == 0x15, (name, data[pos:pos + 8].hex())   # i32 field, delta 1
        pos += 1
        while data[pos] & 0x80:
            pos += 1
        pos += 1
    assert data[pos] == 0x2C, data[pos:pos + 8].hex()              # field 5, a struct
    pos += 1
    for name in ("num_values", "encoding"):
        assert data[pos] == 0x15 and data[pos + 1] < 0x80, data[pos:pos + 8].hex()
        fields[name] = pos + 1
        pos += 2
    return fields


def _corrupt(tmp_path: Path, field: str, byte: int) -> Path:
    seed = _write_small(tmp_path / "seed.parquet", compression="uncompressed")
    data = bytearray(seed.read_bytes())
    data[_first_page_header(bytes(data))[field]] = byte
    bad = tmp_path / f"bad-{field}.parquet"
    bad.write_bytes(bytes(data))
    return bad


def test_a_negative_page_value_count_is_refused_before_polars_aborts(tmp_path) -> None:
    bad = _corrupt(tmp_path, "num_values", 0x7F)          # zigzag: -64
    with pytest.raises(DataFormatError) as info:
        mlw.load_dataset(bad, n_labels=-6)
    assert str(info.value) == ("bad-num_values.parquet: corrupt Parquet metadata: row "
                               "group 0, column 0: a page's value count is negative (-64)")


def test_a_polars_panic_is_one_line_and_its_text_never_reaches_fd_2(tmp_path, capfd,
                                                                     monkeypatch) -> None:
    monkeypatch.setenv("RUST_BACKTRACE", "1")
    bad = _corrupt(tmp_path, "encoding", 0x7F)             # an encoding out of range
    check_parquet(bad)                                     # sound sizes: polars decodes
    with pytest.raises(DataFormatError, match=r"^bad-encoding\.parquet: cannot read "
                                              r"as Parquet: [^\n]*$"):
        mlw.load_dataset(bad, n_labels=-6)
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


@pytest.mark.parametrize("options", [
    {"compression": "uncompressed"},
    {"compression": "zstd", "row_group_size": 7, "data_page_size": 64},
    {"compression": "snappy", "statistics": False, "data_page_size": 1},
])
def test_sound_files_pass_the_check_and_load(tmp_path, options) -> None:
    path = _write_small(tmp_path / "ok.parquet", **options)
    check_parquet(path)
    ds = mlw.load_dataset(path, n_labels=-6)
    assert ds.X.shape == (ROWS, 7) and ds.Y.shape == (ROWS, 6)


@pytest.mark.parametrize("edit,reason", [
    (lambda d: d[:-8] + (len(d)).to_bytes(4, "little") + d[-4:], "the footer length"),
    (lambda d: d[:-4] + b"PAR0", "no PAR1 magic"),
    (lambda d: d[:40], "no PAR1 magic"),
])
def test_a_broken_footer_is_refused(tmp_path, edit, reason) -> None:
    seed = _write_small(tmp_path / "seed.parquet")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(edit(seed.read_bytes()))
    with pytest.raises(DataFormatError, match=f"^bad.parquet: corrupt Parquet metadata: "
                                              f"{reason}"):
        mlw.load_dataset(bad, n_labels=-6)


@pytest.mark.parametrize("survive_abort", [True, False])
def test_only_the_panic_text_is_dropped_from_fd_2(capfd, survive_abort) -> None:
    import os

    from mlw.io.tabular import rust_panic_text_dropped

    with rust_panic_text_dropped(survive_abort=survive_abort):
        os.write(2, b"a warning meanwhile\n")
        os.write(2, b"\nthread 'async-executor-0' (7) panicked at x.rs:1:2:\nboom\n"
                    b"stack backtrace:\n   0: f\n")
    assert capfd.readouterr().err == "a warning meanwhile\n"
