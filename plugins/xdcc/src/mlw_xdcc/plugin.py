"""Registers the plugin's learners with mlw (entry point ``xdcc = "mlw_xdcc.plugin"``).

Each learner's parameters are documented in its class docstring (the booster's on
``mlw_xdcc._params.BoosterParams``), where ``mlw learners NAME`` reads them.
"""

from __future__ import annotations

from collections.abc import Callable

import mlw

#: The model state of the boosted learners besides their classes
#: (``LearnerSpec.model_types``).
_MODEL_TYPES = ("mlw_xdcc.booster:TreeEnsemble", "mlw_xdcc.xdcc:ChainState")


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="xdcc", factory="mlw_xdcc.xdcc:XDCC",
        description="dynamic classifier chain of gradient-boosted multi-label trees (XDCC)"))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="ml_xgb", factory="mlw_xdcc.ml_xgb:MLXGB",
        description="gradient-boosted trees with one weight per label in each leaf (ML-XGB)"))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="br_xgb", factory="mlw_xdcc.ml_xgb:BRXGB",
        description="binary relevance of single-label boosters (the ML-XGB booster, L=1)"))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="cc_xgb", factory="mlw_xdcc.cc_xgb:CCXGB",
        description="greedy classifier chain of single-label boosters (the ML-XGB booster)"))
