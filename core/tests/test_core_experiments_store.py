"""The results store and the harness: records appended as cells finish, reruns skip
finished cells, interrupted and killed runs lose at most their running cells and never
corrupt earlier results."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import mlw
from mlw.experiments import (
    ResultStore,
    StoreLockedError,
    enumerate_cells,
    experiment_from_options,
    parse_config,
    read_results,
    run_experiment,
)
from mlw.experiments.store import records_frame


def _record(cell_id: str, status: str = "ok", finished: str = "2026-01-01T00:00:00",
            value: float = 0.5) -> dict:
    return {"cell_id": cell_id, "experiment": "e", "learner": "a", "label": "a",
            "dataset": "d", "fold": 0, "status": status, "finished": finished,
            "metric_f1_micro": value}


def test_glob_characters_in_names_are_plain_names(tmp_path) -> None:
    # polars reads a path with [, ], * or ? as a glob pattern unless told not to: a part
    # named after such a cell_id was skipped as "unreadable" and never compacted
    store = ResultStore(tmp_path / "r[1].parquet")
    for cid in ("a[b]", "c*d?", "plain"):
        store.append(_record(cid))
    assert sorted(store.read()["cell_id"].to_list()) == ["a[b]", "c*d?", "plain"]
    store.compact()
    assert not store.parts.exists()
    assert sorted(read_results(tmp_path / "r[1].parquet")["cell_id"].to_list()) == \
        ["a[b]", "c*d?", "plain"]


def test_parts_compaction_and_dedupe(tmp_path) -> None:
    store = ResultStore(tmp_path / "r.parquet")
    store.append(_record("x", "error", "2026-01-01T00:00:01"))
    store.append(_record("y", value=0.1))
    assert sorted(store.read()["cell_id"].to_list()) == ["x", "y"]
    assert store.done_ids() == {"y"}
    store.compact()
    assert not store.parts.exists() and store.path.exists()
    store.append(_record("x", "ok", "2026-01-01T00:00:02", 0.7))  # the retry succeeded
    df = read_results(store.path)
    assert df.height == 2 and store.done_ids() == {"x", "y"}
    assert df.filter(df["cell_id"] == "x")["metric_f1_micro"].item() == 0.7
    # a crash between writing the new main file and deleting the parts: duplicates merge
    parts = list(store.parts.glob("*.parquet"))
    saved = [p.read_bytes() for p in parts]
    store.compact()
    for p, data in zip(parts, saved, strict=True):
        store.parts.mkdir(exist_ok=True)
        p.write_bytes(data)
    assert read_results(store.path).height == 2


def test_temporary_and_unreadable_files(tmp_path) -> None:
    store = ResultStore(tmp_path / "r.parquet")
    store.append(_record("a"))
    (store.parts / ".half-written.parquet.tmp").write_bytes(b"PAR1\x00garbage")
    assert store.read().height == 1           # a temporary file is never read
    with store.locked():
        assert store.clean_temporary() == 1
    store.compact()
    store.path.write_bytes(b"not parquet")    # a damaged main file is refused, not replaced
    with pytest.raises(ValueError, match="not a readable Parquet file"):
        store.read()
    assert store.path.read_bytes() == b"not parquet"


def test_one_writer_at_a_time(tmp_path) -> None:
    store = ResultStore(tmp_path / "r.parquet")
    with store.locked(), pytest.raises(StoreLockedError), ResultStore(store.path).locked():
        pass


def test_the_lock_file_is_removed_when_a_run_ends_whatever_the_outcome(tmp_path) -> None:
    """A finished run left ``r.parquet.lock`` behind, and so did a refused one (``--out``
    naming an ARFF input: not Parquet)."""
    exp = experiment_from_options(learners=["template_centroid"], datasets=["emotions"],
                                  folds=2, metrics=["hamming_loss"], seed=0)
    run_experiment(exp, tmp_path / "r.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.parquet"]
    arff = tmp_path / "d.arff"
    arff.write_text("@relation d\n@attribute a numeric\n@data\n1\n")
    with pytest.raises(ValueError, match="not a readable Parquet file"):
        run_experiment(exp, arff)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.arff", "r.parquet"]
    assert arff.read_text().endswith("@data\n1\n")


def test_a_run_waiting_on_a_removed_lock_file_takes_a_fresh_one(tmp_path) -> None:
    """The lock file is unlinked while held: a second store that opened the old file
    before that must not believe it holds the lock of the new one."""
    first, second = ResultStore(tmp_path / "r.parquet"), ResultStore(tmp_path / "r.parquet")
    with first.locked():
        stale = os.open(first.lock_path, os.O_RDWR)
    with second.locked():  # the first run's file is gone: a fresh one is locked
        assert second.lock_path.exists()
        assert not os.path.samestat(os.fstat(stale), os.stat(second.lock_path))
        with pytest.raises(StoreLockedError):
            with ResultStore(tmp_path / "r.parquet").locked():
                pass
    os.close(stale)
    assert not second.lock_path.exists()


def test_bad_paths(tmp_path) -> None:
    with pytest.raises(ValueError, match="empty"):
        ResultStore("")
    with pytest.raises(IsADirectoryError, match="folder"):  # mlw.files.check_output_path
        ResultStore(tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ResultStore(tmp_path / "missing" / "r.parquet")


def test_records_have_the_documented_columns(tmp_path) -> None:
    exp = experiment_from_options(learners=["br", "template_centroid"],
                                  datasets=["emotions"], folds=3,
                                  metrics=["f1_micro", "hamming_loss"])
    summary = run_experiment(exp, tmp_path / "r.parquet")
    assert (summary.total, summary.ran, summary.skipped, summary.errors) == (6, 6, 0, [])
    df = summary.results
    for col in ("cell_id", "learner", "dataset", "fold", "seed", "params", "fit_seconds",
                "fit_cpu_seconds", "predict_seconds", "peak_memory_mb", "cpu_seconds", "versions",
                "host",
                "metric_f1_micro", "metric_hamming_loss", "status", "decision"):
        assert col in df.columns, col
    assert json.loads(df["versions"][0])["mlw-core"]
    assert (df["peak_memory_mb"] > 10).all()
    assert (df["fit_cpu_seconds"] >= 0).all() and (df["fit_cpu_seconds"] <= df["cpu_seconds"]).all()
    # the folds are the core's: the same values as mlw.cross_validate
    import mlw

    cv = mlw.cross_validate(mlw.get_learner("br", seed=0), mlw.load_dataset("emotions",
                            split="all"), k=3, seed=0, metrics=["f1_micro"])
    ours = df.filter(df["learner"] == "br").sort("fold")["metric_f1_micro"].to_list()
    assert ours == pytest.approx([f.metrics["f1_micro"] for f in cv.folds])
    again = run_experiment(exp, tmp_path / "r.parquet")
    assert (again.ran, again.skipped) == (0, 6)


def test_a_failing_cell_is_recorded_and_retried(tmp_path, monkeypatch) -> None:
    exp = parse_config({"experiment": {"datasets": ["emotions"], "folds": 2,
                                       "metrics": ["f1_micro"]},
                        "learners": {"br": {}}})
    import mlw.experiments.cells as cells_module

    real = cells_module.cell_plan

    def broken(cell):
        if cell.fold == 1:
            raise RuntimeError("disk on fire\nsecond line")
        return real(cell)

    monkeypatch.setattr(cells_module, "cell_plan", broken)
    summary = run_experiment(exp, tmp_path / "r.parquet")
    assert summary.errors == [("br on emotions, fold 2/2", "RuntimeError: disk on fire")]
    monkeypatch.setattr(cells_module, "cell_plan", real)
    summary = run_experiment(exp, tmp_path / "r.parquet")
    assert (summary.ran, summary.skipped, summary.errors) == (1, 1, [])
    assert sorted(summary.results["status"].to_list()) == ["ok", "ok"]


def test_a_changed_default_runs_recorded_cells_again(tmp_path, monkeypatch) -> None:
    # a plugin that changes a default keeps every cell_id (the config did not change):
    # the records' resolved parameters tell the rerun that the learner is not the same
    from mlw_baselines.binary_relevance import BinaryRelevance

    exp = parse_config({"experiment": {"datasets": ["emotions"], "folds": 2,
                                       "metrics": ["f1_micro"]},
                        "learners": {"br": {}, "nc": {"learner": "template_centroid"}}})
    out = tmp_path / "r.parquet"
    first = run_experiment(exp, out)
    assert (first.ran, first.stale) == (4, 0)
    recorded = {r["learner"]: json.loads(r["resolved_params"])
                for r in first.results.iter_rows(named=True)}
    assert recorded["br"]["threshold"] == "cardinality:top_label=auto"
    assert recorded["nc"] == {"threshold": "pcut"}
    again = run_experiment(exp, out)
    assert (again.ran, again.skipped, again.stale) == (0, 4, 0)

    defaults = dict(BinaryRelevance.__init__.__kwdefaults__)
    monkeypatch.setattr(BinaryRelevance.__init__, "__kwdefaults__",
                        {**defaults, "threshold": "fixed"})
    changed = run_experiment(exp, out)
    # br's two cells again, the template's kept; one record per cell, the new one
    assert (changed.ran, changed.skipped, changed.stale) == (2, 2, 2)
    df = changed.results
    assert df.height == 4 and sorted(df["cell_id"].to_list()) == \
        sorted(first.results["cell_id"].to_list())
    for row in df.filter(df["learner"] == "br").iter_rows(named=True):
        assert json.loads(row["resolved_params"])["threshold"] == "fixed"
        assert row["decision"] == "threshold fixed"
    assert (run_experiment(exp, out).ran, run_experiment(exp, out).stale) == (0, 0)


def test_records_without_resolved_params_are_kept(tmp_path) -> None:
    # records written before mlw kept resolved parameters cannot be compared: kept
    exp = parse_config({"experiment": {"datasets": ["emotions"], "folds": 2,
                                       "metrics": ["f1_micro"]},
                        "learners": {"br": {}}})
    out = tmp_path / "r.parquet"
    run_experiment(exp, out)
    import polars as pl

    old = pl.read_parquet(out).drop("resolved_params")
    old.write_parquet(out)
    summary = run_experiment(exp, out)
    assert (summary.ran, summary.skipped, summary.stale) == (0, 2, 0)


def test_params_changed_leaves_the_grid_aside() -> None:
    from mlw.experiments.cells import params_changed, resolved_params
    from mlw.experiments.config import LearnerEntry

    entry = LearnerEntry("br", "br", grid={"threshold": ["fixed", "pcut"]})
    a = json.dumps({"threshold": "fixed", "n_jobs": None})
    b = json.dumps({"threshold": "pcut", "n_jobs": None})
    assert not params_changed(entry, a, b)  # chosen per cell
    assert params_changed(entry, a, json.dumps({"threshold": "fixed", "n_jobs": 2}))
    assert params_changed(LearnerEntry("br", "br"), a, b)
    assert not params_changed(entry, None, b) and not params_changed(entry, a, None)
    assert params_changed(entry, "not json", b)

    class Opaque:
        def get_params(self, deep=False):
            return {"base": object()}  # prints as an address: different every process

    class NoProtocol:
        pass

    assert resolved_params(Opaque()) is None and resolved_params(NoProtocol()) is None


def test_grid_selection_uses_the_inner_split_only(tmp_path) -> None:
    exp = parse_config({"experiment": {"datasets": ["emotions"], "folds": 2,
                                       "metrics": ["f1_micro", "hamming_loss"]},
                        "learners": {"br": {"grid": {"threshold": ["fixed", "pcut"]},
                                            "select": {"metric": "hamming_loss"},
                                            "attributes": ["n_labels_", "nosuch_"]}}})
    summary = run_experiment(exp, tmp_path / "r.parquet")
    df = summary.results
    assert summary.errors == []
    for row in df.iter_rows(named=True):
        # attributes: fitted attributes recorded, null where the model lacks one
        assert json.loads(row["attributes"]) == {"n_labels_": 6, "nosuch_": None}
        trail = json.loads(row["selection"])
        assert [t["params"] for t in trail] == [{"threshold": "fixed"},
                                                {"threshold": "pcut"}]
        best = min(trail, key=lambda t: t["score"])  # hamming_loss: lower is better
        assert json.loads(row["chosen_params"]) == best["params"]
        assert row["decision"] == f"threshold {best['params']['threshold']}"


def test_staged_results_of_a_learner_with_staged_predict(tmp_path) -> None:
    from mlw.experiments.cells import Cell, run_cell

    exp = parse_config({"experiment": {"datasets": ["emotions"], "folds": 3,
                                       "metrics": ["f1_example"]},
                        "learners": {"xdcc": {"params": {"n_estimators": 5, "max_depth": 2},
                                              "stages": True}}})
    cell: Cell = enumerate_cells(exp)[0]
    record = run_cell(cell)
    assert record["status"] == "ok", record["error"]
    stages = json.loads(record["stages"])
    assert [s["stage"] for s in stages] == list(range(1, len(stages) + 1))
    # the last stage is the fitted chain itself
    assert stages[-1]["metrics"]["f1_example"] == pytest.approx(record["metric_f1_example"])


# --- killing real runs ------------------------------------------------------------------------
_KILL_CONFIG = """
[experiment]
name = "kill"
metrics = ["f1_micro", "hamming_loss"]
folds = 10
datasets = ["emotions", "{flags}"]

