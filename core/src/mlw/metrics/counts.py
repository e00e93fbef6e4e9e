"""Confusion counts: the one pass over the label matrices that every label-set metric
is computed from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class ConfusionCounts:
    """Per-instance and per-label true positives, false positives and false negatives.

    Attributes
    ----------
    instance : (n, 3) int64 array of (tp, fp, fn) per instance (row)
    label : (L, 3) int64 array of (tp, fp, fn) per label (column)

    ``|true set| = tp + fn`` and ``|predicted set| = tp + fp``; true negatives are
    ``L - tp - fp - fn`` per instance and ``n - tp - fp - fn`` per label.
    """

    instance: np.ndarray
    label: np.ndarray

    @property
    def n_instances(self) -> int:
        return int(self.instance.shape[0])

    @property
    def n_labels(self) -> int:
        return int(self.label.shape[0])

    @property
    def micro(self) -> np.ndarray:
        """(tp, fp, fn) summed over the whole matrix."""
        return self.label.sum(axis=0)


def as_csr_labels(Y: Any) -> sp.csr_matrix:
    """A validated label matrix (dense uint8 or canonical CSR) as canonical CSR."""
    if sp.issparse(Y):
        return Y
    M = sp.csr_matrix(Y)
    M.eliminate_zeros()
    return M


def confusion_counts(Y_true: Any, Y_pred: Any) -> ConfusionCounts:
    """Counts of two validated label matrices (see :func:`mlw.validation.check_Y`).

    Two dense matrices are counted with numpy (boolean sums: exact, and nothing for
    numba to compile on a fresh install); otherwise both are handled as CSR by a numba
    kernel (a dense one is converted, never the other way round, so sparse stays
    sparse).
    """
    n, L = Y_true.shape
    if n == 0 or L == 0:
        raise ValueError(f"cannot evaluate a label matrix of shape {Y_true.shape}: it needs "
                         f"at least one instance and one label")
    if not sp.issparse(Y_true) and not sp.issparse(Y_pred):
        T = np.asarray(Y_true) != 0
        P = np.asarray(Y_pred) != 0
        both = T & P
        inst = np.empty((n, 3), dtype=np.int64)
        lab = np.empty((L, 3), dtype=np.int64)
        for out, axis in ((inst, 1), (lab, 0)):
            tp = both.sum(axis=axis, dtype=np.int64)
            out[:, 0] = tp
            out[:, 1] = P.sum(axis=axis, dtype=np.int64) - tp
            out[:, 2] = T.sum(axis=axis, dtype=np.int64) - tp
    else:
        from mlw.metrics import _kernels  # numba is imported by the first CSR count

        T = as_csr_labels(Y_true)
        P = as_csr_labels(Y_pred)
        inst, lab = _kernels.confusion_counts_csr(L, T.indptr, T.indices, P.indptr, P.indices)
    return ConfusionCounts(instance=inst, label=lab)
