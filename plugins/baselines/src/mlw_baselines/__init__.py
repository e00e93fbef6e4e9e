"""mlw-baselines: the reference multi-label learners every method is compared against.

- :class:`BinaryRelevance` (``br``): one binary classifier per label.
- :class:`ClassifierChain` (``cc``): a chain of binary classifiers, greedy inference.
- :class:`LabelPowerset` (``lp``): one multi-class classifier over the label sets.
- :class:`ProbabilisticClassifierChain` (``pcc``): the chain as a joint model, exact
  inference up to 15 labels, beam search above.

All take any scikit-learn classifier as ``base_estimator`` (see :data:`SHORTCUTS`).
"""

from mlw_baselines._base_estimator import PROBA_FLOOR, SHORTCUTS, ConstantModel
from mlw_baselines.binary_relevance import BinaryRelevance
from mlw_baselines.classifier_chain import ClassifierChain
from mlw_baselines.label_powerset import LabelPowerset
from mlw_baselines.probabilistic_chain import ProbabilisticClassifierChain

__version__ = "0.1.0"

__all__ = [
    "PROBA_FLOOR",
    "SHORTCUTS",
    "BinaryRelevance",
    "ClassifierChain",
    "ConstantModel",
    "LabelPowerset",
    "ProbabilisticClassifierChain",
]
