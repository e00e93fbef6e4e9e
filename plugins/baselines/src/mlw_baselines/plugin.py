"""Registers the baseline learners ``br``, ``cc``, ``lp`` and ``pcc`` with mlw."""

from __future__ import annotations

from collections.abc import Callable

import mlw
from mlw_baselines._docs import BASE_ESTIMATOR_DOC

_RANDOM_STATE = "seed of the random chain order and of randomised shortcut classifiers"
_ORDER = ("chain order: None (the labels' own order), 'random' (drawn with random_state) "
          "or label indices as a list or a string \"2,0,1\"")
_N_JOBS = "models fitted in parallel by joblib (None: one at a time, -1: all cores)"


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec(
        name="br",
        factory="mlw_baselines.binary_relevance:BinaryRelevance",
        description="Binary relevance: one independent binary classifier per label",
        param_docs={
            "base_estimator": BASE_ESTIMATOR_DOC,
            "threshold": "thresholding strategy tuned in fit: fixed (0.5), pcut, "
                         "cardinality, one_threshold, or a strategy object",
            "random_state": "seed of randomised shortcut classifiers (trees, forests, SVC)",
            "n_jobs": _N_JOBS,
        },
    ))
    register(mlw.LearnerSpec(
        name="cc",
        factory="mlw_baselines.classifier_chain:ClassifierChain",
        description="Classifier chain (Read et al.): each link sees the previous labels; "
                    "greedy joint prediction",
        param_docs={
            "base_estimator": BASE_ESTIMATOR_DOC,
            "order": _ORDER,
            "random_state": _RANDOM_STATE,
            "n_jobs": _N_JOBS,
        },
    ))
    register(mlw.LearnerSpec(
        name="lp",
        factory="mlw_baselines.label_powerset:LabelPowerset",
        description="Label powerset: one multi-class classifier over the training label sets",
        param_docs={
            "base_estimator": BASE_ESTIMATOR_DOC,
            "random_state": "seed of randomised shortcut classifiers (trees, forests, SVC)",
        },
    ))
    register(mlw.LearnerSpec(
        name="pcc",
        factory="mlw_baselines.probabilistic_chain:ProbabilisticClassifierChain",
        description="Probabilistic classifier chain: joint mode and marginals by exact "
                    "enumeration (L <= max_exact_labels) or beam search",
        param_docs={
            "base_estimator": BASE_ESTIMATOR_DOC,
            "order": _ORDER,
            "random_state": _RANDOM_STATE,
            "n_jobs": _N_JOBS,
            "max_exact_labels": "exact inference over all 2^L label vectors up to this "
                                "many labels, beam search above",
            "beam_width": "prefixes kept per depth by beam search",
        },
    ))
