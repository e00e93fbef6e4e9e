"""The command's fuzz suite, short run: generated ARFF (dense, sparse, with a Mulan
XML), CSV, Parquet, XC, svmlight and model files, valid, truncated and mutated, through
``mlw fit`` and ``mlw predict`` in this process. A valid file gives exit 0 and what a
reference reader reads; anything else exit 2 with one line; never a traceback, a
signal, a hang or a changed input (the contract of ``fuzz_cli.check_command``). The
long run is ``benchmarks/fuzz_readers.py --cli``."""

from __future__ import annotations

import faulthandler
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from fuzz_cli import (
    check_command,
    fit_args,
    fuzz_plugin,
    model_case,
    model_file,
    mutations,
    reference_arff,
    reference_csv,
    reference_parquet,
    reference_svmlight,
    sparse_tables,
    tables,
    write_arff,
    write_csv,
    write_mulan,
    write_parquet,
    write_svmlight,
    write_xc,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mlw

#: Examples per property: 25 in CI, with a fixed seed (the file stays within half a
#: CPU-minute); ``benchmarks/fuzz_readers.py --cli N`` sets ``MLW_FUZZ_EXAMPLES=N`` for
#: a long, random run.
EXAMPLES = int(os.environ.get("MLW_FUZZ_EXAMPLES") or 25)
CI = settings(max_examples=EXAMPLES, deadline=None,
              derandomize="MLW_FUZZ_EXAMPLES" not in os.environ, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def folder():
    with fuzz_plugin(), tempfile.TemporaryDirectory(prefix="mlw-cli-fuzz-") as d:
        faulthandler.dump_traceback_later(600, exit=True)  # a hang in native code
        yield Path(d)
        faulthandler.cancel_dump_traceback_later()


def _load(path: Path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mlw.load_dataset(path, **kwargs)


def _same(actual, expected) -> None:
    actual = actual.toarray() if hasattr(actual, "toarray") else np.asarray(actual)
    np.testing.assert_array_equal(np.asarray(actual, dtype=float),
                                  np.asarray(expected, dtype=float))


def _valid(folder: Path, path: Path, X, Y, *extra: str, inputs=None) -> None:
    got = check_command(fit_args(path, *extra), inputs or [path])
    if "refused" in got and np.isnan(np.asarray(X, dtype=float)).any():
        assert "contains NaN (missing values)" in got["refused"]  # the learner's rule
        return
    if "refused" in got and Y.shape[1] == 0:  # svmlight rows that name no label at all
        assert got["refused"] == "cannot fit with 0 labels"
        return
    assert "refused" not in got, got
    assert (got["n_train"], got["n_features"], got["n_labels"]) == \
        (X.shape[0], X.shape[1], Y.shape[1])


@CI
@given(tables(), st.booleans())
def test_valid_arff_reads_as_liac_arff_does(folder, table, sparse) -> None:
    path = folder / "v.arff"
    write_arff(table, path, sparse=sparse)
    L = table.Y.shape[1]
    names, X, Y = reference_arff(path, L)
    ds = _load(path, xml=False, n_labels=-L)
    _same(ds.X, X)
    _same(ds.Y, Y)
    assert ds.feature_names == names
    _valid(folder, path, X, Y, "--n-labels", str(-L))


@CI
@given(tables(nominal=False), st.integers(0, 2**32 - 1))
def test_mulan_xml_decides_the_labels_and_their_order(folder, table, seed) -> None:
    path, labels = write_mulan(table, folder, np.random.default_rng(seed))
    ds = _load(path)
    assert ds.label_names == labels
    order = [table.label_names().index(n) for n in labels]
    _same(ds.Y, table.Y[:, order])
    assert sorted(ds.feature_names) == sorted(table.feature_names())
    cols = [table.feature_names().index(n) for n in ds.feature_names]
    _same(ds.X, table.X[:, cols])
    _valid(folder, path, table.X, table.Y, inputs=[path, folder / "m.xml"])


#: the tabular formats: (writer, reference reader: Python's csv module / polars)
TABULAR = {"csv": (write_csv, reference_csv), "parquet": (write_parquet, reference_parquet)}


@pytest.mark.parametrize("fmt", sorted(TABULAR))
def test_valid_csv_and_parquet_read_as_the_reference_does(folder, fmt) -> None:
    write, reference = TABULAR[fmt]

    @CI
    @given(tables())
    def run(table):
        path = folder / f"v.{fmt}"
        write(table, path)
        L = table.Y.shape[1]
        X, Y = reference(path, table)
        ds = _load(path, n_labels=-L)
        _same(ds.X, X)
        _same(ds.Y, Y)
        _valid(folder, path, X, Y, "--n-labels", str(-L))

    run()


@CI
@given(sparse_tables(), st.booleans())
def test_valid_xc_and_svmlight_read_as_scikit_learn_does(folder, xy, header) -> None:
    X0, Y0 = xy
    path = folder / ("v.xc" if header else "v.svm")
    (write_xc if header else write_svmlight)(X0, Y0, path)
    ds = _load(path)
    X, Y = reference_svmlight(path, header=header,
                              n_features=ds.X.shape[1], n_labels=ds.Y.shape[1])
    _same(ds.X, X)
    _same(ds.Y, Y)
    if header:  # the header declares the shape
        assert (ds.X.shape, ds.Y.shape) == (X0.shape, Y0.shape)
    _valid(folder, path, X, Y)


#: (generator of valid files, suffix, extra fit options); mutations of their bytes must
#: still get exit 0 or a one-line exit 2
TARGETS = {
    "arff": (lambda t, p: write_arff(t, p), ".arff", ("--n-labels", "-1")),
    "sparse_arff": (lambda t, p: write_arff(t, p, sparse=True), ".arff", ("--n-labels", "-1")),
    "csv": (write_csv, ".csv", ("--n-labels", "-1")),
    "parquet": (write_parquet, ".parquet", ("--n-labels", "-1")),
}


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_mutated_and_truncated_files_get_exit_0_or_one_line(folder, target) -> None:
    write, suffix, extra = TARGETS[target]

    @CI
    @given(tables(), st.data())
    def run(table, data):
        seed = folder / f"seed{suffix}"
        write(table, seed)
        path = folder / f"m{suffix}"
        path.write_bytes(data.draw(mutations(seed.read_bytes(), max_ops=3)))
        check_command(fit_args(path, *extra), [path])

    run()


@CI
@given(sparse_tables(), st.booleans(), st.data())
def test_mutated_xc_and_svmlight_files_get_exit_0_or_one_line(folder, xy, header,
                                                             data) -> None:
    seed = folder / ("seed.xc" if header else "seed.svm")
    (write_xc if header else write_svmlight)(*xy, seed)
    path = folder / ("m.xc" if header else "m.svm")
    path.write_bytes(data.draw(mutations(seed.read_bytes(), max_ops=3)))
    check_command(fit_args(path), [path])


@CI
@given(tables(nominal=False), st.integers(0, 2**32 - 1), st.data())
def test_mutated_mulan_xml_gets_exit_0_or_one_line(folder, table, seed, data) -> None:
    path, _ = write_mulan(table, folder, np.random.default_rng(seed))
    xml = folder / "m.xml"
    xml.write_bytes(data.draw(mutations(xml.read_bytes(), max_ops=3)))
    check_command(fit_args(path), [path, xml])


def test_model_files_valid_truncated_mutated_and_forged(folder) -> None:
    header, payload, predicted = model_case(folder)
    path = folder / "fuzz.mlw"
    path.write_bytes(model_file(header, payload, forge=False))
    got = check_command(["predict", "--model", str(path), "--data", "emotions"], [path],
                        json_out=False)
    rows = [r.split(",") for r in got["stdout"].splitlines()[1:]]
    np.testing.assert_array_equal(np.array(rows, dtype=int), predicted)

    @CI
    @given(st.data(), st.booleans())
    def run(data, forge):
        kind = data.draw(st.sampled_from(["truncate", "mutate"]))
        if kind == "truncate":
            blob = model_file(header, payload, forge=forge)
            blob = blob[:data.draw(st.integers(0, len(blob) - 1))]
        else:
            blob = model_file(header, data.draw(mutations(payload)), forge=forge)
        path.write_bytes(blob)
        check_command(["predict", "--model", str(path), "--data", "emotions"], [path],
                      json_out=False)

    run()


def test_a_few_mutations_in_a_process_of_their_own_end_with_0_or_2(folder) -> None:
    """In-process runs cannot see a signal (it would end the test run): a few cases
    through the real command, where native code (polars) parses the bytes."""
    cases = []

    @settings(CI, max_examples=2)
    @given(tables(), st.data())
    def collect(table, data):
        seed = folder / "s.csv"
        write_csv(table, seed)
        cases.append(data.draw(mutations(seed.read_bytes(), max_ops=3)))

    collect()
    for i, blob in enumerate(cases):
        path = folder / f"p{i}.csv"
        path.write_bytes(blob)
        result = subprocess.run([sys.executable, "-m", "mlw_cli", "fit", "-l",
                                 "template_centroid",
                                 "--data", str(path), "--n-labels", "-1", "--cv", "2",
                                 "-m", "hamming_loss"], capture_output=True, text=True,
                                timeout=300)
        assert result.returncode in (0, 2), (result.returncode, result.stderr[-800:])
        assert "Traceback" not in result.stderr
