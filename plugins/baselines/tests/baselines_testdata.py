"""Small data sets shared by the baselines tests (module name unique repository-wide)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression


def correlated(n: int = 120, d: int = 5, L: int = 4, seed: int = 0):
    """Dense X and labels drawn from a random chain of logistic links, so the labels
    depend on the features and on each other."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Wx = rng.normal(scale=1.5, size=(L, d))
    Wy = np.tril(rng.normal(scale=2.0, size=(L, L)), -1)
    Y = np.zeros((n, L), dtype=np.uint8)
    for j in range(L):
        z = X @ Wx[j] + Y[:, :j] @ Wy[j, :j] - 0.3
        Y[:, j] = rng.random(n) < 1.0 / (1.0 + np.exp(-z))
    return X, Y


def sparse_text(n: int = 150, d: int = 60, L: int = 4, density: float = 0.08, seed: int = 1):
    """CSR 0/1 "word" features and labels that depend on a few words each."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: np.ones(k))
    X.data[:] = 1.0
    Y = np.zeros((n, L), dtype=np.uint8)
    for j in range(L):
        words = rng.choice(d, size=6, replace=False)
        score = np.asarray(X[:, words].sum(axis=1)).ravel()
        Y[:, j] = (score + rng.normal(scale=0.3, size=n)) > 0.5
    return X, Y


class SparseOnlyLR(LogisticRegression):
    """Fails loudly if it is ever given dense features."""

    def fit(self, X, y, sample_weight=None):
        assert sp.issparse(X), f"densified: got {type(X).__name__}"
        return super().fit(X, y, sample_weight)

    def predict_proba(self, X):
        assert sp.issparse(X), f"densified: got {type(X).__name__}"
        return super().predict_proba(X)

    def decision_function(self, X):
        assert sp.issparse(X), f"densified: got {type(X).__name__}"
        return super().decision_function(X)
