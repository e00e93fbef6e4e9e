"""HOMER (Tsoumakas, Katakis and Vlahavas, 2008): a hierarchy of multi-label learners
over a tree of label clusters built by balanced k-means."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from mlw import MultiLabelLearner
from mlw.validation import check_param
from mlw_baselines._base_estimator import ConstantModel
from mlw_baselines._common import single_blas_thread


def balanced_kmeans(V: Any, k: int, iterations: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Balanced k-means of HOMER: cluster the rows of ``V`` (one per label: its 0/1
    column over the training instances, CSR or dense) into ``k`` clusters of at most
    ``ceil(n / k)`` rows each, by Euclidean distance to the centroids.

    Each iteration empties the clusters and inserts the rows in order; a row goes to its
    nearest centroid, and when that cluster overflows, its member farthest from the
    centroid is evicted and moves on to its next nearest cluster (Tsoumakas et al.,
    2008, Fig. 2). Centroids start at ``k`` distinct random rows. Returns the clusters
    (row indices, sorted), none empty.
    """
    n = V.shape[0]
    cap = -(-n // k)
    sq = np.asarray(V.multiply(V).sum(axis=1)).ravel() if sp.issparse(V) \
        else (V * V).sum(axis=1)
    centers = np.asarray(V[np.sort(rng.choice(n, size=k, replace=False))].todense()
                         if sp.issparse(V) else V[np.sort(rng.choice(n, size=k, replace=False))],
                         dtype=np.float64)
    members: list[list[int]] = [[] for _ in range(k)]
    for _ in range(max(1, iterations)):
        D = sq[:, None] + (centers * centers).sum(axis=1)[None, :] \
            - 2.0 * np.asarray(V @ centers.T)
        members = [[] for _ in range(k)]
        for row in range(n):
            v = row
            while True:
                j = int(np.argmin(D[v]))
                members[j].append(v)
                if len(members[j]) <= cap:
                    break
                # evict the member farthest from the centroid (ties: the later row);
                # it never comes back to this cluster in this pass
                far = max(members[j], key=lambda r, j=j: (D[r, j], r))
                members[j].remove(far)
                D[far, j] = np.inf
                v = far
        new = np.zeros_like(centers)
        for j, rows in enumerate(members):
            if rows:
                block = V[rows]
                new[j] = np.asarray(block.mean(axis=0)).ravel()
            else:
                new[j] = centers[j]
        if np.allclose(new, centers):
            break
        centers = new
    return [np.sort(np.array(rows, dtype=np.int64)) for rows in members if rows]



@dataclass
class HomerNode:
    """One node of HOMER's hierarchy: the labels below it, its children's label sets
    (a child of one label is a leaf), the child nodes (``None`` for a leaf) and the
    multi-label learner that predicts the children's meta-labels (``None`` when no
    training instance reached the node)."""

    labels: np.ndarray
    children: list[np.ndarray]
    child_nodes: list[HomerNode | None] = field(default_factory=list)
    model: Any = None
    n_train: int = 0


def _meta_labels(Y: Any, children: list[np.ndarray]) -> np.ndarray:
    """``M[i, c] = 1`` iff instance ``i`` has a label of child ``c`` (the meta-label)."""
    cols = [np.asarray(Y[:, c].sum(axis=1)).ravel() > 0 for c in children]
    return np.column_stack(cols).astype(np.uint8)


class HOMER(MultiLabelLearner):
    """HOMER, Hierarchy Of Multi-label classifiERs (Tsoumakas, Katakis and Vlahavas,
    "Effective and efficient multilabel classification in domains with large number of
    labels", ECML/PKDD 2008 Workshop on Mining Multidimensional Data).

    The labels are split recursively into ``n_clusters`` groups by balanced k-means
    on their columns of the training label matrix (similar labels occur on the same
    instances), down to single labels: a tree whose internal nodes stand for
    *meta-labels* (the union of their labels). Each node has a multi-label learner
    (binary relevance, as in the paper and Mulan) predicting its children's
    meta-labels, trained on the instances that have a label below the node (all
    instances at the root).

    ``predict`` goes down the tree: an instance reaches a child when the node's
    learner gives the child's meta-label probability ``>= 0.5``, and gets the leaves it
    reaches. ``predict_proba`` is the product of the probabilities along the path to
    each label (the probability of reaching it), so that ``predict`` is exactly "every
    factor on the path is >= 0.5".

    Parameters
    ----------
    base_estimator : None, str or scikit-learn classifier
        The binary classifier of every node's binary relevance (see
        :class:`BinaryRelevance`).
    base_params : dict or None
        Parameters of the base classifier, set on it with ``set_params``
        (``{"C": 10}``; on a pipeline shortcut, names its last step lacks go to
        the classifier); ``--param base__C=10`` on the command line.
    n_clusters : int
        Children per node (``k``, default 3 as in Mulan; >= 2).
    iterations : int
        Balanced k-means iterations per node (default 10; stops early at a fixed point).
    random_state : int or None
        Seed of the k-means starts and of the randomised shortcut classifiers.
    n_jobs : int or None
        Labels of each node's binary relevance fitted in parallel by joblib.
    top_label : bool or "auto"
        The core's top-label rule on the joint decision: a row that reaches no leaf gets
        the label of highest path probability. ``"auto"`` (default) only when at most 1%
        of the training label sets are empty; ``False`` is the paper's decision alone,
        which left 1.5-18% of the test rows empty on data where none is
        (``docs/guide/thresholds.md``).

    Attributes
    ----------
    root_ : HomerNode
        The hierarchy and its learners.
    n_nodes_ : int
        Internal nodes (learners) in the hierarchy.

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_baselines import HOMER
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 4))
    >>> Y = (X @ rng.normal(size=(4, 7)) > 0.5).astype(int)
    >>> homer = HOMER(n_clusters=2).fit(X, Y)
    >>> homer.n_nodes_ >= 3, homer.predict(X).shape
    (True, (120, 7))
    """

    _joint_prediction: ClassVar[bool] = True

    def __init__(self, *, base_estimator: Any = None, base_params: dict | None = None,
                 n_clusters: int = 3,
                 iterations: int = 10, random_state: int | None = 0,
                 n_jobs: int | None = None, top_label: bool | str = "auto") -> None:
        self.base_estimator = base_estimator
        self.base_params = base_params
        self.n_clusters = n_clusters
        self.iterations = iterations
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.top_label = top_label

    @single_blas_thread
    def _fit(self, X: Any, Y: Any) -> None:
        k = check_param("n_clusters", self.n_clusters, int, low=2)
        iterations = check_param("iterations", self.iterations, int, low=1)
        rng = np.random.default_rng(self.random_state)
        Yc = Y.tocsc() if sp.issparse(Y) else np.ascontiguousarray(Y)
        self._n_nodes = 0
        self.root_ = self._build(X, Yc, np.arange(Y.shape[1]), np.arange(X.shape[0]), k,
                                 iterations, rng)
        self.n_nodes_ = self._n_nodes

    def _build(self, X: Any, Y: Any, labels: np.ndarray, rows: np.ndarray, k: int,
               iterations: int, rng: np.random.Generator) -> HomerNode:
        from mlw_baselines.binary_relevance import BinaryRelevance

        Ynode = Y[rows][:, labels]
        if labels.size <= k:
            children = [labels[[c]] for c in range(labels.size)]
        else:
            columns = Ynode.T.tocsr() if sp.issparse(Ynode) else \
                np.ascontiguousarray(Ynode.T, dtype=np.float64)
            if sp.issparse(columns):
                columns = columns.astype(np.float64)
            clusters = balanced_kmeans(columns, k, iterations, rng)
            children = [labels[c] for c in clusters]
        node = HomerNode(labels=labels, children=children, n_train=int(rows.size))
        self._n_nodes += 1
        meta = _meta_labels(Y[rows], children) if rows.size else None
        if rows.size:
            node.model = BinaryRelevance(base_estimator=self.base_estimator,
                                         base_params=self.base_params,
                                         random_state=self.random_state,
                                         n_jobs=self.n_jobs).fit(X[rows], meta)
        for c, child in enumerate(children):
            if child.size == 1:
                node.child_nodes.append(None)
                continue
            sub = rows[meta[:, c] == 1] if meta is not None else rows[:0]
            node.child_nodes.append(self._build(X, Y, child, sub, k, iterations, rng))
        return node

    def _walk(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        n = X.shape[0]
        scores = np.zeros((n, self.n_labels_))
        decision = np.zeros((n, self.n_labels_), dtype=np.uint8)

        def visit(node: HomerNode, reach: np.ndarray, ok: np.ndarray) -> None:
            if node.model is None:  # no training instance reached it: no evidence
                P = np.full((n, len(node.children)), ConstantModel.binary(np.zeros(0)).proba[1])
            else:
                P = node.model._predict_proba(X)
            for c, (child, sub) in enumerate(zip(node.children, node.child_nodes, strict=False)):
                r, o = reach * P[:, c], ok & (P[:, c] >= 0.5)
                if sub is None:
                    scores[:, child[0]] = r
                    decision[:, child[0]] = o
                else:
                    visit(sub, r, o)

        visit(self.root_, np.ones(n), np.ones(n, dtype=bool))
        return decision, scores

    @single_blas_thread
    def _predict_with_scores(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        return self._walk(X)

    def _predict(self, X: Any) -> np.ndarray:
        return self._predict_with_scores(X)[0]

    def _predict_proba(self, X: Any) -> np.ndarray:
        return self._predict_with_scores(X)[1]
