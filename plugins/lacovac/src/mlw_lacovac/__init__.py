"""mlw-lacovac: LaCovaC, LaCova, ML-C4.5 multi-label trees and a LaCovaC forest.

After Al-Otaibi, Kull and Flach, "Declaratively Capturing Local Label Correlations
with Multi-Label Trees", ECAI 2016.
"""

from mlw_lacovac.forest import LaCovaCForest
from mlw_lacovac.model import MLC45, LaCova, LaCovaC, MultiLabelTree

__all__ = ["LaCova", "LaCovaC", "LaCovaCForest", "MLC45", "MultiLabelTree"]
