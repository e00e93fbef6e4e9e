"""Fuzz targets of the readers: mutations of real files (byte flips, truncations,
duplicated, deleted and swapped lines, huge numbers, inserted syntax) fed to the ARFF,
Mulan XML, XC, CSV, Parquet and model-file readers.

Every outcome must be a successful load or one of the documented errors: a
:class:`mlw.io.DataFormatError` (a :class:`mlw.io.LimitError` included) for data, a
:class:`mlw.persistence.ModelFileError` for model files, each one line naming the file.
Any other exception, a ``MemoryError`` or an out-of-memory ``LimitError`` (the limits
must refuse before allocating) fails. Hangs are caught by a watchdog.

Used by ``core/tests/test_core_io_fuzz.py`` (a short, derandomised run in CI) and by
``benchmarks/fuzz_readers.py`` (the long run, which reports the cases tried).
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import os
import re
import resource
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

import mlw
from mlw.io import DataFormatError, LimitError

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("MLW_SHARED_DATASETS",
                           ROOT.parent / "shared" / "datasets")) / "mulan"

#: Tight limits for fuzzing: a mutation that asks for more is refused, not allocated.
FUZZ_LIMITS = {"max_memory": "256M", "max_columns": 200_000, "max_onehot": 2_000,
               "max_ratio": 200}
#: Peak memory (ru_maxrss) a whole run may add: a blow-up past the limits shows here.
MAX_RSS_GROWTH_MB = 1500

SPECIAL_TOKENS = [b"{", b"}", b",", b"?", b"'", b'"', b"%", b"\n", b"\r\n", b"\x00", b"\xff",
                  b"\xef\xbb\xbf", b"@data\n", b"@attribute z numeric\n",
                  b"@attribute q {a,b}\n", b"{0 1}", b"-C 3", b"\\", b":", b" ", b"\t",
                  b"<!ENTITY a 'b'>", b"&a;", b"<label name=\"x\"/>", b"</labels>", b"1e308",
                  b"-", b"4000000000", b"{,", b"nan", b"inf", b"NA", b"\x80\x04\x95"]
HUGE_NUMBERS = [b"9" * 400, b"1e999999", b"-1e-999999", b"4000000000", b"2147483648",
                b"18446744073709551616", b"nan", b"inf", b"-0", b"0x1F", b"1_000",
                b"99999999999999999999999", b"1e-400", b"+", b".", b"1e"]
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


# -- mutations -----------------------------------------------------------------------------


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


@st.composite
def mutations(draw: Any, seed: bytes, max_ops: int = 4) -> bytes:
    """``seed`` after 1 to ``max_ops`` random mutations."""
    data = bytes(seed)
    for _ in range(draw(st.integers(1, max_ops))):
        op = draw(st.sampled_from(["flip", "set", "truncate", "delete_line", "duplicate_line",
                                   "swap_lines", "huge_number", "insert", "insert_random",
                                   "repeat", "delete_span"]))
        n = len(data)
        if n == 0:
            data = draw(st.binary(max_size=64))
            continue
        pos = draw(st.integers(0, n - 1))
        if op == "flip":
            data = data[:pos] + bytes([data[pos] ^ (1 << draw(st.integers(0, 7)))]) \
                + data[pos + 1:]
        elif op == "set":
            data = data[:pos] + bytes([draw(st.integers(0, 255))]) + data[pos + 1:]
        elif op == "truncate":
            data = data[:pos]
        elif op in ("delete_line", "duplicate_line", "swap_lines"):
            lines = _lines(data)
            i = draw(st.integers(0, len(lines) - 1))
            if op == "delete_line":
                del lines[i]
            elif op == "duplicate_line":
                lines.insert(i, lines[i])
            else:
                j = draw(st.integers(0, len(lines) - 1))
                lines[i], lines[j] = lines[j], lines[i]
            data = b"\n".join(lines)
        elif op == "huge_number":
            numbers = list(_NUMBER.finditer(data))
            if numbers:
                m = numbers[draw(st.integers(0, len(numbers) - 1))]
                data = data[:m.start()] + draw(st.sampled_from(HUGE_NUMBERS)) + data[m.end():]
        elif op == "insert":
            data = data[:pos] + draw(st.sampled_from(SPECIAL_TOKENS)) + data[pos:]
        elif op == "insert_random":
            data = data[:pos] + draw(st.binary(min_size=1, max_size=16)) + data[pos:]
        elif op == "repeat":
            end = min(n, pos + draw(st.integers(1, 64)))
            data = data[:pos] + data[pos:end] * draw(st.integers(2, 200)) + data[end:]
        else:
            end = min(n, pos + draw(st.integers(1, 256)))
            data = data[:pos] + data[end:]
    return data


# -- seeds ---------------------------------------------------------------------------------


def _head(path: Path, data_rows: int) -> bytes:
    """The header and the first ``data_rows`` rows of an ARFF file."""
    raw = path.read_bytes()
    at = raw.lower().index(b"@data")
    body = raw[at:].split(b"\n")
    return raw[:at] + b"\n".join(body[:data_rows + 1]) + b"\n"


@dataclass
class Seeds:
    folder: Path
    arff: dict[str, bytes] = field(default_factory=dict)
    xml: dict[str, tuple[bytes, bytes]] = field(default_factory=dict)  # (arff, xml)
    xc: bytes = b""
    csv: bytes = b""
    parquet: bytes = b""
    parquet_plain: bytes = b""  # uncompressed: page headers and levels are plain bytes
    gz: bytes = b""
    bz2: bytes = b""


#: The seed files of :func:`make_seeds` (the long run names its plans by them).
ARFF_SEED_NAMES = ("flags", "emotions", "medical", "birds", "slashdot")
XML_SEED_NAMES = ("flags", "birds")


def make_seeds(folder: Path) -> Seeds:
    """Small seeds cut from the shared real files (and written from them)."""
    seeds = Seeds(folder)
    seeds.arff["flags"] = _head(SHARED / "flags-train.arff", 40)     # nominal + numeric
    seeds.arff["emotions"] = _head(SHARED / "emotions-train.arff", 20)  # dense numeric
    seeds.arff["medical"] = _head(SHARED / "medical.arff", 25)       # sparse, escapes
    seeds.arff["birds"] = _head(SHARED / "birds-train.arff", 15)     # quoted names
    seeds.arff["slashdot"] = _head(SHARED / "slashdot-train.arff", 30)  # {,3125 1}
    for name in XML_SEED_NAMES:
        seeds.xml[name] = (seeds.arff[name], (SHARED / f"{name}.xml").read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = mlw.io.loads_arff(seeds.arff["flags"], path=SHARED / "flags-train.arff")
    p = folder / "seed.xc"
    mlw.io.write_xc(ds, p)
    seeds.xc = p.read_bytes()
    import polars as pl

    X = np.asarray(ds.X)
    frame = {n: X[:, j] for j, n in enumerate(ds.feature_names[:8])}
    frame["colour"] = np.array(["red", "blue", "green", "red"] * 10)[:ds.n_instances]
    frame["count"] = np.array([str(i) for i in range(ds.n_instances)])
    for j, n in enumerate(ds.label_names):
        frame[n] = np.asarray(ds.Y)[:, j]
    df = pl.DataFrame(frame)
    buf = io.BytesIO()
    df.write_csv(buf)
    seeds.csv = buf.getvalue()
    df.write_parquet(folder / "seed.parquet")
    seeds.parquet = (folder / "seed.parquet").read_bytes()
    df.write_parquet(folder / "seed-plain.parquet", compression="uncompressed")
    seeds.parquet_plain = (folder / "seed-plain.parquet").read_bytes()
    import bz2
    import gzip

    seeds.gz = gzip.compress(seeds.arff["flags"], mtime=0)
    seeds.bz2 = bz2.compress(seeds.arff["flags"])
    return seeds


# -- targets -------------------------------------------------------------------------------

#: Which exceptions count as documented, per reader.
ALLOWED_DATA = (DataFormatError,)


class FuzzFailure(AssertionError):
    """An outcome outside the contract."""


@dataclass
class Tally:
    """Cases tried per target and what each got."""

    counts: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    examples: dict[tuple[str, str], str] = field(default_factory=dict)

    def add(self, target: str, outcome: str, example: str = "") -> None:
        self.counts[(target, outcome)] += 1
        self.examples.setdefault((target, outcome), example)

    def total(self, target: str | None = None) -> int:
        return sum(c for (t, _), c in self.counts.items() if target in (None, t))

    def as_rows(self) -> list[dict[str, Any]]:
        return [{"target": t, "outcome": o, "cases": c, "example": self.examples[(t, o)]}
                for (t, o), c in sorted(self.counts.items())]


def _outcome_of(exc: BaseException) -> str:
    """A short class of an error message: its reason without names and numbers."""
    reason = getattr(exc, "reason", None) or str(exc).split(": ", 1)[-1]
    reason = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", reason)
    reason = re.sub(r"\d[\d,.]*", "N", reason)
    return f"{type(exc).__name__}: {' '.join(reason.split()[:7])}"


def check_one(target: str, run: Callable[[], Any], file_name: str, tally: Tally,
              allowed: tuple[type[BaseException], ...] = ALLOWED_DATA) -> None:
    """Run one case; record its outcome; raise :class:`FuzzFailure` outside the contract."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with mlw.io.limits(**FUZZ_LIMITS):
                run()
    except allowed as exc:
        msg = str(exc)
        if "\n" in msg or not msg.startswith(file_name) and file_name not in msg[:300]:
            raise FuzzFailure(f"{target}: not a one-line error naming {file_name}: {msg!r}") \
                from exc
        if isinstance(exc, LimitError) and "ran out of memory" in msg:
            raise FuzzFailure(f"{target}: a MemoryError got past the limits: {msg}") from exc
        tally.add(target, _outcome_of(exc), msg[:160])
        return
    except BaseException as exc:  # noqa: BLE001 - anything else is the bug we look for
        if isinstance(exc, KeyboardInterrupt) and not isinstance(exc, Exception):
            raise
        raise FuzzFailure(f"{target}: {type(exc).__name__}: {exc}"[:500]) from exc
    tally.add(target, "loaded")


