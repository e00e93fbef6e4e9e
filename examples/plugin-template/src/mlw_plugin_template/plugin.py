"""The plugin module named by the entry point: only registrations, no work.

mlw calls each hook with a ``register`` callback; every spec is validated (name,
callables or import paths, model types). A name another plugin
registers too is usable only as ``template:NAME`` (and ``OTHER:NAME``).
"""

from __future__ import annotations

from collections.abc import Callable

import mlw


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec(
        name="template_centroid",
        # an import path: the estimator module is imported only when the learner is
        # used, so registering (every `mlw` command) stays cheap
        factory="mlw_plugin_template.centroid:NearestCentroid",
        description="per-label nearest centroid (template plugin)",
        # its parameters are documented once, in the numpydoc "Parameters" section of
        # the class docstring: `mlw learners template_centroid` reads them from there
        # the model state mlw.load_model may rebuild besides NearestCentroid itself:
        # its fitted state is numpy arrays and a threshold strategy, which mlw declares,
        # so nothing here. A helper class of yours would be listed as
        # "mlw_plugin_template.centroid:Helper" (mlw.persistence.untrusted_types(model)
        # says what is missing).
        model_types=(),
    ))


@mlw.hookimpl
def mlw_register_metrics(register: Callable[[mlw.MetricSpec], None]) -> None:
    from mlw_plugin_template.metric import cardinality_error_metric

    register(mlw.MetricSpec(
        name="cardinality_error",
        compute=cardinality_error_metric,
        greater_is_better=False,
        needs="labels",
        description="|mean predicted - mean true labels per instance| (template plugin)",
    ))
