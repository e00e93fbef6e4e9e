"""Numba kernels of the LaCovaC family.

Everything here works on raw arrays: ``Y`` as CSR ``(indptr, indices)`` of the positive
labels, ``X`` as a dense float64 matrix (transposed, ``XT``, for the split search) or CSR
``(indptr, indices, data)`` with sorted indices. Validation is done by the Python
wrappers, never here.

- :mod:`.stats`: node label statistics, phi correlations, the label clustering;
- :mod:`.criterion`: the split criteria, evaluated per candidate in O(1) or close to it;
- :mod:`.split_dense`, :mod:`.split_sparse`: the split searches and row partitions;
- :mod:`.leaves`: leaf subset distributions, leaf probabilities, routing and prediction;
- :mod:`.build`: the whole tree in one call (:func:`~.build.grow_tree`);
- :mod:`.rng`: the forest's feature draws.

The functions below are the one-call forms of the searches (buffers allocated per call),
used by the Python reference builder and the tests.
"""

from __future__ import annotations

import numpy as np

from mlw_lacovac._kernels.criterion import (
    CRIT_ENTROPY,
    CRIT_LACOVA,
    CRIT_VARIANCE,
    both_F,
    context_buffers,
    float_criterion,
    moved_F,
    node_context,
    rest_F,
    state_buffers,
)
from mlw_lacovac._kernels.leaves import (
    HSPLIT,
    LEAF,
    VSPLIT,
    pack_nodes,
    route,
    walk_layout,
)
from mlw_lacovac._kernels.rng import draw_features
from mlw_lacovac._kernels.split_dense import (
    histogram_bins,
    partition_dense,
    rank_bins,
    search_buffers,
    search_dense,
    weighted_quantiles,
)
from mlw_lacovac._kernels.split_sparse import (
    ones_features,
    partition_sparse,
    search_sparse,
)
from mlw_lacovac._kernels.stats import (
    lacova_cov_threshold,
    local_labels,
    node_label_stats,
    phi_matrix,
    sum_abs_covariance,
    threshold_components,
    weight_sum,
)

__all__ = [
    "CRIT_ENTROPY", "CRIT_LACOVA", "CRIT_VARIANCE", "HSPLIT", "LEAF", "VSPLIT",
    "best_split_dense", "best_split_sparse", "draw_features",
    "histogram_bins", "lacova_cov_threshold", "local_labels", "node_label_stats",
    "ones_features",
    "partition_dense", "partition_mask_dense", "partition_mask_sparse", "partition_sparse",
    "pack_nodes", "phi_matrix", "rank_bins", "route", "split_quality", "sum_abs_covariance",
    "threshold_components", "walk_layout", "weight_sum", "weighted_quantiles",
]


def _context(tc, tC, w, rows, lptr):
    """The node context (:func:`~mlw_lacovac._kernels.criterion.node_context`) of the rows
    ``rows`` weighted ``w`` (None: 1 each)."""
    ctx = context_buffers(rows.size, tc.size)
    node_context(np.asarray(tc, np.float64), np.asarray(tC, np.float64), w, rows,
                 np.asarray(lptr, np.int64), weight_sum(w, rows), *ctx)
    return ctx


def _weights(weights):
    return None if weights is None else np.ascontiguousarray(weights, np.float64)


def best_split_dense(XT, xbin, rows, lptr, lidx, tc, tC, features, min_child, crit,
                     weights=None):
    """Best split of one node over ``features`` of a dense ``X`` (as ``XT``, (d, n));
    ``weights`` (one per row of ``X``, None: all 1) weigh the rows; see
    :func:`~mlw_lacovac._kernels.split_dense.search_dense`."""
    rows = np.asarray(rows, np.int64)
    tc = np.asarray(tc, np.float64)
    n = rows.size
    w = _weights(weights)
    ctx = _context(tc, tC, w, rows, lptr)
    nbins = int(xbin.max()) + 1 if xbin.size else 0
    return search_dense(XT, xbin, rows, w, np.asarray(lptr, np.int64),
                        np.asarray(lidx, np.int64), tc, np.asarray(features, np.int64),
                        np.asarray(min_child, np.int64), crit, *ctx, *state_buffers(tc.size),
                        *search_buffers(max(n, 1), nbins))


