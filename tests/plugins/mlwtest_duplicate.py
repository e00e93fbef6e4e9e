"""Fixture plugin registering a learner name that mlwtest_good already owns."""

from __future__ import annotations

from collections.abc import Callable

from mlwtest_good import PriorLearner

import mlw


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec("fixture_prior", PriorLearner, "a second fixture_prior"))
