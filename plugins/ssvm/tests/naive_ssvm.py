"""Slow, obviously-correct pure-Python references for the structured-SVM kernels: the
losses from their definitions (Section 2.1 of Díez et al.), the loss-augmented argmax
by enumerating all 2^L label vectors, Algorithm 2 as printed (a double loop over the
numbers of true and false positives), and the joint-constraint sum."""

from __future__ import annotations

import itertools

import numpy as np

HAMMING, SUBSET, FBETA, JACCARD, PRECISION, RECALL = range(6)


def _ratio(num: float, den: float, perfect: bool) -> float:
    return num / den if den > 0 else (1.0 if perfect else 0.0)


def loss(code: int, beta2: float, y, ybar) -> float:
    y = [int(v) for v in y]
    ybar = [int(v) for v in ybar]
    a = sum(1 for t, p in zip(y, ybar, strict=True) if t and p)
    b = sum(1 for t, p in zip(y, ybar, strict=True) if not t and p)
    c = sum(1 for t, p in zip(y, ybar, strict=True) if t and not p)
    perfect = a == b == c == 0
    if code == HAMMING:
        return float(b + c)
    if code == SUBSET:
        return 0.0 if y == ybar else 1.0
    if code == FBETA:
        return 1 - _ratio((1 + beta2) * a, (1 + beta2) * a + b + beta2 * c, perfect)
    if code == JACCARD:
        return 1 - _ratio(a, a + b + c, perfect)
    if code == PRECISION:
        return 1 - _ratio(a, a + b, perfect)
    if code == RECALL:
        return 1 - _ratio(a, a + c, perfect)
    raise ValueError(code)


def value(code: int, beta2: float, s, y, ybar) -> float:
    """Delta(y, ybar) + sum_l s_l ybar_l, the quantity every oracle maximises."""
    return loss(code, beta2, y, ybar) + float(sum(sl for sl, v in zip(s, ybar, strict=True) if v))


def brute_force(code: int, beta2: float, s, y) -> float:
    """max over all 2^L label vectors of :func:`value`."""
    return max(value(code, beta2, s, y, ybar)
               for ybar in itertools.product((0, 1), repeat=len(y)))


def algorithm2(code: int, beta2: float, s, y) -> tuple[float, list[int]]:
    """Algorithm 2 of the paper as printed: every (a, b) with sorted positives and
    negatives, O(L^2)."""
    L = len(y)
    pos = sorted((j for j in range(L) if y[j]), key=lambda j: -s[j])
    neg = sorted((j for j in range(L) if not y[j]), key=lambda j: -s[j])
    best, best_y = -np.inf, None
    for a in range(len(pos) + 1):
        for d in range(len(neg) + 1):
            b = len(neg) - d
            ybar = [0] * L
            for j in pos[:a]:
                ybar[j] = 1
            for j in neg[:b]:
                ybar[j] = 1
            v = value(code, beta2, s, y, ybar)
            if v > best:
                best, best_y = v, ybar
    return best, best_y


def constraint_sum(X, bias: float, Y, Ybar) -> np.ndarray:
    """(1/n) sum_i (x_i, bias) (x) (y_i - ybar_i) as a (p + 1, L) matrix."""
    X = np.asarray(X.todense() if hasattr(X, "todense") else X, float)
    Xb = np.hstack([X, np.full((X.shape[0], 1), bias)])
    D = np.asarray(Y, float) - np.asarray(Ybar, float)
    return Xb.T @ D / X.shape[0]
