"""Pieces shared by the plugin's estimators: label densification and feature
augmentation that keeps CSR sparse (the booster parameters are in :mod:`._params`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.validation import dense_labels
from mlw_xdcc import _kernels as K

__all__ = ["augment", "dense_labels"]


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
