"""Brute-force k-nearest neighbours, the reference the kernels of mlw.neighbors are
tested against: plain loops over dense rows, no index, no pruning."""

from __future__ import annotations

import math

import numpy as np


def _norm(v: np.ndarray) -> float:
    s = 0.0
    for a in v:
        if a != 0.0:
            s += a * a
    return math.sqrt(s)


def _dot(u: np.ndarray, v: np.ndarray) -> float:
    s = 0.0
    for a, b in zip(u, v, strict=True):
        if a != 0.0 and b != 0.0:
            s += a * b
    return s


def cosine(u: np.ndarray, v: np.ndarray) -> float:
    nu, nv = _norm(u), _norm(v)
    if nu == 0.0 or nv == 0.0:
        return 0.0
    return _dot(u, v) * (1.0 / nu) * (1.0 / nv)


def euclidean(u: np.ndarray, v: np.ndarray) -> float:
    return math.sqrt(sum((a - b) ** 2 for a, b in zip(u, v, strict=True)))


def kneighbors(T: np.ndarray, Q: np.ndarray, k: int, metric: str = "cosine", *,
               exclude: list[int] | None = None,
               allowed: np.ndarray | None = None) -> list[list[tuple[int, float]]]:
    """For every query row, its k nearest rows of T as (row, value) pairs: cosine
    similarity (positive only, largest first) or Euclidean distance (smallest first),
    ties to the lower row; query i never gets row ``exclude[i]`` nor a row with
    ``allowed`` 0."""
    out = []
    for i, q in enumerate(Q):
        cands = []
        for r, t in enumerate(T):
            if exclude is not None and exclude[i] == r:
                continue
            if allowed is not None and not allowed[r]:
                continue
            if metric == "cosine":
                s = cosine(q, t)
                if s > 0.0:
                    cands.append((-s, r))
            else:
                cands.append((euclidean(q, t), r))
        cands.sort()
        out.append([(r, -v if metric == "cosine" else v) for v, r in cands[:k]])
    return out
