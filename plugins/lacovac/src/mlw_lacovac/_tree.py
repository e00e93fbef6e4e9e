"""The fitted tree structure of LaCovaC / LaCova / ML-C4.5 (Algorithms 1 and 2 of
Al-Otaibi, Kull and Flach, ECAI 2016) and :class:`TreeBuilder`, which grows it in one
numba call (:func:`mlw_lacovac._kernels.build.grow_tree`).

:class:`mlw_lacovac._reference.ReferenceTreeBuilder` grows the same tree node by node in
Python; the tests pin the two equal, node for node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw_lacovac import _kernels as K
from mlw_lacovac._kernels.build import METHOD_LACOVA, METHOD_LACOVAC, METHOD_MLC45, grow_tree

METHODS = ("lacovac", "lacova", "ml_c45")
_METHOD_CODE = {"lacovac": METHOD_LACOVAC, "lacova": METHOD_LACOVA, "ml_c45": METHOD_MLC45}


def lambda_n(n: int, z: float = 1.96) -> float:
    """LaCovaC's correlation threshold at a node of ``n`` rows: ``z / sqrt(n - 1)``
    (Section 3.3, equation 2; two labels are linked when ``|phi| > lambda_n``)."""
    if n < 2:
        raise ValueError(f"lambda_n needs at least 2 rows, got {n}")
    return float(z) / float(np.sqrt(n - 1.0))


@dataclass
class Leaf:
    """The label-subset distribution of the rows that reach a leaf.

    ``subsets[s]`` is an observed 0/1 assignment of ``labels`` (global label indices)
    seen ``counts[s]`` times among the ``n`` training rows of the leaf (with
    ``sample_weight``: the weights of those rows, summed); subsets are ordered by
    decreasing count, ties by first appearance. ``frequencies`` (counts / n) sum to 1.
    """

    labels: np.ndarray
    subsets: np.ndarray
    counts: np.ndarray
    n: float

    @property
    def frequencies(self) -> np.ndarray:
        return self.counts / float(self.n)

    def label_counts(self) -> np.ndarray:
        return (self.subsets * self.counts[:, None]).sum(axis=0)


@dataclass
class Tree:
    """A fitted multi-label tree as flat arrays.

    Node ``v`` has ``kind[v]`` (0 leaf, 1 horizontal split ``x[feature] <= threshold``
    -> first child else second, 2 vertical split: every child, each on its own label
    block), children ``children[child_ptr[v]:child_ptr[v+1]]`` (consecutive ids, greater
    than ``v``), its training size ``n_rows`` (float: with ``sample_weight``, the weight
    of its training rows), the split's criterion value ``quality``
    (NaN elsewhere), the label set it models (``labels[v]``, stored as set
    ``node_lset[v]`` of ``lset_ptr``/``lset_lab``) and, for leaves, ``leaf_id`` into the
    leaf arrays: leaf ``l`` belongs to node ``leaf_node[l]``; its observed subsets are
    ``sub_count[leaf_sub_ptr[l]:leaf_sub_ptr[l+1]]`` times seen, as 0/1 rows of its
    block from ``sub_bits[leaf_bits_ptr[l]]`` on (see :attr:`leaves`). Node 0 is the
    root; ``max_leaves`` is the most leaves one row can reach.
    """

    kind: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    quality: np.ndarray
    child_ptr: np.ndarray
    children: np.ndarray
    n_rows: np.ndarray
    node_lset: np.ndarray
    leaf_id: np.ndarray
    lset_ptr: np.ndarray
    lset_lab: np.ndarray
    leaf_node: np.ndarray
    leaf_sub_ptr: np.ndarray
    leaf_bits_ptr: np.ndarray
    sub_count: np.ndarray
    sub_bits: np.ndarray
    max_leaves: int

    @property
    def n_nodes(self) -> int:
        return int(self.kind.size)

    @property
    def n_leaves(self) -> int:
        return int(self.leaf_node.size)

    def node_labels(self, v: int) -> np.ndarray:
        s = int(self.node_lset[v])
        return self.lset_lab[self.lset_ptr[s]:self.lset_ptr[s + 1]]

    @property
    def labels(self) -> list[np.ndarray]:
        """The global labels each node models."""
        return [self.node_labels(v) for v in range(self.n_nodes)]

    def leaf(self, lid: int) -> Leaf:
        """Leaf ``lid`` as a :class:`Leaf`."""
        labels = self.node_labels(int(self.leaf_node[lid]))
        a, b = self.leaf_sub_ptr[lid], self.leaf_sub_ptr[lid + 1]
        bits = self.sub_bits[self.leaf_bits_ptr[lid]:self.leaf_bits_ptr[lid + 1]]
        return Leaf(labels=labels, subsets=bits.reshape(b - a, labels.size),
                    counts=self.sub_count[a:b], n=float(self.n_rows[self.leaf_node[lid]]))

    @property
    def leaves(self) -> list[Leaf]:
        return [self.leaf(i) for i in range(self.n_leaves)]

    def leaf_labels(self) -> tuple[np.ndarray, np.ndarray]:
        """``(leaf_lab_ptr, leaf_labels)``: each leaf's block of global labels, flat."""
        sets = self.node_lset[self.leaf_node]
        sizes = self.lset_ptr[sets + 1] - self.lset_ptr[sets]
        ptr = np.zeros(self.n_leaves + 1, np.int64)
        np.cumsum(sizes, out=ptr[1:])
        idx = np.repeat(self.lset_ptr[sets] - ptr[:-1], sizes) + np.arange(ptr[-1])
        return ptr, self.lset_lab[idx]

    def route(self, X: Any) -> np.ndarray:
        """Leaf ids reached by each row, shape (n, max_leaves), padded with -1."""
        rec = K.pack_nodes(self.kind, self.feature, self.child_ptr, self.children,
                           self.leaf_id)
        ptr, labels = self.leaf_labels()
        nodes, vch, _, _, lptr, slot_leaf, lorig = K.walk_layout(
            rec, self.threshold, ptr, labels, np.zeros(labels.size),
            np.zeros(labels.size, np.uint8))
        return K.route(*x_arrays(X), X.shape[0], X.shape[1], nodes, vch, lptr, slot_leaf,
                       lorig, self.max_leaves)

    def same_as(self, other: Tree) -> bool:
        """Node for node the same tree (structure, splits, label sets and leaves; the
        criterion values to 1e-12)."""
        for name in ("kind", "feature", "threshold", "child_ptr", "children", "n_rows",
                     "leaf_id", "leaf_node", "leaf_sub_ptr", "sub_count", "sub_bits"):
            if not np.array_equal(getattr(self, name), getattr(other, name)):
                return False
        if self.max_leaves != other.max_leaves:
            return False
        if any(not np.array_equal(a, b) for a, b in zip(self.labels, other.labels,
                                                         strict=True)):
            return False
        return bool(np.allclose(self.quality, other.quality, rtol=0, atol=1e-12,
                                equal_nan=True))


