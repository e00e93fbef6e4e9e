"""Compile the numba kernels up front (``mlw warmup``), so the first real run after
installing mlw or a plugin does not spend its first minute compiling.

Numba compiles a kernel the first time it is called with a new combination of argument
types and keeps the machine code in its on-disk cache (``cache=True``), where every later
process finds it. Warming up therefore means calling the kernels with the argument types
real runs use. mlw does that without any help from the plugins: it runs each piece once
on a small slice of the bundled emotions data,

- ``loaders``: the ARFF reader (dense and sparse rows), the extreme-classification
  reader and the Mulan XML, from small files written to a temporary folder;
- ``metrics``: every registered metric and the per-label table, on dense and on CSR
  label matrices and scores;
- ``thresholds``: every registered thresholding strategy, fitted and applied;
- each registered learner (or those named): ``fit`` and one-pass prediction (and
  ``log_proba_of`` where it exists) on dense float64 data, and on CSR data for learners
  that take sparse input, with the dtypes the loaders produce (float64 values, int32
  indices, uint8 labels).

A piece that fails is reported (its error) and the others go on: warming up is an
optimisation, never a requirement. Kernels a learner only reaches with non-default
parameters compile on their first real use, as before.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from mlw.evaluation import evaluate
from mlw.factory import get_learner
from mlw.io import load_dataset
from mlw.io.arff import loads_arff
from mlw.jit import compile_timer
from mlw.learner import make_threshold
from mlw.plugins import get_plugin_manager
from mlw.registry import LearnerTags

__all__ = ["WarmupResult", "warmup", "warmup_steps"]

#: Rows of the bundled emotions data the learners are fitted on.
WARMUP_ROWS = 60


@dataclass
class WarmupResult:
    """One warmed-up piece: ``name`` (``loaders``, ``metrics``, ``thresholds`` or a
    learner's name), the wall and CPU seconds it took, the seconds numba spent
    compiling (0 when everything was already in the cache), and the one-line ``error``
    of a piece that failed."""

    name: str
    seconds: float
    cpu_seconds: float
    compile_seconds: float
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "seconds": self.seconds, "cpu_seconds": self.cpu_seconds,
                "compile_seconds": self.compile_seconds, "error": self.error}


def _small_data() -> tuple[Any, Any, Any, Any]:
    """Dense and CSR versions of a small slice of emotions: ``(X, Y, X_csr, Y_csr)``."""
    import numpy as np
    import scipy.sparse as sp

    data = load_dataset("emotions")
    X = np.ascontiguousarray(data.X[:WARMUP_ROWS], dtype=np.float64)
    Y = np.ascontiguousarray(data.Y[:WARMUP_ROWS], dtype=np.uint8)
    # sparse like a text dataset: most entries zero, float64 data, int32 indices
    Xs = np.where(X > np.quantile(X, 0.8, axis=0), X, 0.0)
    X_csr = sp.csr_matrix(Xs)
    X_csr.indices = X_csr.indices.astype(np.int32)
    X_csr.indptr = X_csr.indptr.astype(np.int32)
    Y_csr = sp.csr_matrix(Y, dtype=np.uint8)
    return X, Y, X_csr, Y_csr


def _loaders() -> None:
    import tempfile
    from pathlib import Path

    load_dataset("emotions")  # dense ARFF rows, nominal labels, the Mulan XML
    sparse = (b"@relation 'w: -C 2'\n@attribute a {0,1}\n@attribute b {0,1}\n"
              b"@attribute x numeric\n@attribute y numeric\n@data\n"
              b"{0 1,2 0.5}\n{1 1,3 2}\n{0 1,1 1,2 1.5,3 1}\n")
    loads_arff(sparse, path="warmup.arff")
    with tempfile.TemporaryDirectory() as folder:
        xc = Path(folder) / "warmup.txt"
        xc.write_text("3 4 2\n0 1:0.5 3:1\n1 0:1\n0,1 2:2 3:0.25\n")
        load_dataset(xc)


def _metrics(X: Any, Y: Any, X_csr: Any, Y_csr: Any) -> None:
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    scores = rng.random(Y.shape)
    pred = (scores >= 0.5).astype(np.uint8)
    log_proba = np.log(np.full(Y.shape[0], 0.5))
    names = list(get_plugin_manager().metrics())
    for truth, p, s in ((Y, pred, scores), (Y_csr, sp.csr_matrix(pred), sp.csr_matrix(scores))):
        for name in names:
            try:  # one metric at a time: a metric that cannot take CSR scores is skipped
                evaluate(truth, p, scores=s, metrics=[name], log_proba=log_proba)
            except (ValueError, TypeError):
                continue
        evaluate(truth, p, scores=s, per_label=True)


def _thresholds(Y: Any) -> None:
    import numpy as np

    scores = np.random.default_rng(1).random(Y.shape)
    for name in get_plugin_manager().thresholds():
        try:
            strategy, needs_scores = make_threshold(name)
            strategy.fit(scores if needs_scores else None, Y)
            strategy.predict(scores)
        except (ValueError, TypeError):
            continue  # a strategy that needs options (fixed_per_label:FILE)


def _learner(name: str, X: Any, Y: Any, X_csr: Any, Y_csr: Any) -> None:
    learner = get_learner(name, seed=0)
    inputs = [(X, Y)]
    if LearnerTags.of(type(learner)).sparse_input:
        inputs.append((X_csr, Y_csr))
    for Xi, Yi in inputs:
        model = get_learner(name, seed=0).fit(Xi, Yi)
        if hasattr(model, "predict_with_scores"):
            model.predict_with_scores(Xi)
        else:
            model.predict(Xi)
        if hasattr(model, "log_proba_of"):
            model.log_proba_of(Xi, Yi)


def warmup_steps(learners: Iterable[str] | None = None
                 ) -> list[tuple[str, Callable[[], None]]]:
    """The pieces :func:`warmup` runs, in order, as ``(name, run)`` pairs: ``loaders``,
    ``metrics``, ``thresholds``, then every registered learner, or those in
    ``learners`` (unknown names raise :class:`mlw.UnknownNameError` here, before
    anything runs)."""
    pm = get_plugin_manager()
    names = sorted(pm.learners()) if learners is None else list(learners)
    for name in names:
        pm.learner(name)  # an unknown name fails now, with suggestions
    cache: dict[str, Any] = {}

    def data() -> Any:
        if "data" not in cache:
            cache["data"] = _small_data()
        return cache["data"]

    steps: list[tuple[str, Callable[[], None]]] = [
        ("loaders", _loaders),
        ("metrics", lambda: _metrics(*data())),
        ("thresholds", lambda: _thresholds(data()[1])),
    ]
    steps += [(n, lambda n=n: _learner(n, *data())) for n in names]  # type: ignore[misc]
    return steps


def warmup(learners: Iterable[str] | None = None, *,
           progress: Callable[[str, WarmupResult | None], None] | None = None
           ) -> list[WarmupResult]:
    """Compile the kernels of the loaders, metrics, thresholds and learners (all
    registered, or the named ``learners``), by running each once on small data.

    ``progress(name, None)`` is called before a piece and ``progress(name, result)``
    after it. Returns one :class:`WarmupResult` per piece; a piece that raised has its
    one-line ``error`` (the others still run). Warnings of the small fits (convergence
    and the like) are silenced.

    Examples
    --------
    >>> results = warmup(["br"])
    >>> [r.name for r in results]
    ['loaders', 'metrics', 'thresholds', 'br']
    >>> all(r.error is None for r in results)
    True
    """
    results = []
    for name, run in warmup_steps(learners):
        if progress is not None:
            progress(name, None)
        error = None
        wall, cpu = time.perf_counter(), time.process_time()
        with compile_timer() as compiling, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                run()
            except Exception as exc:  # a failing piece is reported, the others go on
                lines = str(exc).strip().splitlines()
                error = f"{type(exc).__name__}: {lines[0] if lines else ''}"
        result = WarmupResult(name, time.perf_counter() - wall, time.process_time() - cpu,
                              compiling.seconds, error)
        results.append(result)
        if progress is not None:
            progress(name, result)
    return results
