"""Registers the baseline learners with mlw: ``br``, ``cc``, ``lp``, ``pcc``, the
ensembles ``rakel``, ``ecc``, ``epcc``, ``homer`` and the instance-based ``mlknn``,
``brknn``, ``iblr``."""

from __future__ import annotations

from collections.abc import Callable

import mlw
from mlw.registry import TOP_LABEL_DOC
from mlw_baselines._docs import BASE_ESTIMATOR_DOC, BASE_PARAMS_DOC

_RANDOM_STATE = "seed of the random chain order and of randomised shortcut classifiers"
_ORDER = ("chain order: None (the labels' own order), 'random' (drawn with random_state) "
          "or label indices as a list or a string \"2,0,1\"")
_N_JOBS = "models fitted in parallel by joblib (None: one at a time, -1: all cores)"
_THRESHOLD = ("thresholding strategy tuned in fit: fixed (0.5), pcut, cardinality, "
              "one_threshold, or a strategy object")
_SEED = "seed of the random draws and of randomised shortcut classifiers"
_K = "number of nearest neighbours"
_METRIC = ("euclidean (the papers') or cosine (text: only rows sharing a feature are "
           "neighbours)")
_BAGGING = {
    "n_estimators": "number of chains",
    "bootstrap": "each chain's sample drawn with replacement (bagging) or without",
    "max_samples": "sample size as a fraction of the training set",
}

#: The learners of issue 15: (name, "module:Class", description, parameter docs).
ADDED_LEARNERS: tuple[tuple[str, str, str, dict[str, str]], ...] = (
    ("rakel", "mlw_baselines.rakel:RandomKLabelsets",
     "RAkEL (Tsoumakas et al. 2011): label powersets on random k-labelsets, "
     "overlapping (RAkEL-o, voting) or disjoint (RAkEL-d)",
     {"base_estimator": BASE_ESTIMATOR_DOC, "base_params": BASE_PARAMS_DOC,
      "mode": "overlapping (RAkEL-o) or disjoint (RAkEL-d)",
      "labelset_size": "k, labels per labelset",
      "n_estimators": "RAkEL-o's number of labelsets (None: min(2L, C(L, k)))",
      "vote_threshold": "RAkEL-o predicts a label whose vote share is at least this",
      "random_state": _SEED, "n_jobs": _N_JOBS, "top_label": TOP_LABEL_DOC}),
    ("ecc", "mlw_baselines.chain_ensembles:EnsembleOfClassifierChains",
     "Ensemble of classifier chains (Read et al. 2011): random orders and bagging, "
     "averaged chain outputs thresholded",
     {"base_estimator": BASE_ESTIMATOR_DOC, "base_params": BASE_PARAMS_DOC, **_BAGGING,
      "voting": "soft (average the link probabilities) or hard (average 0/1 decisions)",
      "threshold": _THRESHOLD, "random_state": _SEED, "n_jobs": _N_JOBS}),
    ("epcc", "mlw_baselines.chain_ensembles:EnsembleOfProbabilisticClassifierChains",
     "Ensemble of probabilistic classifier chains (Dembczynski et al. 2010): the mode "
     "and marginals of the averaged joint distribution",
     {"base_estimator": BASE_ESTIMATOR_DOC, "base_params": BASE_PARAMS_DOC, **_BAGGING,
      "max_exact_labels": "exact inference of the mixture up to this many labels (<= 20), "
                          "beam candidates above",
      "beam_width": "prefixes kept per depth by each member's beam search",
      "random_state": _SEED, "n_jobs": _N_JOBS, "top_label": TOP_LABEL_DOC}),
    ("homer", "mlw_baselines.homer:HOMER",
     "HOMER (Tsoumakas et al. 2008): a tree of label clusters (balanced k-means) with a "
     "binary relevance per node",
     {"base_estimator": BASE_ESTIMATOR_DOC, "base_params": BASE_PARAMS_DOC,
      "n_clusters": "children per node (k >= 2)",
      "iterations": "balanced k-means iterations per node",
      "random_state": _SEED, "n_jobs": _N_JOBS, "top_label": TOP_LABEL_DOC}),
    ("mlknn", "mlw_baselines.knn:MLkNN",
     "ML-kNN (Zhang and Zhou 2007): Bayesian posterior from the labels of the k nearest "
     "neighbours",
     {"k": _K, "s": "smoothing of the prior and likelihood counts",
      "metric": _METRIC, "threshold": _THRESHOLD}),
    ("brknn", "mlw_baselines.knn:BRkNN",
     "BRkNN-a/-b (Spyromitros et al. 2008): neighbours' label shares, at least one label "
     "(a) or the neighbours' mean number of labels (b)",
     {"k": _K, "variant": "a or b", "metric": _METRIC,
      "top_label": "BRkNN-a's most confident label for a row with none: true, false or "
                   "auto (only when the training set has (almost) no empty label sets)"}),
    ("iblr", "mlw_baselines.knn:IBLR",
     "IBLR-ML (Cheng and Huellermeier 2009): logistic regression per label on the "
     "neighbours' label shares",
     {"k": _K, "metric": _METRIC,
      "add_features": "IBLR-ML+: the original features next to the neighbours' labels",
      "base_estimator": BASE_ESTIMATOR_DOC, "base_params": BASE_PARAMS_DOC,
      "threshold": _THRESHOLD, "n_jobs": _N_JOBS}),
)


