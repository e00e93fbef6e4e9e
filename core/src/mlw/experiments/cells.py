"""Cells: the unit of work of an experiment, one (learner, dataset, fold), and the one
function that runs a cell wherever it runs (this process, a local worker process, a
Dask worker): :func:`run_cell`.

A cell carries everything it needs (the learner entry, the resolved dataset source,
the seed, the fold), so a worker needs only mlw, the plugins and the data files. Its
``cell_id`` is a hash of exactly that: the same config gives the same ids, so a rerun
skips the cells already in the results, and a changed parameter is a new cell.

A config names only the parameters it sets; a plugin can change a default without
changing the config. So each record also keeps the learner's *resolved* parameters
(``resolved_params``: ``get_params()`` of the learner it fitted, defaults included,
:func:`mlw.plan.resolved_params`), and a rerun runs a recorded cell again when the
learner now resolves differently (:func:`params_changed`), the grid's names aside
(chosen per cell).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import resource
import sys
import time
import traceback
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from mlw.evaluation import evaluate, evaluate_fitted, run_fold
from mlw.experiments.config import (
    DatasetEntry,
    Experiment,
    LearnerEntry,
    check_dataset,
    entry_learner,
    resolve_dataset_source,
)
from mlw.io.load import load_dataset
from mlw.io.plan import DataPlan, choose_evaluation, plan_data
from mlw.jsonsafe import to_jsonable
from mlw.plan import prepare_evaluation, resolved_params
from mlw.plugins import get_plugin_manager
from mlw.selection import select_params

#: bump when a record's meaning changes (old results are then not taken as done)
RECORD_VERSION = 1


@dataclass(frozen=True)
class Cell:
    """One (learner, dataset, fold) of an experiment."""

    experiment: str
    learner: LearnerEntry
    dataset: DatasetEntry
    source: str  # the dataset source, resolved against the data path
    evaluation: str  # "cv" or "holdout"
    n_folds: int  # 1 for a hold-out
    fold: int
    seed: int
    metrics: tuple[str, ...] | None
    control: str | None = None  # the report's default control (not part of the id)
    test_source: str | None = None  # the test file, resolved (``dataset.test`` is in the id)

    @property
    def cell_id(self) -> str:
        payload = {
            "v": RECORD_VERSION, "experiment": self.experiment, "key": self.learner.key,
            "learner": self.learner.learner, "params": self.learner.params,
            "threshold": self.learner.threshold, "grid": self.learner.grid,
            "select": self.learner.select.as_dict() if self.learner.select else None,
            "stages": self.learner.stages, "dataset": self.dataset.name,
            "source": self.dataset.source, "test": self.dataset.test,
            "train_rows": self.dataset.train_rows, "evaluation": self.evaluation,
            "n_folds": self.n_folds, "fold": self.fold, "seed": self.seed,
            "metrics": list(self.metrics) if self.metrics else None,
        }
        if self.learner.decode is not None:  # absent otherwise: earlier ids stay valid
            payload["decode"] = self.learner.decode
        text = json.dumps(_jsonable(payload), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:20]

    def describe(self) -> str:
        fold = "hold-out" if self.evaluation == "holdout" else \
            f"fold {self.fold + 1}/{self.n_folds}"
        return f"{self.learner.display} on {self.dataset.name}, {fold}"


def params_changed(entry: LearnerEntry, recorded: str | None, now: str | None) -> bool:
    """Whether a cell recorded with ``recorded`` parameters must run again because its
    learner now resolves to ``now``: the names of ``entry``'s grid are left out (chosen
    per cell); unknown on either side (older records, see :func:`resolved_params`) is
    not a change."""
    if recorded is None or now is None:
        return False
    try:
        then = json.loads(recorded)
    except ValueError:
        return True  # an unreadable record is not evidence of the same learner
    current = json.loads(now)
    if not isinstance(then, dict):
        return True
    for name in entry.grid:
        then.pop(name, None)
        current.pop(name, None)
    return then != current


def _jsonable(value: Any) -> Any:
    return to_jsonable(value)


def enumerate_cells(experiment: Experiment) -> list[Cell]:
    """Every cell of the experiment: datasets outermost (in the config's order, so an
    interrupted run has whole comparisons on the first datasets), then learners, then
    folds. Executors may finish them in any order. Whether a dataset is a hold-out or
    how many folds it has is :func:`mlw.io.plan.choose_evaluation`'s answer, the one
    ``mlw fit`` gets."""
    cells = []
    for ds in experiment.datasets:
        source = check_dataset(ds, experiment.data_path)
        test = None if ds.test is None else resolve_dataset_source(ds.test,
                                                                   experiment.data_path)
        evaluation, k = choose_evaluation(source, test=test, train_rows=ds.train_rows,
                                          evaluation=ds.evaluation, folds=ds.folds,
                                          name=ds.name)
        n_folds = 1 if evaluation == "holdout" else int(k or ds.folds)
        folds = range(n_folds)
        if experiment.only_folds is not None:
            folds = [f for f in folds if f in experiment.only_folds]
        for entry in experiment.learners:
            for fold in folds:
                cells.append(Cell(experiment.name, entry, ds, source, evaluation, n_folds,
                                  fold, experiment.seed, entry.metrics or experiment.metrics,
                                  experiment.control, test))
    return cells


# --- data, cached per process ---------------------------------------------------------------
_DATA: dict[tuple, Any] = {}
_KEEP = 4


def _remember(cache: dict, key: tuple, make: Any) -> Any:
    if key not in cache:
        if len(cache) >= _KEEP:
            cache.pop(next(iter(cache)))
        cache[key] = make()
    return cache[key]


def cell_plan(cell: Cell) -> DataPlan:
    """The data plan of a cell's dataset (:func:`mlw.plan_data`, as ``mlw fit`` makes
    it: the hold-out with its test set aligned to the training columns, or the
    iteratively stratified folds over every row). Cached per process, fold assignment
    included, so a worker loads a dataset and assigns its folds once."""
    ds = cell.dataset
    key = ("plan", cell.source, cell.test_source, ds.train_rows, cell.evaluation,
           cell.n_folds, cell.seed)
    return _remember(_DATA, key, lambda: plan_data(
        cell.source, test=cell.test_source, train_rows=ds.train_rows,
        evaluation=cell.evaluation, folds=max(cell.n_folds, 2), seed=cell.seed,
        name=ds.name))


def cell_data(cell: Cell) -> tuple[Any, Any]:
    """``(train, test)`` of a cell: its fold of the data plan (:func:`cell_plan`)."""
    return cell_plan(cell).fold(cell.fold)


def cell_validation(cell: Cell) -> Any:
    """The dataset's own ``validation`` split (for ``select.method = "split"``)."""
    return _remember(_DATA, ("validation", cell.source),
                     lambda: load_dataset(cell.source, split="validation"))


