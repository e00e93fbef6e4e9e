"""Slow, obvious reference implementations the baselines are tested against.

Nothing here shares code with ``mlw_baselines``: every probability comes straight from
a scikit-learn classifier (or from explicit logits), one label vector at a time.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def hand_rolled_br(template, X, Y):
    """One clone of ``template`` per label column; returns the list of models."""
    return [clone(template).fit(X, Y[:, j]) for j in range(Y.shape[1])]


def p1(model, x_row) -> float:
    """P(y = 1) of a fitted binary sklearn classifier for one row (2-D input)."""
    proba = model.predict_proba(x_row)[0]
    return float(proba[list(model.classes_).index(1)])


def chain_row(x_row, prefix):
    """``[x, prefix]`` for one row, sparse or dense."""
    extra = np.asarray(prefix, dtype=float).reshape(1, -1)
    if sp.issparse(x_row):
        return sp.hstack([x_row, sp.csr_matrix(extra)], format="csr")
    return np.hstack([np.asarray(x_row, dtype=float).reshape(1, -1), extra])


def hand_rolled_chain(template, X, Y, order):
    """Link j predicts label order[j] from [X, Y[:, order[:j]]], trained on true labels."""
    models = []
    for j, label in enumerate(order):
        prefix = Y[:, order[:j]].astype(float)
        F = np.hstack([X, prefix]) if j else X
        models.append(clone(template).fit(F, Y[:, label]))
    return models


def chain_link_proba(models, x_row, prefix_values, d) -> float:
    """P(y_d = 1 | x, prefix) of chain position d, from the fitted models."""
    return p1(models[d], chain_row(x_row, prefix_values[:d]))


def greedy_chain(models, X, order):
    """CC greedy prediction, instance by instance, link by link."""
    n, L = X.shape[0], len(order)
    Yhat = np.zeros((n, L), dtype=np.uint8)
    P = np.zeros((n, L))
    for i in range(n):
        pred = []
        for d in range(L):
            p = chain_link_proba(models, X[i:i + 1], pred, d)
            pred.append(1 if p >= 0.5 else 0)
            Yhat[i, order[d]] = pred[-1]
            P[i, order[d]] = p
    return Yhat, P


def brute_force_joint(link_proba, L):
    """All 2**L vectors (chain positions, lexicographic) and their chain probabilities,
    where ``link_proba(d, prefix)`` gives P(y_d = 1 | prefix)."""
    vectors = [list(v) for v in itertools.product((0, 1), repeat=L)]
    probs = []
    for v in vectors:
        p = 1.0
        for d in range(L):
            q = link_proba(d, v[:d])
            p *= q if v[d] else 1.0 - q
        probs.append(p)
    return np.array(vectors, dtype=np.uint8), np.array(probs)


def brute_force_marginals_and_mode(link_proba, L):
    """Exact marginals (chain positions) and the mode (first most probable vector)."""
    vectors, probs = brute_force_joint(link_proba, L)
    marg = (probs[:, None] * vectors).sum(axis=0) / probs.sum()
    return marg, vectors[int(np.argmax(probs))], float(np.log(probs.max()))


def linear_link(A_row, W):
    """``link_proba`` of a chain with logits A_row[d] + W[d, :d] · prefix."""
    def link(d, prefix):
        return sigmoid(A_row[d] + sum(W[d, k] * prefix[k] for k in range(d)))
    return link


def hand_rolled_lp(template, X, Ysub):
    """LP by hand: the distinct rows of ``Ysub`` (lexicographic) are the classes of one
    clone of ``template``; returns ``(label_sets, model)`` (model None for one class)."""
    sets = sorted({tuple(int(v) for v in row) for row in Ysub})
    index = {s: k for k, s in enumerate(sets)}
    classes = np.array([index[tuple(int(v) for v in row)] for row in Ysub])
    model = clone(template).fit(X, classes) if len(sets) > 1 else None
    return np.array(sets, dtype=np.uint8), model


def lp_class_proba(label_sets, model, x_row):
    """P(class k | x) of a :func:`hand_rolled_lp` model for one row."""
    if model is None:
        return np.ones(1)
    out = np.zeros(len(label_sets))
    out[np.asarray(model.classes_)] = model.predict_proba(x_row)[0]
    return out


def rakel_by_hand(members, labelsets, X, n_labels, threshold=0.5):
    """RAkEL-o's votes, decisions and mean marginals, instance by instance, label by
    label: ``members`` are :func:`hand_rolled_lp` results for ``labelsets``."""
    n = X.shape[0]
    votes = np.zeros((n, n_labels))
    marg = np.zeros((n, n_labels))
    count = np.zeros(n_labels)
    for labels in labelsets:
        for label in labels:
            count[label] += 1
    for i in range(n):
        for (sets, model), labels in zip(members, labelsets, strict=False):
            P = lp_class_proba(sets, model, X[i:i + 1])
            decision = sets[int(np.argmax(P))]
            for pos, label in enumerate(labels):
                votes[i, label] += decision[pos] / count[label]
                marg[i, label] += sum(P[k] for k in range(len(sets)) if sets[k][pos]) \
                    / count[label]
    return votes, (votes >= threshold).astype(np.uint8), marg


def mixture_brute_force(link_probas, orders, L):
    """The mixture (1/m) sum_k P_k of chains by enumeration in LABEL order: member k's
    ``link_probas[k](d, prefix)`` is P(y at chain position d = 1 | prefix in its chain
    order ``orders[k]``). Returns ``(vectors, probs, marginals, mode, log P(mode))``."""
    vectors = np.array(list(itertools.product((0, 1), repeat=L)), dtype=np.uint8)
    probs = np.zeros(len(vectors))
    for link, order in zip(link_probas, orders, strict=False):
        for r, v in enumerate(vectors):
            chain_values = [int(v[label]) for label in order]
            p = 1.0
            for d in range(L):
                q = link(d, chain_values[:d])
                p *= q if chain_values[d] else 1.0 - q
            probs[r] += p / len(orders)
    marg = (probs[:, None] * vectors).sum(axis=0) / probs.sum()
    best = int(np.argmax(probs))
    return vectors, probs, marg, vectors[best], float(np.log(probs[best]))


def brute_neighbours(Xtr, Xq, k, metric="euclidean", leave_one_out=False):
    """The k nearest training rows of every query by a full distance matrix (ties to the
    lower index; under cosine only positive similarities count)."""
    A = Xtr.toarray() if sp.issparse(Xtr) else np.asarray(Xtr, dtype=float)
    Q = Xq.toarray() if sp.issparse(Xq) else np.asarray(Xq, dtype=float)
    out = []
    for i, q in enumerate(Q):
        if metric == "euclidean":
            key = [math.sqrt(float(((q - a) ** 2).sum())) for a in A]
            ok = [True] * len(A)
        else:
            key = [-float(q @ a) / (np.linalg.norm(q) * np.linalg.norm(a))
                   if np.linalg.norm(q) and np.linalg.norm(a) else 0.0 for a in A]
            ok = [v < 0 for v in key]
        cands = [r for r in range(len(A)) if ok[r] and not (leave_one_out and r == i)]
        cands.sort(key=lambda r: (key[r], r))
        out.append(cands[:k])
    return out


def mlknn_by_hand(Xtr, Ytr, Xte, k, s=1.0, metric="euclidean"):
    """ML-kNN as the paper writes it, with loops: returns the test posteriors."""
    n, L = Ytr.shape
    train_nb = brute_neighbours(Xtr, Xtr, k, metric, leave_one_out=True)
    post = np.zeros((Xte.shape[0], L))
    test_nb = brute_neighbours(Xtr, Xte, k, metric)
    for j in range(L):
        prior = (s + Ytr[:, j].sum()) / (2 * s + n)
        a = [0] * (k + 1)
        b = [0] * (k + 1)
        for i in range(n):
            c = int(sum(Ytr[r, j] for r in train_nb[i]))
            if Ytr[i, j]:
                a[c] += 1
            else:
                b[c] += 1
        for t, nb in enumerate(test_nb):
            c = int(sum(Ytr[r, j] for r in nb))
            on = prior * (s + a[c]) / (s * (k + 1) + sum(a))
            off = (1 - prior) * (s + b[c]) / (s * (k + 1) + sum(b))
            post[t, j] = on / (on + off)
    return post
