"""A random forest of multi-output trees (predictive clustering trees) whose joint
distribution P(y | x) comes from the training label sets in the leaves."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from mlw.validation import check_param
from mlw_baselines._common import dense_labels
from mlw_baselines._ensemble import parallel_map, sample_rows
from mlw_baselines.label_powerset import LabelPowerset


def _grow_tree(X_fit: Any, X_apply: Any, Yd: np.ndarray, classes: np.ndarray,
               n_classes: int, weight: np.ndarray, seed: int, max_features: Any,
               min_samples_leaf: int) -> tuple[Any, sp.csr_matrix]:
    """One multi-output tree grown on ``weight``-weighted rows, and its leaves' class
    distribution: a CSR of shape (node_count, n_classes) whose leaf rows hold the
    weighted share of each training label set among the rows that reach the leaf."""
    from sklearn.tree import DecisionTreeClassifier

    tree = DecisionTreeClassifier(max_features=max_features,
                                  min_samples_leaf=min_samples_leaf, random_state=seed)
    tree.fit(X_fit, Yd, sample_weight=weight)
    inbag = np.flatnonzero(weight > 0)
    leaves = tree.apply(X_apply[inbag])
    table = sp.csr_matrix((weight[inbag], (leaves, classes[inbag])),
                          shape=(tree.tree_.node_count, n_classes))
    table.sum_duplicates()
    totals = np.asarray(table.sum(axis=1)).ravel()
    table = sp.diags(1.0 / np.where(totals > 0, totals, 1.0)) @ table
    return tree, sp.csr_matrix(table)


class PCTForest(LabelPowerset):
    """Random forest of predictive clustering trees (RF-PCT): multi-output trees whose
    leaves hold the training label sets, so the forest gives a whole joint
    distribution.

    Each tree is a scikit-learn multi-output ``DecisionTreeClassifier``, grown on a
    bootstrap sample (Breiman's bagging) with ``max_features`` features tried per
    split; its splits minimise the sum over labels of the Gini impurity (twice the
    variance of a 0/1 label), the criterion of predictive clustering trees (Blockeel et
    al. 1998) that RF-PCT (Kocev et al. 2013) bags, and that Madjarov et al. (2012)
    found among the best multi-label methods. The joint distribution is

        P(y | x) = (1 / T) sum_t  w_t(leaf_t(x), y) / w_t(leaf_t(x)),

    the mean over the T trees of the (bootstrap-weighted) share of label set ``y`` among
    the training rows in the leaf ``x`` falls into. It lives on the label sets seen in
    training, as a label powerset's does, so the forest inherits everything
    :class:`LabelPowerset` derives from a distribution over those sets: ``predict`` is
    the most probable set (the exact joint mode, what the ``subset`` decoder takes),
    ``predict_proba`` its marginals (the mean of the trees' leaf label frequencies,
    scikit-learn's multi-output forest probabilities; the ``hamming`` decoder cuts
    them at 0.5), ``size_marginals`` the exact P(y_j = 1, |y| = s | x) the ``f1``
    decoder runs GFM on, and ``log_proba_of`` log P(y | x).

    Parameters
    ----------
    n_estimators : int
        Number of trees (scikit-learn's default for its forests).
    max_features : {"sqrt", "log2"}, int, float or None
        Features tried at each split, as scikit-learn's trees read it: ``"sqrt"`` is
        the square root of the number of features (Breiman's choice for
        classification forests), a float a fraction of them, ``None`` all (bagging).
    min_samples_leaf : int
        Fewest (bootstrap-weighted) training rows in a leaf; 1 grows each tree until
        its leaves are pure in every label or cannot be split.
    bootstrap : bool
        Each tree sees a bootstrap sample of the rows (``False``: all rows, each tree
        then differs only by its feature draws).
    random_state : int or None
        Seed of the bootstrap samples and of the trees' feature draws.
    n_jobs : int or None
        Trees grown in parallel by joblib (``None``: one at a time, ``-1``: all cores).

    Attributes
    ----------
    label_sets_ : ndarray of uint8, shape (n_classes, n_labels)
        The distinct training label sets (lexicographic order).
    class_counts_ : ndarray of int
        Training instances per label set.
    estimators_ : list of DecisionTreeClassifier
        The fitted trees.
    leaf_proba_ : scipy CSR of shape (total nodes, n_classes)
        The trees' node tables stacked: row ``node_offsets_[t] + v`` is the
        distribution over ``label_sets_`` in leaf ``v`` of tree ``t``.
    node_offsets_ : ndarray of int64, shape (n_estimators,)
        First row of each tree's table in ``leaf_proba_``.

    References
    ----------
    Kocev, Vens, Struyf and Džeroski, "Tree ensembles for predicting structured
    outputs", Pattern Recognition 46 (2013). Madjarov, Kocev, Gjorgjevikj and Džeroski,
    "An extensive experimental comparison of methods for multi-label learning", Pattern
    Recognition 45 (2012).

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_baselines import PCTForest
    >>> X = np.array([[0.0], [0.1], [0.2], [1.0], [1.1], [1.2]])
    >>> Y = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [1, 1], [1, 1]])
    >>> forest = PCTForest(n_estimators=20).fit(X, Y)
    >>> forest.predict([[0.05], [1.15]]).tolist()
    [[1, 0], [1, 1]]
    >>> forest.predict_classes([[0.05]]).round(2).tolist()
    [[0.0, 1.0, 0.0]]
    """

    _joint_prediction: ClassVar[bool] = True

    def __init__(self, *, n_estimators: int = 100, max_features: Any = "sqrt",
                 min_samples_leaf: int = 1, bootstrap: bool = True,
                 random_state: int | None = 0, n_jobs: int | None = None) -> None:
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _fit(self, X: Any, Y: Any, sample_weight: np.ndarray | None = None) -> None:
        n_trees = check_param("n_estimators", self.n_estimators, int, low=1)
        min_leaf = check_param("min_samples_leaf", self.min_samples_leaf, int, low=1)
        bootstrap = check_param("bootstrap", self.bootstrap, bool)
        Yd = dense_labels(Y)
        sets, classes, counts = np.unique(Yd, axis=0, return_inverse=True,
                                          return_counts=True)
        classes = np.asarray(classes).ravel()
        self.label_sets_ = np.ascontiguousarray(sets, dtype=np.uint8)
        self.class_counts_ = counts.astype(np.int64)
        self._class_index = {row.tobytes(): k for k, row in enumerate(self.label_sets_)}
        n = X.shape[0]
        base = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
        rng = np.random.default_rng(self.random_state)
        jobs = []
        for seed in rng.integers(0, np.iinfo(np.int32).max, size=n_trees):
            weight = base
            if bootstrap:
                weight = base * np.bincount(sample_rows(n, True, 1.0, rng), minlength=n)
            jobs.append((weight, int(seed)))
        # scikit-learn's trees grow on float32 CSC and route rows of float32 CSR: convert
        # once, not once per tree
        if sp.issparse(X):
            X_fit, X_apply = sp.csc_matrix(X, dtype=np.float32), sp.csr_matrix(X, dtype=np.float32)
        else:
            X_fit = X_apply = np.asarray(X, dtype=np.float32)
        grown = parallel_map(self.n_jobs, _grow_tree,
                             [(X_fit, X_apply, Yd, classes, len(sets), w, s,
                               self.max_features, min_leaf) for w, s in jobs])
        self.estimators_ = [tree for tree, _ in grown]
        sizes = np.array([table.shape[0] for _, table in grown], dtype=np.int64)
        self.node_offsets_ = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.leaf_proba_ = sp.csr_matrix(sp.vstack([table for _, table in grown],
                                                   format="csr"))

    def _class_proba(self, X: Any) -> np.ndarray:
        X = sp.csr_matrix(X, dtype=np.float32) if sp.issparse(X) \
            else np.asarray(X, dtype=np.float32)
        n, n_trees = X.shape[0], len(self.estimators_)
        leaves = np.empty((n, n_trees), dtype=np.int64)
        for t, tree in enumerate(self.estimators_):
            leaves[:, t] = tree.apply(X) + self.node_offsets_[t]
        routes = sp.csr_matrix((np.full(n * n_trees, 1.0 / n_trees), leaves.ravel(),
                                np.arange(0, n * n_trees + 1, n_trees)),
                               shape=(n, self.leaf_proba_.shape[0]))
        return np.asarray((routes @ self.leaf_proba_).toarray())
