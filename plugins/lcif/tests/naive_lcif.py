"""Slow pure-Python transcriptions of the LCIF formulas (Feremans et al. 2017), the
references the numba kernels are tested against. Dense numpy in, plain loops."""

from __future__ import annotations

import math

import numpy as np


def norm(v: np.ndarray) -> float:
    s = 0.0
    for a in v:
        if a != 0.0:
            s += a * a
    return math.sqrt(s)


def dot(u: np.ndarray, v: np.ndarray) -> float:
    s = 0.0
    for a, b in zip(u, v, strict=True):
        if a != 0.0 and b != 0.0:
            s += a * b
    return s


def cosine(u: np.ndarray, v: np.ndarray) -> float:
    nu, nv = norm(u), norm(v)
    if nu == 0.0 or nv == 0.0:
        return 0.0
    return dot(u, v) * (1.0 / nu) * (1.0 / nv)


def knn(Q: np.ndarray, T: np.ndarray, k: int, *, exclude_self: bool = False,
        allowed: np.ndarray | None = None) -> list[list[tuple[int, float]]]:
    """Brute force: every training row with a positive cosine, best first, ties by the
    lower index, the first k."""
    out = []
    for i, q in enumerate(Q):
        cands = []
        for r, t in enumerate(T):
            if exclude_self and r == i:
                continue
            if allowed is not None and not allowed[r]:
                continue
            s = cosine(q, t)
            if s > 0.0:
                cands.append((-s, r))
        cands.sort()
        out.append([(r, -ms) for ms, r in cands[:k]])
    return out


def feature_label_sims(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """sim(f_j, y_l): cosine between feature column j and label column l."""
    d, L = X.shape[1], Y.shape[1]
    S = np.zeros((d, L))
    for j in range(d):
        for lab in range(L):
            S[j, lab] = cosine(X[:, j], Y[:, lab].astype(float))
    return S


def feature_label_neighbours(X: np.ndarray, Y: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
    S = feature_label_sims(X, Y)
    out = []
    for j in range(S.shape[0]):
        cands = sorted((-S[j, lab], lab) for lab in range(S.shape[1]) if S[j, lab] > 0)
        out.append([(lab, -ms) for ms, lab in cands[:k]])
    return out


def conf_ins(neigh: list[tuple[int, float]], votes: np.ndarray) -> np.ndarray:
    """sum_i sim(x, x_i) votes_i / sum_i sim(x, x_i) over the neighbours."""
    L = votes.shape[1]
    num = np.zeros(L)
    den = 0.0
    for r, s in neigh:
        den += s
        for lab in range(L):
            num[lab] += s * votes[r, lab]
    return num / den if den > 0 else num


def conf_fl(x: np.ndarray, S: np.ndarray, fl: list[list[tuple[int, float]]],
            L: int, votes: str = "all") -> np.ndarray:
    """The paper's conf_FL: sum_j x_j sim_FL(f_j, y) / sum_j x_j over all non-zero
    features j, for the labels y in kNN(f_j) of at least one of them (Eq. 3), else 0.
    ``votes="neighbours"``: only the features j with y in kNN(f_j) add to the sum
    above; ``"neighbour_mean"``: they alone make both sums (sum over the j with y in
    kNN(f_j) of x_j sim_FL(f_j, y), over the sum of those x_j)."""
    if votes == "neighbour_mean":
        out = np.zeros(L)
        for lab in range(L):
            num = den = 0.0
            for j, v in enumerate(x):
                if v > 0 and any(lb == lab for lb, _ in fl[j]):
                    num += v * S[j, lab]
                    den += v
            out[lab] = num / den if den > 0 else 0.0
        return out
    if votes == "neighbours":
        num = np.zeros(L)
        den = 0.0
        for j, v in enumerate(x):
            if v <= 0:
                continue
            den += v
            for lab, s in fl[j]:
                num[lab] += v * s
        return num / den if den > 0 else num
    cand = set()
    for j, v in enumerate(x):
        if v > 0:
            cand.update(lab for lab, _ in fl[j])
    num = np.zeros(L)
    den = 0.0
    for j, v in enumerate(x):
        if v <= 0:
            continue
        den += v
        for lab in sorted(cand):
            num[lab] += v * S[j, lab]
    return num / den if den > 0 else num


def sim_all(xi: np.ndarray, yi: np.ndarray, xj: np.ndarray, yj: np.ndarray) -> float:
    """The paper's printed sim_ALL (Section III-A4), for 0/1 features:
    (x_i·x_j + Y_i·Y_j) / (sqrt(|x_i|_1 + |Y_i|_1) sqrt(|x_j|_1 + |Y_j|_1))."""
    den = math.sqrt(np.abs(xi).sum() + np.abs(yi).sum()) * math.sqrt(
        np.abs(xj).sum() + np.abs(yj).sum())
    return (dot(xi, xj) + dot(yi, yj)) / den if den > 0 else 0.0


def sim_all_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """[x, y] per row: sim_ALL is the cosine of these rows (for 0/1 features, the
    printed formula; for real values the L2 norms keep an instance its own nearest)."""
    return np.hstack([X.astype(float), Y.astype(float)])


def second_order(X: np.ndarray, Y: np.ndarray, k: int) -> np.ndarray:
    """LCIF2's re-weighted label scores of every training instance (itself included
    among its sim_ALL neighbours)."""
    Z = sim_all_rows(X, Y)
    neigh = knn(Z, Z, k)
    return np.array([conf_ins(nb, Y.astype(float)) for nb in neigh])


def lcif_scores(Xtr: np.ndarray, Ytr: np.ndarray, Q: np.ndarray, k_ins: int, k_feat: int,
                lam: float, *, second: bool = False, leave_one_out: bool = False,
                feature_votes: str = "neighbour_mean") -> np.ndarray:
    """lam * conf_INS + (1 - lam) * conf_FL for every row of Q (features already in
    [0, 1]); ``feature_votes``: the reading of conf_FL (see :func:`conf_fl`; the
    default is the learners')."""
    L = Ytr.shape[1]
    votes = second_order(Xtr, Ytr, k_ins) if second else Ytr.astype(float)
    neigh = knn(Q, Xtr, k_ins, exclude_self=leave_one_out)
    fl = feature_label_neighbours(Xtr, Ytr, min(k_feat, L))
    S = feature_label_sims(Xtr, Ytr)
    out = np.zeros((Q.shape[0], L))
    for i, x in enumerate(Q):
        a = conf_ins(neigh[i], votes)
        b = conf_fl(x, S, fl, L, feature_votes)
        out[i] = lam * a + (1.0 - lam) * b
    return out
