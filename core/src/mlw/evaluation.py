"""Evaluate predictions with registered metrics."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mlw.metrics.context import EvalContext
from mlw.plugins import get_plugin_manager


def evaluate(Y_true: Any, Y_pred: Any = None, scores: Any = None,
             metrics: Iterable[str] | None = None, *, log_proba: Any = None) -> dict[str, float]:
    """Compute metrics of predictions against the true label sets.

    Parameters
    ----------
    Y_true : (n, L) 0/1 matrix, dense or CSR
    Y_pred : (n, L) 0/1 matrix, dense or CSR, optional
    scores : (n, L) per-label scores in [0, 1], optional (ranking metrics, log_loss)
    metrics : names of registered metrics; ``None`` means every metric whose needs
        (labels, scores, joint log-probabilities) are met by the arguments given
    log_proba : (n,) log P(y_true | x) from a joint model, optional (cll_loss)

    Returns
    -------
    dict mapping metric name to value, in the order requested (or registration order)

    Examples
    --------
    >>> import numpy as np, mlw
    >>> Y = np.array([[1, 0], [0, 1]])
    >>> mlw.evaluate(Y, np.array([[1, 0], [1, 1]]), metrics=["hamming_loss"])
    {'hamming_loss': 0.25}
    """
    ctx = EvalContext(Y_true, Y_pred, scores=scores, log_proba=log_proba)
    pm = get_plugin_manager()
    if metrics is None:
        specs = [s for s in pm.metrics().values() if ctx.has(s.needs)]
    else:
        specs = [pm.metric(name) for name in metrics]
        for s in specs:
            if not ctx.has(s.needs):
                what = {"labels": "Y_pred", "scores": "scores", "joint": "log_proba"}[s.needs]
                raise ValueError(f"metric {s.name!r} needs {what}, which was not given")
    return {s.name: float(s.compute(ctx)) for s in specs}
