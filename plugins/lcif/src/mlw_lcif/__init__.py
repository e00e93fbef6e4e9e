"""mlw-lcif: LCIF, instance and feature neighbours for efficient multi-label
classification (Feremans, Cule, Vens and Goethals, DSAA 2017).

Learners ``lcif``, ``lcif2``, ``instance_knn`` and ``feature_knn``; hyper-parameter
search with cached neighbour lists in :func:`search_hyperparameters`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlw.lazy import attach

#: Public name -> defining module, imported on first use (PEP 562): importing the
#: package, as the plugin's registration does, loads no estimator, numba or
#: scikit-learn.
_LAZY = {
    "FeatureKNN": "mlw_lcif.model",
    "InstanceKNN": "mlw_lcif.model",
    "LCIF": "mlw_lcif.model",
    "LCIF2": "mlw_lcif.model",
    "search_hyperparameters": "mlw_lcif.search",
}

__all__ = [
    "FeatureKNN",
    "InstanceKNN",
    "LCIF",
    "LCIF2",
    "search_hyperparameters",
]


__getattr__, __dir__ = attach(__name__, _LAZY)


if TYPE_CHECKING:
    from mlw_lcif.model import LCIF, LCIF2, FeatureKNN, InstanceKNN
    from mlw_lcif.search import search_hyperparameters
