"""mlw-plugin-template: a minimal third-party mlw plugin (one learner, one metric).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlw.lazy import attach

__version__ = "0.1.0"

#: Public name -> defining module, imported on first use (PEP 562): importing the
#: package, as the plugin's registration does, loads no estimator, numba or
#: scikit-learn.
_LAZY = {
    "NearestCentroid": "mlw_plugin_template.centroid",
    "cardinality_error": "mlw_plugin_template.metric",
}

__all__ = [
    "NearestCentroid",
    "cardinality_error",
]


__getattr__, __dir__ = attach(__name__, _LAZY)


if TYPE_CHECKING:
    from mlw_plugin_template.centroid import NearestCentroid
    from mlw_plugin_template.metric import cardinality_error
