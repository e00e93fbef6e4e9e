"""Quantile binning of features (at most ``max_bin`` bins per feature).

Dense input: NaN is missing.  CSR input: an absent entry is missing (as in XGBoost),
so sparse text stays sparse: only the stored entries are binned.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mlw_xdcc import _kernels as K


def feature_edges(values: np.ndarray, max_bin: int,
                  weights: np.ndarray | None = None) -> np.ndarray:
    """Cut values of one feature from its present (non-missing) values.

    With at most ``max_bin`` distinct values every value gets its own bin (cut at each
    distinct value but the smallest); otherwise the cuts are the values at ranks
    ``ceil(k n / max_bin)``, ``k = 1 .. max_bin-1`` of the sorted values (an exact
    quantile sketch), deduplicated, so a feature never has more than ``max_bin`` bins.

    ``weights`` (one per value, >= 0): values of weight 0 are left out and the ranks
    count weight, ``n`` being the total weight, so an integer weight gives the cuts of
    the value repeated that many times.
    """
    present = ~np.isnan(values)
    if weights is not None:
        present &= weights > 0
        w = weights[present]
    v = values[present]
    if v.size == 0:
        return np.empty(0)
    if weights is None:
        v = np.sort(v)
    else:
        order = np.argsort(v, kind="stable")
        v, w = v[order], w[order]
    uniq = np.unique(v)
    if uniq.size <= max_bin:
        return uniq[1:].astype(np.float64)
    if weights is None:
        n = v.size
        ranks = np.minimum(n - 1, np.ceil(np.arange(1, max_bin) * n / max_bin).astype(np.int64))
    else:  # the value at weighted rank r is the first whose cumulative weight exceeds r
        cw = np.cumsum(w)
        r = np.ceil(np.arange(1, max_bin) * cw[-1] / max_bin)
        ranks = np.minimum(v.size - 1, np.searchsorted(cw, r, side="right"))
    cuts = np.unique(v[ranks])
    return cuts[cuts > v[0]].astype(np.float64)


@dataclass
class BinnedMatrix:
    """Features as bin codes, with the cut values that map raw values to bins."""

    dense: bool
    n_rows: int
    n_features: int
    codes: np.ndarray          # (n, d) uint16 when dense, else a (1, 1) placeholder
    indptr: np.ndarray         # CSR of codes when sparse, else placeholders
    indices: np.ndarray
    bins: np.ndarray
    edges: np.ndarray          # concatenated cut values
    edge_off: np.ndarray       # (d + 1,) offsets into edges
    feat_off: np.ndarray       # (d + 1,) offsets of each feature's bins in a histogram

    def kernel_layout(self) -> tuple[np.ndarray | None, np.ndarray | None,
                                     np.ndarray | None, np.ndarray | None]:
        """``(codes, indptr, indices, bins)`` for the tree kernels: the other layout's
        arrays are ``None``, so numba compiles only this layout's branches."""
        if self.dense:
            return self.codes, None, None, None
        return None, self.indptr, self.indices, self.bins

    @property
    def total_bins(self) -> int:
        return int(self.feat_off[-1])

    def present_features(self) -> np.ndarray:
        """(d,) bool: the features with a present value in some row.  A feature
        missing in every row (the chain's label-feature of a label no row has
        propagated yet) can never be split on, so the booster leaves it out of its
        histograms and split search."""
        if self.dense:
            return (self.codes != K.MISSING).any(axis=0)
        out = np.zeros(self.n_features, dtype=np.bool_)
        out[self.indices[self.bins != K.MISSING]] = True
        return out

    def threshold(self, f: int, b: int) -> float:
        """The raw cut of "bin <= b goes left" on feature f (inf: all present go left)."""
        lo, hi = self.edge_off[f], self.edge_off[f + 1]
        return float(self.edges[lo + b]) if lo + b < hi else float("inf")


def _offsets(edge_off: np.ndarray) -> np.ndarray:
    n_edges = np.diff(edge_off)
    return np.concatenate([[0], np.cumsum(n_edges + 1)]).astype(np.int64)