[learners.centroid]
learner = "template_centroid"

[learners.br]
learner = "br"
"""


def _bench(config: Path, out: Path, jobs: int = 1) -> subprocess.Popen:
    env = dict(os.environ, MLW_PROGRESS="")
    return subprocess.Popen([sys.executable, "-m", "mlw_cli", "bench", "--config", str(config),
                             "--out", str(out), "--jobs", str(jobs)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        text = (task / "children").read_text() if (task / "children").exists() else ""
        out += [int(x) for x in text.split()]
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def test_killing_a_real_run_at_random_moments_loses_nothing(tmp_path, mulan_dir) -> None:
    """kill -9 a running ``mlw bench`` at random moments (several times), check after
    each kill that the results read and never shrink, then finish the run: every cell
    is there once, with the values of an uninterrupted run. (benchmarks/bench_cli_kill.py
    runs the long version.)"""
    config = tmp_path / "kill.toml"
    config.write_text(_KILL_CONFIG.format(flags=mulan_dir / "flags"))
    out = tmp_path / "killed.parquet"
    rng = random.Random(12)
    seen = 0
    parts = Path(f"{out}.parts")

    def n_parts() -> int:
        return len(list(parts.glob("*.parquet"))) if parts.is_dir() else 0

    # five kills (one in start-up, three with one worker, one with two): each costs a
    # process start-up (~2-3 CPU s); benchmarks/bench_cli_kill.py runs 40 per round
    killed = 0
    for attempt in range(5):
        jobs = 2 if attempt == 4 else 1
        before = n_parts()
        proc = _bench(config, out, jobs)
        if attempt == 0:
            time.sleep(rng.uniform(0.2, 1.5))  # during start-up
        else:  # while cells are finishing: after the next record, at a random moment
            deadline = time.time() + 60
            while n_parts() == before and time.time() < deadline and proc.poll() is None:
                time.sleep(0.05)
            time.sleep(rng.uniform(0.0, 0.3))  # a cell takes ~0.1 s: the run is not over
        workers = _children(proc.pid) if jobs > 1 else []
        # poll() reaps only a process that has ended: until then the pid is ours (at
        # worst a zombie), so the kill cannot miss it or hit another process
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            killed += 1
        else:
            assert proc.returncode == 0, f"the bench failed on its own ({proc.returncode})"
        proc.wait(timeout=30)
        df = read_results(out) if out.exists() or Path(f"{out}.parts").exists() else None
        n = 0 if df is None else df.height
        assert n >= seen
        seen = n
        if df is not None:
            assert set(df["status"].to_list()) <= {"ok"}
        deadline = time.time() + 20
        while any(_alive(w) for w in workers) and time.time() < deadline:
            time.sleep(0.2)
        assert not any(_alive(w) for w in workers), "worker processes outlived the kill"
    # a fast machine may finish the remaining cells before a kill: that run is just
    # complete, but most kills must hit a running bench for the test to test anything
    assert killed >= 3, f"only {killed} of 5 kills found the bench still running"
    proc = _bench(config, out)
    assert proc.wait(timeout=600) == 0
    df = read_results(out)
    assert df.height == 40 and df["cell_id"].n_unique() == 40
    assert not Path(f"{out}.parts").exists()  # compacted at the end
    reference = run_experiment(parse_config(
        {"experiment": {"name": "kill", "metrics": ["f1_micro", "hamming_loss"], "folds": 10,
                        "datasets": ["emotions", str(mulan_dir / "flags")]},
         "learners": {"centroid": {"learner": "template_centroid"}, "br": {"learner": "br"}}}),
        tmp_path / "reference.parquet").results
    key = ["learner", "dataset", "fold"]
    a = df.sort(key).select([*key, "cell_id", "metric_f1_micro", "metric_hamming_loss"])
    b = reference.sort(key).select([*key, "cell_id", "metric_f1_micro",
                                    "metric_hamming_loss"])
    assert a["cell_id"].to_list() == b["cell_id"].to_list()
    np.testing.assert_allclose(a["metric_f1_micro"].to_numpy(),
                               b["metric_f1_micro"].to_numpy())
    np.testing.assert_allclose(a["metric_hamming_loss"].to_numpy(),
                               b["metric_hamming_loss"].to_numpy())


def test_records_frame_types() -> None:
    import polars as pl

    df = records_frame([_record("a"), {**_record("b"), "error": "x", "n_train": 3}])
    assert df.schema["n_train"] == pl.Int64 and df.schema["metric_f1_micro"] == pl.Float64
    assert df.schema["error"] == pl.String


def test_selection_on_the_datasets_own_validation_split(tmp_path) -> None:
    """``select.method = "split"``: every grid point is fitted on the train split and
    scored on the generator's validation split (the structured-SVM paper's protocol);
    the chosen model is scored on the test split."""
    import mlw

    source = "synthetic:labels=5,n_train=80,n_validation=80,n_test=80,seed=3"
    exp = parse_config({"experiment": {"datasets": [{"name": "syn", "source": source,
                                                     "evaluation": "holdout"}],
                                       "metrics": ["hamming_loss"]},
                        "learners": {"br": {"grid": {"threshold": ["fixed", "pcut"]},
                                            "select": {"metric": "hamming_loss",
                                                       "method": "split"}}}})
    (record,) = run_experiment(exp, tmp_path / "r.parquet").results.iter_rows(named=True)
    assert record["status"] == "ok", record["error"]
    assert (record["n_train"], record["n_test"]) == (80, 80)
    train = mlw.load_dataset(source, split="train")
    val = mlw.load_dataset(source, split="validation")
    for point in json.loads(record["selection"]):
        model = mlw.get_learner("br", seed=0, **point["params"]).fit(train.X, train.Y)
        expected = mlw.evaluate(val.Y, model.predict(val.X), metrics=["hamming_loss"])
        assert point["score"] == pytest.approx(expected["hamming_loss"])


def _init_worker_then_recompile() -> str:
    import numba
    import numba.core.config

    from mlw.experiments.executors import _worker_init

    numba.get_num_threads()  # the threading layer runs, as after a parallel kernel
    _worker_init(1)
    numba.core.config.reload_config()  # what numba does when it compiles a kernel
    return f"ok {numba.get_num_threads()}"


def test_worker_set_up_survives_numba_recompiling() -> None:
    """Forked workers inherit the parent's numba configuration: the first version set
    NUMBA_NUM_THREADS in them, and numba's next configuration reload (at a compile)
    raised "Cannot set NUMBA_NUM_THREADS to a different value once the threads have
    been launched": every LaCovaC cell on sparse medical failed in the paper run. The
    thread count is now set with numba.set_num_threads."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        assert pool.submit(_init_worker_then_recompile).result(timeout=120) == "ok 1"


