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

Choices where the paper leaves room (documented in ``docs/reference/index.md``): the examples of
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

from mlw._guard import check_outputs, learner_call, threshold_call
from mlw.dataset import Dataset
from mlw.evaluation import metric_values, per_label_frame
from mlw.metrics.context import EvalContext
from mlw.registry import LearnerTags, PluginError
from mlw.validation import check_Y

__all__ = [
    "EvaluationResult",
    "EvaluationSetup",
    "FoldResult",
    "IterativeStratifiedKFold",
    "align_test",
    "cross_validate",
    "cv_splits",
    "evaluate_fitted",
    "fit_and_evaluate",
    "holdout",
    "iterative_stratification",
    "prepare_evaluation",
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
    """The evaluation of one train/test split.

    ``fit_seconds`` and ``predict_seconds`` (wall clock) exclude the time numba spent
    compiling kernels on first use (after installation; later runs load them from the
    cache), which is ``compile_seconds``. ``fit_cpu_seconds`` is the fit's process CPU
    time, compiling excluded: on a busy machine wall time grows with the load, CPU time
    much less, so it is the figure to compare across runs (``None`` when not measured).
    """

    metrics: dict[str, float]
    fit_seconds: float
    predict_seconds: float
    n_train: int
    n_test: int
    fold: int | None = None
    compile_seconds: float = 0.0
    per_label: Any = field(default=None, repr=False)
    fit_cpu_seconds: float | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.fold is None else {"fold": self.fold}
        out.update(n_train=self.n_train, n_test=self.n_test, metrics=dict(self.metrics),
                   fit_seconds=self.fit_seconds, fit_cpu_seconds=self.fit_cpu_seconds,
                   predict_seconds=self.predict_seconds,
                   compile_seconds=self.compile_seconds)
        if self.per_label is not None:
            out["per_label"] = self.per_label.to_dicts()
        return out


@dataclass
class EvaluationResult:
    """Hold-out or cross-validation results.

    ``metrics``, ``fit_seconds`` and ``predict_seconds`` are the means over the folds
    (the single split's values for a hold-out); ``folds`` holds each fold's result.
    ``model`` is the fitted learner of a hold-out, or, after cross-validation with
    ``refit=True``, the learner refitted on the whole dataset (``None`` otherwise: the
    per-fold clones are discarded). ``decision`` says how the label sets were decided
    (see :func:`prepare_evaluation`). With ``per_label=True`` (:func:`holdout`,
    :func:`cross_validate`) each fold has a per-label table and :attr:`per_label` is
    their mean.
    """

    folds: list[FoldResult]
    kind: str  # "holdout" or "cv"
    seed: int | None = None
    model: Any = field(default=None, repr=False)
    decision: str = ""
    refit_seconds: float | None = None

    @property
    def compile_seconds(self) -> float:
        """Total seconds numba spent compiling kernels during the evaluation."""
        return float(sum(f.compile_seconds for f in self.folds))

    def as_dict(self) -> dict[str, Any]:
        """The record ``mlw fit --json`` prints (with the learner and data around it):
        fold means, how label sets were decided, and for cross-validation each fold."""
        out: dict[str, Any] = {
            "evaluation": "holdout" if self.kind == "holdout" else f"{len(self.folds)}-fold cv",
            "n_train": self.n_train, "n_test": self.n_test, "metrics": self.metrics,
            "fit_seconds": self.fit_seconds, "fit_cpu_seconds": self.fit_cpu_seconds,
            "predict_seconds": self.predict_seconds,
            "compile_seconds": self.compile_seconds, "decision": self.decision,
        }
        per_label = self.per_label
        if per_label is not None:
            out["per_label"] = per_label.to_dicts()
        if self.kind == "cv":
            out["seed"] = self.seed
            out["folds"] = [f.as_dict() for f in self.folds]
        if self.refit_seconds is not None:
            out["refit_seconds"] = self.refit_seconds
        return out

    def records(self, **context: Any) -> list[dict[str, Any]]:
        """One flat record per fold (the fold-level results of ``mlw fit --out``):
        ``context`` first (``learner``, ``dataset``, ...), then ``evaluation``,
        ``n_folds``, ``fold``, ``seed``, ``decision``, ``n_train``, ``n_test``,
        ``fit_seconds``, ``fit_cpu_seconds``, ``predict_seconds``, ``compile_seconds``
        and one
        ``metric_<name>`` per metric (the column names of the ``mlw bench`` store)."""
        evaluation = "holdout" if self.kind == "holdout" else "cv"
        out = []
        for i, f in enumerate(self.folds):
            record: dict[str, Any] = dict(context)
            record.update(evaluation=evaluation, n_folds=len(self.folds),
                          fold=f.fold if f.fold is not None else i, seed=self.seed,
                          decision=self.decision, n_train=f.n_train, n_test=f.n_test,
                          fit_seconds=f.fit_seconds, fit_cpu_seconds=f.fit_cpu_seconds,
                          predict_seconds=f.predict_seconds,
                          compile_seconds=f.compile_seconds)
            record.update({f"metric_{k}": v for k, v in f.metrics.items()})
            out.append(record)
        return out

    def per_label_records(self, **context: Any) -> list[dict[str, Any]]:
        """One flat record per fold and label (``context``, ``fold``, then the columns
        of :func:`mlw.evaluate` with ``per_label=True``); empty without per-label
        results."""
        out = []
        for i, f in enumerate(self.folds):
            if f.per_label is None:
                continue
            fold = f.fold if f.fold is not None else i
            out += [{**context, "fold": fold, **row} for row in f.per_label.to_dicts()]
        return out

    @property
    def per_label(self) -> Any:
        """The per-label table (polars DataFrame, one row per label, the columns of
        :func:`mlw.evaluate` with ``per_label=True``) of a hold-out, or for
        cross-validation each column's mean over the folds where it is defined
        (``support`` and ``predicted`` too: per-fold means); ``None`` unless the
        evaluation was asked for per-label results."""
        tables = [f.per_label for f in self.folds if f.per_label is not None]
        if not tables:
            return None
        if len(tables) == 1:
            return tables[0]
        import polars as pl

        joined = pl.concat([t.with_row_index("_row") for t in tables])
        value_columns = [c for c in tables[0].columns if c != "label"]
        return (joined.with_columns(pl.col(value_columns).cast(pl.Float64).fill_nan(None))
                .group_by("_row", maintain_order=True)
                .agg(pl.col("label").first(), *[pl.col(c).mean() for c in value_columns])
                .sort("_row").drop("_row").fill_null(float("nan")))

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
    def fit_cpu_seconds(self) -> float | None:
        """The folds' mean fit CPU seconds (``None`` if a fold has none)."""
        values = [f.fit_cpu_seconds for f in self.folds if f.fit_cpu_seconds is not None]
        if not values or len(values) < len(self.folds):
            return None
        return float(np.mean(values))

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
    predicting (``predict``, plus ``predict_proba`` where the learner has it and
    ``log_proba_of`` when a requested metric reads it; an mlw learner computes its
    label sets and scores in one pass).

    ``threshold``, a *fitted* thresholding strategy, replaces the learner's own label
    sets: the label-set metrics then score ``threshold.predict(predict_proba(X))``.
    """
    values, seconds, _ = _evaluate_fitted(model, X, Y, metrics, threshold=threshold)
    return values, seconds


def _evaluate_fitted(model: Any, X: Any, Y: Any, metrics: Iterable[str] | None, *,
                     threshold: Any = None, per_label: bool = False,
                     label_names: Any = None) -> tuple[dict[str, float], float, Any]:
    """:func:`evaluate_fitted`, and the per-label table when ``per_label``. The seconds
    are those of the predictions alone: neither the metrics nor numba compiling."""
    from mlw.jit import compile_timer
    from mlw.plugins import get_plugin_manager

    names = None if metrics is None else list(metrics)
    pm = get_plugin_manager()
    # log P(y|x) only when a metric reads it (cll_loss): it is a pass of its own
    wants_joint = hasattr(model, "log_proba_of") and (
        names is None or any(pm.metric(n).needs == "joint" for n in names))
    with compile_timer() as compiling, learner_call(model, "predict"):
        start = time.perf_counter()
        if threshold is not None:
            scores = _scores_of(model, X)
            if scores is None:
                raise ValueError(f"{type(model).__name__} gives no label scores, so a "
                                 f"threshold cannot be applied to them")
            with threshold_call(threshold, "predict"):
                Y_pred = threshold.predict(scores)
        elif hasattr(model, "predict_with_scores"):  # mlw learners: one pass
            Y_pred, scores = model.predict_with_scores(X)
        else:
            Y_pred, scores = model.predict(X), _scores_of(model, X)
        log_proba = model.log_proba_of(X, Y) if wants_joint else None
        seconds = max(time.perf_counter() - start - compiling.seconds, 0.0)
    n_labels = getattr(Y, "shape", (None, None))[1]
    check_outputs(model, X.shape[0], n_labels, Y_pred=Y_pred, scores=scores,
                  log_proba=log_proba)
    ctx = EvalContext(Y, Y_pred, scores=scores, log_proba=log_proba)  # counted once
    values = metric_values(ctx, names)
    table = per_label_frame(ctx, label_names) if per_label else None
    return values, seconds, table


@dataclass
class EvaluationSetup:
    """An evaluation checked before anything is fitted (:func:`prepare_evaluation`).

    Attributes
    ----------
    learner : the unfitted learner to clone per split (with ``threshold`` set when the
        learner takes one)
    metrics : the metric names, or ``None`` for every metric the learner's outputs allow
    evaluation_threshold : the strategy scored on the learner's marginals instead of its
        own joint decision, or ``None``
    decision : how label sets are decided, in words (``"threshold cardinality"``,
        ``"joint"``, ``"joint, top_label=auto"``, ``"pcut on the marginals"``), for
        reports
    per_label : also compute each fold's per-label table
        (:func:`mlw.evaluate` with ``per_label=True``)
    """

    learner: Any
    metrics: list[str] | None
    evaluation_threshold: Any = None
    decision: str = ""
    per_label: bool = False


def _tags(learner: Any) -> LearnerTags:
    return LearnerTags.of(type(learner))


def _describe(learner: Any) -> str:
    """``learner 'br'`` for a registered learner, else its class name."""
    from mlw.persistence import learner_name_of

    name = learner_name_of(learner)
    return f"learner {name!r}" if name else type(learner).__name__


def _strategy_name(choice: Any) -> str:
    return choice if isinstance(choice, str) else repr(choice)


def prepare_evaluation(learner: Any, metrics: Iterable[str] | None = None,
                       threshold: Any = None, *, per_label: bool = False) -> EvaluationSetup:
    """Check an evaluation before any fit, so a mistake costs nothing.

    - every metric name is registered (:class:`mlw.UnknownNameError` with suggestions);
    - every requested metric can be fed: ``"scores"`` metrics need a learner that
      predicts scores, ``"joint"`` ones (``cll_loss``) a learner with ``log_proba_of``
      (``ValueError`` naming both);
    - ``threshold`` (a registered strategy name or a strategy object) decides the label
      sets: a learner with a ``threshold`` parameter gets it (a clone with the
      parameter set); a joint learner keeps its own decision and model, and the
      evaluation scores the strategy, fitted on each training part, on its marginals
      (MEKA's way of scoring a joint learner with Pcut); a joint learner without
      scores cannot take one (``ValueError``).

    ``per_label=True`` asks every fold for its per-label table too.

    Examples
    --------
    >>> import mlw
    >>> setup = prepare_evaluation(mlw.get_learner("br"), ["f1_micro"], "pcut")
    >>> setup.learner.threshold, setup.evaluation_threshold, setup.decision
    ('pcut', None, 'threshold pcut')
    """
    from mlw.learner import make_threshold
    from mlw.plugins import get_plugin_manager

    pm = get_plugin_manager()
    names = None if metrics is None else list(metrics)
    if names is not None and not names:
        raise ValueError("no metrics given; name at least one, or pass None for all")
    tags = _tags(learner)
    kind = _describe(learner)
    for name in names or []:
        needs = pm.metric(name).needs
        if needs == "scores" and not tags.predicts_scores:
            raise ValueError(f"metric {name!r} needs per-label scores, which {kind} does "
                             f"not predict")
        if needs == "joint" and not hasattr(learner, "log_proba_of"):
            raise ValueError(f"metric {name!r} needs log P(y|x) (log_proba_of), which "
                             f"{kind} does not have")
    params = learner.get_params(deep=False) if hasattr(learner, "get_params") else {}
    evaluation_threshold = None
    if threshold is not None:
        make_threshold(threshold)  # an unknown name fails here, before any fit
        if "threshold" in params:
            learner = clone(learner).set_params(threshold=threshold)
            params["threshold"] = threshold
        elif tags.predicts_scores:
            evaluation_threshold = threshold
        else:
            raise ValueError(f"{kind} makes its own joint decision and predicts no label "
                             f"scores, so a threshold does not apply")
    if evaluation_threshold is not None:
        decision = f"{_strategy_name(evaluation_threshold)} on the marginals"
    elif params.get("threshold") is not None:  # a joint learner's too, when it is set
        decision = f"threshold {_strategy_name(params['threshold'])}"
    elif tags.joint:  # with the core's top-label rule when the learner takes one
        rule = params.get("top_label", False)
        decision = "joint" if rule is False else f"joint, top_label={rule}"
    else:
        decision = "predict"
    return EvaluationSetup(learner, names, evaluation_threshold, decision, bool(per_label))


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float, float]:
    """``fn()``, its wall seconds excluding numba compilation, the compilation's wall
    seconds, and the process CPU seconds of ``fn()`` excluding the compilation's (every
    thread of the process, so a multi-threaded fit counts each thread's time)."""
    from mlw.jit import compile_timer

    with compile_timer() as compiling:
        start, cpu_start = time.perf_counter(), time.process_time()
        value = fn()
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start
    return (value, max(seconds - compiling.seconds, 0.0), compiling.seconds,
            max(cpu_seconds - compiling.cpu_seconds, 0.0))


def fit_and_evaluate(setup: EvaluationSetup, train: Dataset, test: Dataset, *,
                     fold: int | None = None) -> tuple[FoldResult, Any]:
    """Fit a clone of ``setup.learner`` on ``train``, evaluate it on ``test``: the one
    step of every hold-out, cross-validation fold and experiment cell. Returns the
    :class:`FoldResult` and the fitted model."""
    model = clone(setup.learner)
    threshold = setup.evaluation_threshold

    def fit() -> Any:
        with learner_call(model, "fit"):
            model.fit(train.X, train.Y)
        if threshold is None:
            return None
        from mlw.learner import fit_threshold

        def training_scores() -> Any:
            scores = _scores_of(model, train.X)
            if scores is None:  # pragma: no cover - prepare_evaluation checked the tags
                raise ValueError(f"{type(model).__name__} gives no label scores")
            return scores

        return fit_threshold(threshold, training_scores, train.Y)

    strategy, fit_seconds, compile_fit, fit_cpu_seconds = _timed(fit)
    (values, predict_seconds, table), _, compile_predict, _ = _timed(
        lambda: _evaluate_fitted(model, test.X, test.Y, setup.metrics, threshold=strategy,
                                 per_label=setup.per_label,
                                 label_names=list(test.label_names)))
    return FoldResult(values, fit_seconds, predict_seconds, train.n_instances,
                      test.n_instances, fold, compile_fit + compile_predict, table,
                      fit_cpu_seconds), model


def align_test(train: Dataset, test: Dataset) -> Dataset:
    """``test`` encoded as ``train`` is (:func:`mlw.io.align`: features and labels by
    name, nominal attributes by value), or a ``ValueError`` naming the column that
    cannot be aligned: one the training set has and ``test`` lacks, or one ``test``
    has and the training set does not."""
    from mlw.io.align import align

    aligned = align(test, train, extra="error")
    _check_compatible(train, aligned)
    return aligned


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


def holdout(learner: Any, train: Dataset, test: Dataset,
            metrics: Iterable[str] | None = None, *,
            threshold: Any = None, per_label: bool = False) -> EvaluationResult:
    """Fit a clone of ``learner`` on ``train`` and evaluate it on ``test``.

    Everything is checked before the fit (:func:`prepare_evaluation`: metric names and
    needs, the threshold), and ``test`` gets the training set's encoding
    (:func:`align_test`: columns and labels matched by name, nominal values by value;
    a column that cannot be aligned is a ``ValueError`` naming it). A learner whose
    own code fails, or whose outputs break the contract, raises
    :class:`mlw.PluginError` naming its plugin. Returns an :class:`EvaluationResult`
    with one fold; its ``model`` is the
    fitted clone. ``metrics=None`` computes every registered metric the learner's
    outputs allow (label sets, scores, joint log-probabilities). ``threshold`` and
    ``per_label``: as in :func:`cross_validate`.
    """
    setup = prepare_evaluation(learner, metrics, threshold, per_label=per_label)
    test = align_test(train, test)
    result, model = fit_and_evaluate(setup, train, test)
    return EvaluationResult([result], "holdout", model=model, decision=setup.decision)


def cv_splits(dataset: Dataset, k: int = 10, seed: int | None = 0
              ) -> Iterator[tuple[int, Dataset, Dataset]]:
    """``(fold, train, test)`` for each of the ``k`` iteratively stratified folds."""
    fold_of = iterative_stratification(dataset.Y, k, seed=seed)
    for j in range(k):
        yield (j, *_fold_parts(dataset, fold_of, j))


def _fold_parts(dataset: Dataset, fold_of: np.ndarray, j: int) -> tuple[Dataset, Dataset]:
    train = dataset.subset(np.flatnonzero(fold_of != j), name=f"{dataset.name}[train {j}]")
    test = dataset.subset(np.flatnonzero(fold_of == j), name=f"{dataset.name}[fold {j}]")
    return train, test


def _contained_folds(setup: EvaluationSetup, dataset: Dataset, fold_of: np.ndarray, k: int,
                     progress: Callable[[int, int], None] | None) -> list[FoldResult]:
    """Each fold's :func:`fit_and_evaluate` in a supervised child process; a death is a
    :class:`PluginError` naming the learner, the fold and how the process ended."""
    from mlw._guard import _who
    from mlw.isolation import ProcessDied, contained, describe_exit

    def one_fold(j: int) -> FoldResult:
        return fit_and_evaluate(setup, *_fold_parts(dataset, fold_of, j), fold=j)[0]

    results = []
    with contained(one_fold) as run:
        for j in range(k):
            try:
                results.append(run(j))
            except ProcessDied as died:
                raise PluginError(f"{_who(setup.learner)}: the process fitting fold "
                                  f"{j + 1} of {k} {describe_exit(died.exitcode)} (a bug "
                                  f"in the plugin or a library it uses: report it to its "
                                  f"authors)") from None
            if progress is not None:
                progress(j + 1, k)
    return results


def cross_validate(learner: Any, dataset: Dataset, k: int = 10, seed: int | None = 0,
                   metrics: Iterable[str] | None = None,
                   progress: Callable[[int, int], None] | None = None, *,
                   threshold: Any = None, refit: bool = False,
                   per_label: bool = False, isolate: bool = False) -> EvaluationResult:
    """k-fold cross-validation with iterative stratification.

    Everything is checked before the first fit (:func:`prepare_evaluation`). Each fold
    fits a fresh ``sklearn.base.clone`` of ``learner`` on the other folds and evaluates
    it on the fold with :func:`mlw.evaluate` (predicted label sets, plus
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
        The thresholding strategy (a registered name such as ``"pcut"``, or an object
        with ``fit``/``predict``) that decides the label sets: the learner's own
        ``threshold`` parameter when it has one; for a joint learner, the strategy
        fitted on each fold's training part and applied to its ``predict_proba``
        instead of its own decision (how MEKA scores a joint learner with Pcut; scores
        and ``log_proba_of`` are unchanged). ``None``: the learner as it is.
    refit : bool, default False
        After the folds, fit the learner on the whole dataset: ``result.model``
        (``result.refit_seconds``), e.g. to save it.
    per_label : bool, default False
        Also compute each fold's per-label table (:func:`mlw.evaluate` with
        ``per_label=True``, named by the dataset's labels): ``result.per_label`` (fold
        means) and ``result.folds[j].per_label``.
    isolate : bool, default False
        Fit and evaluate the folds in a supervised child process
        (:func:`mlw.isolation.contained`, what ``mlw fit --cv`` does): a learner whose
        process dies (a crash in native code, ``os._exit``) raises a
        :class:`~mlw.PluginError` naming it, the fold and the signal, and this process
        lives on.

    Returns
    -------
    EvaluationResult with one :class:`FoldResult` per fold (metrics are fold means).
    """
    setup = prepare_evaluation(learner, metrics, threshold, per_label=per_label)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"k must be an integer of at least 2, got {k!r}")
    results: list[FoldResult] = []
    if progress is not None:
        progress(0, k)
    if isolate:
        fold_of = iterative_stratification(dataset.Y, k, seed=seed)
        results = _contained_folds(setup, dataset, fold_of, k, progress)
    else:
        for j, train, test in cv_splits(dataset, k, seed):
            result, _ = fit_and_evaluate(setup, train, test, fold=j)
            results.append(result)
            if progress is not None:
                progress(j + 1, k)
    out = EvaluationResult(results, "cv", seed=seed, decision=setup.decision)
    if refit:
        model = clone(setup.learner)
        start = time.perf_counter()
        with learner_call(model, "fit"):
            model.fit(dataset.X, dataset.Y)
        out.model, out.refit_seconds = model, time.perf_counter() - start
    return out
