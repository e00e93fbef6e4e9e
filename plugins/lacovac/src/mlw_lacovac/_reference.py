"""The reference tree builder: Algorithms 1 and 2 of the paper grown node by node in
Python (the builder mlw used before the whole tree moved into one numba call).

It shares the split-search kernels with :func:`mlw_lacovac._kernels.build.grow_tree` but
does everything else (the stack, label statistics per node, clustering decisions,
partitions, leaf distributions with a dict of observed subsets) in plain Python and
numpy, so the tests can pin the fast builder to it, node for node. It is about 2-6x
slower; use it to check a change to the fast builder.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw_lacovac import _kernels as K
from mlw_lacovac._tree import Tree, TreeBuilder, lambda_n


def _leaf_arrays(y_indptr, y_indices, rows, labels, n_labels, w=None):
    """(subsets, counts) of the label subsets seen in ``rows`` (each counting its weight
    ``w[row]``, 1 when None): decreasing count, ties by first appearance."""
    label_map = np.full(n_labels, -1, np.int64)
    label_map[labels] = np.arange(labels.size)
    ptr, idx = K.local_labels(y_indptr, y_indices, rows, label_map)
    dense = np.zeros((rows.size, labels.size), np.uint8)
    dense[np.repeat(np.arange(rows.size), np.diff(ptr)), idx] = 1
    seen: dict[bytes, int] = {}
    first: list[int] = []
    cnt: list[float] = []
    rw = np.ones(rows.size) if w is None else w[rows]
    for i, key in enumerate(map(bytes, dense)):
        s = seen.get(key)
        if s is None:
            seen[key] = len(first)
            first.append(i)
            cnt.append(float(rw[i]))
        else:
            cnt[s] += float(rw[i])
    counts = np.array(cnt, np.float64)
    order = np.argsort(-counts, kind="stable")
    return dense[np.array(first)[order]], counts[order]


class ReferenceTreeBuilder(TreeBuilder):
    """:class:`~mlw_lacovac._tree.TreeBuilder` with the node loop in Python."""

    def _groups(self, n, vary, counts, co, clustered):
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

    def fit(self, X: Any, Y: sp.csr_matrix, rows: np.ndarray | None = None,
            sample_weight: np.ndarray | None = None) -> Tree:
        p = self._prepare(X, Y, rows, sample_weight)
        w = p["w"]
        d = X.shape[1]
        n_labels = p["n_labels"]
        y_indptr, y_indices = p["y_indptr"], p["y_indices"]
        min_child, xone = p["min_child"], p["xone"]
        m = self.min_samples
        k = p["max_features"]
        perm = np.arange(d, dtype=np.int64)
        drawn = np.empty(max(k, 1), np.int64)

        kind: list[int] = []
        feature: list[int] = []
        threshold: list[float] = []
        quality: list[float] = []
        kids: list[list[int]] = []
        leaf_id: list[int] = []
        n_rows: list[float] = []
        node_labels: list[np.ndarray] = []
        leaves: list[tuple[int, np.ndarray, np.ndarray]] = []

        def new_node(rows_, labels_):
            kind.append(K.LEAF)
            feature.append(-1)
            threshold.append(0.0)
            quality.append(np.nan)
            kids.append([])
            leaf_id.append(-1)
            n_rows.append(K.weight_sum(w, rows_))
            node_labels.append(labels_)
            return len(kind) - 1

        def as_leaf(v, rows_, labels_):
            kind[v] = K.LEAF
            leaf_id[v] = len(leaves)
            subsets, counts = _leaf_arrays(y_indptr, y_indices, rows_, labels_, n_labels, w)
            leaves.append((v, subsets, counts))

        root_rows = p["rows"]
        root_labels = np.arange(n_labels, dtype=np.int64)
        stack = [(new_node(root_rows, root_labels), root_rows, root_labels, False)]
        while stack:
            v, rws, labels, clustered = stack.pop()
            n = n_rows[v]  # the weight of the node's rows
            label_map = np.full(n_labels, -1, np.int64)
            label_map[labels] = np.arange(labels.size)
            counts, co = K.node_label_stats(y_indptr, y_indices, rws, label_map, labels.size, w)
            varying = (counts > 0) & (counts < n)
            if n < m or n < 2 or not varying.any():
                as_leaf(v, rws, labels)
                continue
            vi = np.flatnonzero(varying)
            vary, vcounts, vco = labels[vi], counts[vi], co[np.ix_(vi, vi)]
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
            if self.method == "ml_c45":
                crit = K.CRIT_ENTROPY
            elif vary.size >= 2:
                crit = K.CRIT_LACOVA
            else:
                crit = K.CRIT_VARIANCE
            vmap = np.full(n_labels, -1, np.int64)
            vmap[vary] = np.arange(vary.size)
            lptr, lidx = K.local_labels(y_indptr, y_indices, rws, vmap)
            if k > 0:
                K.draw_features(p["rng_state"], perm, k, drawn)
                feats = drawn[:k].copy()
            else:
                feats = np.arange(d, dtype=np.int64)
            if n < p["split_floor"]:
                f, t, q = -1, 0.0, np.inf
            elif p["sparse"]:
                fmask = np.zeros(d, np.bool_)
                fmask[feats] = True
                f, t, q = K.best_split_sparse(p["x_indptr"], p["x_indices"], p["x_data"], d,
                                              rws, lptr, lidx, vcounts, vco, fmask, min_child,
                                              crit, xone, w)
            else:
                f, t, q = K.best_split_dense(p["XT"], p["xbin"], rws, lptr, lidx, vcounts, vco,
                                             feats, min_child, crit, w)
            if f < 0:
                as_leaf(v, rws, labels)
                continue
            if crit == K.CRIT_ENTROPY:
                pr = vcounts / n
                parent = float(-(pr * np.log2(pr) + (1 - pr) * np.log2(1 - pr)).sum())
                if q >= parent - 1e-12:  # C4.5 splits only on a positive gain
                    as_leaf(v, rws, labels)
                    continue
            if p["sparse"]:
                left = K.partition_mask_sparse(p["x_indptr"], p["x_indices"], p["x_data"], rws,
                                               f, t)
            else:
                left = K.partition_mask_dense(X, rws, f, t)
            kind[v] = K.HSPLIT
            feature[v] = int(f)
            threshold[v] = float(t)
            quality[v] = float(q)
            lrows, rrows = rws[left], rws[~left]
            a = new_node(lrows, labels)
            b = new_node(rrows, labels)
            kids[v].extend([a, b])
            stack.append((b, rrows, labels, False))
            stack.append((a, lrows, labels, False))
        return _flatten(kind, feature, threshold, quality, kids, leaf_id, n_rows, node_labels,
                        leaves)


def _flatten(kind, feature, threshold, quality, kids, leaf_id, n_rows, node_labels, leaves):
    n_nodes = len(kind)
    child_ptr = np.zeros(n_nodes + 1, np.int64)
    child_ptr[1:] = np.cumsum([len(k) for k in kids])
    children = np.array([c for k in kids for c in k], dtype=np.int64)
    reach = np.ones(n_nodes, np.int64)
    kinds = np.array(kind, np.int64)
    for v in range(n_nodes - 1, -1, -1):  # children are created after their parent
        if kinds[v] == K.HSPLIT:
            reach[v] = max(reach[c] for c in kids[v])
        elif kinds[v] == K.VSPLIT:
            reach[v] = sum(reach[c] for c in kids[v])
    lset_ptr = np.zeros(n_nodes + 1, np.int64)
    lset_ptr[1:] = np.cumsum([lab.size for lab in node_labels])
    sub_ptr = np.zeros(len(leaves) + 1, np.int64)
    sub_ptr[1:] = np.cumsum([c.size for _, _, c in leaves])
    bits_ptr = np.zeros(len(leaves) + 1, np.int64)
    bits_ptr[1:] = np.cumsum([s.size for _, s, _ in leaves])
    return Tree(
        kind=kinds, feature=np.array(feature, np.int64),
        threshold=np.array(threshold, np.float64), quality=np.array(quality, np.float64),
        child_ptr=child_ptr, children=children, n_rows=np.array(n_rows, np.float64),
        node_lset=np.arange(n_nodes, dtype=np.int64), leaf_id=np.array(leaf_id, np.int64),
        lset_ptr=lset_ptr,
        lset_lab=(np.concatenate(node_labels).astype(np.int64) if node_labels
                  else np.zeros(0, np.int64)),
        leaf_node=np.array([v for v, _, _ in leaves], np.int64), leaf_sub_ptr=sub_ptr,
        leaf_bits_ptr=bits_ptr,
        sub_count=(np.concatenate([c for _, _, c in leaves]).astype(np.float64) if leaves
                   else np.zeros(0, np.float64)),
        sub_bits=(np.concatenate([s.ravel() for _, s, _ in leaves]).astype(np.uint8)
                  if leaves else np.zeros(0, np.uint8)),
        max_leaves=int(reach[0]))
