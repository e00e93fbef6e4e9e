"""Model selection: iteratively stratified k-fold, cross-validation and hold-out.

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

Choices where the paper leaves room (documented in ``docs/api.md``): the examples of
label l are visited in a seeded random order (the paper iterates "each example" without
an order); all random choices come from one ``numpy.random.default_rng(seed)``, so a
split is a pure function of ``(Y, k, seed)``; desires may become negative, as in the
paper.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from mlw.dataset import Dataset
from mlw.evaluation import evaluate
from mlw.validation import check_Y

__all__ = [
    "EvaluationResult",
    "FoldResult",
    "IterativeStratifiedKFold",
    "cross_validate",
    "holdout",
    "iterative_stratification",
]


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


@dataclass
class FoldResult:
    """The evaluation of one train/test split."""

    metrics: dict[str, float]
    fit_seconds: float
    predict_seconds: float
    n_train: int
    n_test: int
    fold: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.fold is None else {"fold": self.fold}
        out.update(n_train=self.n_train, n_test=self.n_test, metrics=dict(self.metrics),
                   fit_seconds=self.fit_seconds, predict_seconds=self.predict_seconds)
        return out


@dataclass
class EvaluationResult:
    """Hold-out or cross-validation results.

    ``metrics``, ``fit_seconds`` and ``predict_seconds`` are the means over the folds
    (the single split's values for a hold-out); ``folds`` holds each fold's result.
    ``model`` is the fitted learner of a hold-out (``None`` after cross-validation,
    whose per-fold clones are discarded).
    """

    folds: list[FoldResult]
    kind: str  # "holdout" or "cv"
    seed: int | None = None
    model: Any = field(default=None, repr=False)

    @property
    def metrics(self) -> dict[str, float]:
        names: list[str] = []
        for f in self.folds:
            names += [m for m in f.metrics if m not in names]
        out = {}
        for name in names:
            values = [f.metrics[name] for f in self.folds if name in f.metrics]
            out[name] = float(np.mean(values)) if values else float("nan")
        return out

    @property
    def fit_seconds(self) -> float:
        return float(np.mean([f.fit_seconds for f in self.folds]))

    @property
    def predict_seconds(self) -> float:
        return float(np.mean([f.predict_seconds for f in self.folds]))

    @property
    def n_train(self) -> int:
        return int(round(np.mean([f.n_train for f in self.folds])))

    @property
    def n_test(self) -> int:
        return int(round(np.mean([f.n_test for f in self.folds])))


def _scores_of(model: Any, X: Any) -> Any:
    """``predict_proba(X)`` when the learner predicts scores, else ``None``."""
    method = getattr(model, "predict_proba", None)
    if method is None:
        return None
    try:
        return method(X)
    except NotImplementedError:
        return None


def evaluate_fitted(model: Any, X: Any, Y: Any,
                    metrics: Iterable[str] | None = None, *,
                    threshold: Any = None) -> tuple[dict[str, float], float]:
    """Evaluate a fitted learner on ``(X, Y)``: returns the metrics and the seconds spent
    predicting (``predict``, plus ``predict_proba`` and ``log_proba_of`` where the
    learner has them).

    ``threshold``, a *fitted* thresholding strategy, replaces the learner's own label
    sets: the label-set metrics then score ``threshold.predict(predict_proba(X))``.
    """
    start = time.perf_counter()
    if threshold is not None:
        scores = _scores_of(model, X)
        if scores is None:
            raise ValueError(f"{type(model).__name__} gives no label scores, so a "
                             f"threshold cannot be applied to them")
        Y_pred = threshold.predict(scores)
    elif hasattr(model, "predict_with_scores"):  # mlw learners: scores computed once
        Y_pred, scores = model.predict_with_scores(X)
    else:
        Y_pred, scores = model.predict(X), _scores_of(model, X)
    log_proba = model.log_proba_of(X, Y) if hasattr(model, "log_proba_of") else None
    seconds = time.perf_counter() - start
    names = None if metrics is None else list(metrics)
    return evaluate(Y, Y_pred, scores=scores, metrics=names, log_proba=log_proba), seconds


def _fit_and_score(learner: Any, train: Dataset, test: Dataset,
                   metrics: Iterable[str] | None, fold: int | None,
                   threshold: Any = None) -> tuple[FoldResult, Any]:
    model = clone(learner)
    start = time.perf_counter()
    model.fit(train.X, train.Y)
    strategy = None
    if threshold is not None:
        from mlw.learner import fit_threshold

        def training_scores() -> Any:
            scores = _scores_of(model, train.X)
            if scores is None:
                raise ValueError(f"{type(model).__name__} gives no label scores, so "
                                 f"threshold={threshold!r} cannot be applied to them")
            return scores

        strategy = fit_threshold(threshold, training_scores, train.Y)
    fit_seconds = time.perf_counter() - start
    values, predict_seconds = evaluate_fitted(model, test.X, test.Y, metrics,
                                              threshold=strategy)
    return FoldResult(values, fit_seconds, predict_seconds, train.n_instances,
                      test.n_instances, fold), model


def _check_compatible(train: Dataset, test: Dataset) -> None:
    if train.n_features != test.n_features:
        raise ValueError(f"the test set has {test.n_features} features but the training set "
                         f"has {train.n_features}")
    if train.n_labels != test.n_labels:
        raise ValueError(f"the test set has {test.n_labels} labels but the training set "
                         f"has {train.n_labels}")
    if list(train.label_names) != list(test.label_names):
        raise ValueError("the test set's labels differ from the training set's "
                         "(names or order)")


def _check_threshold(threshold: Any) -> None:
    """Fail on an unknown strategy name before any fold is fitted."""
    if threshold is not None:
        from mlw.learner import make_threshold

        make_threshold(threshold)


def holdout(learner: Any, train: Dataset, test: Dataset,
            metrics: Iterable[str] | None = None, *,
            threshold: Any = None) -> EvaluationResult:
    """Fit a clone of ``learner`` on ``train`` and evaluate it on ``test``.

    Returns an :class:`EvaluationResult` with one fold; its ``model`` is the fitted
    clone. ``metrics=None`` computes every registered metric the learner's outputs
    allow (label sets, scores, joint log-probabilities). ``threshold``: as in
    :func:`cross_validate`.
    """
    _check_compatible(train, test)
    _check_threshold(threshold)
    result, model = _fit_and_score(learner, train, test, metrics, None, threshold)
    return EvaluationResult([result], "holdout", model=model)


def cross_validate(learner: Any, dataset: Dataset, k: int = 10, seed: int | None = 0,
                   metrics: Iterable[str] | None = None,
                   progress: Callable[[int, int], None] | None = None, *,
                   threshold: Any = None) -> EvaluationResult:
    """k-fold cross-validation with iterative stratification.

    Each fold fits a fresh ``sklearn.base.clone`` of ``learner`` on the other folds and
    evaluates it on the fold with :func:`mlw.evaluate` (predicted label sets, plus
    ``predict_proba`` scores and ``log_proba_of`` where the learner has them).

    Parameters
    ----------
    learner : an unfitted mlw learner (or any estimator with ``fit``/``predict``)
    dataset : Dataset
    k : int, default 10
    seed : int or None, default 0
        Seed of the fold assignment (:class:`IterativeStratifiedKFold`).
    metrics : names of registered metrics, or None for every applicable one
    progress : callable ``(folds_done, k)``, called before the first fold and after
        each one (the CLI drives its progress bar with it)
    threshold : str, strategy object or None, default None
        Score the label-set metrics from this thresholding strategy (a registered name
        such as ``"pcut"``, or an object with ``fit``/``predict``) applied to the
        learner's ``predict_proba``, fitted on each fold's training part, instead of
        the learner's own ``predict``. This is how a joint learner's marginals are
        scored with Pcut, as MEKA's evaluation does. Scores and ``log_proba_of`` are
        unchanged. ``None``: the learner's own label sets.

    Returns
    -------
    EvaluationResult with one :class:`FoldResult` per fold (metrics are fold means).
    """
    names = None if metrics is None else list(metrics)
    _check_threshold(threshold)
    fold_of = iterative_stratification(dataset.Y, k, seed=seed)
    results: list[FoldResult] = []
    if progress is not None:
        progress(0, k)
    for j in range(k):
        test_rows = np.flatnonzero(fold_of == j)
        train_rows = np.flatnonzero(fold_of != j)
        train = dataset.subset(train_rows, name=f"{dataset.name}[train {j}]")
        test = dataset.subset(test_rows, name=f"{dataset.name}[fold {j}]")
        result, _ = _fit_and_score(learner, train, test, names, j, threshold)
        results.append(result)
        if progress is not None:
            progress(j + 1, k)
    return EvaluationResult(results, "cv", seed=seed)