def x_arrays(X: Any) -> tuple:
    """``(X, indptr, indices, data, sparse)`` for the routing kernels; the CSR arrays
    are None for dense ``X``, so the kernels compile no sparse path for it."""
    if sp.issparse(X):
        return (np.zeros((0, 0)), X.indptr, X.indices, X.data, True)
    return (X, None, None, None, False)


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
    seed : int
        Seed of the feature draws (used only with ``max_features``).
    max_bins : int or None
        Dense numeric features: only thresholds between values in different quantile
        bins (``max_bins`` per feature, fixed on the whole training set) are tried; None
        tries every midpoint. Sparse ``X`` always uses the exact scan.
    xbin : precomputed bins (see :func:`~mlw_lacovac._kernels.histogram_bins`), shared by
        the trees of a forest; ``xone`` likewise for sparse ``X`` (see
        :func:`~mlw_lacovac._kernels.ones_features`).
    """

    def __init__(self, method: str, min_samples: int, min_child: Any = 1, z: float = 1.96,
                 max_features: int | None = None, seed: int = 0,
                 max_bins: int | None = None, xbin: np.ndarray | None = None,
                 xone: np.ndarray | None = None):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        self.method = method
        self.min_samples = int(min_samples)
        self.min_child = min_child
        self.z = float(z)
        self.max_features = max_features
        self.seed = int(seed)
        self.max_bins = max_bins
        self.xbin = xbin
        self.xone = xone

    # -- shared preparation (also used by the reference builder) ----------------------
    def _prepare(self, X: Any, Y: sp.csr_matrix, rows: np.ndarray | None,
                 sample_weight: np.ndarray | None = None) -> dict:
        n_total, d = X.shape
        w = (None if sample_weight is None  # None: the kernels' unweighted specialisation
             else np.ascontiguousarray(sample_weight, np.float64))
        min_child = np.broadcast_to(np.asarray(self.min_child, np.int64), (d,)).copy()
        if min_child.size and min_child.min() < 1:
            raise ValueError("min_child must be at least 1")
        sparse_x = sp.issparse(X)
        xbin = np.zeros((0, 0), np.uint16)  # sparse X, or too many distinct values
        if not sparse_x:
            if self.xbin is not None:
                xbin = self.xbin
            elif self.max_bins:
                xbin = K.histogram_bins(X, int(self.max_bins), sample_weight)
            else:
                ranks = K.rank_bins(X)
                if ranks is not None:
                    xbin = ranks
        xone = np.zeros(d, np.bool_)
        if sparse_x:
            xone = self.xone if self.xone is not None else K.ones_features(X)
        k = -1 if self.max_features is None or self.max_features >= d else int(
            self.max_features)
        return dict(
            min_child=min_child, sparse=sparse_x, xbin=xbin, xone=xone,
            XT=np.zeros((0, 0)) if sparse_x else np.ascontiguousarray(X.T),
            x_indptr=X.indptr.astype(np.int64) if sparse_x else np.zeros(1, np.int64),
            x_indices=X.indices.astype(np.int64) if sparse_x else np.zeros(0, np.int64),
            x_data=X.data if sparse_x else np.zeros(0),
            y_indptr=Y.indptr.astype(np.int64), y_indices=Y.indices.astype(np.int64), w=w,
            n_labels=int(Y.shape[1]),
            rows=(np.arange(n_total, dtype=np.int64) if rows is None
                  else np.asarray(rows, np.int64)),
            split_floor=2 * int(min_child.min()) if d else np.iinfo(np.int64).max,
            max_features=k, rng_state=np.array([self.seed], np.uint64))

    def fit(self, X: Any, Y: sp.csr_matrix, rows: np.ndarray | None = None,
            sample_weight: np.ndarray | None = None) -> Tree:
        """Grow the tree on the rows ``rows`` of ``(X, Y)`` (all rows when None; a sorted
        array, repeats allowed for bootstrap samples). ``Y`` is CSR with sorted indices.
        ``sample_weight`` (positive, one per row of ``X``; None: all 1) weighs the rows
        as frequencies: a row of weight 2 counts as two rows everywhere (sizes, label
        counts, quantile bins), so integer weights grow the tree of the repeated rows."""
        return self._grow(self._prepare(X, Y, rows, sample_weight), None, self.seed)

    def fit_many(self, X: Any, Y: sp.csr_matrix, plans: list[tuple[np.ndarray, int]],
                 n_jobs: int = 1, sample_weight: np.ndarray | None = None) -> list[Tree]:
        """One tree per ``(rows, seed)`` of ``plans`` (a forest), on ``n_jobs`` threads:
        the builder releases the GIL, so the trees grow in parallel. The data are
        prepared (transposed, binned) once for all trees."""
        p = self._prepare(X, Y, None, sample_weight)
        if n_jobs <= 1 or len(plans) <= 1:
            return [self._grow(p, rows, seed) for rows, seed in plans]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(n_jobs, len(plans))) as pool:
            return list(pool.map(lambda plan: self._grow(p, *plan), plans))

    def _grow(self, p: dict, rows: np.ndarray | None, seed: int) -> Tree:
        # the arrays of the other layout are None: grow_tree compiles one path only
        dense = {k: None if p["sparse"] else p[k] for k in ("XT", "xbin")}
        csr = {k: p[k] if p["sparse"] else None
               for k in ("x_indptr", "x_indices", "x_data", "xone")}
        out = grow_tree(_METHOD_CODE[self.method], self.min_samples, p["min_child"], self.z,
                        p["split_floor"], dense["XT"], dense["xbin"], csr["x_indptr"],
                        csr["x_indices"], csr["x_data"], csr["xone"], p["y_indptr"],
                        p["y_indices"], p["w"], p["n_labels"],
                        p["rows"] if rows is None else np.asarray(rows, np.int64),
                        p["max_features"], np.array([seed], np.uint64))
        return Tree(*out[:-1], max_leaves=int(out[-1]))
