"""Slow pure-Python references for the xdcc kernels: exact split search, an exact
recursive tree builder and the propagation rule of the dynamic chain.

Missing values are NaN.  A split is ``(feature, threshold, default_left)``: a present
value ``x`` goes left iff ``x < threshold``; ``threshold = inf`` sends every present
value left (and the missing ones right).  Candidate thresholds are the distinct
present values of the feature (``x < v``) and ``inf``.
"""

from __future__ import annotations

import math

CRITERIA = ("sum_gain", "max_gain", "sum_weight", "max_weight", "sum_abs_g", "max_abs_g")


def label_score(G: float, H: float, criterion: str, lam: float) -> float:
    """Table 1's summand: G^2/(H+lam), the signed leaf weight -G/(H+lam), or its
    absolute value."""
    if not H + lam > 0:
        return 0.0
    kind = criterion.split("_", 1)[1]
    if kind == "gain":
        return G * G / (H + lam)
    if kind == "weight":
        return -G / (H + lam)
    return abs(G) / (H + lam)


def node_score(G, H, criterion, lam):
    """Table 1's formula: the labels' scores summed (sum_*) or maximised (max_*)."""
    s = [label_score(G[j], H[j], criterion, lam) for j in range(len(G))]
    return max(s) if criterion.startswith("max") else sum(s)


def node_sums(rows, g, h):
    L = len(g[0])
    G = [sum(g[i][j] for i in rows) for j in range(L)]
    H = [sum(h[i][j] for i in rows) for j in range(L)]
    return G, H


def split_gain(left, right, g, h, criterion, lam):
    GL, HL = node_sums(left, g, h)
    GR, HR = node_sums(right, g, h)
    GP = [GL[j] + GR[j] for j in range(len(GL))]
    HP = [HL[j] + HR[j] for j in range(len(GL))]
    return (node_score(GL, HL, criterion, lam) + node_score(GR, HR, criterion, lam)
            - node_score(GP, HP, criterion, lam))


def goes_left(x, threshold, default_left):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return default_left
    return x < threshold


def exact_best_split(X, rows, g, h, criterion, lam, mcw, eps=1e-10):
    """Brute force: every feature, every candidate threshold, both missing sides.
    Returns (gain, feature, threshold, default_left) or None."""
    best = None
    d = len(X[0])
    for f in range(d):
        present = sorted({X[i][f] for i in rows if not math.isnan(X[i][f])})
        for thr in present[1:] + [math.inf]:
            for dl in (False, True):
                left = [i for i in rows if goes_left(X[i][f], thr, dl)]
                right = [i for i in rows if not goes_left(X[i][f], thr, dl)]
                if not left or not right:
                    continue
                if sum(node_sums(left, g, h)[1]) < mcw or sum(node_sums(right, g, h)[1]) < mcw:
                    continue
                gain = split_gain(left, right, g, h, criterion, lam)
                if gain > eps and (best is None or gain > best[0] + 1e-12):
                    best = (gain, f, thr, dl)
    return best


def exact_tree_outputs(X, g, h, criterion, lam, mcw, eta, max_depth):
    """Grow a tree recursively with the exact search; return each row's leaf weights."""
    n = len(X)
    out = [None] * n

    def grow(rows, depth):
        G, H = node_sums(rows, g, h)
        split = exact_best_split(X, rows, g, h, criterion, lam, mcw) if depth < max_depth else None
        if split is None:
            w = [-eta * G[j] / (H[j] + lam) if H[j] + lam > 0 else 0.0 for j in range(len(G))]
            for i in rows:
                out[i] = w
            return
        _, f, thr, dl = split
        grow([i for i in rows if goes_left(X[i][f], thr, dl)], depth + 1)
        grow([i for i in rows if not goes_left(X[i][f], thr, dl)], depth + 1)

    grow(list(range(n)), 0)
    return out


def propagate_one(P, frozen, values, over_all=False):
    """Eq. (8) for every instance (lists of lists, updated in place); returns the
    chosen label per instance (-1 when nothing is propagated).  ``over_all``: the most
    and least probable label over all labels, as the equation prints it (nothing is
    propagated when that label already was); else over the labels not yet propagated."""
    chosen = []
    for i, p in enumerate(P):
        pool = list(range(len(p))) if over_all else [j for j in range(len(p)) if not frozen[i][j]]
        if not pool:
            chosen.append(-1)
            continue
        hi = max(pool, key=lambda j: (p[j], -j))
        if p[hi] >= 0.5:
            j, v = hi, 1.0
        else:
            j, v = min(pool, key=lambda j: (p[j], j)), 0.0
        if frozen[i][j]:
            chosen.append(-1)
            continue
        frozen[i][j] = 1
        values[i][j] = v
        chosen.append(j)
    return chosen
