"""``run_experiment``: check an experiment, enumerate its cells, skip the ones already in
the results (unless their learner's defaults changed since), run the rest with an
executor and append each record as it finishes."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mlw.experiments.cells import Cell, enumerate_cells, params_changed
from mlw.experiments.config import Experiment
from mlw.experiments.executors import execute, start_local_pool
from mlw.experiments.store import ResultStore


class Progress(Protocol):
    """What a front end implements to show a run (the CLI's rich progress bar)."""

    def begin(self, total: int, done: int) -> None: ...
    def started(self, cell: Cell) -> None: ...
    def finished(self, cell: Cell, record: dict[str, Any]) -> None: ...


@dataclass
class RunSummary:
    """What a run did: ``total`` cells in the experiment, ``skipped`` (already in the
    results), ``stale`` (in the results, but recorded when their learner resolved to
    other parameters, e.g. before a plugin changed a default: run again), ``ran``,
    ``errors`` (records with ``status="error"``, each
    ``(cell description, error)``), the wall and process CPU seconds of the run, and
    ``results``: every record of this experiment's cells (a polars DataFrame)."""

    total: int
    skipped: int
    stale: int = 0
    ran: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    results: Any = None


@contextlib.contextmanager
def _local_pool(executor: str, jobs: int, scheduler: str | None) -> Iterator[Any]:
    """The local worker pool, started before anything else (see
    :func:`mlw.experiments.executors.start_local_pool`), or ``None``; its workers are
    stopped and reaped on the way out (killed when the run is interrupted)."""
    if executor != "local" or scheduler or isinstance(jobs, bool) or \
            not isinstance(jobs, int) or jobs < 1:
        yield None
        return
    pool = start_local_pool(jobs)
    ok = False
    try:
        yield pool
        ok = True
    finally:
        pool.shutdown(kill=not ok)


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def run_experiment(experiment: Experiment, out: str | os.PathLike[str], *,
                   executor: str = "local", jobs: int = 1, scheduler: str | None = None,
                   progress: Progress | None = None) -> RunSummary:
    """Run every cell of ``experiment`` not yet in ``out`` (see
    :class:`mlw.experiments.ResultStore`) and return a :class:`RunSummary`. A cell in
    ``out`` whose learner now resolves to other parameters than its record says
    (:func:`mlw.experiments.cells.params_changed`) runs again; its new record replaces
    the old.

    Everything is checked before the first fit (:meth:`Experiment.check`, each learner
    looked up once; then every cell looks its learner up once where it runs). A cell that
    fails is recorded with its error and tried again by the next run; ``Ctrl-C`` stops
    the run (``KeyboardInterrupt`` propagates) after the finished cells are stored.
    """
    now = experiment.check()  # each learner's resolved parameters, by key
    cells = enumerate_cells(experiment)
    store = ResultStore(out)
    if experiment.path is not None and Path(experiment.path).resolve() == \
            Path(out).resolve():
        raise ValueError("--out would overwrite the config file")
    if executor not in ("local", "dask"):
        raise ValueError(f"unknown executor {executor!r} (local or dask)")
    wall0, cpu0, child0 = time.perf_counter(), time.process_time(), _children_cpu()
    with store.locked(), _local_pool(executor, jobs, scheduler) as pool:
        import polars as pl  # after the workers are forked (polars starts threads)

        store.clean_temporary()
        done = store.done()
        todo = [c for c in cells if c.cell_id not in done or
                params_changed(c.learner, done[c.cell_id], now[c.learner.key])]
        stale = sum(c.cell_id in done for c in todo)
        summary = RunSummary(total=len(cells), skipped=len(cells) - len(todo), stale=stale)
        if progress is not None:
            progress.begin(len(cells), summary.skipped)

        def started(cell: Cell) -> None:
            if progress is not None:
                progress.started(cell)

        def finished(cell: Cell, record: dict[str, Any]) -> None:
            store.append(record)
            summary.ran += 1
            if record.get("status") != "ok":
                summary.errors.append((cell.describe(), str(record.get("error"))))
            if progress is not None:
                progress.finished(cell, record)

        try:
            execute(todo, executor=executor, jobs=jobs, scheduler=scheduler,
                    started=started, finished=finished, pool=pool)
        except BaseException:
            if pool is not None:
                pool.shutdown(kill=True)  # Ctrl-C: the cells in flight stop now
            raise
        finally:
            if pool is not None:
                pool.shutdown()  # reaped: their CPU time is counted below
            store.compact()
            summary.wall_seconds = time.perf_counter() - wall0
            summary.cpu_seconds = (time.process_time() - cpu0) + (_children_cpu() - child0)
        ids = {c.cell_id for c in cells}
        df = store.read()
        summary.results = df.filter(pl.col("cell_id").is_in(list(ids))) if df.height else df
    return summary
