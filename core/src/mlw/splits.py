"""Folds: iteratively stratified k-fold assignment, and the one function that cuts a
dataset into a fold's training and test parts (:func:`fold_parts`).

Iterative stratification follows Sechidis, Tsoumakas and Vlahavas (2011), "On the
stratification of multi-label data" (ECML PKDD), Algorithm 1, with k subsets of equal
desired proportion 1/k:

1. every subset j desires ``c_j = n / k`` examples, and ``c_j^i = n_i / k`` examples of
   each label i (``n_i`` = examples with label i);
2. while labelled examples remain, take the label l with the fewest (but at least one)
   remaining examples, ties broken at random; hand each of its remaining examples to the
   subset that desires label l most, ties broken by the larger overall desire ``c_j``,
   remaining ties at random; decrement the desires of the chosen subset for every label
   of the example and overall;
3. examples with no label at all go, one at a time, to the subset with the largest
   overall desire ``c_j`` (ties at random).

Choices where the paper leaves room (documented in ``docs/reference/index.md``): the examples of
label l are visited in a seeded random order (the paper iterates "each example" without
an order); all random choices come from one ``numpy.random.default_rng(seed)``, so a
split is a pure function of ``(Y, k, seed)``; desires may become negative, as in the
paper.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.dataset import Dataset
from mlw.validation import check_Y

__all__ = ["IterativeStratifiedKFold", "cv_splits", "fold_parts", "iterative_stratification"]


def _label_structure(Y: Any) -> tuple[sp.csr_matrix, sp.csc_matrix]:
    """The 0/1 pattern of ``Y`` as CSR (labels of an example) and CSC (examples of a
    label), without densifying a sparse ``Y``."""
    Y = check_Y(Y)
    csr = sp.csr_matrix(Y, dtype=np.uint8) if not sp.issparse(Y) else Y
    csr.eliminate_zeros()
    return csr, csr.tocsc()


def iterative_stratification(Y: Any, n_splits: int, *, seed: int | None = 0) -> np.ndarray:
    """Assign each row of ``Y`` to one of ``n_splits`` folds by iterative stratification.

    Parameters
    ----------
    Y : (n, L) 0/1 label matrix, dense or CSR
    n_splits : int
        Number of folds k (2 <= k <= n).
    seed : int or None
        Seed of the random tie-breaking; the same seed gives the same folds.

    Returns
    -------
    ndarray of int64, shape (n,)
        The fold (0..k-1) of every row.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [1, 1], [0, 0]])
    >>> folds = iterative_stratification(Y, 2, seed=0)
    >>> sorted(np.bincount(folds).tolist())
    [3, 3]
    """
    if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)):
        raise ValueError(f"n_splits must be an integer, got {n_splits!r}")
    rows, cols = _label_structure(Y)
    n, L = rows.shape
    k = int(n_splits)
    if k < 2:
        raise ValueError(f"n_splits must be at least 2, got {k}")
    if k > n:
        raise ValueError(f"n_splits={k} is larger than the number of instances ({n})")
    rng = np.random.default_rng(seed)

    desired = np.full(k, n / k)                                   # c_j
    per_label = np.diff(cols.indptr).astype(np.float64)           # n_i
    desired_label = np.tile(per_label / k, (k, 1))                # c_j^i, shape (k, L)
    remaining = np.diff(cols.indptr).astype(np.int64)             # labelled examples left
    fold = np.full(n, -1, dtype=np.int64)
    r_ptr, r_idx = rows.indptr, rows.indices
    c_ptr, c_idx = cols.indptr, cols.indices

    while True:
        alive = np.flatnonzero(remaining > 0)
        if alive.size == 0:
            break
        fewest = remaining[alive].min()
        candidates = alive[remaining[alive] == fewest]
        label = int(candidates[rng.integers(candidates.size)]) if candidates.size > 1 \
            else int(candidates[0])
        examples = c_idx[c_ptr[label]:c_ptr[label + 1]]
        examples = examples[fold[examples] < 0]
        for e in examples[rng.permutation(examples.size)]:
            want = desired_label[:, label]
            best = np.flatnonzero(want == want.max())
            if best.size > 1:
                overall = desired[best]
                best = best[overall == overall.max()]
            m = int(best[rng.integers(best.size)]) if best.size > 1 else int(best[0])
            fold[e] = m
            its_labels = r_idx[r_ptr[e]:r_ptr[e + 1]]
            desired_label[m, its_labels] -= 1.0
            remaining[its_labels] -= 1
            desired[m] -= 1.0

    for e in np.flatnonzero(fold < 0)[rng.permutation(int((fold < 0).sum()))]:
        best = np.flatnonzero(desired == desired.max())
        m = int(best[rng.integers(best.size)]) if best.size > 1 else int(best[0])
        fold[e] = m
        desired[m] -= 1.0
    return fold


class IterativeStratifiedKFold:
    """k-fold cross-validation splitter with iterative stratification.

    A scikit-learn compatible splitter: pass it as ``cv=`` to ``GridSearchCV`` or
    ``cross_val_score`` (it needs ``Y``, the label matrix, as the ``y`` argument).

    Parameters
    ----------
    n_splits : int, default 10
    seed : int or None, default 0
        Seed of the tie-breaking; the same seed gives the same folds.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.eye(4, dtype=int).repeat(3, axis=0)
    >>> cv = IterativeStratifiedKFold(n_splits=3, seed=1)
    >>> [len(test) for _, test in cv.split(np.zeros((12, 1)), Y)]
    [4, 4, 4]
    """

    def __init__(self, n_splits: int = 10, *, seed: int | None = 0) -> None:
        self.n_splits = n_splits
        self.seed = seed

    def folds(self, Y: Any) -> np.ndarray:
        """The fold of every row (see :func:`iterative_stratification`)."""
        return iterative_stratification(Y, self.n_splits, seed=self.seed)

    def split(self, X: Any, y: Any = None, groups: Any = None
              ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(train_indices, test_indices)`` for each fold."""
        if y is None:
            raise ValueError("IterativeStratifiedKFold.split needs the label matrix as y")
        if X is not None and hasattr(X, "shape") and X.shape[0] != y.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but the label matrix has {y.shape[0]}")
        fold = self.folds(y)
        index = np.arange(fold.size)
        for j in range(self.n_splits):
            yield index[fold != j], index[fold == j]

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        return int(self.n_splits)

    def __repr__(self) -> str:
        return f"IterativeStratifiedKFold(n_splits={self.n_splits}, seed={self.seed})"


def fold_parts(dataset: Dataset, fold_of: np.ndarray, j: int) -> tuple[Dataset, Dataset]:
    """``(train, test)`` of fold ``j``: the rows assigned to other folds and the rows
    of fold ``j`` (``fold_of`` from :func:`iterative_stratification`), named
    ``NAME[train j]`` and ``NAME[fold j]``. The one place a fold is cut, for
    :func:`mlw.cross_validate`, ``mlw fit --cv``, every ``mlw bench`` cell and the
    inner selection."""
    train = dataset.subset(np.flatnonzero(fold_of != j), name=f"{dataset.name}[train {j}]")
    test = dataset.subset(np.flatnonzero(fold_of == j), name=f"{dataset.name}[fold {j}]")
    return train, test


def cv_splits(dataset: Dataset, k: int = 10, seed: int | None = 0
              ) -> Iterator[tuple[int, Dataset, Dataset]]:
    """``(fold, train, test)`` for each of the ``k`` iteratively stratified folds."""
    fold_of = iterative_stratification(dataset.Y, k, seed=seed)
    for j in range(k):
        yield (j, *fold_parts(dataset, fold_of, j))
