"""A per-label nearest-centroid learner: the smallest complete mlw learner."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

import mlw


def _col_means(X: Any, rows: np.ndarray) -> np.ndarray:
    if rows.size == 0:
        return np.zeros(X.shape[1])
    return np.asarray(X[rows].mean(axis=0)).ravel()


class NearestCentroid(mlw.MultiLabelLearner):
    """Per-label nearest centroid.

    For every label j, ``fit`` stores the mean feature vector of the training instances
    with the label (mu+) and without it (mu-). The score of label j for x is
    ``d-/(d+ + d-)`` with ``d+ = ||x - mu+||`` and ``d- = ||x - mu-||``: 1 at the
    positive centroid, 0 at the negative one, 0.5 half-way. A label that never (always)
    occurs in training scores 0 (1). Distances are taken after dividing every feature
    by its training standard deviation (no centring, so sparse ``X`` stays sparse:
    distances are computed as ``||x||^2 - 2 x.mu + ||mu||^2``).

    Parameters
    ----------
    threshold : str, default "pcut"
        A registered thresholding strategy, tuned in ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [1.0], [1.1]])
    >>> Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
    >>> NearestCentroid(threshold="fixed").fit(X, Y).predict(np.array([[0.05], [1.05]]))
    array([[1, 0],
           [0, 1]])
    """

    def __init__(self, threshold: str = "pcut") -> None:
        self.threshold = threshold

    def _scaled(self, X: Any) -> Any:
        if sp.issparse(X):
            return sp.csr_matrix(X.multiply(self.inv_scale_[None, :]))
        return X * self.inv_scale_[None, :]

    def _fit(self, X: Any, Y: Any) -> None:
        if sp.issparse(X):
            mean = np.asarray(X.mean(axis=0)).ravel()
            var = np.asarray(X.multiply(X).mean(axis=0)).ravel() - mean**2
        else:
            var = X.var(axis=0)
        std = np.sqrt(np.maximum(var, 0.0))
        self.inv_scale_ = np.where(std > 0, 1.0 / np.where(std > 0, std, 1.0), 1.0)
        X = self._scaled(X)
        Yd = Y.toarray() if sp.issparse(Y) else Y  # (n, L) uint8; L is small here
        L = Yd.shape[1]
        self.pos_centroids_ = np.zeros((L, X.shape[1]))
        self.neg_centroids_ = np.zeros((L, X.shape[1]))
        self.label_frequency_ = Yd.mean(axis=0).astype(np.float64)
        for j in range(L):
            self.pos_centroids_[j] = _col_means(X, np.flatnonzero(Yd[:, j]))
            self.neg_centroids_[j] = _col_means(X, np.flatnonzero(Yd[:, j] == 0))

    def _sq_distances(self, X: Any, C: np.ndarray) -> np.ndarray:
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) \
            else np.einsum("ij,ij->i", X, X)
        d = sq[:, None] - 2.0 * np.asarray(X @ C.T) + np.einsum("ij,ij->i", C, C)[None, :]
        return np.maximum(d, 0.0)

    def _predict_proba(self, X: Any) -> np.ndarray:
        X = self._scaled(X)
        d_pos = np.sqrt(self._sq_distances(X, self.pos_centroids_))
        d_neg = np.sqrt(self._sq_distances(X, self.neg_centroids_))
        total = d_pos + d_neg
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = np.where(total > 0, d_neg / total, 0.5)
        scores[:, self.label_frequency_ == 0.0] = 0.0
        scores[:, self.label_frequency_ == 1.0] = 1.0
        return scores
