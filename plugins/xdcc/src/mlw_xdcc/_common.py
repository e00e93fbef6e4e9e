"""Pieces shared by the plugin's estimators: booster parameters, label densification,
feature augmentation that keeps CSR sparse."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.validation import dense_labels
from mlw_xdcc import _kernels as K
from mlw_xdcc._docs import BOOSTER_PARAM_DOCS
from mlw_xdcc.booster import BoosterParams

__all__ = ["BOOSTER_PARAM_DOCS", "BoostedParamsMixin", "augment", "dense_labels"]


def augment(X: Any, block: np.ndarray) -> Any:
    """``[X, block]``: dense stays dense; CSR stays CSR with NaN in ``block`` left
    absent (missing) and every other value, 0 included, stored explicitly."""
    block = np.asarray(block, dtype=np.float64)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        ptr, idx, dat = K.csr_append_dense(X.indptr.astype(np.int64),
                                           X.indices.astype(np.int32),
                                           X.data.astype(np.float64), int(X.shape[1]), block)
        return sp.csr_matrix((dat, idx, ptr), shape=(X.shape[0], X.shape[1] + block.shape[1]))
    return np.ascontiguousarray(np.hstack([X, block]))


class BoostedParamsMixin:
    """Turns the estimator's XGBoost-style parameters into :class:`BoosterParams`."""

    n_estimators: int
    max_depth: int
    learning_rate: float
    reg_lambda: float
    gamma: float
    min_child_weight: float
    subsample: float
    colsample_bytree: float
    split: str
    max_bin: int

    def _booster_params(self) -> BoosterParams:
        p = BoosterParams(n_estimators=self.n_estimators, max_depth=self.max_depth,
                          learning_rate=self.learning_rate, reg_lambda=self.reg_lambda,
                          gamma=self.gamma, min_child_weight=self.min_child_weight,
                          subsample=self.subsample, colsample_bytree=self.colsample_bytree,
                          split=self.split)
        p.validate()
        if int(self.max_bin) != self.max_bin or not 2 <= self.max_bin <= 65535:
            raise ValueError(f"max_bin must be an integer in [2, 65535], got {self.max_bin!r}")
        return p


#: parameter documentation shared by every learner of the plugin (for LearnerSpec)