def rss_mb(children: bool = False) -> float:
    """Peak RSS of this process (of its largest finished child with ``children``)."""
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024


class Targets:
    """The fuzz targets over one seed set; each takes the mutated bytes."""

    def __init__(self, seeds: Seeds, tally: Tally) -> None:
        self.seeds = seeds
        self.tally = tally
        self.dir = Path(tempfile.mkdtemp(prefix="mlw-fuzz-", dir=seeds.folder))

    def arff(self, data: bytes, plain: bool = False) -> None:
        p = self.dir / "fuzz.arff"
        p.write_bytes(data)
        # n_labels=-7 when the relation has no -C: flags/emotions have labels last
        check_one("arff", lambda: mlw.load_dataset(p, xml=False, n_labels=-3), p.name,
                  self.tally)

    def arff_meka(self, data: bytes) -> None:
        p = self.dir / "fuzzm.arff"
        p.write_bytes(data)
        check_one("arff", lambda: mlw.load_dataset(p, xml=False), p.name, self.tally)

    def xml(self, data: bytes, arff: bytes) -> None:
        a = self.dir / "x-train.arff"
        a.write_bytes(arff)
        x = self.dir / "x.xml"
        x.write_bytes(data)

        def run() -> None:
            try:
                mlw.load_dataset(a)
            except DataFormatError as exc:
                if exc.path.endswith("x.xml"):
                    raise
                raise DataFormatError(x, None, f"(via {a.name}) {exc.reason}") from None
        check_one("xml", run, x.name, self.tally)

    def xc(self, data: bytes) -> None:
        p = self.dir / "fuzz.xc"
        p.write_bytes(data)
        check_one("xc", lambda: mlw.load_dataset(p), p.name, self.tally)

    def csv(self, data: bytes) -> None:
        p = self.dir / "fuzz.csv"
        p.write_bytes(data)
        check_one("csv", lambda: mlw.load_dataset(p, n_labels=-7), p.name, self.tally)

    def parquet(self, data: bytes) -> None:
        p = self.dir / "fuzz.parquet"
        p.write_bytes(data)
        check_one("parquet", lambda: mlw.load_dataset(p, n_labels=-7), p.name, self.tally)

    def compressed(self, data: bytes, suffix: str = ".gz") -> None:
        p = self.dir / f"fuzz.arff{suffix}"
        p.write_bytes(data)
        check_one("compressed", lambda: mlw.load_dataset(p, xml=False, n_labels=-3), p.name,
                  self.tally)


