"""LaCovaC forest: bagging with random feature subsets over LaCovaC trees (the future
work named in the paper)."""

from __future__ import annotations

import os
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from mlw import MultiLabelLearner
from mlw.validation import check_Y
from mlw_lacovac import model as _model
from mlw_lacovac._kernels import histogram_bins, ones_features, rank_bins
from mlw_lacovac._leaves import add_size_marginals, leaf_models, log_proba, predict, sample
from mlw_lacovac._tree import TreeBuilder, child_sizes
from mlw_lacovac.model import (
    _check_common,
    check_marginals,
    check_max_bins,
    check_min_child,
    check_n_samples,
    check_training_data,
    drop_zero_weight,
    seed_from,
)


class LaCovaCForest(MultiLabelLearner):
    """An ensemble of LaCovaC trees, each grown on a bootstrap sample with a random
    subset of ``max_features`` features drawn at every horizontal split.

    ``predict_proba`` averages the trees' marginals; ``predict`` is a vote on whole
    label vectors: the joint decision (concatenated leaf modes) given by most trees,
    ties broken by the larger mean marginal log-likelihood of the tied vectors;
    ``log_proba_of`` is the log of the mean of the trees' joint probabilities.

    Parameters
    ----------
    n_estimators : int
        Number of trees.
    max_features : "sqrt", "log2", int, float in (0, 1] or None
        Features considered at each horizontal split (None: all, i.e. plain bagging).
        The default, 30% of the features, suits sparse text-like data, where most of
        sqrt(d) random words are absent from a node (genbase 10-fold exact match 0.93
        with 0.3, 0.30 with "sqrt"); on dense data both did equally well.
    min_samples, min_child, min_child_numeric, z, alpha, marginals, max_bins :
        As for :class:`~mlw_lacovac.LaCovaC`.
    bootstrap : bool
        Grow each tree on a bootstrap sample (otherwise on all rows).
    random_state : int
        Seed of the bootstrap and feature draws.
    n_jobs : int or None
        Threads that grow trees at once (the tree builder releases the GIL); None or 1:
        one thread, -1: one per CPU. The forest is the same whatever ``n_jobs``.
    top_label : bool or "auto"
        The core's top-label rule on the vote: a row whose voted vector is the empty set
        gets its label of highest mean marginal. ``"auto"`` (default) only when at most
        1% of the training label sets are empty; ``False`` is the vote alone, which left
        1.9-39% of the test rows empty on shared datasets where none is
        (``docs/guide/thresholds.md``).

    Notes
    -----
    ``fit(X, Y, sample_weight=w)``: each tree weighs the rows of its bootstrap sample as
    :class:`~mlw_lacovac.LaCovaC` does (frequencies; positive weights); the bootstrap
    draws rows uniformly, as scikit-learn's random forest does.
    """

    _joint_prediction: ClassVar[bool] = True

    def __init__(self, *, n_estimators: int = 10, max_features: Any = 0.3,
                 min_samples: int = 5, z: float = 1.96, alpha: float = 1.0,
                 bootstrap: bool = True, random_state: int = 0,
                 marginals: str = "laplace", max_bins: int | None = 64, min_child: int = 1,
                 min_child_numeric: int | None = None, n_jobs: int | None = None,
                 top_label: bool | str = "auto") -> None:
        self.top_label = top_label
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.min_samples = min_samples
        self.z = z
        self.alpha = alpha
        self.bootstrap = bootstrap
        self.random_state = random_state
        self.marginals = marginals
        self.max_bins = max_bins
        self.min_child = min_child
        self.min_child_numeric = min_child_numeric
        self.n_jobs = n_jobs

    def _threads(self) -> int:
        j = self.n_jobs
        if j is None:
            return 1
        if isinstance(j, bool) or not isinstance(j, (int, np.integer)) or j == 0 or j < -1:
            raise ValueError(f"n_jobs must be None, -1 or an integer >= 1, got {j!r}")
        return (os.cpu_count() or 1) if j == -1 else int(j)

    def _n_features(self, d: int) -> int | None:
        mf = self.max_features
        if mf is None:
            return None
        if mf == "sqrt":
            return max(1, int(np.sqrt(d)))
        if mf == "log2":
            return max(1, int(np.log2(d)))
        if isinstance(mf, (int, np.integer)) and not isinstance(mf, bool) and mf >= 1:
            return int(min(mf, d))
        if isinstance(mf, float) and 0.0 < mf <= 1.0:
            return max(1, int(mf * d))
        raise ValueError(f"max_features must be 'sqrt', 'log2', None, an int >= 1 or a "
                         f"float in (0, 1], got {mf!r}")

    def _fit(self, X: Any, Y: Any, sample_weight: np.ndarray | None = None) -> None:
        m = _check_common(self.min_samples, self.alpha)
        X, Y, w = drop_zero_weight(X, Y, sample_weight)
        if not isinstance(self.n_estimators, (int, np.integer)) or self.n_estimators < 1:
            raise ValueError(f"n_estimators must be an integer >= 1, got {self.n_estimators!r}")
        check_marginals(self.marginals)
        bins = check_max_bins(self.max_bins)
        mc, mcn = check_min_child(self.min_child, self.min_child_numeric)
        Yc = check_training_data(X, Y, m)
        sizes = child_sizes(X, mc, mcn, m)
        k = self._n_features(X.shape[1])
        threads = self._threads()
        xbin = xone = None
        if sp.issparse(X):
            xone = ones_features(X)
        else:
            xbin = histogram_bins(X, bins, w) if bins is not None else rank_bins(X)
        rng = np.random.default_rng(self.random_state)
        n = X.shape[0]
        plans = []
        for _ in range(int(self.n_estimators)):
            rows = rng.integers(0, n, size=n) if self.bootstrap else np.arange(n)
            plans.append((np.sort(rows), int(rng.integers(2**63))))
        builder = TreeBuilder("lacovac", m, sizes, z=float(self.z), max_features=k,
                              max_bins=bins, xbin=xbin, xone=xone)
        self.trees_ = builder.fit_many(X, Yc, plans, n_jobs=threads, sample_weight=w)
        self.leaf_models_ = [leaf_models(t, float(self.alpha), self.marginals)
                             for t in self.trees_]

    def _predict_proba(self, X: Any) -> np.ndarray:
        P = np.zeros((X.shape[0], self.n_labels_))
        for tree, models in zip(self.trees_, self.leaf_models_, strict=True):
            predict(tree, models, X, self.n_labels_, joint=False, out=P)
        return P / len(self.trees_)

    def _predict(self, X: Any) -> np.ndarray:
        votes = np.stack([predict(t, ms, X, self.n_labels_, proba=False)[1]
                          for t, ms in zip(self.trees_, self.leaf_models_, strict=True)], axis=1)
        P = np.clip(self._predict_proba(X), 1e-12, 1 - 1e-12)
        out = np.zeros((X.shape[0], self.n_labels_), np.uint8)
        for i in range(X.shape[0]):
            cand, count = np.unique(votes[i], axis=0, return_counts=True)
            top = np.flatnonzero(count == count.max())
            if top.size > 1:
                ll = cand[top] @ np.log(P[i]) + (1 - cand[top]) @ np.log1p(-P[i])
                top = top[[int(np.argmax(ll))]]
            out[i] = cand[top[0]]
        return out

    def joint_mode(self, X: Any) -> np.ndarray:
        """The forest's joint decision, shape (n, L): the label vector most trees vote
        for (each tree's most frequent leaf subset), ties by the marginals' likelihood."""
        check_is_fitted(self, "trees_")
        return self._predict(self._validate_X(X, reset=False))

    def log_proba_of(self, X: Any, Y: Any) -> np.ndarray:
        """log of the mean over trees of P_tree(y_i | x_i), shape (n,)."""
        check_is_fitted(self, "trees_")
        X = self._validate_X(X, reset=False)
        Y = check_Y(Y, n_rows=X.shape[0], n_labels=self.n_labels_)
        lp = np.stack([log_proba(t, ms, X, Y, float(self.alpha))
                       for t, ms in zip(self.trees_, self.leaf_models_, strict=False)])
        mx = lp.max(axis=0)
        # a vector no tree gives probability (alpha = 0) has log P = -inf, not NaN
        safe = np.where(np.isfinite(mx), mx, 0.0)
        with np.errstate(divide="ignore"):
            return np.where(np.isfinite(mx),
                            safe + np.log(np.mean(np.exp(lp - safe), axis=0)), mx)

    # -- what the decoders use (mlw.decoders) -----------------------------------------------
    def size_marginals(self, X: Any) -> np.ndarray | None:
        """Exact P(y_j = 1, |y| = s | x) of the forest's joint, the mean of the trees'
        joints (as ``log_proba_of``): the mean of the trees' size marginals (each as
        ``LaCovaC.size_marginals``), shape (n, L, L); ``None`` above 256 labels."""
        check_is_fitted(self, "trees_")
        X = self._validate_X(X, reset=False)
        if self.n_labels_ > _model.EXACT_SIZE_LABELS:
            return None
        out = np.zeros((X.shape[0], self.n_labels_, self.n_labels_))
        for tree, models in zip(self.trees_, self.leaf_models_, strict=True):
            add_size_marginals(tree, models, X, float(self.alpha), 1.0 / len(self.trees_),
                               out)
        return out

    def sample_labels(self, X: Any, *, n_samples: int = 100,
                      random_state: int | None = None) -> np.ndarray:
        """``n_samples`` label vectors per row drawn from the forest's joint (a tree
        drawn uniformly for each vector, then from its leaves as
        ``LaCovaC.sample_labels``), uint8 of shape (n, n_samples, L), seeded by
        ``random_state``."""
        check_is_fitted(self, "trees_")
        T = check_n_samples(n_samples)
        X = self._validate_X(X, reset=False)
        rng = np.random.default_rng(seed_from(random_state))
        which = rng.integers(len(self.trees_), size=(X.shape[0], T))
        out = np.zeros((X.shape[0], T, self.n_labels_), np.uint8)
        for k, (tree, models) in enumerate(zip(self.trees_, self.leaf_models_, strict=True)):
            pick = which == k
            if pick.any():
                sample(tree, models, X, float(self.alpha), pick,
                       int(rng.integers(2**32)), out)
        return out
