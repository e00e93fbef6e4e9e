"""Where cells run: this process (``jobs=1``), local worker processes (``jobs>1``), or a
Dask distributed cluster. Every executor runs the same :func:`run_cell` and hands each
record back to the caller in this process, which writes it (so results stream into one
store whatever runs the cells).

- ``local``: at most ``jobs`` cells in flight, each in a worker process, forked (on
  Linux) before the harness starts any thread, so workers start with everything
  imported. Worker processes die with the parent (Linux ``PR_SET_PDEATHSIG``), and get
  ``cores // jobs`` threads for BLAS/OpenMP/numba unless the environment sets them. A
  worker that dies (killed, out of memory) breaks the pool: the pool is rebuilt and
  only the cells in flight are run again, a cell in flight during three such deaths is
  recorded as an error.
- ``dask``: cells are submitted to a ``distributed`` scheduler (``scheduler`` address,
  or a ``LocalCluster`` of ``jobs`` single-threaded worker processes when none is
  given); Dask reschedules the cells of a worker that dies on the other workers.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from mlw.experiments.cells import Cell, run_cell

Started = Callable[[Cell], None]
Finished = Callable[[Cell, dict], None]

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
#: a cell whose worker dies this many times is recorded as an error
MAX_WORKER_DEATHS = 3


def _die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (no orphaned workers)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _worker_init(threads: int) -> None:
    _die_with_parent()
    for var in _THREAD_VARS:
        os.environ.setdefault(var, str(threads))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    # a forked worker must not share the parent's stream buffers (their locks may have
    # been held by another thread of the parent at fork time); and what a worker prints
    # is never a result (cells return records): a plugin printing while it fits goes to
    # stderr, so it cannot corrupt the parent's stdout (`mlw bench --json`)
    with contextlib.suppress(OSError, ValueError):
        sys.stdout = os.fdopen(os.dup(2), "w", buffering=1)
        sys.stderr = os.fdopen(os.dup(2), "w", buffering=1)
    with contextlib.suppress(Exception):  # libraries the parent had already loaded
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads)
    # numba: the number of threads parallel kernels use, never NUMBA_NUM_THREADS (numba
    # refuses a new value of it once its threads run, and a forked worker inherits the
    # parent's configuration)
    with contextlib.suppress(Exception):
        import numba

        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    import mlw.experiments.cells  # noqa: F401  (import once, before the first cell)
    from mlw.jit import announce_compilation
    from mlw.plugins import get_plugin_manager

    announce_compilation(f"worker {os.getpid()}: ")

    get_plugin_manager()


def _ready() -> int:
    return os.getpid()


def start_local_pool(jobs: int) -> Any:
    """A pool of ``jobs`` worker processes, started now. On Linux they are forked from
    this process, so they start with mlw, the plugins and the libraries already
    imported (no per-worker import cost): call this before the process starts threads
    of its own (progress displays, polars' thread pool). Elsewhere they are spawned."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    threads = max(1, (os.cpu_count() or 1) // jobs)
    pool = ProcessPoolExecutor(max_workers=jobs,
                               mp_context=multiprocessing.get_context(method),
                               initializer=_worker_init, initargs=(threads,))
    pool.submit(_ready).result()  # launches every worker (fork launches them all at once)
    return pool


def run_in_process(cells: Sequence[Cell], started: Started, finished: Finished) -> None:
    from mlw.jit import announce_compilation

    announce_compilation()
    for cell in cells:
        started(cell)
        finished(cell, run_cell(cell))


def _died_record(cell: Cell, deaths: int) -> dict[str, Any]:
    from datetime import datetime, timezone

    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    return {"cell_id": cell.cell_id, "experiment": cell.experiment,
            "learner": cell.learner.key, "label": cell.learner.display,
            "learner_name": cell.learner.learner, "dataset": cell.dataset.name,
            "source": cell.source, "evaluation": cell.evaluation, "n_folds": cell.n_folds,
            "fold": cell.fold, "seed": cell.seed, "threshold": cell.learner.threshold,
            "control": cell.control, "status": "error", "started": now, "finished": now,
            "error": f"WorkerDied: the worker process running this cell died {deaths} "
                     f"times (killed, or out of memory?)"}


def run_local_pool(cells: Sequence[Cell], jobs: int, started: Started,
                   finished: Finished, pool: Any = None) -> None:
    """At most ``jobs`` cells in flight in worker processes (``pool``, from
    :func:`start_local_pool`, or a new one); a pool broken by a dying worker is
    replaced by one of ``spawn``-ed workers (this process has threads by then)."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    threads = max(1, (os.cpu_count() or 1) // jobs)
    queue = list(cells)
    queue.reverse()  # pop() from the end takes them in order
    deaths: dict[str, int] = {}
    context = multiprocessing.get_context("spawn")
    while queue:
        if pool is None:
            pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context,
                                       initializer=_worker_init, initargs=(threads,))
        in_flight: dict[Any, Cell] = {}
        broken = False
        try:
            while queue or in_flight:
                while queue and len(in_flight) < jobs and not broken:
                    cell = queue.pop()
                    try:
                        future = pool.submit(run_cell, cell)
                    except BrokenProcessPool:
                        queue.append(cell)
                        broken = True
                        break
                    in_flight[future] = cell
                    started(cell)
                if not in_flight:
                    break
                done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
                for future in done:
                    cell = in_flight.pop(future)
                    try:
                        record = future.result()
                    except BrokenProcessPool:
                        broken = True
                        deaths[cell.cell_id] = deaths.get(cell.cell_id, 0) + 1
                        if deaths[cell.cell_id] >= MAX_WORKER_DEATHS:
                            finished(cell, _died_record(cell, deaths[cell.cell_id]))
                        else:
                            queue.append(cell)
                        continue
                    finished(cell, record)
                if broken and not in_flight:
                    break
        finally:
            pool.shutdown(wait=not broken, cancel_futures=True)
            pool = None


@contextlib.contextmanager
def dask_client(scheduler: str | None, jobs: int) -> Iterator[Any]:
    """A client of the scheduler at ``scheduler``, or of a fresh ``LocalCluster`` of
    ``jobs`` single-threaded worker processes."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ValueError("the dask executor needs dask.distributed: pip install "
                         "'mlw-core[dask]'") from None
    if scheduler:
        with Client(scheduler, timeout="30s") as client:
            yield client
        return
    with LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        yield client


