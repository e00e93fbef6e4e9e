"""Registers the LCIF learners with mlw.

Each learner's parameters are documented in its class docstring (the shared ones on
``mlw_lcif.model._LCIFBase``), where ``mlw learners NAME`` reads them.
"""

from __future__ import annotations

from collections.abc import Callable

import mlw

#: The model state of the LCIF learners besides their classes (``LearnerSpec.model_types``;
#: the neighbour index is the core's ``mlw.neighbors.NeighborIndex``, declared by mlw).
_MODEL_TYPES = ("mlw_lcif._prep:FeatureScaler",)


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="lcif", factory="mlw_lcif.model:LCIF",
        description="LCIF: instance kNN + feature-label kNN, linearly combined "
                    "(Feremans et al. 2017)"))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="lcif2", factory="mlw_lcif.model:LCIF2",
        description="LCIF2: LCIF whose instance neighbours vote with second-order "
                    "(sim_ALL re-weighted) label scores"))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="instance_knn", factory="mlw_lcif.model:InstanceKNN",
        description="cosine-weighted instance kNN with a cardinality-matched threshold"))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="feature_knn", factory="mlw_lcif.model:FeatureKNN",
        description="feature kNN: each feature votes for its most similar labels"))