def best_split_sparse(x_indptr, x_indices, x_data, n_features, rows, lptr, lidx, tc, tC, fmask,
                      min_child, crit, xone=None, weights=None):
    """Best split of one node over the features with ``fmask`` of a CSR ``X``; ``xone``
    flags the features whose stored values are all 1 (computed from ``x_data`` when None);
    ``weights`` as for :func:`best_split_dense`; see
    :func:`~mlw_lacovac._kernels.split_sparse.search_sparse`."""
    rows = np.asarray(rows, np.int64)
    tc = np.asarray(tc, np.float64)
    if xone is None:
        xone = np.ones(n_features, np.bool_)
        xone[np.asarray(x_indices)[np.asarray(x_data) != 1.0]] = False
    w = _weights(weights)
    ctx = _context(tc, tC, w, rows, lptr)
    nnz = int(sum(x_indptr[r + 1] - x_indptr[r] for r in rows)) + 1
    d = int(n_features)
    return search_sparse(x_indptr, x_indices, x_data, rows, w, np.asarray(lptr, np.int64),
                         np.asarray(lidx, np.int64), tc, np.asarray(fmask, np.bool_), xone,
                         np.asarray(min_child, np.int64), crit, *ctx,
                         *state_buffers(tc.size), np.empty(d, np.int64), np.empty(d),
                         np.empty(d + 1, np.int64), np.empty(d, np.int64),
                         np.empty(nnz, np.int64), np.empty(nnz))


def split_quality(nl, cl, Cl, n, tc, tC, crit, form="auto"):
    """Weighted criterion of the split that puts the rows with counts ``cl``/``Cl``
    (``nl`` rows) on one side and the rest of the node (``n`` rows, counts ``tc``/``tC``)
    on the other, computed exactly (no bound). ``form`` picks how the sums of
    |covariances| are computed: "list" (the moved side's pairs, the rest from the node's
    ``G`` table plus corrections) or "loop" (one loop over the node's pairs)."""
    cl = np.asarray(cl, np.float64)
    tc = np.asarray(tc, np.float64)
    Cl = np.triu(np.asarray(Cl, np.float64), 1)
    a0, a1, a2 = float(cl.sum()), float((cl * cl).sum()), float((tc * cl).sum())
    if crit != CRIT_LACOVA:
        tot = np.array([tc.sum(), (tc * tc).sum(), 0, 0, 0, 0, n, 0], np.float64)
        return float_criterion(nl, n, a0, a1, a2, cl, tc, tot, crit)
    pj, pk, ptc, pidx, adj_ptr, adj_k, adj_p, adj_b, adj_w, gb, gtc, gpp, tot = _context(
        tc, tC, None, np.arange(n), np.zeros(n + 1, np.int64))
    P = int(tot[7])
    Cv = np.array([Cl[pj[p], pk[p]] for p in range(P)], np.float64)
    clf = cl.astype(np.float64)
    if np.any(Cl[np.triu(np.asarray(tC) == 0, 1)] != 0):
        raise ValueError("the moved side has a pair that never co-occurs in the node")
    mp = np.flatnonzero(Cv > 0).astype(np.int64)
    touched = np.flatnonzero(cl > 0).astype(np.int64)
    if form == "loop" or (form == "auto" and P == 0):
        fm, fr = both_F(nl, n, a0, a1, a2, clf, Cv, tc, pj, pk, ptc, tot, np.empty(tc.size))
    else:
        fm = moved_F(nl, a0, a1, clf, Cv, mp, mp.size, pj, pk)
        fr = rest_F(n - nl, a0, a1, a2, clf, Cv, touched, touched.size, tc, ptc, adj_ptr, adj_k,
                    adj_p, gb, gtc, gpp, tot)
    nr = n - nl
    vm = nl * a0 - a1
    vr = nr * (tot[0] - a0) - (tot[1] - 2 * a2 + a1)
    return (min(vm, fm) / nl + min(vr, fr) / nr) / n


def partition_mask_dense(X, rows, f, thr):
    """Boolean mask of the rows that go left (``x[f] <= thr``) of a dense ``X``."""
    return np.asarray(X)[np.asarray(rows), f] <= thr


def partition_mask_sparse(x_indptr, x_indices, x_data, rows, f, thr):
    """:func:`partition_mask_dense` for a CSR ``X``."""
    from mlw_lacovac._kernels.split_sparse import csr_value

    return np.array([csr_value(x_indptr, x_indices, x_data, int(r), f) <= thr for r in rows],
                    dtype=np.bool_)