# -- model files ---------------------------------------------------------------------------


class FuzzLearner(mlw.MultiLabelLearner):
    """A small learner whose state has arrays, a dict, a sparse matrix and a threshold."""

    def __init__(self, threshold: str = "pcut") -> None:
        self.threshold = threshold

    def _fit(self, X, Y):
        import scipy.sparse as sp

        Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.float64)
        self.p_ = Y.mean(axis=0)
        self.w_ = {"centre": np.asarray(X.mean(axis=0)).ravel(), "n": int(X.shape[0])}
        self.S_ = sp.csr_matrix(Y[:5])

    def _predict_proba(self, X):
        return np.tile(self.p_, (X.shape[0], 1))


class _FuzzPlugin:
    @staticmethod
    @mlw.hookimpl
    def mlw_register_learners(register):
        register(mlw.LearnerSpec("fuzz_freq", FuzzLearner, "fuzz target"))


@contextlib.contextmanager
def fuzz_plugin() -> Iterator[None]:
    """A fresh process-wide plugin manager with the fuzz learner, reset afterwards."""
    from mlw.plugins import get_plugin_manager, reset_plugin_manager

    reset_plugin_manager()
    get_plugin_manager().register(_FuzzPlugin(), name="fuzz", distribution="mlw-fuzz",
                                  version="1.0.0")
    try:
        yield
    finally:
        reset_plugin_manager()


