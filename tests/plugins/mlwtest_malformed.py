"""Fixture plugin registering a learner with a missing field (empty description),
after a valid metric that must be withdrawn with it."""

from __future__ import annotations

from collections.abc import Callable

from mlwtest_good import PriorLearner, mean_labels

import mlw


@mlw.hookimpl
def mlw_register_metrics(register: Callable[[mlw.MetricSpec], None]) -> None:
    register(mlw.MetricSpec("malformed_plugins_metric", mean_labels, True, "labels",
                            "valid, but its plugin is broken"))


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec("malformed_prior", PriorLearner, description=""))
