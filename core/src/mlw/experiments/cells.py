"""Cells: the unit of work of an experiment, one (learner, dataset, fold), and the one
function that runs a cell wherever it runs (this process, a local worker process, a
Dask worker): :func:`run_cell`.

A cell carries everything it needs (the learner entry, the resolved dataset source,
the seed, the fold), so a worker needs only mlw, the plugins and the data files. Its
``cell_id`` is a hash of exactly that: the same config gives the same ids, so a rerun
skips the cells already in the results, and a changed parameter is a new cell.

A config names only the parameters it sets; a plugin can change a default without
changing the config. So each record also keeps the learner's *resolved* parameters
(``resolved_params``: ``get_params()`` of the learner it fitted, defaults included), and
a rerun runs a recorded cell again when the learner now resolves differently
(:func:`params_changed`), the grid's names aside (chosen per cell).
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

from mlw.experiments.config import DatasetEntry, Experiment, LearnerEntry

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
        text = json.dumps(_jsonable(payload), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:20]

    def describe(self) -> str:
        fold = "hold-out" if self.evaluation == "holdout" else \
            f"fold {self.fold + 1}/{self.n_folds}"
        return f"{self.learner.display} on {self.dataset.name}, {fold}"


def resolved_params(learner: Any) -> str | None:
    """``learner.get_params(deep=False)`` as sorted JSON: what the learner is, its
    defaults included. ``None`` when that cannot be told apart from one process to the
    next: ``get_params`` fails, or a value prints only as an object at an address."""
    try:
        params = learner.get_params(deep=False)
    except Exception:  # a third-party learner without scikit-learn's protocol
        return None
    text = json.dumps(_jsonable(params), sort_keys=True, separators=(",", ":"))
    return None if " at 0x" in text else text


def entry_params(entry: LearnerEntry, seed: int) -> str | None:
    """:func:`resolved_params` of ``entry``'s learner as the config builds it today
    (``None`` when it cannot be built)."""
    from mlw.experiments.config import build_learner

    try:
        return resolved_params(build_learner(entry, seed))
    except Exception:  # the run reports it per cell; here it only means "cannot tell"
        return None


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
    from mlw.jsonsafe import to_jsonable

    return to_jsonable(value)


def _has_test_part(source: str) -> bool:
    from mlw.io.load import DatasetNotFoundError, parse_generator_spec, resolve_source

    spec = parse_generator_spec(source)
    if spec is not None:
        return True  # generators with splits; checked when loaded
    try:
        train, _ = resolve_source(source, "train")
        test, _ = resolve_source(source, "test")
    except DatasetNotFoundError:
        return False
    return train != test


def enumerate_cells(experiment: Experiment) -> list[Cell]:
    """Every cell of the experiment: datasets outermost (in the config's order, so an
    interrupted run has whole comparisons on the first datasets), then learners, then
    folds. Executors may finish them in any order."""
    from mlw.experiments.config import check_dataset

    cells = []
    for ds in experiment.datasets:
        source = check_dataset(ds, experiment.data_path)
        evaluation = ds.evaluation
        if evaluation == "auto":
            evaluation = "holdout" if (ds.test or ds.train_rows or _has_test_part(source)) \
                else "cv"
        n_folds = 1 if evaluation == "holdout" else ds.folds
        folds = range(n_folds)
        if experiment.only_folds is not None:
            folds = [f for f in folds if f in experiment.only_folds]
        for entry in experiment.learners:
            for fold in folds:
                cells.append(Cell(experiment.name, entry, ds, source, evaluation, n_folds,
                                  fold, experiment.seed, entry.metrics or experiment.metrics,
                                  experiment.control))
    return cells


# --- data, cached per process ---------------------------------------------------------------
_DATA: dict[tuple, Any] = {}
_FOLDS: dict[tuple, Any] = {}
_KEEP = 4


def _remember(cache: dict, key: tuple, make: Any) -> Any:
    if key not in cache:
        if len(cache) >= _KEEP:
            cache.pop(next(iter(cache)))
        cache[key] = make()
    return cache[key]


def cell_data(cell: Cell) -> tuple[Any, Any]:
    """``(train, test)`` of a cell: its fold of the iteratively stratified CV over
    every row of the dataset, or the dataset's hold-out split. Datasets and fold
    assignments are cached per process (a worker loads a dataset once)."""
    import numpy as np

    from mlw.io import load_dataset
    from mlw.model_selection import align_test, iterative_stratification

    ds = cell.dataset
    if cell.evaluation == "holdout":
        def load_pair() -> tuple[Any, Any]:
            from mlw.experiments.config import resolve_dataset_source

            if ds.train_rows is not None:
                whole = load_dataset(cell.source, split="all")
                n = whole.n_instances
                if ds.train_rows >= n:
                    raise ValueError(f"dataset {ds.name!r}: train_rows={ds.train_rows} "
                                     f"leaves no test rows ({n} rows)")
                return (whole.subset(np.arange(ds.train_rows), name=f"{ds.name}-train"),
                        whole.subset(np.arange(ds.train_rows, n), name=f"{ds.name}-test"))
            train = load_dataset(cell.source, split="train")
            if ds.test is not None:
                test = load_dataset(resolve_dataset_source(ds.test, ()), split="test")
            else:
                test = load_dataset(cell.source, split="test")
            if train.provenance.get("path") is not None and \
                    train.provenance.get("path") == test.provenance.get("path"):
                raise ValueError(f"dataset {ds.name!r} has no test part for a hold-out; "
                                 f"use evaluation = \"cv\", test = ... or train_rows = N")
            return train, align_test(train, test)

        return _remember(_DATA, ("holdout", cell.source, ds.test, ds.train_rows), load_pair)
    whole = _remember(_DATA, ("all", cell.source), lambda: load_dataset(cell.source,
                                                                         split="all"))
    fold_of = _remember(_FOLDS, (cell.source, cell.n_folds, cell.seed),
                        lambda: iterative_stratification(whole.Y, cell.n_folds,
                                                         seed=cell.seed))
    j = cell.fold
    train = whole.subset(np.flatnonzero(fold_of != j), name=f"{ds.name}[train {j}]")
    test = whole.subset(np.flatnonzero(fold_of == j), name=f"{ds.name}[fold {j}]")
    return train, test


def cell_validation(cell: Cell) -> Any:
    """The dataset's own ``validation`` split (for ``select.method = "split"``)."""
    from mlw.io import load_dataset

    return _remember(_DATA, ("validation", cell.source),
                     lambda: load_dataset(cell.source, split="validation"))


