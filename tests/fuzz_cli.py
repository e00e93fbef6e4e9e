"""Fuzz targets of the ``mlw`` command: generated data files (ARFF dense and sparse, ARFF
with a Mulan XML, CSV, Parquet, XC, svmlight) and model files, valid, truncated or
mutated, fed to ``mlw fit`` / ``mlw predict`` (in this process, through typer's
``CliRunner``).

The contract checked on every case (:func:`check_command`):

- exit 0 with one JSON object on stdout, or exit 2 with one JSON error object of kind
  ``bad_input`` on stdout and one ``error:`` line on stderr (never exit 1, a traceback,
  a signal or any other code);
- no case runs longer than :data:`CASE_SECONDS` (a hang fails it);
- no input file changes.

On a valid file, what mlw reads equals what a reference reader reads (:class:`Table`
holds the values the file was written from; liac-arff, Python's ``csv``, polars and
scikit-learn's ``load_svmlight_file`` read it back independently).

Used by ``tests/test_cli_fuzz.py`` (a short, derandomised run in CI) and by
``benchmarks/fuzz_readers.py --cli`` (the long run).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import signal
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "core" / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "core" / "tests"))

from fuzz_io import FuzzLearner, fuzz_plugin, model_file, mutations  # noqa: E402

#: Longest a single case may run (a hang fails it).
CASE_SECONDS = 60.0


class CaseTimeout(BaseException):
    """A case ran past :data:`CASE_SECONDS` (not an ``Exception``: nothing catches it)."""


class ContractBroken(AssertionError):
    """An outcome outside the command's contract."""


@contextlib.contextmanager
def time_limit(seconds: float = CASE_SECONDS) -> Iterator[None]:
    def expired(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"a case ran longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def digest(paths: list[Path]) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def check_command(args: list[str], inputs: list[Path], *, json_out: bool = True
                  ) -> dict[str, Any]:
    """Run ``mlw ARGS`` in this process; return the JSON object of a success (with
    ``json_out=False``, a command without ``--json``: ``{"stdout": text}``), raise
    :class:`ContractBroken` outside the contract, or return ``{"refused": message}`` for
    a one-line refusal."""
    from typer.testing import CliRunner

    from mlw_cli.main import app

    before = digest(inputs)
    with time_limit(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = CliRunner().invoke(app, args, catch_exceptions=False)
    if digest(inputs) != before:
        raise ContractBroken(f"mlw {' '.join(args)} changed an input file")
    out, err = result.stdout, result.stderr
    if "Traceback" in err or "Traceback" in out:
        raise ContractBroken(f"a traceback: {err[-2000:]}")
    errors = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    if not json_out:
        if result.exit_code == 0 and not errors:
            return {"stdout": out}
        if result.exit_code != 2 or len(errors) != 1 or not err.endswith(errors[0] + "\n"):
            raise ContractBroken(f"exit {result.exit_code}, stderr {err[-800:]!r}")
        return {"refused": errors[0][len("error: "):]}
    lines = out.splitlines()
    if len(lines) != 1:
        raise ContractBroken(f"exit {result.exit_code}: stdout is not one JSON line: "
                             f"{out[:500]!r} (stderr {err[-500:]!r})")
    obj = json.loads(lines[0])
    if result.exit_code == 0 and "error" not in obj:
        return obj
    if result.exit_code != 2 or obj.get("error", {}).get("kind") != "bad_input" or \
            len(errors) != 1 or not err.endswith(errors[0] + "\n"):
        raise ContractBroken(f"exit {result.exit_code}, stderr {err[-800:]!r}, "
                             f"stdout {out[:300]!r}")
    return {"refused": errors[0][len("error: "):]}


def fit_args(data: Path, *extra: str) -> list[str]:
    """``mlw fit`` of the fuzz learner, trained and tested on ``data`` (a hold-out on
    the same rows: one fit, every column read twice and aligned by name)."""
    return ["fit", "-l", "fuzz_freq", "--data", str(data), "--test", str(data),
            "-m", "hamming_loss", "--json", *extra]


# -- generated tables --------------------------------------------------------------------


@dataclass
class Table:
    """What a generated file holds: ``X`` (numbers, NaN missing), an optional nominal
    column ``colour`` (values from ``a``, ``b``, ``c``; ``None`` missing), labels ``Y``."""

    X: np.ndarray
    colour: list[str | None] | None
    Y: np.ndarray

    @property
    def n_features(self) -> int:
        k = len(set(v for v in self.colour if v is not None)) if self.colour else 0
        width = 0 if self.colour is None else (k if k > 2 else 1)
        return self.X.shape[1] + width

    def feature_names(self) -> list[str]:
        return [f"f{j}" for j in range(self.X.shape[1])]

    def label_names(self) -> list[str]:
        return [f"y{j}" for j in range(self.Y.shape[1])]


_FLOATS = st.one_of(st.integers(-1000, 1000).map(float),
                    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=32)
                    .map(float))


