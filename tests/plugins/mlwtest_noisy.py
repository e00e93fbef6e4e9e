"""Fixture plugin: prints to stdout when imported and when it registers (it must not
reach a command's stdout), and takes a moment to import."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from mlwtest_good import PriorLearner

import mlw

print("noisy plugin says hello")  # noqa: T201 - the point of this fixture
time.sleep(float(os.environ.get("MLWTEST_NOISY_SLEEP", "0")))


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    print("noisy plugin registers")  # noqa: T201
    register(mlw.LearnerSpec("noisy_prior", PriorLearner, "prints a lot"))
