"""Slow, obviously-correct pure-Python references for the LaCovaC kernels.

Dense numpy / plain loops only; the tests compare :mod:`mlw_lacovac._kernels` with
these on random inputs. ``w`` weighs the rows (None: all 1): means are weighted means
and a child's size is its weight.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np


def phi(Y: np.ndarray) -> np.ndarray:
    """Pearson correlation of the columns of a 0/1 matrix; 0 for constant columns
    (and 1 on the diagonal of varying ones)."""
    Y = np.asarray(Y, float)
    L = Y.shape[1]
    R = np.zeros((L, L))
    for j in range(L):
        for k in range(L):
            a, b = Y[:, j], Y[:, k]
            if a.std() == 0 or b.std() == 0:
                continue
            R[j, k] = np.mean((a - a.mean()) * (b - b.mean())) / (a.std() * b.std())
    return R


def connected_components(R: np.ndarray, lam: float) -> list[set[int]]:
    """Components of the graph with an edge where |R[j, k]| > lam (breadth-first)."""
    L = R.shape[0]
    seen: set[int] = set()
    comps = []
    for s in range(L):
        if s in seen:
            continue
        comp = {s}
        seen.add(s)
        todo = deque([s])
        while todo:
            j = todo.popleft()
            for k in range(L):
                if k != j and k not in seen and abs(R[j, k]) > lam:
                    seen.add(k)
                    comp.add(k)
                    todo.append(k)
        comps.append(comp)
    return comps


def _w(Y: np.ndarray, w) -> np.ndarray:
    return np.ones(Y.shape[0]) if w is None else np.asarray(w, float)


def variance_sum(Y: np.ndarray, w=None) -> float:
    p = np.average(np.asarray(Y, float), axis=0, weights=_w(Y, w))
    return float(np.sum(p * (1 - p)))


def abs_covariance_sum(Y: np.ndarray, w=None) -> float:
    Y = np.asarray(Y, float)
    w = _w(Y, w)
    L = Y.shape[1]
    s = 0.0
    for j in range(L):
        for k in range(j + 1, L):
            s += abs(np.average(Y[:, j] * Y[:, k], weights=w)
                     - np.average(Y[:, j], weights=w) * np.average(Y[:, k], weights=w))
    return s


def entropy_sum(Y: np.ndarray, w=None) -> float:
    s = 0.0
    for p in np.average(np.asarray(Y, float), axis=0, weights=_w(Y, w)):
        if 0 < p < 1:
            s -= p * math.log2(p) + (1 - p) * math.log2(1 - p)
    return s


def child_measure(Y: np.ndarray, crit: int, w=None) -> float:
    """crit 0: min(variance sum, |covariance| sum); 1: variance sum; 2: entropy sum."""
    if crit == 1:
        return variance_sum(Y, w)
    if crit == 2:
        return entropy_sum(Y, w)
    return min(variance_sum(Y, w), abs_covariance_sum(Y, w))


def split_quality(Y: np.ndarray, left: np.ndarray, crit: int, w=None) -> float:
    w = _w(Y, w)
    n, nl = w.sum(), w[left].sum()
    return (nl * child_measure(Y[left], crit, w[left])
            + (n - nl) * child_measure(Y[~left], crit, w[~left])) / n


def best_split(X: np.ndarray, Y: np.ndarray, min_leaf, crit: int, w=None
               ) -> tuple[int, float, float]:
    """Exhaustive search over every feature and midpoint threshold; each child of a split
    on feature f keeps at least ``min_leaf[f]`` rows (or ``min_leaf`` if it is an int) of
    weight."""
    best = (-1, 0.0, math.inf)
    w = _w(Y, w)
    for f in range(X.shape[1]):
        m = int(min_leaf if np.ndim(min_leaf) == 0 else min_leaf[f])
        vals = np.unique(X[:, f])
        for a, b in zip(vals[:-1], vals[1:], strict=False):
            t = 0.5 * (a + b)
            left = X[:, f] <= t
            if w[left].sum() < m or w[~left].sum() < m:
                continue
            q = split_quality(Y, left, crit, w)
            if q < best[2] - 1e-12:
                best = (f, t, q)
    return best
