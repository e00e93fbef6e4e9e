"""mlw-lacovac: LaCovaC, LaCova, ML-C4.5 multi-label trees and a LaCovaC forest.

After Al-Otaibi, Kull and Flach, "Declaratively Capturing Local Label Correlations
with Multi-Label Trees", ECAI 2016.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlw.lazy import attach

#: Public name -> defining module, imported on first use (PEP 562): importing the
#: package, as the plugin's registration does, loads no estimator, numba or
#: scikit-learn.
_LAZY = {
    "LaCova": "mlw_lacovac.model",
    "LaCovaC": "mlw_lacovac.model",
    "LaCovaCForest": "mlw_lacovac.forest",
    "MLC45": "mlw_lacovac.model",
    "MultiLabelTree": "mlw_lacovac.model",
}

__all__ = [
    "LaCova",
    "LaCovaC",
    "LaCovaCForest",
    "MLC45",
    "MultiLabelTree",
]


__getattr__, __dir__ = attach(__name__, _LAZY)


if TYPE_CHECKING:
    from mlw_lacovac.forest import LaCovaCForest
    from mlw_lacovac.model import MLC45, LaCova, LaCovaC, MultiLabelTree
