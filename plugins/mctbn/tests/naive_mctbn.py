"""Slow pure-Python references for the mlw_mctbn kernels (brute force where possible)."""

from __future__ import annotations

import itertools
import math

import numpy as np


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def all_vectors(d: int) -> np.ndarray:
    return np.array(list(itertools.product([0, 1], repeat=d)), dtype=np.uint8)


def tree_log_proba(a: np.ndarray, v: np.ndarray, parent: np.ndarray, y: np.ndarray) -> float:
    """log prod_i P(y_i | x, y_parent) for one instance (Eq. 4)."""
    total = 0.0
    for i in range(len(y)):
        z = a[i] + (v[i] * y[parent[i]] if parent[i] >= 0 else 0.0)
        p = sigmoid(z)
        total += math.log(p if y[i] == 1 else 1.0 - p)
    return total


def mixture_proba(a: np.ndarray, V: np.ndarray, parents: np.ndarray, lam: np.ndarray,
                  y: np.ndarray) -> float:
    """sum_k lam_k P(y | x, T_k) for one instance; ``a`` is (K, d) (Eq. 5)."""
    return sum(lam[k] * math.exp(tree_log_proba(a[k], V[k], parents[k], y))
               for k in range(len(lam)))


def enumerate_instance(a, V, parents, lam):
    """All 2^d vectors with their mixture probabilities, the marginals and the MAP."""
    d = a.shape[1]
    Ys = all_vectors(d)
    P = np.array([mixture_proba(a, V, parents, lam, y) for y in Ys])
    marg = (P[:, None] * Ys).sum(axis=0)
    return Ys, P, marg, Ys[int(np.argmax(P))]


def fit_logistic_objective(theta, X, scale, y, s, p, use_parent, rows, lam):
    """The objective the L-BFGS kernel minimises (for checking its optimum)."""
    m = X.shape[1]
    w, v, b = theta[:m], theta[m], theta[m + 1]
    f = 0.0
    for r in rows:
        z = float(X[r] @ (w * scale)) + b + (v * p[r] if use_parent else 0.0)
        f += s[r] * (math.log1p(math.exp(-abs(z))) + max(z, 0.0) - y[r] * z)
    reg = float(w @ w) + (v * v if use_parent else 0.0)
    return f + 0.5 * lam * reg


def fit_logistic_gradient(theta, X, scale, y, s, p, use_parent, rows, lam):
    """The gradient of :func:`fit_logistic_objective` (``v``'s entry 0 without a
    parent)."""
    m = X.shape[1]
    w, v, b = theta[:m], theta[m], theta[m + 1]
    grad = np.zeros(m + 2)
    for r in rows:
        z = float(X[r] @ (w * scale)) + b + (v * p[r] if use_parent else 0.0)
        g = s[r] * (sigmoid(z) - y[r])
        grad[:m] += g * X[r] * scale
        grad[m] += g * p[r] if use_parent else 0.0
        grad[m + 1] += g
    grad[:m] += lam * w
    if use_parent:
        grad[m] += lam * v
    return grad


def best_branching(W: np.ndarray) -> tuple[float, np.ndarray]:
    """Brute force over all parent assignments that form a forest (d <= 6)."""
    d = W.shape[0]
    best, best_parent = -math.inf, None
    for choice in itertools.product(range(-1, d), repeat=d):
        if any(c == i for i, c in enumerate(choice)):
            continue
        ok = True
        for i in range(d):  # acyclic: following parents must end at a root
            seen, j = set(), i
            while choice[j] >= 0:
                if j in seen:
                    ok = False
                    break
                seen.add(j)
                j = choice[j]
            if not ok:
                break
        if not ok:
            continue
        score = sum(W[i, i] if c < 0 else W[c, i] for i, c in enumerate(choice))
        if score > best:
            best, best_parent = score, np.array(choice)
    return best, best_parent


def branching_score(W: np.ndarray, parent: np.ndarray) -> float:
    return float(sum(W[i, i] if p < 0 else W[p, i] for i, p in enumerate(parent)))
