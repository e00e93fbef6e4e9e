"""Feature normalisation of the LCIF learners: the [0, 1] scaling of
:class:`~mlw_lcif._prep.FeatureScaler`, optionally followed by unit-length feature
columns.

``"max"``: every feature scaled to [0, 1] (binary words unchanged).
``"l2"``: the same, then every feature column divided by its L2 norm over the training
rows, so each feature vector has unit length. For binary words a present word then
weighs 1/sqrt(document frequency): in the instance cosine a shared rare word counts
more than a shared frequent one, and in conf_FL a rare word's vote counts more. The
feature→label cosines themselves do not change (a cosine ignores column scaling).
``"idf"``: the [0, 1] scaling, then every feature multiplied by its inverse document
frequency ``ln((n + 1) / (df + 1)) + 1`` over the n training rows (df: the rows where
it is non-zero), tf-idf weighting of a bag of words, the weighting the paper leaves to
future work (Section V); a stronger down-weighting of frequent words than ``"l2"``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw_lcif._prep import FeatureScaler

#: The normalisations a learner's ``feature_norm`` can name.
FEATURE_NORMS: tuple[str, ...] = ("max", "l2", "idf")
#: Those ``feature_norm="auto"`` chooses among in the search for a label-set metric (the
#: search for a metric at k tries all of FEATURE_NORMS).
AUTO_NORMS_LABEL_SETS: tuple[str, ...] = ("max", "l2")


class UnitColumnScaler(FeatureScaler):
    """:class:`FeatureScaler`, then each column divided by its training L2 norm."""

    def fit(self, X: Any) -> UnitColumnScaler:
        super().fit(X)
        M = super().transform(X)
        sq = np.zeros(X.shape[1])
        np.add.at(sq, M.indices, M.data * M.data)
        norm = np.sqrt(sq)
        self.col_ = np.where(norm > 0, 1.0 / np.where(norm > 0, norm, 1.0), 0.0)
        return self

    def transform(self, X: Any) -> sp.csr_matrix:
        M = super().transform(X)
        M.data *= self.col_[M.indices]
        M.eliminate_zeros()
        return M


class IdfScaler(UnitColumnScaler):
    """:class:`FeatureScaler`, then each column multiplied by its training idf."""

    def fit(self, X: Any) -> IdfScaler:
        FeatureScaler.fit(self, X)
        M = FeatureScaler.transform(self, X)
        df = np.bincount(M.indices, minlength=X.shape[1]).astype(np.float64)
        self.col_ = np.log((X.shape[0] + 1.0) / (df + 1.0)) + 1.0
        return self


def feature_scaler(norm: str) -> FeatureScaler:
    """An unfitted scaler for a ``feature_norm`` value (``"max"``, ``"l2"``, ``"idf"``)."""
    if norm == "max":
        return FeatureScaler()
    if norm == "l2":
        return UnitColumnScaler()
    if norm == "idf":
        return IdfScaler()
    raise ValueError(f"feature_norm must be one of {FEATURE_NORMS} (or 'auto' with cv), "
                     f"got {norm!r}")
