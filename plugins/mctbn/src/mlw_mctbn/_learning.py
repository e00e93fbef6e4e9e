"""Learning CTBNs and their mixtures (Hong, Batal and Hauskrecht, CIKM 2014, Sec. 5).

Trees are held as ``parent`` (d,) int arrays (-1: root) and ``theta`` arrays of
scaled-space logistic-regression parameters (see :mod:`mlw_mctbn._logistic`), one row
per factor: (d, m + 2) for the parent-as-a-feature factor (one regression on x and the
parent's value), (d, 2 (m + 2)) for the switching factor (one regression on x per value
of the parent: the first half for parent 0, the second for parent 1; a root uses the
first half, its second half a copy of it). A mixture is a list of trees and the
mixture coefficients ``lam``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mlw_mctbn import _kernels, _logistic
from mlw_mctbn._logistic import Design

#: Edge weight that keeps a constant label out of the branching (root only).
_NO_EDGE = -1e300


def topological_order(parent: np.ndarray) -> np.ndarray:
    d = parent.shape[0]
    children: list[list[int]] = [[] for _ in range(d)]
    roots = []
    for i, p in enumerate(parent):
        (roots if p < 0 else children[p]).append(i)
    order: list[int] = []
    stack = list(reversed(roots))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children[i]))
    if len(order) != d:  # pragma: no cover - max_branching returns trees
        raise RuntimeError("parent array has a cycle")
    return np.array(order, dtype=np.int64)


def children_lists(parents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per tree, CSR-style children lists: ``ptr`` (K, d + 1), ``ch`` (K, d)."""
    K, d = parents.shape
    ptr = np.zeros((K, d + 1), dtype=np.int64)
    ch = np.zeros((K, d), dtype=np.int64)
    for k in range(K):
        kids = [[c for c in range(d) if parents[k, c] == i] for i in range(d)]
        pos = 0
        for i in range(d):
            ptr[k, i] = pos
            for c in kids[i]:
                ch[k, pos] = c
                pos += 1
        ptr[k, d] = pos
    return ptr, ch


def is_switching(m: int, theta: np.ndarray) -> bool:
    """Whether a tree's ``theta`` (``m`` features) holds switching factors (two
    regressions each)."""
    return theta.shape[-1] == 2 * (m + 2)


