"""mlw-xdcc: gradient-boosted multi-label trees (ML-XGB), BR/CC with the same booster,
and dynamic classifier chains (XDCC), after Bohlender, Loza Mencía and Kulessa (DS 2020).

The learners are registered with mlw as ``xdcc``, ``ml_xgb``, ``br_xgb`` and ``cc_xgb``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlw.lazy import attach

__version__ = "0.1.0"

#: Public name -> defining module, imported on first use (PEP 562): importing the
#: package, as the plugin's registration does, loads no estimator, numba or
#: scikit-learn.
_LAZY = {
    "BRXGB": "mlw_xdcc.ml_xgb",
    "BoosterParams": "mlw_xdcc._params",
    "CCXGB": "mlw_xdcc.cc_xgb",
    "MLXGB": "mlw_xdcc.ml_xgb",
    "SPLIT_CRITERIA": "mlw_xdcc._params",
    "TreeEnsemble": "mlw_xdcc.booster",
    "XDCC": "mlw_xdcc.xdcc",
    "fit_ensemble": "mlw_xdcc.booster",
}

__all__ = [
    "BRXGB",
    "BoosterParams",
    "CCXGB",
    "MLXGB",
    "SPLIT_CRITERIA",
    "TreeEnsemble",
    "XDCC",
    "fit_ensemble",
]


__getattr__, __dir__ = attach(__name__, _LAZY)


if TYPE_CHECKING:
    from mlw_xdcc._params import SPLIT_CRITERIA, BoosterParams
    from mlw_xdcc.booster import TreeEnsemble, fit_ensemble
    from mlw_xdcc.cc_xgb import CCXGB
    from mlw_xdcc.ml_xgb import BRXGB, MLXGB
    from mlw_xdcc.xdcc import XDCC
