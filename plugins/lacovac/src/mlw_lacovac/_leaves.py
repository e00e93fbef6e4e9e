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
(whatever ``alpha``: smoothing changes the probabilities, never the decision). With
``alpha = 0`` the joint uses the raw frequencies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlw_lacovac._tree import Leaf, Tree


@dataclass
class LeafModel:
    labels: np.ndarray
    marginal: np.ndarray
    mode: np.ndarray
    log_q1: np.ndarray  # log q_j
    log_q0: np.ndarray  # log (1 - q_j)
    subsets: np.ndarray
    counts: np.ndarray
    n: int
    _table: dict[bytes, int] | None = None

    @property
    def table(self) -> dict[bytes, int]:
        """Observed subset (as bytes) -> count, built on first use."""
        if self._table is None:
            pairs = zip(self.subsets, self.counts, strict=True)
            self._table = {s.tobytes(): int(c) for s, c in pairs}
        return self._table


def leaf_model(leaf: Leaf, alpha: float, marginals: str = "laplace") -> LeafModel:
    c = leaf.label_counts().astype(np.float64)
    n = float(leaf.n)
    q = (c + 1.0) / (n + 2.0)
    if marginals == "laplace":
        marginal = q
    else:
        marginal = (c + alpha * q) / (n + alpha) if n + alpha > 0 else q
    logq1, logq0 = np.log(q), np.log1p(-q)
    s = leaf.subsets.astype(np.float64)
    logQ = s @ logq1 + (1.0 - s) @ logq0
    # the most frequent subset; ties go to the one more probable under Q
    top = np.flatnonzero(leaf.counts == leaf.counts[0])
    best = int(top[np.argmax(logQ[top])])
    return LeafModel(labels=leaf.labels, marginal=marginal, mode=leaf.subsets[best].copy(),
                     log_q1=logq1, log_q0=logq0, subsets=leaf.subsets, counts=leaf.counts,
                     n=leaf.n)


def _groups(reached: np.ndarray) -> list[tuple[int, np.ndarray]]:
    rows, cols = np.nonzero(reached >= 0)
    ids = reached[rows, cols]
    order = np.argsort(ids, kind="stable")
    ids, rows = ids[order], rows[order]
    cuts = np.flatnonzero(np.diff(ids)) + 1
    return [(int(g[0]), r) for g, r in zip(np.split(ids, cuts), np.split(rows, cuts), strict=False)
            if g.size]


def predict_marginals(tree: Tree, models: list[LeafModel], X, n_labels: int) -> np.ndarray:
    P = np.zeros((X.shape[0], n_labels))
    for lid, rows in _groups(tree.route(X)):
        m = models[lid]
        P[np.ix_(rows, m.labels)] = m.marginal
    return P


def predict_modes(tree: Tree, models: list[LeafModel], X, n_labels: int) -> np.ndarray:
    Y = np.zeros((X.shape[0], n_labels), np.uint8)
    for lid, rows in _groups(tree.route(X)):
        m = models[lid]
        Y[np.ix_(rows, m.labels)] = m.mode
    return Y


def log_proba(tree: Tree, models: list[LeafModel], X, Y: np.ndarray, alpha: float
              ) -> np.ndarray:
    """log P(Y[i] | X[i]): the sum over the leaves a row reaches of log P_leaf(y_block)."""
    out = np.zeros(X.shape[0])
    for lid, rows in _groups(tree.route(X)):
        m = models[lid]
        sub = np.ascontiguousarray(Y[np.ix_(rows, m.labels)], dtype=np.uint8)
        counts = np.array([m.table.get(r.tobytes(), 0) for r in sub], dtype=np.float64)
        s = sub.astype(np.float64)
        logQ = s @ m.log_q1 + (1.0 - s) @ m.log_q0
        with np.errstate(divide="ignore"):
            p = (counts + alpha * np.exp(logQ)) / (m.n + alpha)
            out[rows] += np.log(p)
    return out