# --- staged results ------------------------------------------------------------------------
def _staged(model: Any, test: Any, stages: Any, metrics: list[str] | None) -> list[dict]:
    """The metrics after every stage the fitted model exposes: ``staged_models()``
    (each a fitted learner: every metric), else ``staged_predict(X[, stages])`` with
    ``staged_predict_proba`` alongside when it has one."""
    out: list[dict] = []
    if hasattr(model, "staged_models") and stages is True:
        for i, m in enumerate(model.staged_models(), start=1):
            values, _ = evaluate_fitted(m, test.X, test.Y, metrics)
            out.append({"stage": i, "metrics": values})
        return out
    if not hasattr(model, "staged_predict"):
        raise ValueError(f"{type(model).__name__} exposes no staged results "
                         f"(staged_models() or staged_predict())")
    args = (test.X,) if stages is True else (test.X, list(stages))
    labels = list(model.staged_predict(*args))
    scores: list[Any] = [None] * len(labels)
    if hasattr(model, "staged_predict_proba"):
        try:
            scores = list(model.staged_predict_proba(*args))
        except (NotImplementedError, TypeError):
            pass
    specs = get_plugin_manager().metrics()
    names = metrics or [n for n, s in specs.items() if s.needs in ("labels", "scores")]
    names = [n for n in names if specs[n].needs == "labels" or
             (specs[n].needs == "scores" and scores[0] is not None)]
    steps = list(range(1, len(labels) + 1)) if stages is True else list(stages)
    for step, Y_pred, S in zip(steps, labels, scores, strict=False):
        values = evaluate(test.Y, Y_pred, scores=S, metrics=names)
        out.append({"stage": int(step), "metrics": values})
    return out


# --- running one cell ------------------------------------------------------------------------
def _reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark of this process (Linux: ``clear_refs`` 5), so
    the peak after a cell is the cell's own."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mb(reset_worked: bool) -> float:
    if reset_worked:
        try:
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024.0
        except OSError:
            pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024.0 * 1024.0) if sys.platform == "darwin" else peak / 1024.0


_VERSIONS: dict[str, str] = {}


def _versions() -> dict[str, str]:
    """mlw's and every plugin distribution's version (read once per process)."""
    if not _VERSIONS:
        _VERSIONS.update(get_plugin_manager().versions())
    return _VERSIONS


