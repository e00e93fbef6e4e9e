"""Label-set metrics: cheap functions of the confusion counts of an :class:`EvalContext`.

The convention for a ratio whose denominator is 0 (Mulan's, see ``docs/guide/metrics.md``):
the value is 1 when the prediction is perfect there (tp = fp = fn = 0: an instance with
empty true and predicted sets, a label neither present nor predicted) and 0 otherwise
(e.g. the precision of an empty prediction for an instance that has labels). Wherever
the denominator is not 0 the values are exactly scikit-learn's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from mlw.metrics.context import EvalContext


def _ratio(num: np.ndarray, den: np.ndarray, perfect: np.ndarray | bool) -> np.ndarray:
    """num / den elementwise; where den == 0: 1.0 if ``perfect`` else 0.0."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.where(np.broadcast_to(perfect, den.shape), 1.0, 0.0)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _precision(c: np.ndarray) -> np.ndarray:
    tp, fp, fn = c[..., 0], c[..., 1], c[..., 2]
    return _ratio(tp, tp + fp, fn == 0)


def _recall(c: np.ndarray) -> np.ndarray:
    tp, fp, fn = c[..., 0], c[..., 1], c[..., 2]
    return _ratio(tp, tp + fn, fp == 0)


def _f1(c: np.ndarray) -> np.ndarray:
    tp, fp, fn = c[..., 0], c[..., 1], c[..., 2]
    return _ratio(2 * tp, 2 * tp + fp + fn, True)


def _jaccard(c: np.ndarray) -> np.ndarray:
    tp, fp, fn = c[..., 0], c[..., 1], c[..., 2]
    return _ratio(tp, tp + fp + fn, True)


def subset_accuracy(ctx: EvalContext) -> float:
    """Fraction of instances whose predicted label set equals the true one."""
    c = ctx.counts.instance
    return float(np.mean((c[:, 1] == 0) & (c[:, 2] == 0)))


def empty_prediction_rate(ctx: EvalContext) -> float:
    """Fraction of instances whose predicted label set is empty (a diagnostic: compare
    it with the true sets' rate, ``mlw.metrics.empty_rate(Y_true)``)."""
    c = ctx.counts.instance
    return float(np.mean((c[:, 0] + c[:, 1]) == 0)) if c.shape[0] else 0.0


def hamming_loss(ctx: EvalContext) -> float:
    """Fraction of the n·L instance-label pairs that are wrong."""
    c = ctx.counts
    return float((c.instance[:, 1].sum() + c.instance[:, 2].sum())
                 / (c.n_instances * c.n_labels))


def accuracy(ctx: EvalContext) -> float:
    """Example-based accuracy: mean Jaccard index |T ∩ P| / |T ∪ P| of the instances."""
    return float(np.mean(_jaccard(ctx.counts.instance)))


def precision_example(ctx: EvalContext) -> float:
    return float(np.mean(_precision(ctx.counts.instance)))


def recall_example(ctx: EvalContext) -> float:
    return float(np.mean(_recall(ctx.counts.instance)))


def fnr_example(ctx: EvalContext) -> float:
    """Mean over instances of the fraction of true labels missed (0 for an instance
    without true labels): the loss conformal recall control bounds."""
    c = ctx.counts.instance
    tp, fn = c[..., 0], c[..., 2]
    return float(np.mean(_ratio(fn, tp + fn, False)))


def f1_example(ctx: EvalContext) -> float:
    return float(np.mean(_f1(ctx.counts.instance)))


def precision_micro(ctx: EvalContext) -> float:
    return float(_precision(ctx.counts.micro))


def recall_micro(ctx: EvalContext) -> float:
    return float(_recall(ctx.counts.micro))


def f1_micro(ctx: EvalContext) -> float:
    return float(_f1(ctx.counts.micro))


def precision_macro(ctx: EvalContext) -> float:
    return float(np.mean(_precision(ctx.counts.label)))


def recall_macro(ctx: EvalContext) -> float:
    return float(np.mean(_recall(ctx.counts.label)))


def f1_macro(ctx: EvalContext) -> float:
    return float(np.mean(_f1(ctx.counts.label)))
