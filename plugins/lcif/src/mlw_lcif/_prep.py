"""Preprocessing shared by the LCIF learners and the hyper-parameter search:
feature scaling to [0, 1], the inverted index and the sim_ALL representation."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import get_num_threads

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


class InvertedIndex:
    """The training rows of a CSR matrix as an inverted index (CSC) with row norms.

    When every stored value is 1 (binary features, e.g. word presence) it also holds the
    layout of :func:`~mlw_lcif._kernels.knn_search_binary`: rows renumbered by decreasing
    inverse norm, cut into tiles of ``tile`` rows (a multiple of 64, at most 65,536),
    each tile with its own inverted index of uint16 local row numbers.
    """

    def __init__(self, M: sp.csr_matrix, *, tile: int = 16384) -> None:
        C = M.tocsc()
        C.sort_indices()
        self.indptr = C.indptr.astype(np.int64)
        self.rows = C.indices.astype(np.int32)
        self.data = C.data.astype(np.float64)
        self.norms = K.row_norms(M.indptr.astype(np.int64), M.data.astype(np.float64))
        self.n_rows = M.shape[0]
        self.binary = bool(M.nnz > 0 and np.all(M.data == 1.0))
        if self.binary:
            self._build_tiles(M, tile)

    def _build_tiles(self, M: sp.csr_matrix, tile: int) -> None:
        B = K.BINARY_BLOCK
        if tile % B or not 0 < tile <= 65536:
            raise ValueError(f"tile must be a positive multiple of {B} up to 65536, got {tile}")
        n, d = M.shape
        inv = np.zeros(n)
        np.divide(1.0, self.norms, out=inv, where=self.norms > 0)
        perm = np.argsort(-inv, kind="stable")  # shortest rows first, all-zero rows last
        t_inv = inv[perm]
        nb = -(-n // B)
        padded = np.zeros(nb * B)
        padded[:n] = t_inv
        n_tiles = -(-n // tile)
        # non-zeros in (tile, feature, row) order: column tile * d + feature, then CSC
        Mp = M[perm]
        tile_of_row = np.repeat(np.arange(n, dtype=np.int64) // tile, np.diff(Mp.indptr))
        W = sp.csr_matrix((np.ones(Mp.nnz, dtype=np.uint8), tile_of_row * d + Mp.indices,
                           Mp.indptr), shape=(n, n_tiles * d)).tocsc()
        tile_indptr = np.empty((n_tiles, d + 1), dtype=np.int64)
        tile_indptr[:, :d] = W.indptr[:-1].reshape(n_tiles, d)
        tile_indptr[:, d] = W.indptr[d::d]
        self.tile = tile
        self.perm = perm.astype(np.int32)
        self.t_inv = t_inv
        self.blk_inv = padded.reshape(nb, B).max(axis=1)
        self.tile_indptr = tile_indptr
        self.tile_rows = (W.indices % tile).astype(np.uint16)


def _binary_rows(Q: sp.csr_matrix) -> np.ndarray:
    """Rows of Q the binary kernel can take: 0/1 values and at most 255 non-zeros."""
    if Q.nnz and not np.all(Q.data == 1.0):
        return np.zeros(Q.shape[0], dtype=bool)
    return np.diff(Q.indptr) <= 255


def knn(Q: sp.csr_matrix, index: InvertedIndex, k: int, *, self_offset: int = -1,
        allowed: np.ndarray | None = None, block: int = 16384, q_block: int = 64,
        own: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The k most cosine-similar indexed rows of every row of Q, in blocks of queries
    (memory: one accumulator per chunk plus the (n, k) outputs). Query i never has
    indexed row ``i + self_offset`` (when ``self_offset >= 0``) or ``own[i]`` (when
    given; -1 for none): leave-one-out when the queries are indexed rows. Binary queries against
    a binary index go through :func:`~mlw_lcif._kernels.knn_search_binary` (same result,
    faster), the others through :func:`~mlw_lcif._kernels.knn_search`."""
    n = Q.shape[0]
    idx = np.full((n, k), -1, dtype=np.int32)
    sim = np.zeros((n, k), dtype=np.float64)
    mask = np.zeros(0, dtype=np.uint8) if allowed is None else allowed.astype(np.uint8)
    for start in range(0, n, block):
        B = Q[start:start + block]
        nb = B.shape[0]
        if own is not None:
            own_b = np.asarray(own[start:start + nb], dtype=np.int64)
        elif self_offset >= 0:
            own_b = np.arange(start, start + nb, dtype=np.int64) + self_offset
        else:
            own_b = np.full(nb, -1, dtype=np.int64)
        fast = _binary_rows(B) if index.binary else np.zeros(nb, dtype=bool)
        if fast.any():
            F = B[fast] if not fast.all() else B
            i, s = K.knn_search_binary(F.indptr.astype(np.int64), F.indices.astype(np.int32),
                                       own_b[fast], index.tile_indptr, index.tile_rows,
                                       index.t_inv, index.blk_inv, index.perm, k, mask,
                                       n_chunks(F.shape[0]), index.tile, q_block)
            idx[start:start + nb][fast] = i
            sim[start:start + nb][fast] = s
        if not fast.all():
            G = B[~fast] if fast.any() else B
            ip = G.indptr.astype(np.int64)
            norms = K.row_norms(ip, G.data)
            i, s = K.knn_search(ip, G.indices.astype(np.int32), G.data, norms, index.indptr,
                                index.rows, index.data, index.norms, k, own_b[~fast], mask,
                                n_chunks(G.shape[0]))
            idx[start:start + nb][~fast] = i
            sim[start:start + nb][~fast] = s
    return idx, sim


def feature_label_neighbours(Xs: sp.csr_matrix, Ycsr: sp.csr_matrix,
                             k: int) -> tuple[np.ndarray, np.ndarray]:
    """For every feature its k most cosine-similar labels over the training rows."""
    C = Xs.tocsc()
    C.sort_indices()
    f_norms = K.row_norms(C.indptr.astype(np.int64), C.data)  # same order as the kernel
    Yf = Ycsr.astype(np.float64)
    Yc = Yf.tocsc()
    l_norms = K.row_norms(Yc.indptr.astype(np.int64), Yc.data)
    return K.feature_label_topk(C.indptr.astype(np.int64), C.indices.astype(np.int32),
                                C.data, f_norms, Yf.indptr.astype(np.int64),
                                Yf.indices.astype(np.int32), Yf.data, l_norms,
                                Ycsr.shape[1], k, n_chunks(C.shape[1]))


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
        nbr = knn(Z, InvertedIndex(Z), k)
    n, L = Ycsr.shape
    empty_q = sp.csr_matrix((n, 1))
    no_fl = np.full((1, 1), -1, dtype=np.int32)
    return score(nbr[0], nbr[1], k, Ycsr.astype(np.float64), empty_q, no_fl,
                 np.zeros((1, 1)), 0, 1.0, L)
