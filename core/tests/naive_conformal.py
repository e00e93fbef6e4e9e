"""Pure-Python references for conformal precision control: each row's precision by
loops, the Hoeffding-Bentkus p-value from its definition (the binomial tail summed
with exact integers), Holm's procedure step by step, and Learn-then-Test's cut-off by
trying every grid point."""

from __future__ import annotations

import math

import numpy as np


def row_precision(truth: list[int], predicted: list[int]) -> float:
    """|T & P| / |P|; an empty P scores 1 when T is empty too, else 0."""
    if not predicted:
        return 0.0 if truth else 1.0
    return sum(1 for j in predicted if j in truth) / len(predicted)


def mean_precision_loss(S: np.ndarray, Y: np.ndarray, lam: float) -> float:
    """The mean of 1 - precision over the rows, the set of a row being every label
    scoring at least ``lam``."""
    total = 0.0
    for i in range(S.shape[0]):
        truth = [j for j in range(S.shape[1]) if Y[i, j]]
        predicted = [j for j in range(S.shape[1]) if S[i, j] >= lam]
        total += 1.0 - row_precision(truth, predicted)
    return total / S.shape[0]


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(Binomial(n, p) <= k), summed term by term."""
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(0, k + 1))


def hb_pvalue(risk: float, alpha: float, n: int) -> float:
    """min(Hoeffding, Bentkus) p-value of "expected loss > alpha" from a mean loss
    ``risk`` on ``n`` rows: exp(-n h(min(risk, alpha), alpha)) with h the Bernoulli
    relative entropy, and e P(Binomial(n, alpha) <= ceil(n risk))."""
    a = min(risk, alpha)

    def term(x: float, y: float) -> float:
        return 0.0 if x == 0 else x * math.log(x / y)

    h = term(a, alpha) + term(1 - a, 1 - alpha)
    bentkus = math.e * binom_cdf(math.ceil(n * risk - 1e-9), n, alpha)
    return min(math.exp(-n * h), bentkus, 1.0)


def holm(p: list[float], delta: float) -> set[int]:
    """The indices Holm's step-down procedure rejects."""
    remaining = list(range(len(p)))
    rejected: set[int] = set()
    while remaining:
        best = min(remaining, key=lambda i: (p[i], i))
        if p[best] > delta / len(remaining):
            break
        rejected.add(best)
        remaining.remove(best)
    return rejected


def ltt_precision_cutoff(S: np.ndarray, Y: np.ndarray, alpha: float, delta: float,
                         grid: np.ndarray) -> float:
    """The smallest grid cut-off Holm rejects; ``inf`` when none."""
    n = S.shape[0]
    p = [hb_pvalue(mean_precision_loss(S, Y, float(lam)), alpha, n) for lam in grid]
    rejected = holm(p, delta)
    return float(grid[min(rejected)]) if rejected else math.inf
