"""Bounded resources: what a file declares is checked against mlw.io's limits before it
is allocated, and a MemoryError while loading is a one-line LimitError."""

from __future__ import annotations

import bz2
import gzip
import time

import numpy as np
import polars as pl
import pytest

import mlw
from mlw.io import DataFormatError, LimitError, _common, get_limits, limits, set_limits
from mlw.io import _limits as limits_module


def one_line(exc: BaseException) -> str:
    msg = str(exc)
    assert "\n" not in msg, msg
    return msg


def test_xc_header_declaring_four_billion_labels_is_refused_at_once(tmp_path):
    p = tmp_path / "huge.xc"
    p.write_text("20 5 4000000000\n0 1:1\n")
    start = time.process_time()
    with pytest.raises(LimitError, match=r"huge\.xc:1: the header declares labels: "
                                         r"4,000,000,000 is more than .*max_columns"):
        mlw.load_dataset(p)
    assert time.process_time() - start < 5  # no label names were built


def test_xc_header_with_more_rows_than_the_file_allocates_nothing(tmp_path):
    p = tmp_path / "rows.xc"
    p.write_text("999999999999 5 3\n0 1:1\n")
    with pytest.raises(DataFormatError, match="declares 999999999999 instances but the file "
                                              "has only 1 rows"):
        mlw.load_dataset(p)


def test_xc_header_with_absurdly_long_numbers_is_a_format_error(tmp_path):
    p = tmp_path / "long.xc"
    p.write_text("9" * 5000 + " 5 3\n0 1:1\n")
    with pytest.raises(DataFormatError, match="long.xc:1: expected the header"):
        mlw.load_dataset(p, format="xc")


@pytest.fixture
def small_ratio_floor(monkeypatch):
    monkeypatch.setattr(limits_module, "RATIO_FLOOR", 1 << 20)
    monkeypatch.setattr(_common, "_READ_CHUNK", 1 << 18)


@pytest.mark.parametrize("opener,suffix", [(gzip.open, ".gz"), (bz2.open, ".bz2")])
@pytest.mark.parametrize("fmt", ["arff", "csv", "xc"])
def test_decompression_bomb_is_refused_naming_the_ratio(tmp_path, small_ratio_floor, opener,
                                                        suffix, fmt):
    heads = {"arff": b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n",
             "csv": b"x,y\n", "xc": b"3 5 2\n"}
    p = tmp_path / f"bomb.{fmt}{suffix}"
    with opener(p, "wb") as fh:
        fh.write(heads[fmt])
        fh.write(b"\n" * (8 << 20))
    with pytest.raises(LimitError) as info:
        mlw.load_dataset(p, n_labels=-1) if fmt != "xc" else mlw.load_dataset(p)
    msg = one_line(info.value)
    assert msg.startswith(f"bomb.{fmt}{suffix}: decompresses to more than 200 times its size")
    assert "MLW_MAX_RATIO" in msg and "max_ratio=200" in msg


