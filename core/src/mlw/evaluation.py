"""Evaluation: predictions scored with the registered metrics (:func:`evaluate`), and
the one path every evaluation takes (:func:`run_plan`, :func:`run_fold`): a checked
:class:`mlw.plan.EvaluationPlan` executed fold by fold, each fold one call of
:func:`fit_and_evaluate`. :func:`holdout`, :func:`cross_validate`, ``mlw fit`` and
every ``mlw bench`` cell (in this process, a worker process or on Dask) run it.

Functions the experiment harness and model selection use are public here:
:func:`fit_and_evaluate`, :func:`evaluate_fitted`, :func:`timed`, :func:`run_fold`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, overload

from sklearn.base import clone

from mlw._guard import _who, check_outputs, learner_call, plugin_call, threshold_call
from mlw.dataset import Dataset
from mlw.decoders.routing import decoded_label_sets
from mlw.fold_results import EvaluationResult, FoldResult
from mlw.io.plan import DEFAULT_SEED, DataPlan
from mlw.isolation import ProcessDied, contained, describe_exit
from mlw.jit import compile_timer
from mlw.learner import fit_threshold
from mlw.metrics.at_k import inverse_propensity
from mlw.metrics.calibration import reliability_table
from mlw.metrics.context import EvalContext
from mlw.metrics.scores import per_label_table
from mlw.plan import EvaluationPlan, prepare_evaluation
from mlw.plugins import get_plugin_manager
from mlw.registry import PluginError
from mlw.validation import check_folds

__all__ = ["cross_validate", "evaluate", "evaluate_fitted", "fit_and_evaluate", "holdout",
           "metric_values", "per_label_frame", "run_fold", "run_plan", "timed"]


@overload
def evaluate(Y_true: Any, Y_pred: Any = ..., scores: Any = ...,
             metrics: Iterable[str] | None = ..., *, log_proba: Any = ...,
             per_label: Literal[False] = ...,
             label_names: Sequence[str] | None = ..., topk: Any = ...,
             inv_propensity: Any = ...) -> dict[str, float]: ...


@overload
def evaluate(Y_true: Any, Y_pred: Any = ..., scores: Any = ...,
             metrics: Iterable[str] | None = ..., *, log_proba: Any = ...,
             per_label: Literal[True], label_names: Sequence[str] | None = ...,
             topk: Any = ..., inv_propensity: Any = ...) -> Any: ...


def evaluate(Y_true: Any, Y_pred: Any = None, scores: Any = None,
             metrics: Iterable[str] | None = None, *, log_proba: Any = None,
             per_label: bool = False, label_names: Sequence[str] | None = None,
             topk: Any = None, inv_propensity: Any = None) -> Any:
    """Compute metrics of predictions against the true label sets.

    Parameters
    ----------
    Y_true : (n, L) 0/1 matrix, dense or CSR
    Y_pred : (n, L) 0/1 matrix, dense or CSR, optional
    scores : (n, L) per-label scores in [0, 1], optional (ranking and score metrics)
    metrics : names of registered metrics; ``None`` means every metric whose needs
        (labels, scores, joint log-probabilities) are met by the arguments given, the
        metrics at k only when a ``topk`` ranking is given
    log_proba : (n,) log P(y_true | x) from a joint model, optional (cll_loss)
    per_label : bool, default False
        Instead of the averaged metrics, a polars DataFrame with one row per label:
        ``label``, ``support`` (true count), and from ``Y_pred`` ``predicted``,
        ``precision``, ``recall``, ``f1``, ``specificity``, from ``scores`` ``auc`` and
        ``average_precision`` (NaN where undefined; see ``docs/guide/metrics.md``).
    label_names : names of the label columns for the per-label table (default
        ``label_0``, ...)
    topk : a top-k ranking (``learner.predict_topk(X, k)``), optional: the metrics at k
        (``precision_at_1`` ...) read it instead of ranking ``scores``, so they need
        no (n, L) score matrix
    inv_propensity : (L,) inverse label propensities for ``psprecision_at_k`` and
        ``psndcg_at_k``, optional (default: from ``Y_true``; see
        :func:`mlw.metrics.inverse_propensity`)

    Returns
    -------
    dict mapping metric name to value, in the order requested (or registration order);
    with ``per_label=True`` a polars DataFrame.

    Examples
    --------
    >>> import numpy as np, mlw
    >>> Y = np.array([[1, 0], [0, 1]])
    >>> mlw.evaluate(Y, np.array([[1, 0], [1, 1]]), metrics=["hamming_loss"])
    {'hamming_loss': 0.25}
    >>> mlw.evaluate(Y, np.array([[1, 0], [1, 1]]), per_label=True)["precision"].to_list()
    [0.5, 1.0]
    >>> mlw.evaluate(Y, topk=np.array([[1], [1]]), metrics=["precision_at_1"])
    {'precision_at_1': 0.5}
    """
    ctx = EvalContext(Y_true, Y_pred, scores=scores, log_proba=log_proba, topk=topk,
                      inv_propensity=inv_propensity)
    if per_label:
        return per_label_frame(ctx, label_names)
    return metric_values(ctx, metrics)


def per_label_frame(ctx: EvalContext, label_names: Sequence[str] | None = None) -> Any:
    """The per-label table of :func:`evaluate` (``per_label=True``) from a context
    already built, so a caller wanting both the metrics and the table counts once."""
    import polars as pl  # polars: imported when a per-label table is asked for

    names = list(label_names) if label_names is not None else [
        f"label_{j}" for j in range(ctx.n_labels)]
    if len(names) != ctx.n_labels:
        raise ValueError(f"{len(names)} label names for {ctx.n_labels} labels")
    table = per_label_table(ctx)
    columns = {"label": names, "support": table.pop("support")}
    columns.update(table)
    return pl.DataFrame(columns)


def metric_values(ctx: EvalContext, metrics: Iterable[str] | None = None) -> dict[str, float]:
    """The metrics of :func:`evaluate` from a context already built."""
    pm = get_plugin_manager()
    if metrics is None:
        specs = [s for s in pm.metrics().values() if ctx.has(s.needs, s.at_k)
                 and (s.at_k is None or ctx.topk is not None)]
    else:
        specs = [pm.metric(name) for name in metrics]
        for s in specs:
            if not ctx.has(s.needs, s.at_k):
                what = {"labels": "Y_pred", "scores": "scores", "joint": "log_proba"}[s.needs]
                if s.at_k is not None:
                    what = f"scores or a top-k ranking of at least {s.at_k} labels"
                raise ValueError(f"metric {s.name!r} needs {what}, which was not given")
    values = {}
    for s in specs:  # a plugin's metric failing (not with a ValueError) is its own bug
        with plugin_call("metric", s.name, "compute"):
            values[s.name] = float(s.compute(ctx))
    return values


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
                    threshold: Any = None, decoders: Any = None
                    ) -> tuple[dict[str, float], float]:
    """Evaluate a fitted learner on ``(X, Y)``: returns the metrics and the seconds spent
    predicting (``predict``, plus ``predict_proba`` where the learner has it and
    ``log_proba_of`` when a requested metric reads it; an mlw learner computes its
    label sets and scores in one pass).

    ``threshold``, a *fitted* thresholding strategy, replaces the learner's own label
    sets: the label-set metrics then score ``threshold.predict(predict_proba(X))``.
    ``decoders`` (``{metric: decoder}``, :func:`mlw.decoders.routing.resolve_decoders`)
    scores those metrics on the label sets their decoder computes instead (the seconds
    include the decoding).
    """
    values, seconds, _, _ = _evaluate_fitted(model, X, Y, metrics, threshold=threshold,
                                             decoders=decoders)
    return values, seconds


def _evaluate_fitted(model: Any, X: Any, Y: Any, metrics: Iterable[str] | None, *,
                     threshold: Any = None, per_label: bool = False,
                     label_names: Any = None, decoders: Any = None,
                     top_k: int | None = None, Y_train: Any = None
                     ) -> tuple[dict[str, float], float, Any, Any]:
    """:func:`evaluate_fitted`, the per-label table when ``per_label`` (of the learner's
    own label sets), and the reliability table of the scores pooled over labels
    (:func:`mlw.metrics.calibration.reliability_table`; ``None`` without scores); with
    ``top_k``, the learner's ``predict_topk`` ranking too, scored with the inverse
    propensities of ``Y_train`` (the metrics at k). The seconds are those of the
    predictions alone: neither the metrics nor numba compiling."""
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
        decoded = decoded_label_sets(model, X, decoders) if decoders else {}
        ranking = model.predict_topk(X, top_k) if top_k is not None else None
        seconds = max(time.perf_counter() - start - compiling.seconds, 0.0)
    n_labels = getattr(Y, "shape", (None, None))[1]
    check_outputs(model, X.shape[0], n_labels, Y_pred=Y_pred, scores=scores,
                  log_proba=log_proba)
    inv = None
    if ranking is not None and Y_train is not None:
        inv = inverse_propensity(Y_train)
    ctx = EvalContext(Y, Y_pred, scores=scores, log_proba=log_proba,  # counted once
                      topk=ranking, inv_propensity=inv)
    values = metric_values(ctx, names)
    contexts: dict[int, EvalContext] = {}
    for metric, labels in decoded.items():
        if metric in values:  # scored on the decoder's label sets, counted once each
            check_outputs(model, X.shape[0], n_labels, Y_pred=labels)
            dctx = contexts.setdefault(id(labels), EvalContext(Y, labels, scores=scores))
            values[metric] = metric_values(dctx, [metric])[metric]
    table = per_label_frame(ctx, label_names) if per_label else None
    reliability = None
    if scores is not None:
        reliability = reliability_table(ctx.Y_true, ctx.scores)
    return values, seconds, table, reliability


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float, float]:
    """``fn()``, its wall seconds excluding numba compilation, the compilation's wall
    seconds, and the process CPU seconds of ``fn()`` excluding the compilation's (every
    thread of the process, so a multi-threaded fit counts each thread's time)."""
    with compile_timer() as compiling:
        start, cpu_start = time.perf_counter(), time.process_time()
        value = fn()
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start
    return (value, max(seconds - compiling.seconds, 0.0), compiling.seconds,
            max(cpu_seconds - compiling.cpu_seconds, 0.0))