def run_dask(cells: Sequence[Cell], started: Started, finished: Finished, *,
             client: Any) -> None:
    """Submit every cell to the cluster and hand records back as they complete. A
    worker that dies takes its running cells with it; the scheduler runs them again
    elsewhere (up to ``distributed.scheduler.allowed-failures`` times, after which the
    cell is recorded as an error)."""
    from distributed import as_completed

    futures = {}
    for cell in cells:
        future = client.submit(run_cell, cell, key=f"mlw-cell-{cell.cell_id}", pure=False)
        futures[future] = cell
    try:
        for future in as_completed(list(futures)):
            cell = futures[future]
            started(cell)
            if future.status == "error":
                exc = future.exception()
                record = _died_record(cell, 0)
                first = str(exc).splitlines()[0] if str(exc) else ""
                record["error"] = f"{type(exc).__name__}: {first}"
                finished(cell, record)
                continue
            finished(cell, future.result())
    finally:
        for future in futures:
            if not future.done():
                future.cancel()


def execute(cells: Sequence[Cell], *, executor: str = "local", jobs: int = 1,
            scheduler: str | None = None, started: Started | None = None,
            finished: Finished, pool: Any = None) -> None:
    """Run ``cells`` with the chosen executor; ``started(cell)`` when a cell is handed
    to a worker (Dask: when its result arrives), ``finished(cell, record)`` in this
    process when it is done."""
    def _nothing(cell: Cell) -> None:
        return None

    on_start = started or _nothing
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    if executor not in ("local", "dask"):
        raise ValueError(f"unknown executor {executor!r} (local or dask)")
    if executor == "local" and scheduler:
        raise ValueError("a scheduler address needs the dask executor (--executor dask)")
    if not cells:
        return
    if executor == "local":
        if jobs == 1:
            run_in_process(cells, on_start, finished)
        else:
            run_local_pool(cells, jobs, on_start, finished, pool)
        return
    if executor == "dask":
        with dask_client(scheduler, jobs) as client:
            run_dask(cells, on_start, finished, client=client)
        return
    raise ValueError(f"unknown executor {executor!r} (local or dask)")
