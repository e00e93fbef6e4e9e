"""Fold-level result records as a table: one row per fold (``mlw fit --out``), with the
column names and types of the ``mlw bench`` results store, so one reader handles both.

A record is a flat dict: ``learner``, ``dataset``, ``evaluation`` (``"holdout"`` or
``"cv"``), ``n_folds``, ``fold``, ``seed``, ``threshold``, ``params`` (JSON text),
``decision``, ``n_train``, ``n_test``, ``n_features``, ``n_labels``, ``fit_seconds``,
``fit_cpu_seconds``, ``predict_seconds``, ``compile_seconds`` and one ``metric_<name>``
column per metric (:meth:`mlw.EvaluationResult.records`). Per-label records
(:meth:`mlw.EvaluationResult.per_label_records`) have ``fold``, ``label`` and the
columns of :func:`mlw.evaluate` with ``per_label=True``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlw.files import atomic_write, check_output_path
from mlw.jsonsafe import dumps

__all__ = ["RESULT_SUFFIXES", "check_results_path", "per_label_path", "records_frame",
           "write_records"]

#: types of the fixed columns of a fold-level record, ``mlw fit --out``'s and the
#: ``mlw bench`` store's (metric_* columns are Float64)
SCHEMA: dict[str, str] = {
    "cell_id": "str", "experiment": "str", "learner": "str", "label": "str",
    "learner_name": "str", "dataset": "str", "source": "str", "evaluation": "str",
    "n_folds": "int", "fold": "int", "seed": "int", "threshold": "str", "control": "str",
    "params": "str", "resolved_params": "str",
    "status": "str", "error": "str", "chosen_params": "str", "selection": "str",
    "stages": "str", "attributes": "str", "decision": "str", "reliability": "str",
    "n_train": "int", "n_test": "int",
    "n_features": "int", "n_labels": "int", "fit_seconds": "float",
    "fit_cpu_seconds": "float",
    "predict_seconds": "float", "compile_seconds": "float", "selection_seconds": "float",
    "host": "str", "pid": "int", "started": "str", "finished": "str",
    "cpu_seconds": "float", "wall_seconds": "float", "peak_memory_mb": "float",
    "versions": "str",
}


#: Column types of the per-label records (the fold-level columns are the store's).
PER_LABEL_TYPES: dict[str, str] = {
    "label": "str", "support": "int", "predicted": "int", "precision": "float",
    "recall": "float", "f1": "float", "specificity": "float", "auc": "float",
    "average_precision": "float",
}


def column_types() -> dict[str, str]:
    """Column types: ``mlw bench``'s store schema (:data:`SCHEMA`,
    one results format for both commands) and the per-label columns."""
    return {**SCHEMA, **PER_LABEL_TYPES}


#: The file types a results table is written as, by suffix.
RESULT_SUFFIXES = (".parquet", ".csv")


def records_frame(records: Sequence[dict[str, Any]]) -> Any:
    """A polars DataFrame of ``records`` (columns in order of first appearance, typed by
    :func:`column_types`; ``metric_*`` as Float64; a missing value is null)."""
    import polars as pl

    kinds = {"str": pl.String, "int": pl.Int64, "float": pl.Float64}
    columns: list[str] = []
    for r in records:
        columns += [k for k in r if k not in columns]
    types = column_types()
    schema = {c: kinds[types.get(c, "float" if c.startswith("metric_") else "str")]
              for c in columns}

    def cell(value: Any, kind: Any) -> Any:
        if value is None:
            return None
        if kind is pl.String and not isinstance(value, str):
            return dumps(value, sort_keys=True)
        if kind is pl.Float64:
            return float(value)
        return value

    data = {c: [cell(r.get(c), schema[c]) for r in records] for c in columns}
    return pl.DataFrame(data, schema=schema)


def check_results_path(path: str | os.PathLike[str], option: str = "the results file"
                       ) -> Path:
    """``path`` as a :class:`~pathlib.Path`, checked before any work: not empty, a
    ``.parquet`` or ``.csv`` name, not a folder, in an existing folder
    (:func:`mlw.files.check_output_path` with :data:`RESULT_SUFFIXES`)."""
    return check_output_path(path, option=option, suffixes=RESULT_SUFFIXES)


def write_records(records: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write ``records`` (:func:`records_frame`) to ``path``, Parquet or CSV by its
    suffix, atomically (a temporary file beside it, renamed over it when complete).

    Examples
    --------
    >>> import tempfile, os, polars as pl
    >>> out = os.path.join(tempfile.mkdtemp(), "r.csv")
    >>> _ = write_records([{"fold": 0, "metric_f1_micro": 0.5}], out)
    >>> pl.read_csv(out).to_dicts()
    [{'fold': 0, 'metric_f1_micro': 0.5}]
    """
    p = check_results_path(path)
    frame = records_frame(records)
    with atomic_write(p, "wb") as fh:
        if p.suffix.lower() == ".parquet":
            frame.write_parquet(fh)
        else:
            frame.write_csv(fh)
    return p


def per_label_path(path: str | os.PathLike[str]) -> Path:
    """Where the per-label records go beside the fold-level ones:
    ``results.parquet`` -> ``results.per_label.parquet``."""
    p = Path(os.fspath(path))
    return p.with_name(f"{p.stem}.per_label{p.suffix}")
