"""mlw-plugin-template: a minimal third-party mlw plugin (one learner, one metric).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    from mlw_plugin_template.centroid import NearestCentroid
    from mlw_plugin_template.metric import cardinality_error