def test_staged_selection_scores_every_point_as_separate_fits_do() -> None:
    """select.staged = "n_estimators": one fit per other-parameter combination, every
    rounds value read from staged_predict; the trail equals the plain grid search's."""
    from mlw.experiments.cells import cell_data
    from mlw.experiments.config import entry_learner
    from mlw.selection import _stages_at, select_params

    def config(staged):
        select = {"metric": "f1_example", "fraction": 0.3, **staged}
        return parse_config({"experiment": {"datasets": ["emotions"], "folds": 3},
                             "learners": {"ml_xgb": {
                                 "threshold": "fixed", "select": select,
                                 "grid": {"n_estimators": [3, 1], "max_depth": [1, 2]}}}})
    plain, staged = config({}), config({"staged": "n_estimators"})
    train, _ = cell_data(enumerate_cells(plain)[0])
    spec = mlw.plugins.get_plugin_manager().learner("ml_xgb")

    def select(entry):
        return select_params(entry, train, 0,
                             build=lambda point: entry_learner(entry, spec, 0, point))

    got = [select(e.learners[0]) for e in (plain, staged)]
    assert got[0] == got[1]
    assert len(got[0][1]) == 4
    # a staged_predict(X) without values: the yields at the stages asked for
    assert _stages_at(lambda X: iter("abcd"), None, [1, 3]) == ["a", "c"]
    with pytest.raises(ValueError, match="stop before 5"):
        _stages_at(lambda X: iter("abcd"), None, [2, 5])


