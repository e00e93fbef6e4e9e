"""Pure-Python references of the metrics at k, written from their definitions (Jain,
Prabhu and Varma, KDD 2016), one instance and one position at a time."""

from __future__ import annotations

import math


def rank(row_scores: list[float], k: int) -> list[int]:
    """Top k labels of one row: decreasing score, ties by increasing index, zeros out."""
    order = sorted((j for j, s in enumerate(row_scores) if s > 0),
                   key=lambda j: (-row_scores[j], j))
    return order[:k] + [-1] * max(0, k - len(order))


def inverse_propensity(Y: list[list[int]], A: float = 0.55, B: float = 1.5) -> list[float]:
    N = len(Y)
    C = (math.log(N) - 1) * (B + 1) ** A
    return [1 + C * (sum(row[j] for row in Y) + B) ** (-A) for j in range(len(Y[0]))]


def metric(kind: str, Y: list[list[int]], R: list[list[int]], k: int,
           inv: list[float] | None = None) -> float:
    num = den = 0.0
    for y, r in zip(Y, R, strict=True):
        true = [j for j, v in enumerate(y) if v]
        hits = [1 if (j >= 0 and y[j]) else 0 for j in r[:k]]
        ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(true))))
        if kind == "precision":
            num += sum(hits) / k
            den += 1
        elif kind == "recall":
            num += sum(hits) / len(true) if true else 0.0
            den += 1
        elif kind == "ndcg":
            dcg = sum(h / math.log2(i + 2) for i, h in enumerate(hits))
            num += dcg / ideal if true else 0.0
            den += 1
        else:
            assert inv is not None
            best = sorted((inv[j] for j in true), reverse=True)[:k]
            gain = [inv[j] if h else 0.0 for j, h in zip(r[:k], hits, strict=True)]
            if kind == "psprecision":
                num += sum(gain) / k
                den += sum(best) / k
            else:  # psndcg
                if not true:
                    continue
                num += sum(g / math.log2(i + 2) for i, g in enumerate(gain)) / ideal
                den += sum(b / math.log2(i + 2) for i, b in enumerate(best)) / ideal
    return num / den if den > 0 else 0.0
