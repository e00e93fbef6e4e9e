"""ML-XGB: second-order gradient boosting of trees with one weight per label.

This module is the engine shared by every learner of the plugin (``ml_xgb``,
``br_xgb``, ``cc_xgb``, ``xdcc``): :func:`fit_ensemble` grows the trees on binned
features, :class:`TreeEnsemble` holds them as flat arrays (inspectable: every node's
feature, raw threshold, default direction, gain and per-label weights) and predicts
from raw dense or CSR features.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw_xdcc import _kernels as K
from mlw_xdcc._params import SPLIT_CRITERIA, BoosterParams
from mlw_xdcc.binning import BinnedMatrix

__all__ = ["SPLIT_CRITERIA", "BoosterParams", "TreeEnsemble", "fit_ensemble", "pool_slots",
           "prior_margin"]


@dataclass
class TreeEnsemble:
    """Boosted trees as flat arrays; tree ``t`` starts at node ``roots[t]``.

    Internal nodes send a present value ``x`` left when ``x < threshold``, a missing one
    to the ``default_left`` side; ``left == -1`` marks a leaf.  ``value`` holds every
    node's per-label weight (learning rate applied); leaves' weights are the output.
    """

    base_margin: np.ndarray
    roots: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    feature: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    threshold: np.ndarray = field(default_factory=lambda: np.zeros(0))
    default_left: np.ndarray = field(default_factory=lambda: np.zeros(0, np.bool_))
    left: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    right: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    gain: np.ndarray = field(default_factory=lambda: np.zeros(0))
    value: np.ndarray = field(default_factory=lambda: np.zeros((0, 1)))
    n_features: int = 0

    @property
    def n_trees(self) -> int:
        return int(self.roots.shape[0])

    def depth_reached(self) -> int:
        """The depth of the deepest node over all trees (0: only roots).  A refit with
        any ``max_depth >= depth_reached()`` grows the very same trees, since no node at
        that depth was split."""
        depth = np.zeros(self.feature.shape[0], dtype=np.int64)
        internal = np.flatnonzero(self.left >= 0)     # parents come before children
        for i in internal:
            depth[self.left[i]] = depth[self.right[i]] = depth[i] + 1
        return int(depth.max()) if depth.size else 0

    def tree(self, t: int) -> dict[str, np.ndarray]:
        """Tree ``t`` as arrays with node ids relative to its root (for inspection)."""
        lo = int(self.roots[t])
        hi = int(self.roots[t + 1]) if t + 1 < self.n_trees else int(self.feature.shape[0])
        rel = lambda a: np.where(a >= 0, a - lo, -1)  # noqa: E731
        return {"feature": self.feature[lo:hi], "threshold": self.threshold[lo:hi],
                "default_left": self.default_left[lo:hi], "left": rel(self.left[lo:hi]),
                "right": rel(self.right[lo:hi]), "gain": self.gain[lo:hi],
                "value": self.value[lo:hi]}

    def decision_function(self, X: Any, n_trees: int | None = None) -> np.ndarray:
        """Margins (log-odds) of the first ``n_trees`` trees (all by default)."""
        t1 = self.n_trees if n_trees is None else int(n_trees)
        n = X.shape[0]
        out = np.tile(self.base_margin, (n, 1))
        if t1 == 0 or n == 0:
            return out
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            K.predict_sparse(X.indptr.astype(np.int64), X.indices.astype(np.int32),
                             X.data.astype(np.float64), int(X.shape[1]), self.roots, 0, t1,
                             self.feature, self.threshold, self.default_left, self.left,
                             self.value, out)
        else:
            K.predict_dense(np.ascontiguousarray(X, dtype=np.float64), self.roots, 0, t1,
                            self.feature, self.threshold, self.default_left, self.left,
                            self.value, out)
        return out

    def predict_proba(self, X: Any, n_trees: int | None = None) -> np.ndarray:
        return _sigmoid(self.decision_function(X, n_trees))

    def staged_decision_function(self, X: Any, n_trees: Sequence[int]) -> Iterator[np.ndarray]:
        """Margins of the first ``k`` trees for each ``k`` of the increasing ``n_trees``,
        in one pass (every tree is walked once).  Trees are added in the same order as
        :meth:`decision_function` adds them, so each yielded matrix is bit-identical to
        ``decision_function(X, k)``; and since boosting round ``t`` only depends on the
        trees before it, to the margins of a fresh fit with ``k`` rounds."""
        ks = [int(k) for k in n_trees]
        if any(b <= a for a, b in zip(ks, ks[1:], strict=False)) or (ks and ks[0] < 0):
            raise ValueError(f"n_trees must be increasing and >= 0, got {list(n_trees)!r}")
        if ks and ks[-1] > self.n_trees:
            raise ValueError(f"the ensemble has {self.n_trees} trees, asked for {ks[-1]}")
        n = X.shape[0]
        out = np.tile(self.base_margin, (n, 1))
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            ptr, idx = X.indptr.astype(np.int64), X.indices.astype(np.int32)
            dat = X.data.astype(np.float64)
        else:
            X = np.ascontiguousarray(X, dtype=np.float64)
        t0 = 0
        for k in ks:
            if k > t0 and n:
                if sp.issparse(X):
                    K.predict_sparse(ptr, idx, dat, int(X.shape[1]), self.roots, t0, k,
                                     self.feature, self.threshold, self.default_left,
                                     self.left, self.value, out)
                else:
                    K.predict_dense(X, self.roots, t0, k, self.feature, self.threshold,
                                    self.default_left, self.left, self.value, out)
            t0 = k
            yield out.copy()


def _sigmoid(m: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-m))


def prior_margin(Y: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Base margins from the label priors: logit of each label's training frequency
    (weighted by ``sample_weight`` when given), clipped to [1e-6, 1 - 1e-6]."""
    freq = Y.mean(axis=0) if sample_weight is None else (
        sample_weight @ Y / sample_weight.sum())
    p = np.clip(freq, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def pool_slots(n: int, depth: int) -> int:
    """Histogram buffers one tree on ``n`` rows can hold at once (``K.grow_tree``): one
    per level where the walk went into the smaller child (at most log2(n) + 1 levels,
    and at most ``depth``), the current node's and the smaller child's being built."""
    return int(min(depth, np.ceil(np.log2(max(n, 2))) + 1)) + 3


_ROOT = np.zeros(1, dtype=np.int64)


@dataclass
class CodeMatrix:
    """A binned matrix's codes as float64 (``MISSING`` -> NaN), dense or CSR, so that
    the prediction kernels walk a tree grown on the bins: in code space "bin <= b goes
    left" is the raw test ``code < b + 1``.  Training then adds each new tree's leaf
    values with the very kernel that predicts, and a fresh install compiles one tree
    walk, not two (~0.35 s CPU of the first ``mlw fit``)."""

    dense: np.ndarray | None
    indptr: np.ndarray | None = None
    indices: np.ndarray | None = None
    data: np.ndarray | None = None
    n_features: int = 0

    @classmethod
    def of(cls, B: BinnedMatrix) -> CodeMatrix:
        if B.dense:
            return cls(np.where(B.codes == K.MISSING, np.nan, B.codes.astype(np.float64)))
        return cls(None, B.indptr, B.indices,
                   np.where(B.bins == K.MISSING, np.nan, B.bins.astype(np.float64)),
                   B.n_features)

    def add_tree(self, k: int, node_feat: np.ndarray, node_bin: np.ndarray,
                 node_dl: np.ndarray, node_left: np.ndarray, node_value: np.ndarray,
                 margin: np.ndarray) -> None:
        """Add the leaf values of the tree of ``k`` nodes (node arrays as
        :func:`K.grow_tree` fills them) to ``margin``, row by row."""
        thr = node_bin[:k] + 1.0
        if self.dense is not None:
            K.predict_dense(self.dense, _ROOT, 0, 1, node_feat[:k], thr, node_dl[:k],
                            node_left[:k], node_value[:k], margin)
        else:
            K.predict_sparse(self.indptr, self.indices, self.data, self.n_features, _ROOT,
                             0, 1, node_feat[:k], thr, node_dl[:k], node_left[:k],
                             node_value[:k], margin)


def fit_ensemble(B: BinnedMatrix, Y: np.ndarray, params: BoosterParams, *,
                 seed: int = 0, mask: np.ndarray | None = None,
                 base_margin: np.ndarray | None = None,
                 sample_weight: np.ndarray | None = None) -> tuple[TreeEnsemble, np.ndarray]:
    """Boost ``params.n_estimators`` trees on binned features ``B`` for the 0/1 labels
    ``Y`` (dense uint8, (n, L)); ``params`` as validated by
    :meth:`BoosterParams.booster_params` (``max_bin`` and ``random_state`` are not used
    here: the features are binned already and ``seed`` draws the subsamples).

    ``mask`` (uint8, (n, L)) zeroes the gradient and hessian of an instance's label
    where it is 0 (the dynamic chain's separate-and-conquer).  Returns the ensemble and
    the final training margins.

    ``sample_weight`` (float64, (n,), >= 0, as the core validated it) multiplies each
    row's gradients and hessians and weighs the label priors; rows of weight 0 are
    left out of every tree (and out of the subsample draws), as if dropped, though their
    training margins are still computed.  The instance-count column of the gradient
    rows stays 1 per row: it only tells whether a child has rows.  So an integer weight
    acts as that many copies of the row (the quantile cuts must be weighted too: see
    :func:`mlw_xdcc.binning.cuts_of`), up to the rounding of the gradient sums.
    """
    n, L = Y.shape
    crit = SPLIT_CRITERIA.index(params.split)
    rng = np.random.default_rng(seed)
    Y = np.ascontiguousarray(Y, dtype=np.uint8)
    mask = np.ones_like(Y) if mask is None else np.ascontiguousarray(mask, dtype=np.uint8)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if w is not None and not w.sum() > 0:
        raise ValueError("sample_weight is zero on every training row of the booster")
    base = (prior_margin(Y, w) if base_margin is None
            else np.asarray(base_margin, np.float64))
    margin = np.tile(base, (n, 1))
    W = 2 * L + 1
    GH = np.empty((n, W))
    d = B.n_features
    # a tree on n rows is never deeper than n - 1 (each split leaves a row per side)
    depth = int(min(params.max_depth, max(n - 1, 0)))
    max_nodes = int(min(2 ** (depth + 1) - 1, 2 * n - 1))
    n_slots = pool_slots(n, depth)
    pool = np.zeros((n_slots, max(B.total_bins, 1), W))
    clean = np.ones(n_slots, dtype=np.bool_)
    tmp = np.empty(n, dtype=np.int64)
    sums = np.empty((max_nodes, W))
    nf = np.empty(max_nodes, np.int32)
    nb = np.empty(max_nodes, np.int32)
    ndl = np.empty(max_nodes, np.bool_)
    nl = np.empty(max_nodes, np.int32)
    nr = np.empty(max_nodes, np.int32)
    ng = np.empty(max_nodes)
    nv = np.empty((max_nodes, L))
    parts: dict[str, list[np.ndarray]] = {k: [] for k in
                                          ("feature", "bin", "dl", "left", "right", "gain",
                                           "value")}
    roots = np.empty(params.n_estimators, dtype=np.int64)
    offset = 0
    all_rows = (np.arange(n, dtype=np.int64) if w is None
                else np.flatnonzero(w > 0).astype(np.int64))
    n_cols = max(1, int(round(params.colsample_bytree * d))) if d else 0
    present = B.present_features()
    n_bins = int(np.diff(B.feat_off)[present].sum())   # bins of the present features
    codes = CodeMatrix.of(B)
    for t in range(params.n_estimators):
        if params.subsample < 1.0:
            rows = all_rows[rng.random(all_rows.shape[0]) < params.subsample]
        else:
            rows = all_rows.copy()
        if n_cols < d:
            feats = np.sort(rng.choice(d, size=n_cols, replace=False)).astype(np.int64)
        else:
            feats = np.arange(d, dtype=np.int64)
        fmask = np.zeros(d, dtype=np.bool_)
        fmask[feats] = True
        feats = feats[present[feats]]   # drawn and present in some row: binned, searched
        K.logistic_gradients(margin, Y, mask, GH)
        if w is not None:
            GH[:, :2 * L] *= w[:, None]
        k = K.grow_tree(*B.kernel_layout(), B.feat_off, fmask, feats, n_bins, GH, rows, L,
                        depth, crit, float(params.reg_lambda), float(params.gamma),
                        float(params.min_child_weight), float(params.learning_rate), pool,
                        clean, tmp, sums, nf, nb, ndl, nl, nr, ng, nv)
        codes.add_tree(k, nf, nb, ndl, nl, nv, margin)
        roots[t] = offset
        parts["feature"].append(nf[:k].copy())
        parts["bin"].append(nb[:k].copy())
        parts["dl"].append(ndl[:k].copy())
        parts["left"].append(np.where(nl[:k] >= 0, nl[:k] + offset, -1).astype(np.int32))
        parts["right"].append(np.where(nr[:k] >= 0, nr[:k] + offset, -1).astype(np.int32))
        parts["gain"].append(ng[:k].copy())
        parts["value"].append(nv[:k].copy())
        offset += k
    left = np.concatenate(parts["left"])
    internal = left >= 0
    feature = np.where(internal, np.concatenate(parts["feature"]), -1).astype(np.int32)
    bins = np.concatenate(parts["bin"])
    thr = np.full(feature.shape[0], np.inf)
    f_int = feature[internal].astype(np.int64)
    e_idx = B.edge_off[f_int] + bins[internal]
    has_edge = e_idx < B.edge_off[f_int + 1]
    thr_int = np.full(f_int.shape[0], np.inf)
    thr_int[has_edge] = B.edges[e_idx[has_edge]]
    thr[internal] = thr_int
    ens = TreeEnsemble(base_margin=base, roots=roots, feature=feature, threshold=thr,
                       default_left=np.concatenate(parts["dl"]) & internal, left=left,
                       right=np.concatenate(parts["right"]),
                       gain=np.where(internal, np.concatenate(parts["gain"]), 0.0),
                       value=np.ascontiguousarray(np.concatenate(parts["value"])),
                       n_features=d)
    return ens, margin
