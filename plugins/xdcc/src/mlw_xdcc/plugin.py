"""Registers the plugin's learners with mlw (entry point ``xdcc = "mlw_xdcc.plugin"``)."""

from __future__ import annotations

from collections.abc import Callable

import mlw

#: The model state of the boosted learners besides their classes
#: (``LearnerSpec.model_types``).
_MODEL_TYPES = ("mlw_xdcc.booster:TreeEnsemble", "mlw_xdcc.xdcc:ChainState")


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    from mlw_xdcc._docs import BOOSTER_PARAM_DOCS as P

    thr = {"threshold": "thresholding strategy applied to predict_proba (default 'fixed': 0.5)"}
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="xdcc", factory="mlw_xdcc.xdcc:XDCC",
        description="dynamic classifier chain of gradient-boosted multi-label trees (XDCC)",
        param_docs={**P,
                    "chain_length": "rounds of the dynamic chain (default: ceil(label "
                                    "cardinality) + 1, at most the number of labels)",
                    "cumulated": "Eq. 9: non-propagated labels take the max over rounds "
                                 "(XDCC-cum); False: the last round's (XDCC-std)",
                    "propagation": "training labels propagated with in_sample predictions "
                                   "(the paper's) or out_of_fold ones (an extension)",
                    "propagation_folds": "folds of out_of_fold propagation (default 5)"}))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="ml_xgb", factory="mlw_xdcc.ml_xgb:MLXGB",
        description="gradient-boosted trees with one weight per label in each leaf (ML-XGB)",
        param_docs={**P, **thr}))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="br_xgb", factory="mlw_xdcc.ml_xgb:BRXGB",
        description="binary relevance of single-label boosters (the ML-XGB booster, L=1)",
        param_docs={**P, **thr}))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="cc_xgb", factory="mlw_xdcc.cc_xgb:CCXGB",
        description="greedy classifier chain of single-label boosters (the ML-XGB booster)",
        param_docs={**P, "order": "label order: None for random (random_state) or a "
                                  "permutation of range(L)"}))
