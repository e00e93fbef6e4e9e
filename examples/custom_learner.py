"""Write a learner in a script and use it with mlw's evaluation, without a plugin.

A learner is a subclass of ``mlw.MultiLabelLearner``: ``__init__`` stores keyword
parameters, ``_fit`` learns, ``_predict_proba`` scores; the base class validates input
and applies the ``threshold`` strategy. To make it available to ``mlw fit --learner``,
package it as a plugin (see examples/plugin-template and docs/writing-plugins.md).

Run from the repository root:  python examples/custom_learner.py
"""

from __future__ import annotations

from typing import Any

import numpy as np

import mlw


class LabelPrior(mlw.MultiLabelLearner):
    """Scores every label by its (smoothed) training frequency, whatever the features:
    the floor any real learner must beat."""

    def __init__(self, threshold: str = "pcut", alpha: float = 1.0) -> None:
        self.threshold = threshold
        self.alpha = alpha

    def _fit(self, X: Any, Y: Any) -> None:
        counts = np.asarray(Y.sum(axis=0)).ravel().astype(np.float64)
        self.prior_ = (counts + self.alpha) / (Y.shape[0] + 2.0 * self.alpha)

    def _predict_proba(self, X: Any) -> np.ndarray:
        return np.tile(self.prior_, (X.shape[0], 1))


def main() -> dict[str, dict[str, float]]:
    train = mlw.load_dataset("emotions")
    test = mlw.load_dataset("emotions", split="test")
    out = {}
    for name, learner in (("prior", LabelPrior()), ("br", mlw.get_learner("br"))):
        result = mlw.holdout(learner, train, test, metrics=["hamming_loss", "f1_micro"])
        out[name] = result.metrics
        print(f"{name:6s} {result.metrics}  fit {result.fit_seconds:.3f} s")
    return out


if __name__ == "__main__":
    main()
