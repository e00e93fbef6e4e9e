"""Fixture plugin: learners with their own bugs (exit 1 naming the plugin):
``buggy_fit`` raises in fit, ``buggy_exit`` calls sys.exit in fit, ``buggy_shape``
predicts the wrong shape, ``buggy_nan`` predicts NaN scores, ``buggy_input`` rejects
its input with a ValueError (bad input: exit 2); the loader ``buggy_format`` calls
sys.exit, the generator ``buggy_gen`` raises a KeyError, the metric ``buggy_metric``
raises ZeroDivisionError, the thresholds ``buggy_thr_fit`` and ``buggy_thr_predict``
raise in fit and in predict."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import mlw


class _Base(mlw.MultiLabelLearner):
    def __init__(self, threshold: str = "fixed") -> None:
        self.threshold = threshold

    def _fit(self, X: Any, Y: Any) -> None:
        self.L_ = Y.shape[1]

    def _predict_proba(self, X: Any) -> np.ndarray:
        return np.full((X.shape[0], self.L_), 0.5)


class FitRaises(_Base):
    def _fit(self, X: Any, Y: Any) -> None:
        raise ZeroDivisionError("division by zero in the plugin")


class FitExits(_Base):
    def _fit(self, X: Any, Y: Any) -> None:
        sys.exit(3)


class WrongShape(_Base):
    def _predict_proba(self, X: Any) -> np.ndarray:
        return np.full((X.shape[0], self.L_ + 1), 0.5)


class NaNScores(_Base):
    def _predict_proba(self, X: Any) -> np.ndarray:
        return np.full((X.shape[0], self.L_), np.nan)


class RejectsInput(_Base):
    def _fit(self, X: Any, Y: Any) -> None:
        raise ValueError("buggy_input needs at least 10000 rows")


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    for name, cls in (("buggy_fit", FitRaises), ("buggy_exit", FitExits),
                      ("buggy_shape", WrongShape), ("buggy_nan", NaNScores),
                      ("buggy_input", RejectsInput)):
        register(mlw.LearnerSpec(name, cls, f"fixture: {cls.__name__}"))


def load_exits(path: Any) -> Any:
    """A loader calling sys.exit (as a careless script does on a bad file)."""
    sys.exit(f"cannot read {path}")


def generate_raises(seed: int = 0, n: int = 10) -> Any:
    return {"rows": n}["columns"]  # KeyError: the plugin's own bug


@mlw.hookimpl
def mlw_register_loaders(register: Callable[[mlw.LoaderSpec], None]) -> None:
    register(mlw.LoaderSpec("buggy_format", (".buggy",), load_exits, "fixture: sys.exit"))


@mlw.hookimpl
def mlw_register_generators(register: Callable[[mlw.GeneratorSpec], None]) -> None:
    register(mlw.GeneratorSpec("buggy_gen", generate_raises, "fixture: raises KeyError"))


def metric_raises(ctx: Any) -> float:
    return 1 / 0


@mlw.hookimpl
def mlw_register_metrics(register: Callable[[mlw.MetricSpec], None]) -> None:
    register(mlw.MetricSpec("buggy_metric", metric_raises, greater_is_better=True,
                            needs="labels", description="fixture: raises"))


class ThresholdFitRaises:
    needs_training_scores = True

    def fit(self, S: Any, Y: Any) -> Any:
        raise ZeroDivisionError("in the strategy's fit")

    def predict(self, S: Any) -> Any:  # pragma: no cover - never fitted
        return (np.asarray(S) >= 0.5).astype(np.uint8)


class ThresholdPredictRaises(ThresholdFitRaises):
    def fit(self, S: Any, Y: Any) -> Any:
        return self

    def predict(self, S: Any) -> Any:
        raise IndexError("in the strategy's predict")


@mlw.hookimpl
def mlw_register_thresholds(register: Callable[[mlw.ThresholdSpec], None]) -> None:
    register(mlw.ThresholdSpec("buggy_thr_fit", ThresholdFitRaises, "fixture: fit raises"))
    register(mlw.ThresholdSpec("buggy_thr_predict", ThresholdPredictRaises,
                               "fixture: predict raises"))