def fit_and_evaluate(setup: EvaluationPlan, train: Dataset, test: Dataset, *,
                     fold: int | None = None) -> tuple[FoldResult, Any]:
    """Fit a clone of ``setup.learner`` on ``train``, evaluate it on ``test``: the one
    step of every hold-out, cross-validation fold, experiment cell and grid point of a
    model selection. Returns the :class:`FoldResult` and the fitted model."""
    model = clone(setup.learner)
    threshold = setup.evaluation_threshold

    def fit() -> Any:
        with learner_call(model, "fit"):
            model.fit(train.X, train.Y)
        if threshold is None:
            return None

        def training_scores() -> Any:
            scores = _scores_of(model, train.X)
            if scores is None:  # pragma: no cover - prepare_evaluation checked the tags
                raise ValueError(f"{type(model).__name__} gives no label scores")
            return scores

        return fit_threshold(threshold, training_scores, train.Y)

    strategy, fit_seconds, compile_fit, fit_cpu_seconds = timed(fit)
    (values, predict_seconds, table, reliability), _, compile_predict, _ = timed(
        lambda: _evaluate_fitted(model, test.X, test.Y, setup.metrics, threshold=strategy,
                                 decoders=setup.decoders,
                                 per_label=setup.per_label,
                                 label_names=list(test.label_names),
                                 top_k=getattr(setup, "top_k", None), Y_train=train.Y))
    return FoldResult(values, fit_seconds, predict_seconds, train.n_instances,
                      test.n_instances, fold, compile_fit + compile_predict, table,
                      fit_cpu_seconds, reliability), model


