"""A metric: the error in the predicted label cardinality."""

from __future__ import annotations

from typing import Any

import numpy as np


def cardinality_error(Y_true: Any, Y_pred: Any) -> float:
    """``|mean predicted labels per instance - mean true labels per instance|``.

    >>> import numpy as np
    >>> cardinality_error(np.array([[1, 1], [0, 1]]), np.array([[1, 0], [0, 1]]))
    0.5
    """
    n = Y_true.shape[0]
    if n == 0:
        return 0.0
    return float(abs(float(Y_pred.sum()) - float(Y_true.sum())) / n)


def cardinality_error_metric(ctx: Any) -> float:
    """The registered ``compute``: receives an :class:`mlw.EvalContext`."""
    return cardinality_error(ctx.Y_true, ctx.Y_pred) if ctx.Y_pred is not None else np.nan
