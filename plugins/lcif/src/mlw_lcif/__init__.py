"""mlw-lcif: LCIF, instance and feature neighbours for efficient multi-label
classification (Feremans, Cule, Vens and Goethals, DSAA 2017).

Learners ``lcif``, ``lcif2``, ``instance_knn`` and ``feature_knn``; hyper-parameter
search with cached neighbour lists in :func:`search_hyperparameters`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:
    from mlw_lcif.model import LCIF, LCIF2, FeatureKNN, InstanceKNN
    from mlw_lcif.search import search_hyperparameters
