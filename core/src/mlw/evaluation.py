"""Evaluate predictions with registered metrics."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal, overload

from mlw.metrics.context import EvalContext
from mlw.plugins import get_plugin_manager


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
    import polars as pl

    from mlw.metrics.scores import per_label_table

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
    from mlw._guard import plugin_call

    values = {}
    for s in specs:  # a plugin's metric failing (not with a ValueError) is its own bug
        with plugin_call("metric", s.name, "compute"):
            values[s.name] = float(s.compute(ctx))
    return values
