"""The Dask executor on a real ``distributed.LocalCluster`` of two worker processes, one
of them killed (SIGKILL) while the run is going: the scheduler re-runs its cells on the
other worker (and the restarted one), every cell ends up in the results once, with the
values of an in-process run."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from mlw.experiments import parse_config, run_experiment

distributed = pytest.importorskip("distributed")  # requirements-dev.txt installs it

CONFIG = {"experiment": {"name": "dask", "folds": 8, "metrics": ["f1_micro", "hamming_loss"],
                         "datasets": ["emotions"]},
          "learners": {"br": {}, "centroid": {"learner": "template_centroid"}}}


class KillOneWorker:
    """A progress observer that kills one worker process after the first record."""

    def __init__(self, client) -> None:
        self.client = client
        self.killed: int | None = None
        self.pids = dict(client.run(os.getpid))

    def begin(self, total: int, done: int) -> None:
        pass

    def started(self, cell) -> None:
        pass

    def finished(self, cell, record) -> None:
        if self.killed is None:
            victim = next(pid for pid in self.pids.values() if pid != record.get("pid"))
            os.kill(victim, signal.SIGKILL)
            self.killed = victim


def test_a_worker_killed_mid_run_loses_no_cell(tmp_path) -> None:
    from distributed import Client, LocalCluster

    exp = parse_config(CONFIG)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        observer = KillOneWorker(client)
        summary = run_experiment(exp, tmp_path / "dask.parquet", executor="dask",
                                 scheduler=cluster.scheduler_address, progress=observer)
    assert observer.killed is not None
    assert (summary.total, summary.ran, summary.errors) == (16, 16, [])
    df = summary.results
    assert df.height == 16 and set(df["status"].to_list()) == {"ok"}
    reference = run_experiment(exp, tmp_path / "local.parquet").results
    key = ["learner", "fold"]
    np.testing.assert_allclose(df.sort(key)["metric_f1_micro"].to_numpy(),
                               reference.sort(key)["metric_f1_micro"].to_numpy())
    # a rerun against the same results file skips everything
    again = run_experiment(exp, tmp_path / "dask.parquet", executor="dask", jobs=1)
    assert (again.ran, again.skipped) == (0, 16)


def test_scheduler_needs_the_dask_executor(tmp_path) -> None:
    with pytest.raises(ValueError, match="dask executor"):
        run_experiment(parse_config(CONFIG), tmp_path / "x.parquet",
                       scheduler="tcp://127.0.0.1:1")
