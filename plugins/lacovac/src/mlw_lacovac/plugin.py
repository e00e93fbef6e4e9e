"""Registers the LaCovaC family with mlw.

Each learner's parameters are documented in its class docstring, where ``mlw learners
NAME`` reads them.
"""

from __future__ import annotations

from collections.abc import Callable

import mlw

#: The model state of the trees besides the learners' classes (``LearnerSpec.model_types``).
_MODEL_TYPES = ("mlw_lacovac._tree:Tree", "mlw_lacovac._leaves:LeafModels")


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="lacovac", factory="mlw_lacovac.model:LaCovaC",
        description="LaCovaC multi-label tree: local phi-correlation label clustering "
                    "(vertical splits) and LaCova covariance splits (Al-Otaibi et al. 2016)"))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="lacova", factory="mlw_lacovac.model:LaCova",
        description="LaCova multi-label tree: BR-like vertical split when the label "
                    "covariance is insignificant, else a covariance-criterion split"))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="ml_c45", factory="mlw_lacovac.model:MLC45",
        description="ML-C4.5 multi-label tree: splits minimise the sum of per-label "
                    "entropies; leaves hold label-subset distributions"))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="lacovac_forest", factory="mlw_lacovac.forest:LaCovaCForest",
        description="Bagged LaCovaC trees with random feature subsets; averages marginals "
                    "and votes on joint label vectors"))