@st.composite
def tables(draw: Any, *, missing: bool = True, nominal: bool = True) -> Table:
    n = draw(st.integers(2, 12))
    d = draw(st.integers(1, 4))
    L = draw(st.integers(1, 3))
    X = np.array([[draw(_FLOATS) for _ in range(d)] for _ in range(n)], dtype=np.float64)
    if missing and draw(st.booleans()):
        X[draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))] = np.nan
    colour = None
    if nominal and draw(st.booleans()):
        colour = [draw(st.sampled_from(["a", "b", "c"])) for _ in range(n)]
    Y = np.array([[draw(st.integers(0, 1)) for _ in range(L)] for _ in range(n)],
                 dtype=np.uint8)
    return Table(X, colour, Y)


def expected_X(t: Table) -> tuple[list[str], np.ndarray]:
    """The features mlw's nominal policy makes of ``t`` (see docs/guide/datasets.md):
    numbers as they are; ``colour`` with two values one 0/1 column (the second value in
    sorted order is 1), with three one-hot columns ``colour=v``."""
    names, cols = t.feature_names(), [t.X]
    if t.colour is not None:
        values = sorted(set(v for v in t.colour if v is not None))
        if len(values) <= 2:
            one = values[1] if len(values) == 2 else None
            cols.append(np.array([[float(v == one)] for v in t.colour]))
            names.append("colour")
        else:
            cols.append(np.array([[float(v == w) for w in values] for v in t.colour]))
            names.extend(f"colour={w}" for w in values)
    return names, np.hstack(cols)


def _num(v: float) -> str:
    return "?" if np.isnan(v) else repr(float(v))


def write_arff(t: Table, path: Path, *, sparse: bool = False) -> None:
    lines = ["@relation fuzz"]
    lines += [f"@attribute {n} numeric" for n in t.feature_names()]
    if t.colour is not None:
        lines.append("@attribute colour {a,b,c}")
    lines += [f"@attribute {n} {{0,1}}" for n in t.label_names()]
    lines.append("@data")
    for i in range(t.X.shape[0]):
        row = [_num(v) for v in t.X[i]]
        if t.colour is not None:
            row.append(t.colour[i] or "?")
        row += [str(int(v)) for v in t.Y[i]]
        if sparse:
            # an omitted entry is 0 (numbers) or the first declared value (nominal)
            cells = [f"{j} {v}" for j, v in enumerate(row) if v not in ("0.0", "0", "a")]
            lines.append("{" + ", ".join(cells) + "}")
        else:
            lines.append(",".join(row))
    path.write_text("\n".join(lines) + "\n")