def model_seed(folder: Path) -> tuple[dict[str, Any], bytes]:
    """(header, payload) of a saved FuzzLearner model."""
    ds = mlw.load_dataset("emotions")
    p = folder / "seed.mlw"
    mlw.save_model(FuzzLearner().fit(ds.X[:40], ds.Y[:40]), p)
    blob = p.read_bytes()
    nl = blob.index(b"\n", 9)
    size = int(blob[9:nl])
    return json.loads(blob[nl + 1:nl + 1 + size]), blob[nl + 1 + size:]


def model_file(header: dict[str, Any], payload: bytes, *, forge: bool) -> bytes:
    """A model file of ``payload``: with a matching checksum when ``forge`` (an
    attacker recomputes it), else the header as it was (damage)."""
    from mlw import persistence

    header = dict(header)
    if forge:
        header["payload_bytes"] = len(payload)
        header["sha256"] = persistence._digest(header, payload)
    blob = json.dumps(header).encode()
    return b"MLWMODEL\n" + str(len(blob)).encode() + b"\n" + blob + payload


def check_model(target: str, folder: Path, data: bytes, tally: Tally) -> None:
    from mlw.persistence import ModelFileError

    p = folder / "fuzz.mlw"
    p.write_bytes(data)
    check_one(target, lambda: mlw.load_model(p), p.name, tally, allowed=(ModelFileError,))
