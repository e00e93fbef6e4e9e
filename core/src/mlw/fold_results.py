"""What an evaluation returns: each fold's :class:`FoldResult` and the run's
:class:`EvaluationResult` (fold means, the records of ``mlw fit --out`` and of the
``mlw bench`` store)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["EvaluationResult", "FoldResult"]


@dataclass
class FoldResult:
    """The evaluation of one train/test split.

    ``fit_seconds`` and ``predict_seconds`` (wall clock) exclude the time numba spent
    compiling kernels on first use (after installation; later runs load them from the
    cache), which is ``compile_seconds``. ``fit_cpu_seconds`` is the fit's process CPU
    time, compiling excluded: on a busy machine wall time grows with the load, CPU time
    much less, so it is the figure to compare across runs (``None`` when not measured).
    ``reliability`` is the reliability table of the test scores pooled over labels
    (:func:`mlw.metrics.calibration.reliability_table`: per score bin, the count, the
    sum of scores and the positives; ``None`` for a learner without scores), from which
    ``mlw report`` draws reliability diagrams.
    """

    metrics: dict[str, float]
    fit_seconds: float
    predict_seconds: float
    n_train: int
    n_test: int
    fold: int | None = None
    compile_seconds: float = 0.0
    per_label: Any = field(default=None, repr=False)
    fit_cpu_seconds: float | None = None
    reliability: Any = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.fold is None else {"fold": self.fold}
        out.update(n_train=self.n_train, n_test=self.n_test, metrics=dict(self.metrics),
                   fit_seconds=self.fit_seconds, fit_cpu_seconds=self.fit_cpu_seconds,
                   predict_seconds=self.predict_seconds,
                   compile_seconds=self.compile_seconds)
        if self.per_label is not None:
            out["per_label"] = self.per_label.to_dicts()
        return out


@dataclass
class EvaluationResult:
    """Hold-out or cross-validation results.

    ``metrics``, ``fit_seconds`` and ``predict_seconds`` are the means over the folds
    (the single split's values for a hold-out); ``folds`` holds each fold's result.
    ``model`` is the fitted learner of a hold-out, or, after cross-validation with
    ``refit=True``, the learner refitted on the whole dataset (``None`` otherwise: the
    per-fold clones are discarded). ``decision`` says how the label sets were decided
    (see :func:`mlw.prepare_evaluation`). With ``per_label=True`` (:func:`mlw.holdout`,
    :func:`mlw.cross_validate`) each fold has a per-label table and :attr:`per_label` is
    their mean.
    """

    folds: list[FoldResult]
    kind: str  # "holdout" or "cv"
    seed: int | None = None
    model: Any = field(default=None, repr=False)
    decision: str = ""
    refit_seconds: float | None = None

    @property
    def compile_seconds(self) -> float:
        """Total seconds numba spent compiling kernels during the evaluation."""
        return float(sum(f.compile_seconds for f in self.folds))

    def as_dict(self) -> dict[str, Any]:
        """The record ``mlw fit --json`` prints (with the learner and data around it):
        fold means, how label sets were decided, and for cross-validation each fold."""
        out: dict[str, Any] = {
            "evaluation": "holdout" if self.kind == "holdout" else f"{len(self.folds)}-fold cv",
            "n_train": self.n_train, "n_test": self.n_test, "metrics": self.metrics,
            "fit_seconds": self.fit_seconds, "fit_cpu_seconds": self.fit_cpu_seconds,
            "predict_seconds": self.predict_seconds,
            "compile_seconds": self.compile_seconds, "decision": self.decision,
        }
        per_label = self.per_label
        if per_label is not None:
            out["per_label"] = per_label.to_dicts()
        if self.kind == "cv":
            out["seed"] = self.seed
            out["folds"] = [f.as_dict() for f in self.folds]
        if self.refit_seconds is not None:
            out["refit_seconds"] = self.refit_seconds
        return out

    def records(self, **context: Any) -> list[dict[str, Any]]:
        """One flat record per fold (the fold-level results of ``mlw fit --out``):
        ``context`` first (``learner``, ``dataset``, ...), then ``evaluation``,
        ``n_folds``, ``fold``, ``seed``, ``decision``, ``n_train``, ``n_test``,
        ``fit_seconds``, ``fit_cpu_seconds``, ``predict_seconds``, ``compile_seconds``
        and one
        ``metric_<name>`` per metric (the column names of the ``mlw bench`` store)."""
        evaluation = "holdout" if self.kind == "holdout" else "cv"
        out = []
        for i, f in enumerate(self.folds):
            record: dict[str, Any] = dict(context)
            record.update(evaluation=evaluation, n_folds=len(self.folds),
                          fold=f.fold if f.fold is not None else i, seed=self.seed,
                          decision=self.decision, n_train=f.n_train, n_test=f.n_test,
                          fit_seconds=f.fit_seconds, fit_cpu_seconds=f.fit_cpu_seconds,
                          predict_seconds=f.predict_seconds,
                          compile_seconds=f.compile_seconds)
            record.update({f"metric_{k}": v for k, v in f.metrics.items()})
            out.append(record)
        return out

    def per_label_records(self, **context: Any) -> list[dict[str, Any]]:
        """One flat record per fold and label (``context``, ``fold``, then the columns
        of :func:`mlw.evaluate` with ``per_label=True``); empty without per-label
        results."""
        out = []
        for i, f in enumerate(self.folds):
            if f.per_label is None:
                continue
            fold = f.fold if f.fold is not None else i
            out += [{**context, "fold": fold, **row} for row in f.per_label.to_dicts()]
        return out

    @property
    def per_label(self) -> Any:
        """The per-label table (polars DataFrame, one row per label, the columns of
        :func:`mlw.evaluate` with ``per_label=True``) of a hold-out, or for
        cross-validation each column's mean over the folds where it is defined
        (``support`` and ``predicted`` too: per-fold means); ``None`` unless the
        evaluation was asked for per-label results."""
        tables = [f.per_label for f in self.folds if f.per_label is not None]
        if not tables:
            return None
        if len(tables) == 1:
            return tables[0]
        import polars as pl

        joined = pl.concat([t.with_row_index("_row") for t in tables])
        value_columns = [c for c in tables[0].columns if c != "label"]
        return (joined.with_columns(pl.col(value_columns).cast(pl.Float64).fill_nan(None))
                .group_by("_row", maintain_order=True)
                .agg(pl.col("label").first(), *[pl.col(c).mean() for c in value_columns])
                .sort("_row").drop("_row").fill_null(float("nan")))

    @property
    def metrics(self) -> dict[str, float]:
        names: list[str] = []
        for f in self.folds:
            names += [m for m in f.metrics if m not in names]
        out = {}
        for name in names:
            values = [f.metrics[name] for f in self.folds if name in f.metrics]
            out[name] = float(np.mean(values)) if values else float("nan")
        return out

    @property
    def fit_seconds(self) -> float:
        return float(np.mean([f.fit_seconds for f in self.folds]))

    @property
    def fit_cpu_seconds(self) -> float | None:
        """The folds' mean fit CPU seconds (``None`` if a fold has none)."""
        values = [f.fit_cpu_seconds for f in self.folds if f.fit_cpu_seconds is not None]
        if not values or len(values) < len(self.folds):
            return None
        return float(np.mean(values))

    @property
    def predict_seconds(self) -> float:
        return float(np.mean([f.predict_seconds for f in self.folds]))

    @property
    def n_train(self) -> int:
        return int(round(np.mean([f.n_train for f in self.folds])))

    @property
    def n_test(self) -> int:
        return int(round(np.mean([f.n_test for f in self.folds])))
