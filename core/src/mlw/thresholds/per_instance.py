"""Strategies that decide how many labels each instance gets: ``rcut`` (a fixed number,
Yang 2001) and ``metalabeler`` (a number predicted from the scores, Tang, Rajan and
Narayanan 2009)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.thresholds._common import Scores, _check_training, _Strategy
from mlw.validation import check_param, check_scores, check_Y


def top_k(S: Scores, k: np.ndarray) -> Any:
    """Predict, for each instance i, its ``k[i]`` highest-scoring labels among those with
    a positive score (ties broken towards the lower label index); CSR in, CSR out."""
    n, L = S.shape
    rows, cols = [], []
    if sp.issparse(S):
        for i in range(n):
            lo, hi = S.indptr[i], S.indptr[i + 1]
            idx, val = S.indices[lo:hi], S.data[lo:hi]
            keep = val > 0
            idx, val = idx[keep], val[keep]
            chosen = idx[np.lexsort((idx, -val))[:k[i]]]
            rows.append(np.full(chosen.size, i))
            cols.append(np.sort(chosen))
        r = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        c = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
        return sp.csr_matrix((np.ones(r.size, dtype=np.uint8), (r, c)), shape=(n, L))
    order = np.argsort(-S, axis=1, kind="stable")  # stable: lower index first on ties
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(L)[None, :].repeat(n, axis=0), axis=1)
    return ((rank < np.asarray(k)[:, None]) & (S > 0)).astype(np.uint8)


class RCut(_Strategy):
    """RCut (Yang 2001): every instance gets its ``k`` highest-scoring labels (only
    labels with a positive score; ties towards the lower label index).

    Parameters
    ----------
    k : int or None, default None
        Labels per instance; ``None``: the training label cardinality, rounded (at
        least 1).

    Notes
    -----
    After ``fit``: ``k_``.
    """

    needs_training_scores = False

    def __init__(self, k: int | None = None) -> None:
        self.k = k

    def fit(self, scores: Scores | None = None, Y: Any = None) -> RCut:
        if self.k is not None:
            self.k_ = check_param("k", self.k, int, low=0)
            return self
        if Y is None:
            raise ValueError("rcut with k=None needs the training labels Y (their "
                             "cardinality)")
        Y = check_Y(Y)
        if Y.shape[0] == 0:
            raise ValueError("rcut needs at least one training instance")
        self.k_ = max(1, int(np.floor(float(Y.sum()) / Y.shape[0] + 0.5)))
        return self

    def predict(self, scores: Scores) -> Any:
        if not hasattr(self, "k_"):
            raise ValueError("RCut is not fitted: call fit(scores, Y) first")
        S = check_scores(scores)
        return top_k(S, np.full(S.shape[0], self.k_, dtype=np.int64))


class MetaLabeler(_Strategy):
    """MetaLabeler, score-based (Tang, Rajan and Narayanan, WWW 2009): a ridge regression
    from an instance's label scores to its number of labels, learned on the training
    scores; each instance then gets its predicted number of highest-scoring labels (the
    prediction rounded and clipped to [0, L]).

    Parameters
    ----------
    alpha : float, default 1.0
        The ridge penalty.

    Notes
    -----
    After ``fit``: ``coef_``, ``intercept_`` (the regression) and
    ``training_error_`` (the mean absolute error of the rounded count on the training
    scores).
    """

    def __init__(self, alpha: float = 1.0) -> None:
        self.alpha = alpha

    def fit(self, scores: Scores, Y: Any) -> MetaLabeler:
        from sklearn.linear_model import Ridge

        if scores is None or Y is None:
            raise ValueError("metalabeler needs training scores and labels")
        alpha = check_param("alpha", self.alpha, float, low=0)
        S, Y = _check_training(scores, Y)
        counts = np.asarray(Y.sum(axis=1), dtype=np.float64).ravel()
        model = Ridge(alpha=alpha).fit(S, counts)
        self.coef_ = np.asarray(model.coef_, dtype=np.float64).ravel()
        self.intercept_ = float(model.intercept_)
        self.n_labels_ = int(S.shape[1])
        self.training_error_ = float(np.mean(np.abs(self.counts(S) - counts)))
        return self

    def counts(self, scores: Scores) -> np.ndarray:
        """The number of labels each instance gets."""
        if not hasattr(self, "coef_"):
            raise ValueError("MetaLabeler is not fitted: call fit(scores, Y) first")
        S = check_scores(scores, n_labels=self.n_labels_)
        raw = np.asarray(S @ self.coef_).ravel() + self.intercept_
        return np.clip(np.floor(raw + 0.5), 0, self.n_labels_).astype(np.int64)

    def predict(self, scores: Scores) -> Any:
        S = check_scores(scores)
        return top_k(S, self.counts(S))