# --- staged results ------------------------------------------------------------------------
def _staged(model: Any, test: Any, stages: Any, metrics: list[str] | None) -> list[dict]:
    """The metrics after every stage the fitted model exposes: ``staged_models()``
    (each a fitted learner: every metric), else ``staged_predict(X[, stages])`` with
    ``staged_predict_proba`` alongside when it has one."""
    from mlw.evaluation import evaluate
    from mlw.model_selection import evaluate_fitted
    from mlw.plugins import get_plugin_manager

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
        from mlw.plugins import get_plugin_manager

        _VERSIONS.update(get_plugin_manager().versions())
    return _VERSIONS


def run_cell(cell: Cell) -> dict[str, Any]:
    """Run one cell and return its record (never raises for a learner's failure: the
    record then has ``status="error"`` and the one-line ``error``; a rerun retries it).

    The steps: the cell's train and test parts (:func:`cell_data`); the inner
    selection when the learner has a grid (:func:`select_params`); the checks and
    threshold routing of :func:`mlw.prepare_evaluation`; the one fit-and-score step
    :func:`mlw.model_selection.fit_and_evaluate`; staged metrics when asked.
    """
    from mlw.experiments.config import build_learner
    from mlw.experiments.selection import select_params
    from mlw.model_selection import fit_and_evaluate, prepare_evaluation

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
        "stages": None, "attributes": None, "decision": None, "n_train": None, "n_test": None,
        "n_features": None, "n_labels": None, "fit_seconds": None, "fit_cpu_seconds": None,
        "predict_seconds": None,
        "compile_seconds": None, "selection_seconds": None,
        "host": platform.node(), "pid": os.getpid(),
        "started": started.isoformat(timespec="milliseconds"),
    }
    metrics: dict[str, float] = {}
    try:
        train, test = cell_data(cell)
        record.update(n_train=train.n_instances, n_test=test.n_instances,
                      n_features=train.n_features, n_labels=train.n_labels)
        chosen: dict[str, Any] = {}
        kept: dict[str, Any] = {}
        if cell.learner.grid:
            t = time.perf_counter()
            validation = cell_validation(cell) if cell.learner.select is not None and \
                cell.learner.select.method == "split" else None
            chosen, trail = select_params(cell.learner, train, cell.seed, validation, kept)
            record["selection_seconds"] = time.perf_counter() - t
            record["chosen_params"] = json.dumps(_jsonable(chosen), sort_keys=True)
            record["selection"] = json.dumps(_jsonable(trail))
        learner = build_learner(cell.learner, cell.seed, chosen)
        record["resolved_params"] = resolved_params(learner)
        setup = prepare_evaluation(learner, list(cell.metrics) if cell.metrics else None,
                                   cell.learner.threshold)
        if "model" in kept:  # a warm-started path: its chosen model, trained on train
            from mlw.model_selection import _evaluate_fitted

            model = kept["model"]
            values, predict_seconds, _ = _evaluate_fitted(model, test.X, test.Y,
                                                          setup.metrics)
            metrics = dict(values)
            record.update(decision=setup.decision, fit_seconds=kept["fit_seconds"],
                          fit_cpu_seconds=kept.get("fit_cpu_seconds"),
                          predict_seconds=predict_seconds,
                          compile_seconds=kept["compile_seconds"])
        else:
            result, model = fit_and_evaluate(setup, train, test, fold=cell.fold)
            metrics = dict(result.metrics)
            record.update(decision=setup.decision, fit_seconds=result.fit_seconds,
                          fit_cpu_seconds=result.fit_cpu_seconds,
                          predict_seconds=result.predict_seconds,
                          compile_seconds=result.compile_seconds)
        if cell.learner.attributes:
            record["attributes"] = json.dumps(_jsonable(
                {a: getattr(model, a, None) for a in cell.learner.attributes}),
                sort_keys=True)
        if cell.learner.stages:
            staged = _staged(model, test, cell.learner.stages, setup.metrics)
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
