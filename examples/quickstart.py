"""mlw in a few lines: load data, fit a learner by name, evaluate, cross-validate,
save and reload the model.

Run from the repository root:  python examples/quickstart.py [LEARNER]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

import mlw


def main(learner_name: str = "br") -> dict[str, float]:
    train = mlw.load_dataset("emotions")                  # bundled: the standard train split
    test = mlw.load_dataset("emotions", split="test")
    print(train, test, sep="\n")

    learner = mlw.get_learner(learner_name)               # any registered learner, by name
    learner.fit(train.X, train.Y)
    scores = mlw.evaluate(test.Y, learner.predict(test.X),
                          scores=learner.predict_proba(test.X),
                          metrics=["hamming_loss", "f1_micro", "f1_example",
                                   "average_precision"])
    print(f"hold-out: {scores}")

    result = mlw.cross_validate(mlw.get_learner(learner_name), train, k=5, seed=0,
                                metrics=["hamming_loss", "f1_micro"])
    per_fold = [round(f.metrics["f1_micro"], 3) for f in result.folds]
    print(f"5-fold CV (iterative stratification): {result.metrics}; f1_micro per fold "
          f"{per_fold}")

    with tempfile.TemporaryDirectory() as tmp:
        path = mlw.save_model(learner, Path(tmp) / "model.mlw",
                              metadata={"dataset": train.name})
        header = mlw.read_header(path)
        again = mlw.load_model(path)
        assert np.array_equal(again.predict(test.X), learner.predict(test.X))
        print(f"saved and reloaded {header['learner']} (mlw {header['mlw_version']}, "
              f"plugins {header['plugins']})")
    return scores


if __name__ == "__main__":
    main(*sys.argv[1:2])
