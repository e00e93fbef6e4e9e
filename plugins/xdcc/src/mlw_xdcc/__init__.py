"""mlw-xdcc: gradient-boosted multi-label trees (ML-XGB), BR/CC with the same booster,
and dynamic classifier chains (XDCC), after Bohlender, Loza Mencía and Kulessa (DS 2020).

The learners are registered with mlw as ``xdcc``, ``ml_xgb``, ``br_xgb`` and ``cc_xgb``.
"""

from mlw_xdcc.booster import SPLIT_CRITERIA, BoosterParams, TreeEnsemble, fit_ensemble
from mlw_xdcc.cc_xgb import CCXGB
from mlw_xdcc.ml_xgb import BRXGB, MLXGB
from mlw_xdcc.xdcc import XDCC

__all__ = ["BRXGB", "CCXGB", "MLXGB", "SPLIT_CRITERIA", "XDCC", "BoosterParams",
           "TreeEnsemble", "fit_ensemble"]
__version__ = "0.1.0"