#: The model state of the baselines (``LearnerSpec.model_types``, what ``mlw.load_model``
#: may reconstruct besides the learner's class): the stand-in for a constant label, the
#: members of the ensembles, HOMER's nodes, and the scikit-learn classes of the
#: ``base_estimator`` shortcuts. A model fitted with a
#: ``base_estimator`` object of another class loads with ``trusted=[its class]``.
_MODEL_TYPES = (
    "mlw_baselines._base_estimator:ConstantModel",
    # the ensembles (rakel, ecc, epcc, homer, iblr) hold the single-model learners
    "mlw_baselines.binary_relevance:BinaryRelevance",
    "mlw_baselines.classifier_chain:ClassifierChain",
    "mlw_baselines.probabilistic_chain:ProbabilisticClassifierChain",
    "mlw_baselines.label_powerset:LabelPowerset",
    "mlw_baselines.homer:HomerNode",
    "sklearn.pipeline:Pipeline",
    "sklearn.preprocessing:MaxAbsScaler",
    "sklearn.preprocessing:StandardScaler",
    "sklearn.linear_model:LogisticRegression",
    "sklearn.tree:DecisionTreeClassifier",
    "sklearn.tree._tree:Tree",
    "sklearn.ensemble:RandomForestClassifier",
    "sklearn.svm:LinearSVC",
    "sklearn.naive_bayes:BernoulliNB",
)


_BR_THRESHOLD = ("thresholding strategy tuned in fit (default cardinality:top_label=auto, the "
                 "core's DEFAULT_THRESHOLD): fixed (0.5), pcut, cardinality, one_threshold, "
                 "or a strategy object")
_CHAIN_THRESHOLD = ("none: the chain's own joint decision; else a thresholding strategy on "
                    "its marginals, tuned in fit (default cardinality:top_label=auto)")


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="br",
        factory="mlw_baselines.binary_relevance:BinaryRelevance",
        description="Binary relevance: one independent binary classifier per label",
        param_docs={
            "base_estimator": BASE_ESTIMATOR_DOC, "base_params": BASE_PARAMS_DOC,
            "threshold": _BR_THRESHOLD,
            "random_state": "seed of randomised shortcut classifiers (trees, forests, SVC)",
            "n_jobs": _N_JOBS,
        },
    ))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="cc",
        factory="mlw_baselines.classifier_chain:ClassifierChain",
        description="Classifier chain (Read et al.): each link sees the previous labels; "
                    "greedy joint prediction",
        param_docs={
            "base_estimator": BASE_ESTIMATOR_DOC, "base_params": BASE_PARAMS_DOC,
            "order": _ORDER,
            "random_state": _RANDOM_STATE,
            "n_jobs": _N_JOBS,
            "threshold": _CHAIN_THRESHOLD,
        },
    ))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="lp",
        factory="mlw_baselines.label_powerset:LabelPowerset",
        description="Label powerset: one multi-class classifier over the training label sets",
        param_docs={
            "base_estimator": BASE_ESTIMATOR_DOC, "base_params": BASE_PARAMS_DOC,
            "random_state": "seed of randomised shortcut classifiers (trees, forests, SVC)",
        },
    ))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="pcc",
        factory="mlw_baselines.probabilistic_chain:ProbabilisticClassifierChain",
        description="Probabilistic classifier chain: joint mode and marginals by exact "
                    "enumeration (L <= max_exact_labels) or beam search",
        param_docs={
            "base_estimator": BASE_ESTIMATOR_DOC, "base_params": BASE_PARAMS_DOC,
            "order": _ORDER,
            "random_state": _RANDOM_STATE,
            "n_jobs": _N_JOBS,
            "max_exact_labels": "exact inference over all 2^L label vectors up to this "
                                "many labels, beam search above",
            "beam_width": "prefixes kept per depth by beam search",
            "threshold": _CHAIN_THRESHOLD,
        },
    ))
    for name, target, description, docs in ADDED_LEARNERS:
        register(mlw.LearnerSpec(name=name, factory=target, description=description,
                                 param_docs=docs, model_types=_MODEL_TYPES))