def test_warm_started_path_keeps_the_chosen_model_of_the_path() -> None:
    """select.warm_start: the grid fitted in order on one learner (warm_start), each C
    from the previous solution; the cell scores the chosen C's model of that path
    (no cold refit), as benchmarks/bench_ssvm_quality.py's C path did by hand."""
    import mlw
    from mlw.experiments.cells import cell_data, cell_validation, run_cell

    source = "synthetic:labels=4,cardinality=1.5,seed=3,n_train=60,n_validation=40," \
             "n_test=40,features=5"
    exp = parse_config({"experiment": {"evaluation": "holdout", "metrics": ["hamming_loss"],
                                       "datasets": [{"name": "tiny", "source": source}]},
                        "learners": {"struct_hamming": {
                            "params": {"warm_start": True}, "grid": {"C": [1.0, 10.0, 1e3]},
                            "select": {"metric": "hamming_loss", "method": "split",
                                       "warm_start": True}}}})
    cell = enumerate_cells(exp)[0]
    record = run_cell(cell)
    assert record["status"] == "ok", record["error"]
    trail = json.loads(record["selection"])
    assert [t["params"]["C"] for t in trail] == [1.0, 10.0, 1e3]
    train, test = cell_data(cell)
    val = cell_validation(cell)
    learner = mlw.get_learner("struct_hamming", warm_start=True, seed=0)
    best = None
    for t in trail:  # the path by hand
        learner.set_params(C=t["params"]["C"])
        learner.fit(train.X, train.Y)
        v = mlw.evaluate(val.Y, learner.predict(val.X), metrics=["hamming_loss"])
        assert v["hamming_loss"] == pytest.approx(t["score"], abs=0)
        if best is None or v["hamming_loss"] < best[0]:
            best = (v["hamming_loss"], t["params"],
                    mlw.evaluate(test.Y, learner.predict(test.X), metrics=["hamming_loss"]))
    assert json.loads(record["chosen_params"]) == best[1]
    assert record["metric_hamming_loss"] == best[2]["hamming_loss"]
    with pytest.raises(ValueError, match="warm-started path needs method"):
        parse_config({"experiment": {"datasets": ["emotions"]},
                      "learners": {"br": {"grid": {"threshold": ["pcut"]}, "select": {
                          "metric": "f1_micro", "warm_start": True}}}})
