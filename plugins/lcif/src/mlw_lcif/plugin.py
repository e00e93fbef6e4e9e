"""Registers the LCIF learners with mlw."""

from __future__ import annotations

from collections.abc import Callable

import mlw

_COMMON = {
    "threshold": "thresholding strategy (default: cardinality matching, top-label rule on "
                 "unless over 1% of the training label sets are empty)",
    "cv": "if set, choose the hyper-parameters on the paper's grid by this many CV folds",
    "cv_metric": "metric the CV search maximises (accuracy, f1_example, f1_micro, "
                 "f1_macro, hamming_loss, subset_accuracy)",
    "random_state": "seed of the CV folds",
    "feature_norm": "max (features in [0, 1]), l2 (then unit-length feature columns), "
                    "or auto (chosen by the CV when cv is set, else max)",
    "threshold_sample": "training rows the cardinality threshold is fitted on (random, "
                        "seeded by random_state; None = all rows, the paper's procedure)",
}
_K_INS = {"k_ins": "number of nearest training instances (cosine similarity)"}
_K_FEAT = {"k_feat": "number of most similar labels kept per feature"}
_LAM = {"lam": "weight of the instance part in [0, 1] (1 - lam goes to the feature part)"}
_VOTES = {"feature_votes": "the reading of conf_FL: neighbour_mean (default: a label's "
                           "score is the mean similarity of the features that have it "
                           "among their k_feat labels; reproduces the paper's Table II), "
                           "all (the formula as printed: every non-zero feature votes for "
                           "every candidate label) or neighbours (votes as neighbour_mean, "
                           "divided by the sum over all the query's features)"}


#: The model state of the LCIF learners besides their classes (``LearnerSpec.model_types``;
#: the neighbour index is the core's ``mlw.neighbors.NeighborIndex``, declared by mlw).
_MODEL_TYPES = ("mlw_lcif._prep:FeatureScaler",)


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="lcif", factory="mlw_lcif.model:LCIF",
        description="LCIF: instance kNN + feature-label kNN, linearly combined "
                    "(Feremans et al. 2017)",
        param_docs={**_K_INS, **_K_FEAT, **_LAM, **_VOTES, **_COMMON}))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="lcif2", factory="mlw_lcif.model:LCIF2",
        description="LCIF2: LCIF whose instance neighbours vote with second-order "
                    "(sim_ALL re-weighted) label scores",
        param_docs={**_K_INS, **_K_FEAT, **_LAM, **_VOTES, **_COMMON}))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="instance_knn", factory="mlw_lcif.model:InstanceKNN",
        description="cosine-weighted instance kNN with a cardinality-matched threshold",
        param_docs={**_K_INS, **_COMMON}))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="feature_knn", factory="mlw_lcif.model:FeatureKNN",
        description="feature kNN: each feature votes for its most similar labels",
        param_docs={**_K_FEAT, **_VOTES, **_COMMON}))
