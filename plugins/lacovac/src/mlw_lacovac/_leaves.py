"""Predictions from the leaves a row reaches: marginals, joint modes, log P(y | x).

A leaf with ``n`` rows, label counts ``c_j`` and observed subsets ``s`` seen
``count(s)`` times predicts with the smoothed distribution

    P(s) = (count(s) + alpha * Q(s)) / (n + alpha),
    Q(s) = prod_j q_j^s_j (1 - q_j)^(1 - s_j),   q_j = (c_j + 1) / (n + 2),

a mixture of the observed frequencies and the independent Laplace-smoothed marginals;
it is positive for every subset and sums to 1 (``log_proba_of``). The marginal scores
(``predict_proba``) are, by default (``marginals="laplace"``), the Laplace estimates
``q_j`` as in the authors' implementation (MEKA LaCovaC with Laplace correction); with
``marginals="joint"`` they are the marginals of ``P``, ``(c_j + alpha q_j) / (n + alpha)``.
The joint decision is the most frequent observed subset, ties broken by ``Q``
(whatever ``alpha``: smoothing changes the probabilities, never the decision), then by
first appearance. With ``alpha = 0`` the joint uses the raw frequencies.

Everything is computed for all leaves at once (:func:`leaf_models`) and applied in one
traversal per row (:func:`predict`), in :mod:`mlw_lacovac._kernels.leaves`, over the
tree laid out for that walk (depth-first nodes, the leaf table in walk order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw_lacovac._kernels import joint as KJ
from mlw_lacovac._kernels import leaves as KL
from mlw_lacovac._tree import Tree, x_arrays


@dataclass
class LeafModels:
    """The leaves of one tree, ready to predict: per leaf label slot (``leaf_lab_ptr``
    into ``leaf_labels``), the marginal score ``marg``, the mode's bit ``mode``, and
    ``log q`` / ``log(1 - q)`` of the Laplace estimate."""

    leaf_lab_ptr: np.ndarray
    leaf_labels: np.ndarray
    marg: np.ndarray
    mode: np.ndarray
    logq1: np.ndarray
    logq0: np.ndarray
    leaf_n: np.ndarray
    rec: np.ndarray  # the nodes packed one record each, see KL.pack_nodes
    #: the tree and leaf table laid out for the prediction walk (KL.walk_layout): nodes,
    #: vch, slots, lmode, lptr, slot_leaf, lorig. None in a model file saved before it
    #: existed: :func:`walk` then lays it out at each prediction.
    walk: tuple | None = None


def walk(tree: Tree, lm: LeafModels) -> tuple:
    """``lm.walk``, or the layout made now (a model saved without it, or with an earlier
    layout: 8 arrays, the thresholds apart from the nodes)."""
    if lm.walk is not None and len(lm.walk) == 7:
        return lm.walk
    return KL.walk_layout(lm.rec, tree.threshold, lm.leaf_lab_ptr, lm.leaf_labels, lm.marg,
                          lm.mode)


def leaf_models(tree: Tree, alpha: float, marginals: str = "laplace") -> LeafModels:
    ptr, labels = tree.leaf_labels()
    leaf_n = tree.n_rows[tree.leaf_node].astype(np.float64)
    marg, mode, logq1, logq0 = KL.leaf_models(ptr, tree.leaf_sub_ptr, tree.leaf_bits_ptr,
                                              tree.sub_count, tree.sub_bits, leaf_n,
                                              float(alpha), marginals == "laplace")
    rec = KL.pack_nodes(tree.kind, tree.feature, tree.child_ptr, tree.children, tree.leaf_id)
    return LeafModels(ptr, labels, marg, mode, logq1, logq0, leaf_n, rec,
                      KL.walk_layout(rec, tree.threshold, ptr, labels, marg, mode))


def predict(tree: Tree, lm: LeafModels, X: Any, n_labels: int, *, proba: bool = True,
            joint: bool = True, out: np.ndarray | None = None
            ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(marginals, joint decision)`` of the rows of ``X`` from one traversal each
    (either may be skipped). ``out``, when given, is the (n, L) array the marginals are
    added to (a forest sums its trees into one array)."""
    n = X.shape[0]
    P = out if out is not None else np.zeros((n, n_labels) if proba else (0, 0))
    Y = np.zeros((n, n_labels) if joint else (0, 0), np.uint8)
    nodes, vch, slots, lmode, *_ = walk(tree, lm)
    KL.predict_leaves(*x_arrays(X), n, X.shape[1], nodes, vch, slots, lmode, P, Y, proba,
                      joint)
    return (P if proba else None), (Y if joint else None)


