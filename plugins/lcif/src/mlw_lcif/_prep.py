"""Preprocessing shared by the LCIF learners and the hyper-parameter search:
feature scaling to [0, 1], the feature→label neighbourhoods, the sim_ALL representation
and the candidate scoring. The kNN searches are the core's :mod:`mlw.neighbors`."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import get_num_threads

from mlw.neighbors import NeighborIndex
from mlw_lcif import _kernels as K


def n_chunks(n_rows: int) -> int:
    """Query chunks run in parallel: a few per thread, never more than the rows."""
    return max(1, min(n_rows, 4 * get_num_threads()))


class FeatureScaler:
    """Scale every feature to [0, 1] with statistics of the training data.

    Dense X: min-max per column, values outside the training range clipped. Sparse X:
    division by the column's largest absolute value (min taken as 0, so sparsity is
    kept), negative values clipped to 0. A feature that is constant (dense) or never
    non-zero (sparse) in training gets weight 0: it is ignored at prediction.
    """

    def fit(self, X: Any) -> FeatureScaler:
        self.sparse_ = sp.issparse(X)
        d = X.shape[1]
        if self.sparse_:
            hi = np.zeros(d)
            if X.nnz:
                np.maximum.at(hi, X.indices, np.abs(X.data))
            self.lo_ = np.zeros(d)
            span = hi
        else:
            self.lo_ = X.min(axis=0) if X.shape[0] else np.zeros(d)
            span = (X.max(axis=0) - self.lo_) if X.shape[0] else np.zeros(d)
        self.mul_ = np.where(span > 0, 1.0 / np.where(span > 0, span, 1.0), 0.0)
        return self

    def transform(self, X: Any) -> sp.csr_matrix:
        """The scaled features as a canonical float64 CSR matrix (zeros dropped)."""
        if sp.issparse(X):
            data = np.clip(X.data * self.mul_[X.indices], 0.0, 1.0)
            M = sp.csr_matrix((data, X.indices.copy(), X.indptr.copy()), shape=X.shape)
        else:
            D = np.clip((X - self.lo_) * self.mul_, 0.0, 1.0)
            D[:, self.mul_ == 0] = 0.0
            M = sp.csr_matrix(D)
        M.eliminate_zeros()
        M.sort_indices()
        return M


def feature_label_neighbours(Xs: sp.csr_matrix, Ycsr: sp.csr_matrix,
                             k: int) -> tuple[np.ndarray, np.ndarray]:
    """For every feature its k most cosine-similar labels over the training rows: a kNN
    search with the feature columns as queries and the label columns as the index
    (:mod:`mlw.neighbors`; positive similarities only, ties to the lower label). The
    general kernel: the 0/1 kernel's tiles pay off for many indexed rows per query, not
    for label columns (measured slower here)."""
    F = Xs.T.tocsr()
    F.sort_indices()
    labels = Ycsr.astype(np.float64).T.tocsr()
    labels.sort_indices()
    return NeighborIndex(labels, binary_kernel=False).query(F, k=k)


def sim_all_matrix(Xs: sp.csr_matrix, Ycsr: sp.csr_matrix) -> sp.csr_matrix:
    """Rows [x / |x|_1, y / |y|_1]: features and labels L1-normalised separately, so
    both halves weigh the same in sim_ALL (cosine over the concatenation)."""
    def l1(M: sp.csr_matrix) -> sp.csr_matrix:
        M = M.astype(np.float64)
        s = np.asarray(abs(M).sum(axis=1)).ravel()
        inv = np.where(s > 0, 1.0 / np.where(s > 0, s, 1.0), 0.0)
        return sp.csr_matrix(sp.diags(inv) @ M)
    Z = sp.hstack([l1(Xs), l1(Ycsr)], format="csr")
    Z.sort_indices()
    return Z


def score(nbr_idx: np.ndarray, nbr_sim: np.ndarray, k_ins: int, S: sp.csr_matrix,
          Q: sp.csr_matrix, fl_idx: np.ndarray, fl_sim: np.ndarray, k_feat: int,
          lam: float, n_labels: int) -> sp.csr_matrix:
    """lam * conf_INS + (1 - lam) * conf_FL over the candidate labels, as CSR."""
    n = Q.shape[0]
    ip, ind, dat = K.score_candidates(
        nbr_idx, nbr_sim, int(k_ins), S.indptr.astype(np.int64), S.indices.astype(np.int32),
        S.data.astype(np.float64), Q.indptr.astype(np.int64), Q.indices.astype(np.int32),
        Q.data, fl_idx, fl_sim, int(k_feat), float(lam), int(n_labels), n_chunks(n))
    return sp.csr_matrix((dat, ind, ip), shape=(n, n_labels))


def second_order_scores(Xs: sp.csr_matrix, Ycsr: sp.csr_matrix, k: int,
                        nbr: tuple[np.ndarray, np.ndarray] | None = None) -> sp.csr_matrix:
    """LCIF2's re-weighted label scores of every training instance: the
    sim_ALL-weighted vote of its k nearest training instances under sim_ALL, the
    instance itself included (it is its own nearest neighbour, sim_ALL = 1)."""
    if nbr is None:
        Z = sim_all_matrix(Xs, Ycsr)
        nbr = NeighborIndex(Z).query(k=k, exclude_self=False)
    n, L = Ycsr.shape
    empty_q = sp.csr_matrix((n, 1))
    no_fl = np.full((1, 1), -1, dtype=np.int32)
    return score(nbr[0], nbr[1], k, Ycsr.astype(np.float64), empty_q, no_fl,
                 np.zeros((1, 1)), 0, 1.0, L)
