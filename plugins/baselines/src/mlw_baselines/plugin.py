"""Registers the baseline learners with mlw: ``br``, ``cc``, ``lp``, ``pcc``, the
ensembles ``rakel``, ``ecc``, ``epcc``, ``homer``, the forest ``pct_forest`` and the
instance-based ``mlknn``, ``brknn``, ``iblr``.

Each learner's parameters are documented in its class docstring, where ``mlw learners
NAME`` reads them.
"""

from __future__ import annotations

from collections.abc import Callable

import mlw

#: (name, "module:Class", description) of every baseline learner.
LEARNERS: tuple[tuple[str, str, str], ...] = (
    ("br", "mlw_baselines.binary_relevance:BinaryRelevance",
     "Binary relevance: one independent binary classifier per label"),
    ("cc", "mlw_baselines.classifier_chain:ClassifierChain",
     "Classifier chain (Read et al.): each link sees the previous labels; greedy joint "
     "prediction"),
    ("lp", "mlw_baselines.label_powerset:LabelPowerset",
     "Label powerset: one multi-class classifier over the training label sets"),
    ("pct_forest", "mlw_baselines.pct_forest:PCTForest",
     "Random forest of predictive clustering trees (RF-PCT): multi-output trees whose "
     "leaves give the joint over training label sets"),
    ("pcc", "mlw_baselines.probabilistic_chain:ProbabilisticClassifierChain",
     "Probabilistic classifier chain: joint mode and marginals by exact enumeration "
     "(L <= max_exact_labels) or beam search"),
    ("rakel", "mlw_baselines.rakel:RandomKLabelsets",
     "RAkEL (Tsoumakas et al. 2011): label powersets on random k-labelsets, "
     "overlapping (RAkEL-o, voting) or disjoint (RAkEL-d)"),
    ("ecc", "mlw_baselines.chain_ensembles:EnsembleOfClassifierChains",
     "Ensemble of classifier chains (Read et al. 2011): random orders and bagging, "
     "averaged chain outputs thresholded"),
    ("epcc", "mlw_baselines.chain_ensembles:EnsembleOfProbabilisticClassifierChains",
     "Ensemble of probabilistic classifier chains (Dembczynski et al. 2010): the mode "
     "and marginals of the averaged joint distribution"),
    ("homer", "mlw_baselines.homer:HOMER",
     "HOMER (Tsoumakas et al. 2008): a tree of label clusters (balanced k-means) with a "
     "binary relevance per node"),
    ("mlknn", "mlw_baselines.knn:MLkNN",
     "ML-kNN (Zhang and Zhou 2007): Bayesian posterior from the labels of the k nearest "
     "neighbours"),
    ("brknn", "mlw_baselines.knn:BRkNN",
     "BRkNN-a/-b (Spyromitros et al. 2008): neighbours' label shares, at least one label "
     "(a) or the neighbours' mean number of labels (b)"),
    ("iblr", "mlw_baselines.knn:IBLR",
     "IBLR-ML (Cheng and Huellermeier 2009): logistic regression per label on the "
     "neighbours' label shares"),
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


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    for name, target, description in LEARNERS:
        register(mlw.LearnerSpec(name=name, factory=target, description=description,
                                 model_types=_MODEL_TYPES))
