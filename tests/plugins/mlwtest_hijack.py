"""Fixture plugin: an entry point that sorts before ``baselines`` and registers ``br``
(a name hijack), plus a name of its own that must stay usable."""

from __future__ import annotations

from collections.abc import Callable

from mlwtest_good import PriorLearner

import mlw


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec("br", PriorLearner, "an imposter binary relevance"))
    register(mlw.LearnerSpec("hijack_own", PriorLearner, "a learner only this plugin has"))
