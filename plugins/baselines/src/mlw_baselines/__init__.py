"""mlw-baselines: the reference multi-label learners every method is compared against.

- :class:`BinaryRelevance` (``br``): one binary classifier per label.
- :class:`ClassifierChain` (``cc``): a chain of binary classifiers, greedy inference.
- :class:`LabelPowerset` (``lp``): one multi-class classifier over the label sets.
- :class:`PCTForest` (``pct_forest``): a random forest of multi-output trees whose
  leaves give a joint distribution over the training label sets.
- :class:`ProbabilisticClassifierChain` (``pcc``): the chain as a joint model, exact
  inference up to 15 labels, beam search above.
- :class:`RandomKLabelsets` (``rakel``): RAkEL-o and RAkEL-d over label powersets.
- :class:`EnsembleOfClassifierChains` (``ecc``) and
  :class:`EnsembleOfProbabilisticClassifierChains` (``epcc``): chains on bootstrap
  samples with random orders; EPCC predicts the mode of their averaged joint.
- :class:`MLkNN` (``mlknn``), :class:`BRkNN` (``brknn``) and :class:`IBLR` (``iblr``):
  the instance-based baselines on :mod:`mlw.neighbors`.
- :class:`HOMER` (``homer``): a hierarchy of binary relevances over label clusters.

All take any scikit-learn classifier as ``base_estimator`` (see :data:`SHORTCUTS`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlw.lazy import attach

__version__ = "0.1.0"

#: Public name -> defining module, imported on first use (PEP 562): importing the
#: package, as the plugin's registration does, loads no estimator, numba or
#: scikit-learn.
_LAZY = {
    "BinaryRelevance": "mlw_baselines.binary_relevance",
    "BRkNN": "mlw_baselines.knn",
    "ClassifierChain": "mlw_baselines.classifier_chain",
    "ConstantModel": "mlw_baselines._base_estimator",
    "EnsembleOfClassifierChains": "mlw_baselines.chain_ensembles",
    "EnsembleOfProbabilisticClassifierChains": "mlw_baselines.chain_ensembles",
    "HOMER": "mlw_baselines.homer",
    "IBLR": "mlw_baselines.knn",
    "LabelPowerset": "mlw_baselines.label_powerset",
    "MLkNN": "mlw_baselines.knn",
    "PCTForest": "mlw_baselines.pct_forest",
    "PROBA_FLOOR": "mlw_baselines._base_estimator",
    "ProbabilisticClassifierChain": "mlw_baselines.probabilistic_chain",
    "RandomKLabelsets": "mlw_baselines.rakel",
    "SHORTCUTS": "mlw_baselines._base_estimator",
}

__all__ = [
    "BinaryRelevance",
    "BRkNN",
    "ClassifierChain",
    "ConstantModel",
    "EnsembleOfClassifierChains",
    "EnsembleOfProbabilisticClassifierChains",
    "HOMER",
    "IBLR",
    "LabelPowerset",
    "MLkNN",
    "PCTForest",
    "PROBA_FLOOR",
    "ProbabilisticClassifierChain",
    "RandomKLabelsets",
    "SHORTCUTS",
]


__getattr__, __dir__ = attach(__name__, _LAZY)


if TYPE_CHECKING:
    from mlw_baselines._base_estimator import PROBA_FLOOR, SHORTCUTS, ConstantModel
    from mlw_baselines.binary_relevance import BinaryRelevance
    from mlw_baselines.chain_ensembles import (
        EnsembleOfClassifierChains,
        EnsembleOfProbabilisticClassifierChains,
    )
    from mlw_baselines.classifier_chain import ClassifierChain
    from mlw_baselines.homer import HOMER
    from mlw_baselines.knn import IBLR, BRkNN, MLkNN
    from mlw_baselines.label_powerset import LabelPowerset
    from mlw_baselines.pct_forest import PCTForest
    from mlw_baselines.probabilistic_chain import ProbabilisticClassifierChain
    from mlw_baselines.rakel import RandomKLabelsets
