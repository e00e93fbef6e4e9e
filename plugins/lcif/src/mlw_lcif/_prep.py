"""Preprocessing shared by the LCIF learners and the hyper-parameter search:
feature scaling to [0, 1], the feature→label similarities and neighbourhoods, the
sim_ALL representation and the candidate scoring. The instance kNN searches are the
core's :mod:`mlw.neighbors`."""

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


def feature_label_similarities(Xs: sp.csr_matrix, Ycsr: sp.csr_matrix) -> sp.csr_matrix:
    """sim_FL(f_j, y) = f_j·y / (|f_j| |y|), the cosine between feature column j and label
    column y over the training rows, for every co-occurring pair: a CSR matrix
    (n_features, n_labels) with sorted indices; pairs that never co-occur are absent."""
    Yf = Ycsr.astype(np.float64)
    F = (Xs.T.tocsr() @ Yf).tocsr()
    f_sq = np.zeros(Xs.shape[1])
    np.add.at(f_sq, Xs.indices, Xs.data * Xs.data)
    l_sq = np.asarray(Yf.multiply(Yf).sum(axis=0)).ravel()
    inv_f = np.divide(1.0, np.sqrt(f_sq), out=np.zeros_like(f_sq), where=f_sq > 0)
    inv_l = np.divide(1.0, np.sqrt(l_sq), out=np.zeros_like(l_sq), where=l_sq > 0)
    rows = np.repeat(np.arange(F.shape[0]), np.diff(F.indptr))
    F.data = F.data * inv_f[rows] * inv_l[F.indices]
    F.data[F.data < 0] = 0.0  # features are in [0, 1]: nothing is negative
    F.eliminate_zeros()
    F.sort_indices()
    return F


def top_labels(F: sp.csr_matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
    """kNN(f_j): the k labels of highest similarity in every row of ``F``
    (:func:`feature_label_similarities`), best first, ties to the lower label; int32
    (n_features, k) padded with -1, and their similarities (0 where padded)."""
    n = F.shape[0]
    idx = np.full((n, k), -1, dtype=np.int32)
    sim = np.zeros((n, k))
    if F.nnz:
        rows = np.repeat(np.arange(n), np.diff(F.indptr))
        order = np.lexsort((F.indices, -F.data, rows))
        rank = np.arange(F.nnz) - F.indptr[rows[order]]
        keep = order[rank < k]
        r = rows[keep]
        pos = rank[rank < k]
        idx[r, pos] = F.indices[keep]
        sim[r, pos] = F.data[keep]
    return idx, sim


def feature_label_neighbours(Xs: sp.csr_matrix, Ycsr: sp.csr_matrix,
                             k: int) -> tuple[np.ndarray, np.ndarray]:
    """For every feature its k most cosine-similar labels over the training rows."""
    return top_labels(feature_label_similarities(Xs, Ycsr), k)


def sim_all_matrix(Xs: sp.csr_matrix, Ycsr: sp.csr_matrix) -> sp.csr_matrix:
    """Rows [x, y]: sim_ALL (Section III-A4) is the cosine over features and labels
    together, (x_i·x_j + Y_i·Y_j) / (|[x_i, Y_i]| |[x_j, Y_j]|). For 0/1 features this
    is the paper's printed formula, whose denominators are sqrt(|x|_1 + |Y|_1)."""
    Z = sp.hstack([Xs.astype(np.float64), Ycsr.astype(np.float64)], format="csr")
    Z.sort_indices()
    return Z


def score(nbr_idx: np.ndarray, nbr_sim: np.ndarray, k_ins: int, S: sp.csr_matrix,
          Q: sp.csr_matrix, fl_idx: np.ndarray, fl_sim: np.ndarray, k_feat: int,
          F: sp.csr_matrix | None, lam: float, n_labels: int, *,
          mean: bool = False) -> sp.csr_matrix:
    """lam * conf_INS + (1 - lam) * conf_FL over the candidate labels, as CSR. ``S`` are
    the training rows' votes (labels, or LCIF2's re-weighted scores), ``fl_idx`` /
    ``fl_sim`` the features' label neighbourhoods (the candidates of conf_FL), ``F`` the
    feature→label similarities (:func:`feature_label_similarities`): every non-zero
    feature votes for every candidate (the paper's printed conf_FL,
    ``feature_votes="all"``); ``F=None``: a feature votes only for its own
    neighbourhood, over the sum of all the query's feature values
    (``feature_votes="neighbours"``, and lam == 1) or, with ``mean``, over the sum of
    the voting features' values (``feature_votes="neighbour_mean"``)."""
    n = Q.shape[0]
    if F is not None:
        votes = K.VOTES_ALL
    else:
        votes = K.VOTES_MEAN if mean else K.VOTES_NEIGHBOURS
        F = sp.csr_matrix((Q.shape[1], n_labels))
    ip, ind, dat = K.score_candidates(
        nbr_idx, nbr_sim, int(k_ins), S.indptr.astype(np.int64), S.indices.astype(np.int32),
        S.data.astype(np.float64), Q.indptr.astype(np.int64), Q.indices.astype(np.int32),
        Q.data, fl_idx, fl_sim, int(k_feat), votes, F.indptr.astype(np.int64),
        F.indices.astype(np.int32), F.data.astype(np.float64), float(lam), int(n_labels),
        n_chunks(n))
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
                 np.zeros((1, 1)), 0, None, 1.0, L)
