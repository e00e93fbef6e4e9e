"""Fixture plugin: one valid registration of every kind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import mlw


class PriorLearner(mlw.MultiLabelLearner):
    """Scores every label by its training frequency (the prior).

    Parameters
    ----------
    threshold : str
        Strategy.
    smoothing : float
        Laplace smoothing.
    """

    def __init__(self, threshold: str = "fixed", smoothing: float = 0.0) -> None:
        self.threshold = threshold
        self.smoothing = smoothing

    def _fit(self, X: Any, Y: Any) -> None:
        counts = np.asarray(Y.sum(axis=0)).ravel().astype(np.float64)
        n = Y.shape[0]
        self.prior_ = (counts + self.smoothing) / (n + 2.0 * self.smoothing)

    def _predict_proba(self, X: Any) -> np.ndarray:
        return np.tile(self.prior_, (X.shape[0], 1))


class HalfThreshold:
    """Predict a label when its score is at least 0.5 (no training needed)."""

    needs_training_scores = False

    def fit(self, scores: Any = None, Y: Any = None) -> HalfThreshold:
        return self

    def predict(self, scores: Any) -> np.ndarray:
        return (np.asarray(scores) >= 0.5).astype(np.uint8)


def mean_labels(ctx: Any) -> float:
    return float(ctx.Y_pred.sum()) / max(ctx.n_instances, 1)


def load_fixture(path: Any, **options: Any) -> mlw.Dataset:
    return blobs(seed=0)


def blobs(*, seed: int, n: int = 40) -> mlw.Dataset:
    """Two Gaussian blobs.

    Parameters
    ----------
    n : int
        Instances.
    """
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, 3)) < 0.5).astype(np.uint8)
    X = rng.normal(size=(n, 2)) + Y[:, :2]
    return mlw.Dataset(X, Y, ["a", "b"], ["l0", "l1", "l2"], name=f"blobs-{seed}")


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec("fixture_prior", PriorLearner, "label frequencies"))


@mlw.hookimpl
def mlw_register_thresholds(register: Callable[[mlw.ThresholdSpec], None]) -> None:
    register(mlw.ThresholdSpec("fixture_half", HalfThreshold, "score >= 0.5"))


class TopOneDecoder:
    """The single label of highest marginal."""

    def decode(self, learner, X):
        S = learner.predict_proba(X)
        Y = np.zeros(S.shape, dtype=np.uint8)
        Y[np.arange(S.shape[0]), S.argmax(axis=1)] = 1
        return Y

    def route(self, learner):
        return "top marginal"


@mlw.hookimpl
def mlw_register_decoders(register: Callable[[mlw.DecoderSpec], None]) -> None:
    register(mlw.DecoderSpec("fixture_top_one", TopOneDecoder, "the top label",
                             measure="precision_example"))


@mlw.hookimpl
def mlw_register_metrics(register: Callable[[mlw.MetricSpec], None]) -> None:
    register(mlw.MetricSpec("fixture_mean_labels", mean_labels, greater_is_better=True,
                            needs="labels", description="mean predicted labels"))


@mlw.hookimpl
def mlw_register_loaders(register: Callable[[mlw.LoaderSpec], None]) -> None:
    register(mlw.LoaderSpec("fixture_format", (".fixture",), load_fixture, "fixture format"))


@mlw.hookimpl
def mlw_register_generators(register: Callable[[mlw.GeneratorSpec], None]) -> None:
    register(mlw.GeneratorSpec("fixture_blobs", blobs, "two Gaussian blobs"))
