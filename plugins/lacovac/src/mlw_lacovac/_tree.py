"""Growing a LaCovaC / LaCova / ML-C4.5 tree (Algorithms 1 and 2 of Al-Otaibi, Kull and
Flach, ECAI 2016) and the fitted tree structure.

The outer loop (one node at a time, an explicit work stack instead of recursion) is
Python; the per-node work (label statistics, phi correlations, connected components,
split search, partition) is in :mod:`mlw_lacovac._kernels`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw_lacovac import _kernels as K

METHODS = ("lacovac", "lacova", "ml_c45")


def lambda_n(n: int, z: float = 1.96) -> float:
    """LaCovaC's correlation threshold at a node of ``n`` rows: ``z / sqrt(n - 1)``
    (two labels are linked when ``|phi| > lambda_n``)."""
    if n < 2:
        raise ValueError(f"lambda_n needs at least 2 rows, got {n}")
    return float(z) / float(np.sqrt(n - 1.0))


@dataclass
class Leaf:
    """The label-subset distribution of the rows that reach a leaf.

    ``subsets[s]`` is an observed 0/1 assignment of ``labels`` (global label indices)
    seen ``counts[s]`` times among the ``n`` training rows of the leaf; subsets are
    ordered by decreasing count, ties by first appearance. ``frequencies`` (counts / n)
    sum to 1.
    """

    labels: np.ndarray
    subsets: np.ndarray
    counts: np.ndarray
    n: int

    @property
    def frequencies(self) -> np.ndarray:
        return self.counts / float(self.n)

    def label_counts(self) -> np.ndarray:
        return (self.subsets.astype(np.int64) * self.counts[:, None]).sum(axis=0)


@dataclass
class Tree:
    """A fitted multi-label tree, flattened.

    Node ``v`` has ``kind[v]`` (0 leaf, 1 horizontal split ``x[feature] <= threshold``
    -> first child else second, 2 vertical split: every child, each on its own label
    block), children ``children[child_ptr[v]:child_ptr[v+1]]``, the global ``labels``
    it models, its training size ``n_rows`` and, for leaves, ``leaf_id`` into
    ``leaves``. Node 0 is the root.
    """

    kind: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    child_ptr: np.ndarray
    children: np.ndarray
    leaf_id: np.ndarray
    n_rows: np.ndarray
    labels: list[np.ndarray]
    leaves: list[Leaf]
    max_leaves: int
    quality: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def n_nodes(self) -> int:
        return int(self.kind.size)

    def route(self, X: Any) -> np.ndarray:
        """Leaf ids reached by each row, shape (n, max_leaves), padded with -1."""
        if sp.issparse(X):
            return K.route_sparse(X.indptr, X.indices, X.data, X.shape[0], self.kind,
                                  self.feature, self.threshold, self.child_ptr,
                                  self.children, self.leaf_id, self.max_leaves)
        return K.route_dense(X, self.kind, self.feature, self.threshold, self.child_ptr,
                             self.children, self.leaf_id, self.max_leaves)


def binary_features(X: Any) -> np.ndarray:
    """Boolean mask of the columns of ``X`` whose values are all 0 or 1 (the loaders turn
    two-valued nominal attributes into such columns; sparse word features are too)."""
    d = X.shape[1]
    if sp.issparse(X):
        Xc = X.tocsr()
        bad = np.zeros(d, np.bool_)
        bad[Xc.indices[(Xc.data != 0) & (Xc.data != 1)]] = True
        return ~bad
    A = np.asarray(X)
    return np.all((A == 0) | (A == 1), axis=0)


def child_sizes(X: Any, min_child: int, min_child_numeric: int | None,
                min_samples: int) -> np.ndarray:
    """The smallest child of a horizontal split, per feature (int64, one per column):
    ``min_child`` for 0/1 features, ``min_child_numeric`` for the others (``None``: the
    node minimum ``min_samples``, as the authors' C4.5-based code does)."""
    numeric = min_samples if min_child_numeric is None else int(min_child_numeric)
    return np.where(binary_features(X), int(min_child), numeric).astype(np.int64)


def _make_leaf(y_indptr: np.ndarray, y_indices: np.ndarray, rows: np.ndarray,
               labels: np.ndarray, n_labels: int) -> Leaf:
    label_map = np.full(n_labels, -1, np.int64)
    label_map[labels] = np.arange(labels.size)
    ptr, idx = K.local_labels(y_indptr, y_indices, rows, label_map)
    dense = np.zeros((rows.size, labels.size), np.uint8)
    dense[np.repeat(np.arange(rows.size), np.diff(ptr)), idx] = 1
    seen: dict[bytes, int] = {}
    first: list[int] = []
    cnt: list[int] = []
    for i, key in enumerate(map(bytes, dense)):
        s = seen.get(key)
        if s is None:
            seen[key] = len(first)
            first.append(i)
            cnt.append(1)
        else:
            cnt[s] += 1
    counts = np.array(cnt, np.int64)
    order = np.argsort(-counts, kind="stable")  # ties keep the first appearance
    subsets = dense[np.array(first)[order]]
    return Leaf(labels=labels.copy(), subsets=np.ascontiguousarray(subsets),
                counts=counts[order].astype(np.int64), n=int(rows.size))


class TreeBuilder:
    """Grows one tree.

    Parameters
    ----------
    method : "lacovac", "lacova" or "ml_c45"
    min_samples : int
        m: a node with fewer rows is a leaf (the paper's stopping rule, nothing else).
    min_child : int or int array of one entry per feature
        The smallest number of rows each child of a horizontal split on a feature must
        keep (see :func:`child_sizes`); a scalar applies to every feature.
    z : float
        LaCovaC's clustering threshold is lambda_n = z / sqrt(n - 1).
    max_features : int or None
        Features drawn at random (without replacement) at each horizontal split
        (random-subspace forests); None uses all.
    rng : numpy Generator, used only with ``max_features``.
    max_bins : int or None
        Dense numeric features: only thresholds between values in different quantile
        bins (``max_bins`` per feature, fixed on the whole training set) are tried; None
        tries every midpoint. Sparse ``X`` always uses the exact scan.
    xbin : precomputed bins (see :func:`~mlw_lacovac._kernels.histogram_bins`).
    """

    def __init__(self, method: str, min_samples: int, min_child: Any = 1, z: float = 1.96,
                 max_features: int | None = None, rng: np.random.Generator | None = None,
                 max_bins: int | None = None, xbin: np.ndarray | None = None):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        self.method = method
        self.min_samples = int(min_samples)
        self.min_child = min_child
        self.z = float(z)
        self.max_features = max_features
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.max_bins = max_bins
        self.xbin = xbin
        self._all_features: np.ndarray | None = None

    # -- one node ----------------------------------------------------------------------
    def _features(self, d: int) -> np.ndarray:
        if self.max_features is None or self.max_features >= d:
            if self._all_features is None or self._all_features.size != d:
                self._all_features = np.arange(d, dtype=np.int64)
            return self._all_features
        return np.sort(self.rng.choice(d, size=self.max_features, replace=False)).astype(
            np.int64)

    def _groups(self, n: int, vary: np.ndarray, counts: np.ndarray, co: np.ndarray,
                clustered: bool) -> list[np.ndarray]:
        """The label blocks of a vertical split (one block: no vertical split)."""
        if clustered or vary.size < 2 or self.method == "ml_c45":
            return [vary]
        if self.method == "lacovac":
            R = K.phi_matrix(counts, co, n)
            comp = K.threshold_components(R, lambda_n(n, self.z))
            return [vary[comp == c] for c in range(int(comp.max()) + 1)]
        # lacova: independent labels (sum of |cov| under its critical value) -> BR-like
        if K.sum_abs_covariance(counts, co, n) <= K.lacova_cov_threshold(counts, n):
            return [vary[i:i + 1] for i in range(vary.size)]
        return [vary]

    def fit(self, X: Any, Y: sp.csr_matrix, rows: np.ndarray | None = None) -> Tree:
        n_total, d = X.shape
        n_labels = Y.shape[1]
        y_indptr = Y.indptr.astype(np.int64)
        y_indices = Y.indices.astype(np.int64)
        sparse_x = sp.issparse(X)
        if sparse_x:
            x_indptr = X.indptr.astype(np.int64)
            x_indices = X.indices.astype(np.int64)
            x_data = X.data
        m = self.min_samples
        min_child = np.broadcast_to(np.asarray(self.min_child, np.int64), (d,)).copy()
        if min_child.size and min_child.min() < 1:
            raise ValueError("min_child must be at least 1")
        # no feature can split a node with fewer rows than this
        split_floor = 2 * int(min_child.min()) if d else np.iinfo(np.int64).max
        xbin = np.zeros((0, 0), np.uint16)  # sparse X, or too many distinct values
        if sparse_x:
            pass
        elif self.xbin is not None:
            xbin = self.xbin
        elif self.max_bins:
            xbin = K.histogram_bins(X, int(self.max_bins))
        else:
            ranks = K.rank_bins(X)
            if ranks is not None:
                xbin = ranks
        XT = None if sparse_x else np.ascontiguousarray(X.T)

        kind: list[int] = []
        feature: list[int] = []
        threshold: list[float] = []
        quality: list[float] = []
        kids: list[list[int]] = []
        leaf_id: list[int] = []
        n_rows: list[int] = []
        node_labels: list[np.ndarray] = []
        leaves: list[Leaf] = []

        def new_node(rows_: np.ndarray, labels_: np.ndarray) -> int:
            kind.append(K.LEAF)
            feature.append(-1)
            threshold.append(0.0)
            quality.append(np.nan)
            kids.append([])
            leaf_id.append(-1)
            n_rows.append(int(rows_.size))
            node_labels.append(labels_)
            return len(kind) - 1

        def as_leaf(v: int, rows_: np.ndarray, labels_: np.ndarray) -> None:
            kind[v] = K.LEAF
            leaf_id[v] = len(leaves)
            leaves.append(_make_leaf(y_indptr, y_indices, rows_, labels_, n_labels))

        root_rows = np.arange(n_total, dtype=np.int64) if rows is None else rows.astype(
            np.int64)
        root_labels = np.arange(n_labels, dtype=np.int64)
        stack = [(new_node(root_rows, root_labels), root_rows, root_labels, False)]
        while stack:
            v, rws, labels, clustered = stack.pop()
            n = rws.size
            label_map = np.full(n_labels, -1, np.int64)
            label_map[labels] = np.arange(labels.size)
            counts, co = K.node_label_stats(y_indptr, y_indices, rws, label_map, labels.size)
            varying = (counts > 0) & (counts < n)
            if n < m or n < 2 or not varying.any():
                as_leaf(v, rws, labels)
                continue
            if varying.all():
                vary, vcounts, vco = labels, counts, co
            else:
                vi = np.flatnonzero(varying)
                vary = labels[vi]
                vcounts = counts[vi]
                vco = co[np.ix_(vi, vi)]
            groups = self._groups(n, vary, vcounts, vco, clustered)
            const = labels[~varying]
            if self.method != "ml_c45" and const.size:
                groups = groups + [const]
            if len(groups) > 1:
                kind[v] = K.VSPLIT
                pending = []
                for g in groups:
                    c = new_node(rws, g)
                    kids[v].append(c)
                    if g is const:
                        as_leaf(c, rws, g)
                    else:
                        pending.append((c, rws, g, True))
                stack.extend(reversed(pending))
                continue
            # horizontal split on the labels that vary here
            if self.method == "ml_c45":
                crit = K.CRIT_ENTROPY
            elif vary.size >= 2:
                crit = K.CRIT_LACOVA
            else:
                crit = K.CRIT_VARIANCE
            vmap = np.full(n_labels, -1, np.int64)
            vmap[vary] = np.arange(vary.size)
            lptr, lidx = K.local_labels(y_indptr, y_indices, rws, vmap)
            feats = self._features(d)
            if n < split_floor:
                f, t, q = -1, 0.0, np.inf
            elif sparse_x:
                fmask = np.zeros(d, np.bool_)
                fmask[feats] = True
                f, t, q = K.best_split_sparse(x_indptr, x_indices, x_data, d, rws, lptr,
                                              lidx, vcounts, vco, fmask, min_child, crit)
            else:
                f, t, q = K.best_split_dense(XT, xbin, rws, lptr, lidx, vcounts, vco, feats,
                                             min_child, crit)
            if f < 0:
                as_leaf(v, rws, labels)
                continue
            if crit == K.CRIT_ENTROPY:
                p = vcounts / n
                parent = float(-(p * np.log2(p) + (1 - p) * np.log2(1 - p)).sum())
                if q >= parent - 1e-12:  # C4.5 splits only on a positive gain
                    as_leaf(v, rws, labels)
                    continue
            if sparse_x:
                left = K.partition_sparse(x_indptr, x_indices, x_data, rws, f, t)
            else:
                left = K.partition_dense(X, rws, f, t)
            kind[v] = K.HSPLIT
            feature[v] = int(f)
            threshold[v] = float(t)
            quality[v] = float(q)
            lrows = rws[left]
            rrows = rws[~left]
            a = new_node(lrows, labels)
            b = new_node(rrows, labels)
            kids[v].extend([a, b])
            stack.append((b, rrows, labels, False))
            stack.append((a, lrows, labels, False))

        n_nodes = len(kind)
        child_ptr = np.zeros(n_nodes + 1, np.int64)
        child_ptr[1:] = np.cumsum([len(k) for k in kids])
        children = np.array([c for k in kids for c in k], dtype=np.int64)
        # the most leaves one row can reach: children are created after their parent
        reach = np.ones(n_nodes, np.int64)
        kinds = np.array(kind, np.int64)
        for v in range(n_nodes - 1, -1, -1):
            if kinds[v] == K.HSPLIT:
                reach[v] = max(reach[c] for c in kids[v])
            elif kinds[v] == K.VSPLIT:
                reach[v] = sum(reach[c] for c in kids[v])
        return Tree(kind=kinds, feature=np.array(feature, np.int64),
                    threshold=np.array(threshold, np.float64), child_ptr=child_ptr,
                    children=children, leaf_id=np.array(leaf_id, np.int64),
                    n_rows=np.array(n_rows, np.int64), labels=node_labels, leaves=leaves,
                    max_leaves=int(reach[0]), quality=np.array(quality, np.float64))