def predict_marginals(tree: Tree, lm: LeafModels, X: Any, n_labels: int) -> np.ndarray:
    return predict(tree, lm, X, n_labels, joint=False)[0]


def predict_modes(tree: Tree, lm: LeafModels, X: Any, n_labels: int) -> np.ndarray:
    return predict(tree, lm, X, n_labels, proba=False)[1]


def reached(tree: Tree, lm: LeafModels, X: Any) -> np.ndarray:
    """The leaf ids each row of ``X`` reaches, shape (n, ``tree.max_leaves``), padded
    with -1."""
    nodes, vch, _, _, lptr, slot_leaf, lorig = walk(tree, lm)
    return KL.route(*x_arrays(X), X.shape[0], X.shape[1], nodes, vch, lptr, slot_leaf,
                    lorig, tree.max_leaves)


def add_size_marginals(tree: Tree, lm: LeafModels, X: Any, alpha: float, weight: float,
                       out: np.ndarray) -> None:
    """Adds ``weight`` times P(y_j = 1, |y| = s | x) of the tree's joint (the one
    :func:`log_proba` gives) into ``out`` (n, L, L), entry ``[i, j, s - 1]``; exact
    (:mod:`mlw_lacovac._kernels.joint`)."""
    R = reached(tree, lm, X)
    leaves = np.unique(R[R >= 0])
    table_of = np.full(tree.n_leaves, -1, np.int64)
    table_of[leaves] = np.arange(leaves.size)
    tables = KJ.leaf_size_tables(leaves, lm.leaf_lab_ptr, tree.leaf_sub_ptr,
                                 tree.leaf_bits_ptr, tree.sub_count, tree.sub_bits, lm.leaf_n,
                                 lm.logq1, float(alpha))
    KJ.add_size_marginals(R, table_of, lm.leaf_lab_ptr, lm.leaf_labels, *tables,
                          float(weight), out)


def sample(tree: Tree, lm: LeafModels, X: Any, alpha: float, pick: np.ndarray, seed: int,
           out: np.ndarray) -> None:
    """Label vectors drawn from the tree's joint into ``out[i, t]`` (uint8 (n, T, L))
    wherever ``pick[i, t]``, from the seed ``seed``."""
    KJ.sample_leaves(reached(tree, lm, X), pick, lm.leaf_lab_ptr, lm.leaf_labels,
                     tree.leaf_sub_ptr, tree.leaf_bits_ptr, tree.sub_count, tree.sub_bits,
                     lm.leaf_n, lm.logq1, float(alpha), int(seed), out)


def log_proba(tree: Tree, lm: LeafModels, X: Any, Y: Any, alpha: float) -> np.ndarray:
    """log P(Y[i] | X[i]): the sum over the leaves a row reaches of log P_leaf(y_block)."""
    Yc = sp.csr_matrix(Y) if not sp.issparse(Y) else Y.tocsr()
    nodes, vch, _, _, lptr, slot_leaf, lorig = walk(tree, lm)
    return KL.log_proba_leaves(*x_arrays(X), X.shape[0], X.shape[1], nodes, vch, lptr,
                               slot_leaf, lorig, lm.leaf_lab_ptr,
                               lm.leaf_labels, tree.leaf_sub_ptr, tree.leaf_bits_ptr,
                               tree.sub_count, tree.sub_bits, lm.leaf_n,
                               lm.logq1, lm.logq0, Yc.indptr.astype(np.int64),
                               Yc.indices.astype(np.int64), Yc.shape[1], float(alpha))