def run_fold(plan: EvaluationPlan, fold: int = 0) -> tuple[FoldResult, Any]:
    """Fold ``fold`` of ``plan`` (0 for a hold-out): its training and test parts from
    the data plan (:meth:`mlw.DataPlan.fold`), fitted and scored by
    :func:`fit_and_evaluate`. Returns the :class:`FoldResult` and the fitted model. An
    ``mlw bench`` cell is one call of this, wherever it runs."""
    if plan.data is None:
        raise ValueError("the plan has no data plan to run on")
    train, test = plan.data.fold(fold)
    return fit_and_evaluate(plan, train, test,
                            fold=fold if plan.data.kind == "cv" else None)


def run_plan(plan: EvaluationPlan, *, progress: Callable[[int, int], None] | None = None,
             refit: bool = False) -> EvaluationResult:
    """Every fold of ``plan`` (:func:`run_fold`), as one :class:`EvaluationResult`:
    a hold-out's ``model`` is its fitted learner; ``refit=True`` also fits the learner
    on every row of a cross-validation (``result.model``, ``result.refit_seconds``).
    ``progress(done, total)`` is called before the first fold and after each one."""
    data = plan.data
    if data is None:
        raise ValueError("the plan has no data plan to run on")
    total = data.n_folds
    if progress is not None:
        progress(0, total)
    results, model = [], None
    if plan.isolate and data.kind == "cv":  # the folds' models stay in the child
        results = _contained_folds(plan, progress)
    else:
        for j in range(total):
            result, model = run_fold(plan, j)
            results.append(result)
            if progress is not None:
                progress(j + 1, total)
    if data.kind == "holdout":
        return EvaluationResult(results, "holdout", model=model, decision=plan.decision)
    out = EvaluationResult(results, "cv", seed=data.seed, decision=plan.decision)
    if refit:
        whole = clone(plan.learner)
        start = time.perf_counter()
        with learner_call(whole, "fit"):
            whole.fit(data.train.X, data.train.Y)
        out.model, out.refit_seconds = whole, time.perf_counter() - start
    return out