def test_ratio_limit_can_be_raised(tmp_path, small_ratio_floor):
    p = tmp_path / "zeros.arff.gz"
    with gzip.open(p, "wb") as fh:
        fh.write(b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n")
        fh.write(b"0,0\n" * (1 << 19))
    with pytest.raises(LimitError):
        mlw.load_dataset(p, n_labels=-1)
    with limits(max_ratio=1e6):
        assert mlw.load_dataset(p, n_labels=-1).n_instances == 1 << 19


def test_nominal_attribute_declaring_20000_values_is_refused_by_max_onehot(tmp_path):
    values = ",".join(f"v{i}" for i in range(20000))
    rows = "".join(f"v{i % 20},{i % 2}\n" for i in range(200))
    p = tmp_path / "wide.arff"
    p.write_text(f"@relation r\n@attribute c {{{values}}}\n@attribute y {{0,1}}\n@data\n{rows}")
    with pytest.raises(LimitError) as info:
        mlw.load_dataset(p, n_labels=-1)
    msg = one_line(info.value)
    assert msg.startswith("wide.arff:2: nominal attribute 'c' declares 20,000 values")
    assert "limit max_onehot=10000;" in msg and "MLW_MAX_ONEHOT" in msg
    with limits(max_onehot=20000):
        ds = mlw.load_dataset(p, n_labels=-1)
    assert ds.n_features == 20000


def test_dense_x_beyond_max_memory_is_refused_before_allocating(tmp_path):
    rows = "".join(f"v{i % 50},{i % 2}\n" for i in range(2000))
    values = ",".join(f"v{i}" for i in range(50))
    p = tmp_path / "dense.arff"
    p.write_text(f"@relation r\n@attribute c {{{values}}}\n@attribute y {{0,1}}\n@data\n{rows}")
    with limits(max_memory=700_000):  # the text and parser fit, the dense X (800 KB) not
        with pytest.raises(LimitError, match=r"dense\.arff: a dense X of 2,000 rows x 50 "
                                             r"columns \(sparse=True keeps it sparse\) would "
                                             r"need about"):
            mlw.load_dataset(p, n_labels=-1)
        assert mlw.load_dataset(p, n_labels=-1, sparse=True).X.nnz == 2000


def test_max_memory_covers_the_text_and_the_parser(tmp_path):
    with limits(max_memory="100K"):
        with pytest.raises(LimitError, match=r"emotions-train\.arff: the file \(246 KiB\) is "
                                             r"larger than 100 KiB"):
            mlw.load_dataset("emotions")
    with limits(max_memory="300K"):
        with pytest.raises(LimitError, match="parsing 392 lines with up to"):
            mlw.load_dataset("emotions")


def test_header_declaring_too_many_attributes_stops_early(tmp_path):
    p = tmp_path / "attrs.arff"
    p.write_text("@relation r\n" + "".join(f"@attribute a{i} numeric\n" for i in range(50))
                 + "@data\n")
    with limits(max_columns=10):
        with pytest.raises(LimitError, match=r"attrs\.arff:12: the header declares attributes: "
                                             r"11 is more than the 10 columns"):
            mlw.load_dataset(p, n_labels=1)


def test_memory_error_while_loading_is_a_limit_error_naming_the_file(monkeypatch):
    def no_memory(*args, **kwargs):
        raise MemoryError

    import mlw.io._kernels as kernels

    monkeypatch.setattr(kernels, "parse_arff_rows", no_memory)
    with pytest.raises(LimitError, match=r"emotions-train\.arff: ran out of memory while "
                                         r"loading the file.*max_memory"):
        mlw.load_dataset("emotions")


def test_csv_text_column_with_too_many_values_is_refused(tmp_path):
    p = tmp_path / "ids.csv"
    p.write_text("c,y\n" + "".join(f"id{i},{i % 2}\n" for i in range(300)))
    with limits(max_onehot=100):
        with pytest.raises(LimitError, match="text column 'c' has 300 distinct values"):
            mlw.load_dataset(p, label_columns=["y"], drop_identifiers=False)


def test_parquet_table_beyond_max_memory_is_refused_from_its_metadata(tmp_path):
    p = tmp_path / "t.parquet"
    pl.DataFrame({"x": np.arange(1000.0), "y": np.arange(1000) % 2}).write_parquet(p)
    with limits(max_memory="10K"):
        with pytest.raises(LimitError, match=r"t\.parquet: a table of 1,000 rows x 2 columns"):
            mlw.load_dataset(p, label_columns=["y"])


def test_limits_from_the_environment_and_set_limits(monkeypatch):
    monkeypatch.setenv("MLW_MAX_MEMORY", "16G")
    monkeypatch.setenv("MLW_MAX_ONEHOT", "50")
    lim = get_limits()
    assert lim.max_memory == 16 << 30 and lim.max_onehot == 50
    with limits(max_onehot=7):
        assert get_limits().max_onehot == 7
    assert get_limits().max_onehot == 50
    try:
        assert set_limits(max_columns=123).max_columns == 123
    finally:
        set_limits(max_columns=None)
    assert get_limits().max_columns == 10_000_000
    monkeypatch.setenv("MLW_MAX_MEMORY", "lots")
    with pytest.raises(ValueError, match=r"\$MLW_MAX_MEMORY: expected a number of bytes"):
        get_limits()
    with pytest.raises(ValueError, match="unknown loader limit 'max_rows'"):
        set_limits(max_rows=3)
