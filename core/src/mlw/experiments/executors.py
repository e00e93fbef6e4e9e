"""Where cells run: local worker processes, or a Dask distributed cluster. Every
executor runs the same :func:`run_cell` and hands each record back to the caller in
this process, which writes it (so results stream into one store whatever runs the
cells). No cell runs in this process: a cell whose process dies (a crash in native
code, ``os._exit``, the out-of-memory killer) is recorded as failed, naming its learner
and the signal or exit code, and the run goes on.

- ``local``: at most ``jobs`` cells in flight, each in a supervised worker process
  (:class:`mlw.isolation.Worker`) forked (on Linux) before the harness starts any
  thread, so workers start with everything imported. Worker processes die with the
  parent (Linux ``PR_SET_PDEATHSIG``), and get ``cores // jobs`` threads for
  BLAS/OpenMP/numba unless the environment sets them. After a death, the worker's next
  cell runs in a fresh process forked from its supervisor.
- ``dask``: cells are submitted to a ``distributed`` scheduler (``scheduler`` address,
  or a ``LocalCluster`` of ``jobs`` single-threaded worker processes when none is
  given); each Dask worker runs its cells in a supervised process of its own
  (:func:`run_cell_contained`), so a dying cell is recorded the same way. Dask
  reschedules the cells of a Dask worker that dies (killed from outside) on the other
  workers, and a cell that kills every worker it runs on is recorded as failed
  (``KilledWorker``).
  A watchdog bounds the wait when the scheduler has no worker left or stops answering
  (:data:`DASK_WATCHDOG_SECONDS`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from mlw.experiments.cells import Cell, run_cell
from mlw.isolation import ProcessDied, Worker, describe_exit
from mlw.jit import announce_compilation
from mlw.plugins import get_plugin_manager

Started = Callable[[Cell], None]
Finished = Callable[[Cell, dict], None]

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
def _worker_init(threads: int) -> None:
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
    announce_compilation(f"worker {os.getpid()}: ")

    get_plugin_manager()


class LocalPool:
    """``jobs`` supervised worker processes (:class:`mlw.isolation.Worker`), forked
    when the pool is made."""

    def __init__(self, jobs: int) -> None:
        threads = max(1, (os.cpu_count() or 1) // jobs)
        self.workers: list[Worker] = []
        try:
            for _ in range(jobs):
                # a new supervisor must not hold the other supervisors' sockets: each
                # must see its caller's end close
                theirs = [w._ctrl.fileno() for w in self.workers]
                self.workers.append(Worker(_worker_init, (threads,), close_fds=theirs))
        except BaseException:
            self.shutdown(kill=True)
            raise

    def shutdown(self, *, kill: bool = False) -> None:
        """Stop every worker (at once with ``kill``) and reap it."""
        for worker in self.workers:
            with contextlib.suppress(Exception):
                worker.close(kill=kill)
        self.workers = []


def start_local_pool(jobs: int) -> LocalPool:
    """A pool of ``jobs`` worker processes, forked now from this process, so they start
    with mlw, the plugins and the libraries already imported (no per-worker import
    cost): call this before the process starts threads of its own (progress displays,
    polars' thread pool)."""
    return LocalPool(jobs)


def _died_record(cell: Cell, error: str) -> dict[str, Any]:
    """The record of a cell that returned no record of its own."""
    from datetime import datetime, timezone

    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    return {"cell_id": cell.cell_id, "experiment": cell.experiment,
            "learner": cell.learner.key, "label": cell.learner.display,
            "learner_name": cell.learner.learner, "dataset": cell.dataset.name,
            "source": cell.source, "evaluation": cell.evaluation, "n_folds": cell.n_folds,
            "fold": cell.fold, "seed": cell.seed, "threshold": cell.learner.threshold,
            "control": cell.control, "status": "error", "started": now, "finished": now,
            "error": error}


def died_message(cell: Cell, how: str) -> str:
    """One line: which learner's process died, and how."""
    return f"ProcessDied: the process running learner {cell.learner.display!r} {how}"


def run_local_pool(cells: Sequence[Cell], jobs: int, started: Started,
                   finished: Finished, pool: LocalPool | None = None) -> None:
    """At most ``jobs`` cells in flight, each in a worker process of ``pool`` (from
    :func:`start_local_pool`, or a new one). A cell whose process dies is recorded as
    failed with the signal or exit code; its worker starts afresh for the next cell."""
    from collections import deque
    from multiprocessing.connection import wait

    own = pool is None
    local = pool if pool is not None else LocalPool(jobs)
    workers = local.workers
    queue = deque(cells)
    idle = list(reversed(workers[:jobs]))
    busy: dict[Any, tuple[Worker, Cell]] = {}
    try:
        while queue or busy:
            while queue and idle:
                worker, cell = idle.pop(), queue.popleft()
                try:
                    worker.submit(run_cell, cell)
                except (RuntimeError, OSError) as exc:  # its supervisor was killed
                    started(cell)
                    finished(cell, _died_record(cell, f"WorkerLost: {exc}"))
                    worker.close(kill=True)
                    if not idle and not busy:
                        raise RuntimeError("every worker process of the run was killed "
                                           "from outside") from None
                    continue
                busy[worker.connection] = (worker, cell)
                started(cell)
            for conn in wait(list(busy)):
                worker, cell = busy.pop(conn)
                try:
                    record = worker.collect()
                except ProcessDied as died:
                    record = _died_record(cell, died_message(cell, describe_exit(
                        died.exitcode)))
                except Exception as exc:  # noqa: BLE001 - e.g. a record that would not pickle
                    first = (str(exc).splitlines() or [""])[0]
                    record = _died_record(cell, f"{type(exc).__name__}: {first}")
                idle.append(worker)
                finished(cell, record)
    except BaseException:
        if own:
            local.shutdown(kill=True)
        raise
    if own:
        local.shutdown()


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


_dask_workers: list[Worker] = []
_dask_lock = threading.Lock()


def run_cell_contained(cell: Cell) -> dict[str, Any]:
    """:func:`run_cell` in a supervised process of this one (what a Dask worker runs):
    a cell whose process dies gets a failed record naming the signal or exit code, and
    the Dask worker lives on. Each thread of the worker takes an idle supervised
    process, or starts one (a new Python process: a Dask worker has threads and
    connections a forked copy must not share)."""
    with _dask_lock:
        worker = _dask_workers.pop() if _dask_workers else None
    if worker is not None and not worker.alive:  # its supervisor was killed (from outside)
        worker.close(kill=True)
        worker = None
    if worker is None:
        threads = int(os.environ.get("OMP_NUM_THREADS") or 1)
        worker = Worker(_worker_init, (threads,), start="exec")
    try:
        return worker.call(run_cell, cell)
    except ProcessDied as died:
        return _died_record(cell, died_message(cell, describe_exit(died.exitcode)))
    finally:
        with _dask_lock:
            _dask_workers.append(worker)


#: how long the Dask client waits while the scheduler has no worker or does not answer,
#: before it records the cells not done as failed and returns
DASK_WATCHDOG_SECONDS = 120.0
_DASK_POLL_SECONDS = 0.2
_DASK_CHECK_SECONDS = 5.0


def _dask_silence(client: Any) -> str | None:
    """Why the cluster cannot run a cell now (no worker, no answer), or ``None``."""
    try:
        identity = client.sync(client.scheduler.identity,
                               callback_timeout=_DASK_CHECK_SECONDS)
    except Exception as exc:  # noqa: BLE001 - any failure to answer is silence
        return f"the scheduler did not answer ({type(exc).__name__})"
    if not identity.get("n_workers", len(identity.get("workers") or ())):
        return "the scheduler has no worker"
    return None


def run_dask(cells: Sequence[Cell], started: Started, finished: Finished, *,
             client: Any, watchdog: float = DASK_WATCHDOG_SECONDS) -> None:
    """Submit every cell to the cluster and hand records back as they complete. A
    worker that dies takes its running cells with it; the scheduler runs them again
    elsewhere, up to ``distributed.scheduler.allowed-failures`` times, after which the
    cell is recorded as failed (``KilledWorker``). When the scheduler has had no worker,
    or has not answered, for ``watchdog`` seconds, the cells not done are recorded as
    failed, saying so, and the run ends."""
    import time

    futures = {}
    for cell in cells:
        future = client.submit(run_cell_contained, cell, key=f"mlw-cell-{cell.cell_id}",
                               pure=False)
        futures[future] = cell
    pending = dict(futures)
    silent_since: float | None = None
    checked = time.monotonic()
    try:
        while pending:
            done = [f for f in pending if f.done()]
            for future in done:
                cell = pending.pop(future)
                started(cell)
                finished(cell, _dask_record(cell, future))
            if done:
                silent_since = None
                continue
            time.sleep(_DASK_POLL_SECONDS)
            now = time.monotonic()
            if now - checked < _DASK_CHECK_SECONDS:
                continue
            checked = now
            why = _dask_silence(client)
            if why is None:
                silent_since = None
                continue
            silent_since = silent_since or now
            if now - silent_since >= watchdog:
                for future, cell in list(pending.items()):
                    del pending[future]
                    started(cell)
                    finished(cell, _died_record(cell, (
                        f"DaskWatchdog: {why} for {watchdog:g} s; gave up waiting for "
                        f"this cell")))
    finally:
        for future in futures:
            if not future.done():
                future.cancel()


def _dask_record(cell: Cell, future: Any) -> dict[str, Any]:
    if future.status != "error":
        try:
            return future.result()
        except Exception as exc:  # noqa: BLE001 - a cancelled or lost future
            return _died_record(cell, f"{type(exc).__name__}: {exc}".splitlines()[0])
    exc = future.exception()
    first = (str(exc).splitlines() or [""])[0]
    if type(exc).__name__ == "KilledWorker":
        return _died_record(cell, died_message(
            cell, f"died on every Dask worker that ran it (KilledWorker: {first})"))
    return _died_record(cell, f"{type(exc).__name__}: {first}")


def execute(cells: Sequence[Cell], *, executor: str = "local", jobs: int = 1,
            scheduler: str | None = None, started: Started | None = None,
            finished: Finished, pool: LocalPool | None = None,
            watchdog: float = DASK_WATCHDOG_SECONDS) -> None:
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
        run_local_pool(cells, jobs, on_start, finished, pool)
        return
    if executor == "dask":
        with dask_client(scheduler, jobs) as client:
            run_dask(cells, on_start, finished, client=client, watchdog=watchdog)
        return
    raise ValueError(f"unknown executor {executor!r} (local or dask)")
