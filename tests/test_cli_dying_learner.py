"""A learner whose process dies (a crash in native code, ``os._exit``) is contained:
``mlw bench`` records its cells as failed, naming the learner and the signal or exit
code, runs the other cells and leaves valid results, locally and on Dask, with one
worker and with two. The fixture learners are in ``tests/plugins/mlwtest_dies.py``,
installed for child processes by the ``dying_plugin`` fixture."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlw_cli.main import app

BENCH = ("bench", "--datasets", "emotions", "--cv", "2", "--metrics", "hamming_loss",
         "--json")


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def leftovers(folder: Path, out: Path) -> list[str]:
    """Files beside the results that a finished run must not leave."""
    return sorted(p.name for p in folder.iterdir() if p.name != out.name)


def check_contained(summary: dict, out: Path, dying: str, how: str, n_dying: int,
                    n_ok: int) -> None:
    from mlw.experiments import read_results

    assert summary["ran"] == n_dying + n_ok
    assert len(summary["errors"]) == n_dying
    for error in summary["errors"]:
        assert error["cell"].startswith(dying)
        assert f"the process running learner {dying!r} {how}" in error["error"]
    df = read_results(out)
    assert df.height == n_dying + n_ok
    status = dict(zip(df["learner"].to_list(), df["status"].to_list(), strict=False))
    assert status[dying] == "error"
    assert df.filter(df["learner"] != dying)["status"].to_list() == ["ok"] * n_ok
    assert leftovers(out.parent, out) == []


def test_bench_jobs_1_survives_a_learner_killed_by_sigsegv(dying_plugin, run_mlw, tmp_path):
    """The whole command in a process of its own: before cells ran in worker processes,
    this run died with exit 139 and wrote no results (only an empty lock file)."""
    out = tmp_path / "r.parquet"
    result = run_mlw(*BENCH, "--learners", "dies_segv,br", "--jobs", "1", "--out", str(out))
    assert result.returncode == 1, result.stderr
    check_contained(json.loads(result.stdout), out, "dies_segv",
                    "was killed by SIGSEGV (signal 11)", 2, 2)
    assert "2 cells failed" in result.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_bench_local_workers_record_a_dying_cell_and_run_the_others(dying_plugin, tmp_path,
                                                                    jobs):
    out = tmp_path / "r.parquet"
    result = invoke(*BENCH, "--learners", "dies_exit,template_centroid,dies_predict",
                    "--jobs", jobs, "--out", str(out))
    assert result.exit_code == 1, result.stderr
    summary = json.loads(result.stdout)
    assert summary["ran"] == 6 and len(summary["errors"]) == 4
    errors = [e["error"] for e in summary["errors"]]
    assert sum("learner 'dies_exit' exited with code 7" in e for e in errors) == 2
    assert sum("learner 'dies_predict' was killed by SIGSEGV" in e for e in errors) == 2
    from mlw.experiments import read_results

    df = read_results(out)
    ok = df.filter(df["status"] == "ok")
    assert ok["learner"].to_list() == ["template_centroid"] * 2
    assert leftovers(tmp_path, out) == []
    # a rerun retries only the failed cells
    again = json.loads(invoke(*BENCH, "--learners", "dies_exit,template_centroid,"
                              "dies_predict", "--jobs", jobs, "--out", str(out)).stdout)
    assert (again["ran"], again["skipped"]) == (4, 2)


@pytest.mark.parametrize("jobs", [1, 2])
def test_dask_records_a_dying_cell_and_runs_the_others(dying_plugin, tmp_path, jobs):
    pytest.importorskip("distributed")
    out = tmp_path / "d.parquet"
    result = invoke(*BENCH, "--learners", "dies_segv,br", "--folds", "0", "--executor",
                    "dask", "--jobs", str(jobs), "--out", str(out))
    assert result.exit_code == 1, result.stderr
    check_contained(json.loads(result.stdout), out, "dies_segv",
                    "was killed by SIGSEGV (signal 11)", 1, 1)


def test_dask_watchdog_gives_up_on_a_cluster_without_workers(tmp_path, monkeypatch):
    """A scheduler whose workers are gone: the run ends after the watchdog's bound,
    each cell recorded as failed, saying why, instead of waiting for ever."""
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    import mlw.experiments.executors as executors
    from mlw.experiments import experiment_from_options, run_experiment

    monkeypatch.setattr(executors, "DASK_WATCHDOG_SECONDS", 1.0)
    monkeypatch.setattr(executors, "_DASK_CHECK_SECONDS", 0.5)
    monkeypatch.setattr(executors.execute, "__kwdefaults__",
                        {**executors.execute.__kwdefaults__, "watchdog": 1.0})
    exp = experiment_from_options(learners=["br"], datasets=["emotions"], folds=2,
                                  metrics=["hamming_loss"], seed=0)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster:
        summary = run_experiment(exp, tmp_path / "w.parquet", executor="dask",
                                 scheduler=cluster.scheduler_address)
    assert summary.ran == 2 and len(summary.errors) == 2
    for _, error in summary.errors:
        assert error == ("DaskWatchdog: the scheduler has no worker for 1 s; gave up "
                         "waiting for this cell")


def test_interrupted_bench_names_only_files_that_exist(tmp_path, monkeypatch):
    import mlw.experiments

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(mlw.experiments, "run_experiment", interrupted)
    out = tmp_path / "never.parquet"
    result = CliRunner().invoke(app, [*BENCH, "--learners", "br", "--out", str(out)])
    assert "interrupted before any cell finished: nothing was written" in result.stderr
    assert str(out) not in result.stderr and not out.exists()


def test_a_worker_killed_while_idle_is_replaced():
    """A runner killed between calls (from outside): the next call runs in a fresh one."""
    from mlw.isolation import ProcessDied, Worker

    with Worker() as worker:
        first = worker.call(os.getpid)
        os.kill(first, signal.SIGKILL)
        assert worker.connection.poll(30)  # its end is closed: it is gone
        second = worker.call(os.getpid)
        assert second != first and second != os.getpid()
        with pytest.raises(ProcessDied, match=r"exited with code 3$"):
            worker.call(os._exit, 3)
        assert worker.call(int, "12") == 12
        with pytest.raises(ValueError, match="invalid literal"):
            worker.call(int, "x")
        assert worker.alive
        os.kill(worker.supervisor_pid, signal.SIGKILL)
        os.waitpid(worker.supervisor_pid, 0)
        assert not worker.alive


def test_fit_cv_names_the_learner_and_the_signal_of_a_dying_fold(dying_plugin, run_mlw,
                                                                 tmp_path):
    """It died with exit 139 (the whole command) and an empty stderr."""
    model = tmp_path / "m.mlw"
    result = run_mlw("fit", "-l", "dies_segv", "--cv", "3", "-m", "hamming_loss", "--save",
                     str(model), "--json")
    assert result.returncode == 1, result.stderr
    message = ("learner 'dies_segv' (plugin 'dies', mlwtest-dies): the process fitting "
               "fold 1 of 3 was killed by SIGSEGV (signal 11)")
    assert json.loads(result.stdout)["error"]["kind"] == "plugin"
    assert json.loads(result.stdout)["error"]["message"].startswith(message)
    assert [ln for ln in result.stderr.splitlines() if ln.startswith("plugin error: ")] \
        == [f"plugin error: {json.loads(result.stdout)['error']['message']}"]
    assert list(tmp_path.iterdir()) == []  # nothing half-written


@pytest.mark.parametrize(("learner", "how"), [("dies_exit", "exited with code 7"),
                                              ("dies_predict", "was killed by SIGSEGV")])
def test_fit_cv_contains_an_exit_and_a_death_in_predict(dying_plugin, tmp_path, learner,
                                                        how):
    out = tmp_path / "r.csv"
    result = invoke("fit", "-l", learner, "--cv", "2", "-m", "hamming_loss", "--out",
                    str(out))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"plugin error: learner {learner!r} (plugin 'dies', "
                                    f"mlwtest-dies): the process fitting fold 1 of 2 {how}")
    assert not out.exists()


def test_cross_validate_in_a_child_process_gives_the_same_folds():
    import numpy as np

    import mlw

    ds = mlw.load_dataset("emotions", split="train")
    learner = mlw.get_learner("template_centroid")
    here = mlw.cross_validate(learner, ds, k=3, metrics=["hamming_loss", "f1_micro"])
    there = mlw.cross_validate(learner, ds, k=3, metrics=["hamming_loss", "f1_micro"],
                               isolate=True)
    for a, b in zip(here.folds, there.folds, strict=True):
        assert a.metrics == b.metrics and (a.n_train, a.n_test) == (b.n_train, b.n_test)
    np.testing.assert_allclose(here.metrics["f1_micro"], there.metrics["f1_micro"])


def test_the_results_are_readable_after_every_cell_of_a_run_with_deaths(dying_plugin,
                                                                        tmp_path):
    from mlw.experiments import experiment_from_options, read_results, run_experiment

    out = tmp_path / "r.parquet"
    seen: list[tuple[int, int]] = []

    class Observer:
        def begin(self, total, done):
            pass

        def started(self, cell):
            pass

        def finished(self, cell, record):
            df = read_results(out)
            seen.append((df.height, int((df["status"] == "error").sum())))

    exp = experiment_from_options(learners=["dies_exit", "template_centroid"],
                                  datasets=["emotions"], folds=2,
                                  metrics=["hamming_loss"], seed=0)
    summary = run_experiment(exp, out, progress=Observer())
    assert seen == [(1, 1), (2, 2), (3, 2), (4, 2)]
    assert (summary.ran, len(summary.errors)) == (4, 2)
    assert summary.cpu_seconds > 0


def test_a_killed_worker_on_dask_is_a_failed_cell_naming_the_learner():
    """A cell that takes the Dask worker itself down on every worker it is tried on."""
    pytest.importorskip("distributed")
    from types import SimpleNamespace

    from distributed import KilledWorker

    from mlw.experiments import enumerate_cells, experiment_from_options
    from mlw.experiments.executors import _dask_record

    exp = experiment_from_options(learners=["br"], datasets=["emotions"], folds=2,
                                  metrics=["hamming_loss"], seed=0)
    cell = enumerate_cells(exp)[0]
    killed = KilledWorker("mlw-cell-x", SimpleNamespace(address="tcp://10.0.0.1:1"), 3)
    future = SimpleNamespace(status="error", exception=lambda: killed)
    record = _dask_record(cell, future)
    assert record["status"] == "error" and record["cell_id"] == cell.cell_id
    assert record["error"].startswith("ProcessDied: the process running learner 'br' died "
                                      "on every Dask worker that ran it (KilledWorker: "
                                      "Attempted to run task 'mlw-cell-x' on 4 different")


def test_a_worker_whose_supervisor_was_killed_loses_one_cell_not_the_run():
    from mlw.experiments import enumerate_cells, experiment_from_options
    from mlw.experiments.executors import LocalPool, run_local_pool

    exp = experiment_from_options(learners=["template_centroid"], datasets=["emotions"],
                                  folds=3, metrics=["hamming_loss"], seed=0)
    pool = LocalPool(2)
    records: list[dict] = []
    try:
        victim = pool.workers[1]  # the first one a cell is given to
        os.kill(victim.supervisor_pid, signal.SIGKILL)
        os.waitpid(victim.supervisor_pid, 0)
        run_local_pool(enumerate_cells(exp), 2, lambda cell: None,
                       lambda cell, record: records.append(record), pool)
    finally:
        pool.shutdown(kill=True)
    assert [r["status"] for r in records].count("ok") == 2
    lost = [r for r in records if r["status"] != "ok"]
    assert len(lost) == 1 and lost[0]["error"].startswith("WorkerLost: the worker's "
                                                          "supervisor")