def cuts_of(X: np.ndarray | sp.csr_matrix, max_bin: int,
            sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated cut values and their offsets, one block per feature (each from
    :func:`feature_edges`, with the rows' ``sample_weight`` when given)."""
    if not 2 <= max_bin <= 65535:
        raise ValueError(f"max_bin must be in [2, 65535], got {max_bin}")
    d = X.shape[1]
    per: list[np.ndarray] = []
    w = sample_weight
    if sp.issparse(X):
        C = sp.csc_matrix(X)
        for f in range(d):
            lo, hi = C.indptr[f], C.indptr[f + 1]
            per.append(feature_edges(C.data[lo:hi], max_bin,
                                     None if w is None else w[C.indices[lo:hi]]))
    else:
        for f in range(d):
            per.append(feature_edges(X[:, f], max_bin, w))
    edge_off = np.concatenate([[0], np.cumsum([len(e) for e in per])]).astype(np.int64)
    edges = np.concatenate(per) if per else np.empty(0)
    return edges.astype(np.float64), edge_off


def bin_dense(X: np.ndarray, edges: np.ndarray, edge_off: np.ndarray,
              out: np.ndarray) -> None:
    """Bin codes of a dense float64 matrix into ``out`` (uint16, NaN -> MISSING): a
    present value ``x`` of feature ``f`` gets ``#{edges_f <= x}``.  numpy's
    ``searchsorted`` per feature rather than a numba kernel: nothing to compile on a
    fresh install (the kernel cost ~0.4 s CPU of the first ``mlw fit``), for ~1.5x the
    kernel's warm time (0.15 vs 0.11 s CPU on 20,000 x 100), once per fit."""
    for f in range(X.shape[1]):
        col = X[:, f]
        out[:, f] = np.searchsorted(edges[edge_off[f]:edge_off[f + 1]], col, side="right")
        out[np.isnan(col), f] = K.MISSING


def bin_matrix(X: np.ndarray | sp.csr_matrix, edges: np.ndarray,
               edge_off: np.ndarray) -> BinnedMatrix:
    """Bin ``X`` with given cuts (dense stays dense, CSR stays CSR)."""
    n, d = X.shape
    feat_off = _offsets(edge_off)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        bins = np.empty(X.data.shape[0], dtype=np.uint16)
        indptr = X.indptr.astype(np.int64)
        indices = X.indices.astype(np.int32)
        K.bin_sparse(indptr, indices, X.data.astype(np.float64), edges, edge_off, bins)
        return BinnedMatrix(False, n, d, np.zeros((1, 1), np.uint16), indptr, indices, bins,
                            edges, edge_off, feat_off)
    codes = np.empty((n, d), dtype=np.uint16)
    bin_dense(np.ascontiguousarray(X, dtype=np.float64), edges, edge_off, codes)
    return BinnedMatrix(True, n, d, codes, np.zeros(1, np.int64), np.zeros(1, np.int32),
                        np.zeros(1, np.uint16), edges, edge_off, feat_off)


def append_binary_block(B: BinnedMatrix, block: np.ndarray) -> BinnedMatrix:
    """``B`` with extra features from a dense (n, k) block of 0/1 values or NaN
    (missing), each with the fixed cut 1.0 (bins: 0 -> 0, 1 -> 1)."""
    n, k = block.shape
    edges = np.concatenate([B.edges, np.ones(k)])
    edge_off = np.concatenate([B.edge_off, B.edge_off[-1] + np.arange(1, k + 1)]).astype(np.int64)
    feat_off = _offsets(edge_off)
    codes_blk = np.where(np.isnan(block), K.MISSING, block).astype(np.uint16)
    if B.dense:
        codes = np.ascontiguousarray(np.hstack([B.codes, codes_blk]))
        return BinnedMatrix(True, n, B.n_features + k, codes, B.indptr, B.indices, B.bins,
                            edges, edge_off, feat_off)
    fblock = np.where(np.isnan(block), np.nan, codes_blk.astype(np.float64))
    ptr, idx, dat = K.csr_append_dense(B.indptr, B.indices, B.bins.astype(np.float64),
                                       B.n_features, fblock)
    return BinnedMatrix(False, n, B.n_features + k, B.codes, ptr, idx.astype(np.int32),
                        dat.astype(np.uint16), edges, edge_off, feat_off)


def append_block(B: BinnedMatrix, block: np.ndarray, edges_blk: np.ndarray,
                 edge_off_blk: np.ndarray) -> BinnedMatrix:
    """``B`` with extra features from a dense (n, k) block of raw values (NaN:
    missing), binned with the block's own cuts (``cuts_of(block_of_the_training_rows,
    max_bin)``); a tree's thresholds on them are raw values, as for any feature."""
    n, k = block.shape
    edges = np.concatenate([B.edges, edges_blk])
    edge_off = np.concatenate([B.edge_off, B.edge_off[-1] + edge_off_blk[1:]]).astype(np.int64)
    feat_off = _offsets(edge_off)
    codes_blk = np.empty((n, k), dtype=np.uint16)
    bin_dense(np.ascontiguousarray(block, dtype=np.float64), edges_blk, edge_off_blk,
                codes_blk)
    if B.dense:
        codes = np.ascontiguousarray(np.hstack([B.codes, codes_blk]))
        return BinnedMatrix(True, n, B.n_features + k, codes, B.indptr, B.indices, B.bins,
                            edges, edge_off, feat_off)
    fblock = np.where(np.isnan(block), np.nan, codes_blk.astype(np.float64))
    ptr, idx, dat = K.csr_append_dense(B.indptr, B.indices, B.bins.astype(np.float64),
                                       B.n_features, fblock)
    return BinnedMatrix(False, n, B.n_features + k, B.codes, ptr, idx.astype(np.int32),
                        dat.astype(np.uint16), edges, edge_off, feat_off)
