"""Fixture plugin: prints to stdout when imported, when it registers and while its
learner ``noisy_chatty`` fits and predicts (none of it may reach a command's stdout),
and takes a moment to import."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from mlwtest_good import PriorLearner

import mlw

print("noisy plugin says hello")  # noqa: T201 - the point of this fixture
time.sleep(float(os.environ.get("MLWTEST_NOISY_SLEEP", "0")))


class ChattyLearner(PriorLearner):
    """The prior, printing progress to stdout as careless code does."""

    def _fit(self, X: Any, Y: Any) -> None:
        print("chatty: fitting")  # noqa: T201
        super()._fit(X, Y)

    def _predict_proba(self, X: Any) -> np.ndarray:
        print("chatty: predicting")  # noqa: T201
        return super()._predict_proba(X)


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    print("noisy plugin registers")  # noqa: T201
    register(mlw.LearnerSpec("noisy_prior", PriorLearner, "prints a lot"))
    register(mlw.LearnerSpec("noisy_chatty", ChattyLearner, "prints while fitting"))
    # imported on first use: one prints at import, one calls sys.exit at import
    register(mlw.LearnerSpec("noisy_lazy", "mlwtest_noisy_model:PriorLearner",
                             "prints when its module is imported"))
    register(mlw.LearnerSpec("noisy_lazy_exit", "mlwtest_exit_at_import:Nothing",
                             "its module calls sys.exit"))
