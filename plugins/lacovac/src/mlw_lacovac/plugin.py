"""Registers the LaCovaC family with mlw."""

from __future__ import annotations

from collections.abc import Callable

import mlw
from mlw.registry import TOP_LABEL_DOC

_TREE = {
    "min_samples": "m: nodes with fewer rows are leaves (the paper's stopping rule)",
    "min_child": "smallest child of a horizontal split on a 0/1 feature (1: the paper's "
                 "Algorithm 1; the authors' code uses 2)",
    "min_child_numeric": "smallest child of a split on a numeric feature (None: m, as the "
                         "authors' code)",
    "alpha": "pseudo-count of the leaf joint distribution (log_proba_of) towards the "
             "independent Laplace marginals (0 = raw subset frequencies)",
    "marginals": "predict_proba: 'laplace' ((c+1)/(n+2) per leaf label, as the authors' "
                 "code) or 'joint' (marginals of the smoothed joint)",
}


#: The model state of the trees besides the learners' classes (``LearnerSpec.model_types``).
_MODEL_TYPES = ("mlw_lacovac._tree:Tree", "mlw_lacovac._leaves:LeafModels")


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    z = {"z": "normal quantile of the label-correlation test, lambda_n = z / sqrt(n - 1)"}
    threshold = {"threshold": "label sets from the marginals: 'pcut:top_label=auto' (the "
                              "paper's Pcut; a row it leaves empty gets its top label when "
                              "the training set has (almost) no empty label sets), 'pcut' "
                              "(Pcut alone), any strategy, or none (the leaf modes)"}
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="lacovac", factory="mlw_lacovac.model:LaCovaC",
        param_docs={**_TREE, **z, **threshold},
        description="LaCovaC multi-label tree: local phi-correlation label clustering "
                    "(vertical splits) and LaCova covariance splits (Al-Otaibi et al. 2016)"))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="lacova", factory="mlw_lacovac.model:LaCova",
        param_docs={**_TREE, "top_label": TOP_LABEL_DOC},
        description="LaCova multi-label tree: BR-like vertical split when the label "
                    "covariance is insignificant, else a covariance-criterion split"))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="ml_c45", factory="mlw_lacovac.model:MLC45", param_docs=_TREE,
        description="ML-C4.5 multi-label tree: splits minimise the sum of per-label "
                    "entropies; leaves hold label-subset distributions"))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="lacovac_forest", factory="mlw_lacovac.forest:LaCovaCForest",
        param_docs={**_TREE, **z,
                    "n_estimators": "number of trees",
                    "max_features": "features drawn per split: 'sqrt', 'log2', int, "
                                    "fraction or None (all)",
                    "bootstrap": "grow each tree on a bootstrap sample",
                    "random_state": "seed of the bootstrap and feature draws",
                    "n_jobs": "threads growing trees at once (None or 1: one, -1: one per "
                              "CPU); the forest is the same whatever n_jobs",
                    "top_label": TOP_LABEL_DOC},
        description="Bagged LaCovaC trees with random feature subsets; averages marginals "
                    "and votes on joint label vectors"))