def _contained_folds(plan: EvaluationPlan, progress: Callable[[int, int], None] | None
                     ) -> list[FoldResult]:
    """Each fold's :func:`run_fold` in a supervised child process (forked once, with
    the plan and its data: only fold numbers and results travel); a death is a
    :class:`~mlw.PluginError` naming the learner, the fold and how the process ended."""
    assert plan.data is not None
    total = plan.data.n_folds
    plan.data.fold_assignment()  # once, here, before the child is forked

    def one_fold(j: int) -> FoldResult:
        return run_fold(plan, j)[0]

    results = []
    with contained(one_fold) as run:
        for j in range(total):
            try:
                results.append(run(j))
            except ProcessDied as died:
                raise PluginError(f"{_who(plan.learner)}: the process fitting fold "
                                  f"{j + 1} of {total} {describe_exit(died.exitcode)} (a "
                                  f"bug in the plugin or a library it uses: report it to "
                                  f"its authors)") from None
            if progress is not None:
                progress(j + 1, total)
    return results


def holdout(learner: Any, train: Dataset, test: Dataset,
            metrics: Iterable[str] | None = None, *,
            threshold: Any = None, per_label: bool = False, decode: Any = None,
            conformal: Any = None) -> EvaluationResult:
    """Fit a clone of ``learner`` on ``train`` and evaluate it on ``test``.

    Everything is checked before the fit (:func:`mlw.prepare_evaluation`: metric names
    and needs, the threshold), and ``test`` gets the training set's encoding
    (:meth:`mlw.DataPlan.holdout`, :func:`mlw.io.align_test`: columns and labels
    matched by name, nominal values by value; a column that cannot be aligned, or one
    the training set does not have, is a ``ValueError`` naming it). A learner whose
    own code fails, or whose outputs break the contract, raises
    :class:`mlw.PluginError` naming its plugin. Returns an :class:`EvaluationResult`
    with one fold; its ``model`` is the fitted clone. ``metrics=None`` computes every
    registered metric the learner's outputs allow (label sets, scores, joint
    log-probabilities). ``threshold``, ``per_label``, ``decode`` and ``conformal``: as
    in :func:`cross_validate`.

    Examples
    --------
    >>> import mlw
    >>> train = mlw.load_dataset("emotions")
    >>> test = mlw.load_dataset("emotions", split="test")
    >>> result = mlw.holdout(mlw.get_learner("pcc"), train, test, ["f1_example"],
    ...                      decode="f1")
    >>> result.decision
    'threshold cardinality:top_label=auto; decoded: f1 for f1_example'
    """
    plan = prepare_evaluation(learner, metrics, threshold, per_label=per_label,
                              decode=decode, conformal=conformal)
    plan.data = DataPlan.holdout(train, test)
    return run_plan(plan)


def cross_validate(learner: Any, dataset: Dataset, k: int = 10,
                   seed: int | None = DEFAULT_SEED,
                   metrics: Iterable[str] | None = None,
                   progress: Callable[[int, int], None] | None = None, *,
                   threshold: Any = None, refit: bool = False,
                   per_label: bool = False, isolate: bool = False, decode: Any = None,
                   conformal: Any = None) -> EvaluationResult:
    """k-fold cross-validation with iterative stratification.

    Everything is checked before the first fit (:func:`mlw.prepare_evaluation`). Each
    fold fits a fresh ``sklearn.base.clone`` of ``learner`` on the other folds and
    evaluates it on the fold with :func:`mlw.evaluate` (predicted label sets, plus
    ``predict_proba`` scores and ``log_proba_of`` where the learner has them).

    Parameters
    ----------
    learner : an unfitted mlw learner (or any estimator with ``fit``/``predict``)
    dataset : Dataset
    k : int, default 10
    seed : int or None, default 0
        Seed of the fold assignment (:class:`mlw.IterativeStratifiedKFold`).
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
    decode : str, mapping or None, default None
        Score label-set metrics on the label sets of a decoder (:mod:`mlw.decoders`)
        computed from each fold's fitted learner: a decoder (``"f1"``, ``"subset"``,
        ``"f1:beta=2"``), ``"matched"`` (each metric the decoder of its measure), or
        ``{metric: decoder}``.
    conformal : str, float or None, default None
        ``"recall:0.9"`` or ``"precision:0.9"`` (a method as in ``"recall:0.9:ltt"``):
        wrap the learner in :class:`mlw.ConformalLabelSets` guaranteeing that recall or
        precision (``alpha = 0.1``); the achieved value is ``1 - fnr_example`` or
        ``precision_example``.

    Returns
    -------
    EvaluationResult with one :class:`FoldResult` per fold (metrics are fold means).
    """
    plan = prepare_evaluation(learner, metrics, threshold, per_label=per_label,
                              decode=decode, conformal=conformal)
    plan.data = DataPlan.cross_validation(dataset, check_folds(k, "k"), seed=seed)
    plan.isolate = isolate
    return run_plan(plan, progress=progress, refit=refit)