def reference_arff(path: Path, n_labels: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(feature names, X, Y) of an ARFF file as liac-arff reads it, by mlw's nominal
    policy for ARFF: over the *declared* values, three or more one-hot in declared
    order (``name=value``), two one 0/1 column (labels here: ``{0,1}``)."""
    import arff

    doc = arff.loads(path.read_text())
    attrs = doc["attributes"]
    data = doc["data"]
    feats = attrs[:len(attrs) - n_labels]
    names: list[str] = []
    cols = []
    for j, (name, kind) in enumerate(feats):
        raw = [row[j] for row in data]
        if kind == "NUMERIC":
            names.append(name)
            cols.append(np.array([[np.nan if v is None else float(v)] for v in raw]))
        else:
            names.extend(f"{name}={w}" for w in kind)
            cols.append(np.array([[np.nan if v is None else float(v == w) for w in kind]
                                  for v in raw]))
    X = np.hstack(cols) if cols else np.zeros((len(data), 0))
    Y = np.array([[int(v) for v in row[len(feats):]] for row in data], dtype=np.uint8)
    return names, X, Y


def write_mulan(t: Table, folder: Path, rng: np.random.Generator) -> tuple[Path, list[str]]:
    """An ARFF file with the labels among the features (shuffled columns) and its Mulan
    XML, which lists the labels in another order: the XML decides which are labels and
    their order. Returns the ARFF path and the XML's label order."""
    names = t.feature_names() + t.label_names()
    values = [[_num(v) for v in t.X[i]] + [str(int(v)) for v in t.Y[i]]
              for i in range(t.X.shape[0])]
    order = list(rng.permutation(len(names)))
    lines = ["@relation fuzz"]
    for j in order:
        kind = "{0,1}" if names[j].startswith("y") else "numeric"
        lines.append(f"@attribute {names[j]} {kind}")
    lines.append("@data")
    lines += [",".join(row[j] for j in order) for row in values]
    arff_path = folder / "m-train.arff"
    arff_path.write_text("\n".join(lines) + "\n")
    labels = list(rng.permutation(t.label_names()))
    xml = ['<?xml version="1.0" encoding="utf-8"?>',
           '<labels xmlns="http://mulan.sourceforge.net/labels">']
    xml += [f'<label name="{n}"></label>' for n in labels]
    xml.append("</labels>")
    (folder / "m.xml").write_text("\n".join(xml) + "\n")
    return arff_path, [str(n) for n in labels]


def write_csv(t: Table, path: Path) -> None:
    names = t.feature_names() + (["colour"] if t.colour is not None else []) + \
        t.label_names()
    rows = [",".join(names)]
    for i in range(t.X.shape[0]):
        row = ["" if np.isnan(v) else repr(float(v)) for v in t.X[i]]
        if t.colour is not None:
            row.append(t.colour[i] or "")
        row += [str(int(v)) for v in t.Y[i]]
        rows.append(",".join(row))
    path.write_text("\n".join(rows) + "\n")


def reference_csv(path: Path, t: Table) -> tuple[np.ndarray, np.ndarray]:
    """(X, Y) as Python's csv module and ``float`` read the file."""
    import csv

    rows = list(csv.reader(io.StringIO(path.read_text())))
    d, L = t.X.shape[1], t.Y.shape[1]
    X = np.array([[float(v) if v else np.nan for v in r[:d]] for r in rows[1:]])
    if t.colour is not None:
        colour = [r[d] or None for r in rows[1:]]
        _, full = expected_X(Table(X, colour, t.Y))
        X = full
    Y = np.array([[int(v) for v in r[len(r) - L:]] for r in rows[1:]], dtype=np.uint8)
    return X, Y


def write_parquet(t: Table, path: Path) -> None:
    import polars as pl

    columns: dict[str, Any] = {n: t.X[:, j] for j, n in enumerate(t.feature_names())}
    if t.colour is not None:
        columns["colour"] = t.colour
    for j, n in enumerate(t.label_names()):
        columns[n] = t.Y[:, j].astype(np.int64)
    pl.DataFrame(columns).write_parquet(path)


def reference_parquet(path: Path, t: Table) -> tuple[np.ndarray, np.ndarray]:
    """(X, Y) as polars reads the file (NaN stays NaN)."""
    import polars as pl

    df = pl.read_parquet(path)
    X = np.column_stack([df[n].to_numpy() for n in t.feature_names()]).astype(float)
    if t.colour is not None:
        _, X = expected_X(Table(X, df["colour"].to_list(), t.Y))
    Y = np.column_stack([df[n].to_numpy() for n in t.label_names()]).astype(np.uint8)
    return X, Y


@st.composite
def sparse_tables(draw: Any) -> tuple[np.ndarray, np.ndarray]:
    """(X, Y) for the sparse text formats: small integers and halves, mostly zero."""
    n = draw(st.integers(1, 10))
    d = draw(st.integers(1, 8))
    L = draw(st.integers(1, 5))
    X = np.array([[draw(st.sampled_from([0.0, 0.0, 0.0, 1.0, 0.5, -2.0, 3.25]))
                   for _ in range(d)] for _ in range(n)])
    Y = np.array([[draw(st.integers(0, 1)) for _ in range(L)] for _ in range(n)],
                 dtype=np.uint8)
    X[~X.any(axis=1), 0] = 1.0  # a row with no entry at all would be a blank line
    return X, Y


def _sparse_rows(X: np.ndarray, Y: np.ndarray, base: int) -> list[str]:
    rows = []
    for i in range(X.shape[0]):
        labels = ",".join(str(j) for j in np.flatnonzero(Y[i]))
        feats = " ".join(f"{j + base}:{float(X[i, j])!r}" for j in np.flatnonzero(X[i]))
        rows.append(f"{labels} {feats}".rstrip() if labels else f" {feats}".rstrip())
    return rows


def write_xc(X: np.ndarray, Y: np.ndarray, path: Path) -> None:
    """The Extreme Classification Repository format: ``n d L`` then zero-based rows."""
    rows = _sparse_rows(X, Y, 0)
    path.write_text(f"{X.shape[0]} {X.shape[1]} {Y.shape[1]}\n" + "\n".join(rows) + "\n")


def write_svmlight(X: np.ndarray, Y: np.ndarray, path: Path) -> None:
    """LIBSVM's one-based rows, no header."""
    path.write_text("\n".join(_sparse_rows(X, Y, 1)) + "\n")


def reference_svmlight(path: Path, *, header: bool, n_features: int | None,
                       n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """(X, Y) as scikit-learn's ``load_svmlight_file(multilabel=True)`` reads the rows
    (after the XC header line, zero-based; else one-based unless an index is 0)."""
    from sklearn.datasets import load_svmlight_file

    body = path.read_bytes()
    if header:
        body = body.split(b"\n", 1)[1]
    X, labels = load_svmlight_file(io.BytesIO(body), multilabel=True,
                                   zero_based=True if header else "auto",
                                   n_features=n_features)
    Y = np.zeros((X.shape[0], n_labels), dtype=np.uint8)
    for i, row in enumerate(labels):
        Y[i, [int(v) for v in row]] = 1
    return X.toarray(), Y


# -- model files -------------------------------------------------------------------------


def model_case(folder: Path) -> tuple[dict[str, Any], bytes, np.ndarray]:
    """(header, payload) of a saved FuzzLearner model and its predictions on emotions'
    test split (what ``mlw predict --data emotions`` reads)."""
    import mlw

    ds = mlw.load_dataset("emotions", split="test")
    model = FuzzLearner().fit(ds.X[:40], ds.Y[:40])
    p = folder / "seed.mlw"
    mlw.save_model(model, p)
    blob = p.read_bytes()
    nl = blob.index(b"\n", 9)
    size = int(blob[9:nl])
    header = json.loads(blob[nl + 1:nl + 1 + size])
    return header, blob[nl + 1 + size:], np.asarray(model.predict(ds.X))


__all__ = ["CASE_SECONDS", "CaseTimeout", "ContractBroken", "Table", "check_command",
           "expected_X", "fit_args", "fuzz_plugin", "model_case", "model_file", "mutations",
           "reference_arff", "reference_csv", "reference_parquet", "reference_svmlight",
           "sparse_tables", "tables", "time_limit", "write_arff", "write_csv", "write_mulan",
           "write_parquet", "write_svmlight", "write_xc"]
