"""Experiments at scale: the harness behind ``mlw bench`` and ``mlw report``.

An experiment (a TOML config, or ``mlw bench`` options) is a set of cells, one per
(learner, dataset, fold); each cell runs the core's one fit-and-score step
(:func:`mlw.model_selection.fit_and_evaluate`), after an inner model selection when the
learner has a grid. Results are fold-level records in Parquet (polars), appended as
cells finish and skipped when a run is repeated. Statistics (Friedman, Nemenyi,
paired t-tests) and reports (Markdown, HTML, PNG figures) are computed from them.

Nothing here is imported by ``import mlw``; polars, dask and matplotlib are imported
only by the functions that use them. See ``docs/guide/bench-and-report.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlw.lazy import attach

_LAZY: dict[str, str] = {
    "ConfigError": "mlw.experiments.config",
    "DatasetEntry": "mlw.experiments.config",
    "Experiment": "mlw.experiments.config",
    "LearnerEntry": "mlw.experiments.config",
    "Selection": "mlw.experiments.config",
    "experiment_from_options": "mlw.experiments.config",
    "load_config": "mlw.experiments.config",
    "parse_config": "mlw.experiments.config",
    "Cell": "mlw.experiments.cells",
    "enumerate_cells": "mlw.experiments.cells",
    "run_cell": "mlw.experiments.cells",
    "RunSummary": "mlw.experiments.harness",
    "run_experiment": "mlw.experiments.harness",
    "ResultStore": "mlw.experiments.store",
    "StoreLockedError": "mlw.experiments.store",
    "read_results": "mlw.experiments.store",
    "friedman_test": "mlw.experiments.stats",
    "nemenyi_cd": "mlw.experiments.stats",
    "paired_t_tests": "mlw.experiments.stats",
    "summary_table": "mlw.experiments.stats",
    "average_ranks": "mlw.experiments.stats",
    "write_report": "mlw.experiments.report",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = attach(__name__, _LAZY)


if TYPE_CHECKING:
    from mlw.experiments.cells import Cell, enumerate_cells, run_cell
    from mlw.experiments.config import (
        ConfigError,
        DatasetEntry,
        Experiment,
        LearnerEntry,
        Selection,
        experiment_from_options,
        load_config,
        parse_config,
    )
    from mlw.experiments.harness import RunSummary, run_experiment
    from mlw.experiments.report import write_report
    from mlw.experiments.stats import (
        average_ranks,
        friedman_test,
        nemenyi_cd,
        paired_t_tests,
        summary_table,
    )
    from mlw.experiments.store import ResultStore, StoreLockedError, read_results