def run_cell(cell: Cell) -> dict[str, Any]:
    """Run one cell and return its record (never raises for a learner's failure: the
    record then has ``status="error"`` and the one-line ``error``; a rerun retries it).

    The steps: the cell's data plan and its fold (:func:`cell_plan`); the learner's
    registration, looked up once; the inner selection when the learner has a grid
    (:func:`mlw.selection.select_params`); the checks and threshold routing of
    :func:`mlw.prepare_evaluation`; the fold run by :func:`mlw.evaluation.run_fold`,
    the step ``mlw fit`` and :func:`mlw.cross_validate` run; staged metrics when asked.
    """
    started = datetime.now(timezone.utc)
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    reset = _reset_peak_rss()
    record: dict[str, Any] = {
        "cell_id": cell.cell_id, "experiment": cell.experiment, "learner": cell.learner.key,
        "label": cell.learner.display,
        "learner_name": cell.learner.learner, "dataset": cell.dataset.name,
        "source": cell.source, "evaluation": cell.evaluation, "n_folds": cell.n_folds,
        "fold": cell.fold, "seed": cell.seed, "threshold": cell.learner.threshold,
        "control": cell.control,
        "params": json.dumps(_jsonable(dict(cell.learner.params)), sort_keys=True),
        "resolved_params": None,
        "status": "ok", "error": None, "chosen_params": None, "selection": None,
        "stages": None, "attributes": None, "decision": None, "reliability": None,
        "n_train": None, "n_test": None,
        "n_features": None, "n_labels": None, "fit_seconds": None, "fit_cpu_seconds": None,
        "predict_seconds": None,
        "compile_seconds": None, "selection_seconds": None,
        "host": platform.node(), "pid": os.getpid(),
        "started": started.isoformat(timespec="milliseconds"),
    }
    metrics: dict[str, float] = {}
    try:
        entry = cell.learner
        data = cell_plan(cell)
        train, test = data.fold(cell.fold)
        record.update(n_train=train.n_instances, n_test=test.n_instances,
                      n_features=train.n_features, n_labels=train.n_labels)
        spec = get_plugin_manager().learner(entry.learner)  # the cell's one lookup

        def build(point: Any = None) -> Any:
            return entry_learner(entry, spec, cell.seed, point)

        chosen: dict[str, Any] = {}
        kept: dict[str, Any] = {}
        if entry.grid:
            t = time.perf_counter()
            validation = cell_validation(cell) if entry.select is not None and \
                entry.select.method == "split" else None
            chosen, trail = select_params(entry, train, cell.seed, validation, kept,
                                          build=build)
            record["selection_seconds"] = time.perf_counter() - t
            record["chosen_params"] = json.dumps(_jsonable(chosen), sort_keys=True)
            record["selection"] = json.dumps(_jsonable(trail))
        learner = build(chosen)
        record["resolved_params"] = resolved_params(learner)
        plan = prepare_evaluation(learner, list(cell.metrics) if cell.metrics else None,
                                  entry.threshold, data=data, decode=entry.decode)
        plan.name = entry.learner
        if "model" in kept:  # a warm-started path: its chosen model, trained on train
            model = kept["model"]
            values, predict_seconds = evaluate_fitted(model, test.X, test.Y, plan.metrics,
                                                      decoders=plan.decoders)
            metrics = dict(values)
            record.update(decision=plan.decision, fit_seconds=kept["fit_seconds"],
                          fit_cpu_seconds=kept.get("fit_cpu_seconds"),
                          predict_seconds=predict_seconds,
                          compile_seconds=kept["compile_seconds"])
        else:
            result, model = run_fold(plan, cell.fold)
            metrics = dict(result.metrics)
            record.update(decision=plan.decision, fit_seconds=result.fit_seconds,
                          fit_cpu_seconds=result.fit_cpu_seconds,
                          predict_seconds=result.predict_seconds,
                          compile_seconds=result.compile_seconds)
            if result.reliability is not None:
                record["reliability"] = json.dumps(np.asarray(result.reliability).tolist())
        if cell.learner.attributes:
            record["attributes"] = json.dumps(_jsonable(
                {a: getattr(model, a, None) for a in cell.learner.attributes}),
                sort_keys=True)
        if cell.learner.stages:
            staged = _staged(model, test, cell.learner.stages, plan.metrics)
            record["stages"] = json.dumps(_jsonable(staged))
    except Exception as exc:  # a learner's failure is a result, not the end of the run
        record["status"] = "error"
        lines = str(exc).strip().splitlines()
        record["error"] = f"{type(exc).__name__}: {lines[0] if lines else ''}"
        if os.environ.get("MLW_DEBUG"):
            traceback.print_exc()
    record["cpu_seconds"] = time.process_time() - cpu0
    record["wall_seconds"] = time.perf_counter() - wall0
    record["peak_memory_mb"] = _peak_rss_mb(reset)
    record["finished"] = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    record["versions"] = json.dumps(_versions(), sort_keys=True)
    for name, value in metrics.items():
        record[f"metric_{name}"] = None if value is None else float(value)
    return record


def cells_as_dicts(cells: list[Cell]) -> Iterator[dict[str, Any]]:
    for c in cells:
        yield {"cell_id": c.cell_id, **asdict(c)}