def split_by(p: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` where the 0/1 column ``p`` is 0, and where it is 1."""
    on = p[rows] == 1
    return rows[~on], rows[on]


def fit_tree(design: Design, Yt: np.ndarray, parent: np.ndarray, s: np.ndarray,
             rows: np.ndarray, lam: np.ndarray, theta: np.ndarray,
             max_iter: int = _logistic.MAX_ITER) -> np.ndarray:
    """Fit every factor of the tree in place (warm start ``theta``) and return it. A
    switching factor fits its two regressions on the rows where the parent is 0 and
    where it is 1."""
    m2 = design.m + 2
    switching = is_switching(design.m, theta)
    for i in range(Yt.shape[0]):
        if parent[i] < 0:
            _logistic.fit(design, Yt[i], s, None, rows, lam[i], theta[i, :m2], max_iter)
            if switching:
                theta[i, m2:] = theta[i, :m2]
        elif not switching:
            _logistic.fit(design, Yt[i], s, Yt[parent[i]], rows, lam[i], theta[i], max_iter)
        else:
            for half, part in zip((theta[i, :m2], theta[i, m2:]),
                                  split_by(Yt[parent[i]], rows), strict=True):
                _logistic.fit(design, Yt[i], s, None, part, lam[i], half, max_iter)
    return theta


def edge_weights(design: Design, Yt: np.ndarray, s: np.ndarray, train: np.ndarray,
                 holdout: np.ndarray, lam: np.ndarray, switching: bool = False,
                 edge_tol: float = _logistic.TOL) -> tuple[np.ndarray, np.ndarray]:
    """Sec. 5.3.1: ``W[j, i]`` the weighted conditional log-likelihood on ``holdout`` of
    Y_i given x and Y_j, fitted on ``train``; ``W[i, i]`` given x alone. Also returns
    the self-loop models (d, m + 2), each edge model having been warm-started from its
    label's self-loop model. ``switching``: the edge model is two regressions on x,
    fitted and scored on the rows where Y_j is 0 and where it is 1. The edge models
    stop at ``edge_tol`` (``ctbn`` passes the looser ``EDGE_TOL``), the self-loop
    models at the solver's ``TOL``."""
    d = Yt.shape[0]
    W = np.full((d, d), _NO_EDGE)
    self_theta = np.zeros((d, design.m + 2))
    constant = np.array([_logistic.is_constant(Yt[i], s, train) for i in range(d)])
    if switching:
        parts = [split_by(Yt[j], train) + split_by(Yt[j], holdout) for j in range(d)]
    for i in range(d):
        _logistic.fit(design, Yt[i], s, None, train, lam[i], self_theta[i])
        W[i, i] = _logistic.log_lik(design, self_theta[i], Yt[i], s, None, holdout)
        if constant[i]:
            continue
        for j in range(d):
            if j == i or constant[j]:
                continue
            if switching:
                tr0, tr1, h0, h1 = parts[j]
                W[j, i] = 0.0
                for fit_rows, score_rows in ((tr0, h0), (tr1, h1)):
                    theta = self_theta[i].copy()
                    _logistic.fit(design, Yt[i], s, None, fit_rows, lam[i], theta,
                                  tol=edge_tol)
                    W[j, i] += _logistic.log_lik(design, theta, Yt[i], s, None, score_rows)
                continue
            theta = self_theta[i].copy()
            _logistic.fit(design, Yt[i], s, Yt[j], train, lam[i], theta, tol=edge_tol)
            W[j, i] = _logistic.log_lik(design, theta, Yt[i], s, Yt[j], holdout)
    return W, self_theta


def learn_structure(design: Design, Yt: np.ndarray, s: np.ndarray, rows: np.ndarray,
                    lam: np.ndarray, holdout_fraction: float, rng: np.random.Generator,
                    switching: bool = False, edge_tol: float = _logistic.TOL
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The maximum-branching CTBN structure on weighted ``rows`` (Sec. 5.3.1): a random
    ``holdout_fraction`` of them scores the edges, the rest fits the edge models.
    Returns ``(parent, W, warm start)``: the self-loop models, as the tree's ``theta``
    (both halves of a switching factor start from them)."""
    perm = rng.permutation(rows)
    n_h = max(1, int(round(holdout_fraction * rows.shape[0])))
    if rows.shape[0] < 2:
        holdout, train = rows, rows
    else:
        n_h = min(n_h, rows.shape[0] - 1)
        holdout, train = np.sort(perm[:n_h]), np.sort(perm[n_h:])
    W, self_theta = edge_weights(design, Yt, s, train, holdout, lam, switching, edge_tol)
    parent = _kernels.max_branching(W)
    if switching:
        self_theta = np.hstack([self_theta, self_theta])
    return parent, W, self_theta


@dataclass
class Mixture:
    """K CTBNs and their mixture coefficients."""

    parents: list[np.ndarray] = field(default_factory=list)
    thetas: list[np.ndarray] = field(default_factory=list)
    lam: np.ndarray = field(default_factory=lambda: np.ones(0))

    def copy(self) -> Mixture:
        return Mixture([p.copy() for p in self.parents], [t.copy() for t in self.thetas],
                       self.lam.copy())

    @property
    def K(self) -> int:
        return len(self.parents)

    def stacked(self, design: Design) -> Stacked:
        """The factors' coefficients in the original feature space."""
        T = np.stack(self.thetas)
        P = np.stack(self.parents)
        m, m2 = design.m, design.m + 2
        if not is_switching(design.m, T):
            return Stacked(T[:, :, :m] * design.scale, np.ascontiguousarray(T[:, :, m]),
                           np.ascontiguousarray(T[:, :, m + 1]), P)
        # switching: the parent-0 regression, and the change of the logit at parent 1
        D = T[:, :, m2:] - T[:, :, :m2]
        D[P < 0] = 0.0
        return Stacked(T[:, :, :m] * design.scale, np.zeros(P.shape),
                       np.ascontiguousarray(T[:, :, m + 1]), P, D[:, :, :m] * design.scale,
                       np.ascontiguousarray(D[:, :, m + 1]))


@dataclass
class Stacked:
    """K trees' factors, logit(n, k, i) = x_n . coef[k, i] + intercept[k, i]
    + y_parent (parent_coef[k, i] + x_n . switch_coef[k, i] + switch_intercept[k, i])
    (switch_*: None for parent-as-a-feature factors)."""

    coef: np.ndarray
    parent_coef: np.ndarray
    intercept: np.ndarray
    parents: np.ndarray
    switch_coef: np.ndarray | None = None
    switch_intercept: np.ndarray | None = None

    def logits(self, X) -> tuple[np.ndarray, np.ndarray]:
        return logits(X, self.coef, self.intercept, self.parent_coef, self.switch_coef,
                      self.switch_intercept)


def logits(X, coef: np.ndarray, intercept: np.ndarray, parent_coef: np.ndarray,
           switch_coef: np.ndarray | None = None,
           switch_intercept: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The kernels' ``A[n, k, i] = x_n . coef[k, i] + intercept[k, i]`` and
    ``V[n, k, i] = parent_coef[k, i] (+ x_n . switch_coef[k, i] + switch_intercept[k, i])``,
    each of shape (n, K, d)."""
    K, d, m = coef.shape
    n = X.shape[0]
    if switch_coef is None:
        A = np.asarray(X @ coef.reshape(K * d, m).T).reshape(n, K, d)
        V = np.broadcast_to(parent_coef[None, :, :], (n, K, d))
        return np.ascontiguousarray(A + intercept[None, :, :]), np.ascontiguousarray(V)
    both = np.concatenate([coef.reshape(K * d, m), switch_coef.reshape(K * d, m)])
    AV = np.asarray(X @ both.T).reshape(n, 2, K, d)
    return (np.ascontiguousarray(AV[:, 0] + intercept[None, :, :]),
            np.ascontiguousarray(AV[:, 1] + (parent_coef + switch_intercept)[None, :, :]))


def component_log_proba(design: Design, X, mix: Mixture, Y: np.ndarray,
                        rows: np.ndarray) -> np.ndarray:
    """log P(y_n | x_n, T_k) for ``rows``, shape (len(rows), K)."""
    st = mix.stacked(design)
    A, V = st.logits(X[rows])
    return _kernels.component_log_proba(A, V, st.parents, Y[rows])


def mixture_log_lik(design: Design, X, mix: Mixture, Y: np.ndarray,
                    rows: np.ndarray) -> np.ndarray:
    comp = component_log_proba(design, X, mix, Y, rows)
    with np.errstate(divide="ignore"):
        z = comp + np.log(mix.lam)[None, :]
    mx = z.max(axis=1, keepdims=True)
    return (mx + np.log(np.exp(z - mx).sum(axis=1, keepdims=True))).ravel()


def penalty(mix: Mixture, lam: np.ndarray, m: int) -> float:
    """sum_k sum_i lam_i / 2 (|w_ki|^2 + v_ki^2): the L2 terms of the M-step (a
    switching factor: both regressions' |w|^2, a root's once)."""
    total = 0.0
    for parent, theta in zip(mix.parents, mix.thetas, strict=True):
        sq = (theta[:, : m + 1] ** 2).sum(axis=1)
        if is_switching(m, theta):
            sq = sq + np.where(parent >= 0, (theta[:, m + 2: 2 * m + 3] ** 2).sum(axis=1), 0.0)
        total += float(0.5 * (lam * sq).sum())
    return total


@dataclass
class EMTrace:
    """Per EM iteration: the observed log-likelihood and the penalised one (observed
    minus the L2 terms), which EM never decreases."""

    log_lik: list[float] = field(default_factory=list)
    penalised: list[float] = field(default_factory=list)


def em(design: Design, X, Y: np.ndarray, Yt: np.ndarray, mix: Mixture, rows: np.ndarray,
       lam: np.ndarray, max_iter: int, tol: float, normalised: bool = False) -> EMTrace:
    """Algorithm 1 on ``rows``, in place on ``mix``: E-step responsibilities (Eq. 8),
    M-step lam_k = Gamma_k / N and instance-weighted logistic regressions (Eq. 10),
    weights gamma_k(n) (= Gamma_k w_k(n), so each tree's L2 term counts against the
    Gamma_k instances it explains), every fit warm-started from the current
    parameters. Stops when the penalised log-likelihood improves by less than
    ``tol`` (relative) or after ``max_iter`` M-steps; the trace ends with the value
    of the returned parameters. ``normalised``: Eq. 10 read literally, each tree's
    weights gamma_k(n) N / Gamma_k (sum N: every tree regularised as one of the whole
    data); that is not MAP-EM of any fixed objective, so it stops on the observed
    log-likelihood instead."""
    trace = EMTrace()
    N = rows.shape[0]
    s = np.zeros(design.n)
    prev = -np.inf
    it = 0
    while True:
        comp = component_log_proba(design, X, mix, Y, rows)
        with np.errstate(divide="ignore"):
            z = comp + np.log(mix.lam)[None, :]
        mx = z.max(axis=1, keepdims=True)
        lse = mx + np.log(np.exp(z - mx).sum(axis=1, keepdims=True))
        ll = float(lse.sum())
        obj = ll - penalty(mix, lam, design.m)
        trace.log_lik.append(ll)
        trace.penalised.append(obj)
        if normalised:
            obj = ll
        if mix.K == 1 or it >= max_iter or (it > 0 and obj - prev <= tol * abs(prev)):
            break
        prev = obj
        gamma = np.exp(z - lse)
        Gamma = gamma.sum(axis=0)
        mix.lam = Gamma / N
        for k in range(mix.K):
            s[rows] = gamma[:, k] * (N / max(Gamma[k], 1e-300) if normalised else 1.0)
            fit_tree(design, Yt, mix.parents[k], s, rows, lam, mix.thetas[k])
        it += 1
    return trace
