"""Multi-label evaluation metrics.

Metrics are registered through the ``mlw_register_metrics`` hook (the core's own in
:mod:`mlw._builtin.metrics`, from :data:`BUILTIN_METRICS`). Each receives an
:class:`EvalContext`, which validates the inputs once and caches the per-instance and
per-label confusion counts (one numba pass), so computing every label-set metric
together costs one pass over the label matrices.

The plain functions here (``mlw.metrics.hamming_loss(Y_true, Y_pred)``, ...) run the
very same ``compute`` through a one-off context. See ``docs/guide/metrics.md`` for the
definitions and the conventions for empty sets and ties.

>>> import numpy as np
>>> from mlw import metrics
>>> Y = np.array([[1, 0, 1], [0, 1, 0]])
>>> P = np.array([[1, 0, 0], [0, 1, 0]])
>>> metrics.hamming_loss(Y, P), metrics.subset_accuracy(Y, P), metrics.f1_micro(Y, P)
(0.16666666666666666, 0.5, 0.8)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlw.metrics import at_k as _ak
from mlw.metrics import calibration as _ca
from mlw.metrics import label_set as _ls
from mlw.metrics import probabilistic as _pr
from mlw.metrics import ranking as _rk
from mlw.metrics import scores as _sc
from mlw.metrics.at_k import TopK, inverse_propensity, top_k
from mlw.metrics.context import EvalContext
from mlw.registry import MetricSpec
from mlw.validation import check_Y

#: The core's metrics, in the order ``mlw.evaluate`` reports them.
BUILTIN_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("subset_accuracy", _ls.subset_accuracy, True, "labels",
               "fraction of instances whose predicted label set is exactly right"),
    MetricSpec("hamming_loss", _ls.hamming_loss, False, "labels",
               "fraction of wrong instance-label pairs"),
    MetricSpec("accuracy", _ls.accuracy, True, "labels",
               "example-based accuracy: mean Jaccard index of true and predicted sets"),
    MetricSpec("precision_example", _ls.precision_example, True, "labels",
               "mean over instances of |T & P| / |P|"),
    MetricSpec("recall_example", _ls.recall_example, True, "labels",
               "mean over instances of |T & P| / |T|"),
    MetricSpec("fnr_example", _ls.fnr_example, False, "labels",
               "mean over instances of |T - P| / |T| (0 when T is empty): the false-"
               "negative rate conformal recall control bounds; recall = 1 - it"),
    MetricSpec("f1_example", _ls.f1_example, True, "labels",
               "mean over instances of 2|T & P| / (|T| + |P|)"),
    MetricSpec("f1_micro", _ls.f1_micro, True, "labels",
               "F1 of the tp/fp/fn counts pooled over all labels"),
    MetricSpec("f1_macro", _ls.f1_macro, True, "labels",
               "mean over labels of each label's F1"),
    MetricSpec("precision_micro", _ls.precision_micro, True, "labels",
               "precision of the counts pooled over all labels"),
    MetricSpec("recall_micro", _ls.recall_micro, True, "labels",
               "recall of the counts pooled over all labels"),
    MetricSpec("precision_macro", _ls.precision_macro, True, "labels",
               "mean over labels of each label's precision"),
    MetricSpec("recall_macro", _ls.recall_macro, True, "labels",
               "mean over labels of each label's recall"),
    MetricSpec("log_loss", _pr.log_loss, False, "scores",
               "MEKA's log loss (lim. D): per-label cross-entropy capped at ln(n), averaged"),
    MetricSpec("cll_loss", _pr.cll_loss, False, "joint",
               "conditional log-likelihood loss: -sum over instances of log P(y|x)"),
    MetricSpec("cll_loss_marginals", _pr.cll_loss_marginals, False, "scores",
               "CLL-loss of the product of the marginal scores (labels independent given "
               "x): -sum of log(score) of true and log(1 - score) of false labels"),
    MetricSpec("one_error", _rk.one_error, False, "scores",
               "fraction of instances whose top-ranked label is not relevant"),
    MetricSpec("coverage", _rk.coverage, False, "scores",
               "mean depth in the ranking needed to cover all true labels (sklearn's)"),
    MetricSpec("ranking_loss", _rk.ranking_loss, False, "scores",
               "mean fraction of (true, false) label pairs ranked wrongly"),
    MetricSpec("average_precision", _rk.average_precision, True, "scores",
               "label-ranking average precision (sklearn's LRAP)"),
    MetricSpec("specificity_micro", _sc.specificity_micro, True, "labels",
               "true-negative rate of the counts pooled over all labels"),
    MetricSpec("specificity_macro", _sc.specificity_macro, True, "labels",
               "mean over labels of each label's true-negative rate"),
    MetricSpec("auc_micro", _sc.auc_micro, True, "scores",
               "ROC AUC of all instance-label pairs pooled"),
    MetricSpec("auc_macro", _sc.auc_macro, True, "scores",
               "mean over labels of each label's ROC AUC (labels with both classes)"),
    MetricSpec("average_precision_micro", _sc.average_precision_micro, True, "scores",
               "average precision of all instance-label pairs pooled"),
    MetricSpec("average_precision_macro", _sc.average_precision_macro, True, "scores",
               "mean over labels of each label's average precision (MAP)"),
    MetricSpec("ece_pooled", _ca.ece_pooled, False, "scores",
               "expected calibration error of the marginal scores, all instance-label "
               "pairs in 10 equal-width bins"),
    MetricSpec("ece_macro", _ca.ece_macro, False, "scores",
               "mean over labels of each label's expected calibration error (10 bins)"),
    MetricSpec("empty_prediction_rate", _ls.empty_prediction_rate, False, "labels",
               "fraction of instances predicted with the empty label set (compare with "
               "the true rate)"),
) + _ak.at_k_specs()


# -- plain functions: the same compute through a one-off EvalContext --------------------
def subset_accuracy(Y_true: Any, Y_pred: Any) -> float:
    """Fraction of instances whose predicted label set equals the true one."""
    return _ls.subset_accuracy(EvalContext(Y_true, Y_pred))


def hamming_loss(Y_true: Any, Y_pred: Any) -> float:
    """Fraction of the n·L instance-label pairs predicted wrongly."""
    return _ls.hamming_loss(EvalContext(Y_true, Y_pred))


def accuracy(Y_true: Any, Y_pred: Any) -> float:
    """Example-based accuracy (mean Jaccard index of true and predicted label sets)."""
    return _ls.accuracy(EvalContext(Y_true, Y_pred))


def precision_example(Y_true: Any, Y_pred: Any) -> float:
    """Example-based precision."""
    return _ls.precision_example(EvalContext(Y_true, Y_pred))


def recall_example(Y_true: Any, Y_pred: Any) -> float:
    """Example-based recall."""
    return _ls.recall_example(EvalContext(Y_true, Y_pred))


def f1_example(Y_true: Any, Y_pred: Any) -> float:
    """Example-based F1."""
    return _ls.f1_example(EvalContext(Y_true, Y_pred))


def f1_micro(Y_true: Any, Y_pred: Any) -> float:
    """Micro-averaged F1."""
    return _ls.f1_micro(EvalContext(Y_true, Y_pred))


def f1_macro(Y_true: Any, Y_pred: Any) -> float:
    """Macro-averaged (per label) F1."""
    return _ls.f1_macro(EvalContext(Y_true, Y_pred))


def precision_micro(Y_true: Any, Y_pred: Any) -> float:
    """Micro-averaged precision."""
    return _ls.precision_micro(EvalContext(Y_true, Y_pred))


def recall_micro(Y_true: Any, Y_pred: Any) -> float:
    """Micro-averaged recall."""
    return _ls.recall_micro(EvalContext(Y_true, Y_pred))


def precision_macro(Y_true: Any, Y_pred: Any) -> float:
    """Macro-averaged (per label) precision."""
    return _ls.precision_macro(EvalContext(Y_true, Y_pred))


def recall_macro(Y_true: Any, Y_pred: Any) -> float:
    """Macro-averaged (per label) recall."""
    return _ls.recall_macro(EvalContext(Y_true, Y_pred))


def empty_prediction_rate(Y_true: Any, Y_pred: Any) -> float:
    """Fraction of instances whose predicted label set is empty."""
    return _ls.empty_prediction_rate(EvalContext(Y_true, Y_pred))


def empty_rate(Y: Any) -> float:
    """Fraction of the rows of a label matrix (dense or CSR) with no label: the true
    rate that :func:`empty_prediction_rate` is compared with.

    >>> empty_rate([[1, 0], [0, 0], [0, 1], [0, 0]])
    0.5
    """
    import scipy.sparse as sp

    Y = check_Y(Y)
    if Y.shape[0] == 0:
        return 0.0
    per_row = np.diff(Y.indptr) if sp.issparse(Y) else np.count_nonzero(Y, axis=1)
    return float(np.mean(per_row == 0))


def log_loss(Y_true: Any, scores: Any) -> float:
    """MEKA's log loss (lim. D): per-label cross-entropy capped at ln(n), averaged."""
    return _pr.log_loss(EvalContext(Y_true, scores=scores))


def cll_loss(Y_true: Any, log_proba: Any) -> float:
    """-Σ log P(y_i | x_i) from a joint model's ``log_proba_of(X, Y_true)``."""
    return _pr.cll_loss(EvalContext(Y_true, log_proba=log_proba))


def cll_loss_marginals(Y_true: Any, scores: Any) -> float:
    """-Σ_i Σ_j log q_ij, q the score of a true label and 1 - score of a false one."""
    return _pr.cll_loss_marginals(EvalContext(Y_true, scores=scores))


def one_error(Y_true: Any, scores: Any) -> float:
    """Fraction of instances whose top-ranked label is not relevant."""
    return _rk.one_error(EvalContext(Y_true, scores=scores))


def coverage(Y_true: Any, scores: Any) -> float:
    """Mean ranking depth covering all true labels (scikit-learn's ``coverage_error``)."""
    return _rk.coverage(EvalContext(Y_true, scores=scores))


def ranking_loss(Y_true: Any, scores: Any) -> float:
    """Mean fraction of wrongly ordered (true, false) label pairs."""
    return _rk.ranking_loss(EvalContext(Y_true, scores=scores))


def average_precision(Y_true: Any, scores: Any) -> float:
    """Label-ranking average precision."""
    return _rk.average_precision(EvalContext(Y_true, scores=scores))


def specificity_micro(Y_true: Any, Y_pred: Any) -> float:
    """ΣTN / (ΣTN + ΣFP) over all instance-label pairs."""
    return _sc.specificity_micro(EvalContext(Y_true, Y_pred))


def specificity_macro(Y_true: Any, Y_pred: Any) -> float:
    """Mean over labels of TN / (TN + FP)."""
    return _sc.specificity_macro(EvalContext(Y_true, Y_pred))


def auc_micro(Y_true: Any, scores: Any) -> float:
    """ROC AUC of all instance-label pairs pooled (scikit-learn's ``average="micro"``)."""
    return _sc.auc_micro(EvalContext(Y_true, scores=scores))


def auc_macro(Y_true: Any, scores: Any) -> float:
    """Mean of the labels' ROC AUC (scikit-learn's ``average="macro"``)."""
    return _sc.auc_macro(EvalContext(Y_true, scores=scores))


def average_precision_micro(Y_true: Any, scores: Any) -> float:
    """Average precision of all pairs pooled (``average_precision_score`` micro)."""
    return _sc.average_precision_micro(EvalContext(Y_true, scores=scores))


def average_precision_macro(Y_true: Any, scores: Any) -> float:
    """Mean of the labels' average precision (MAP; ``average_precision_score`` macro)."""
    return _sc.average_precision_macro(EvalContext(Y_true, scores=scores))


def precision_at_k(Y_true: Any, ranking: Any, k: int = 5) -> float:
    """Precision at k: the mean over instances of the fraction of the top ``k`` ranked
    labels that are relevant. ``ranking`` is a :class:`TopK` (``predict_topk``), an
    (n, k') index array (k' >= k, -1 = empty), or per-label scores (ranked by
    :func:`top_k`).

    >>> precision_at_k([[1, 0, 1], [0, 1, 0]], [[2, 1], [0, 1]], k=2)
    0.5
    """
    return _ak.metric_at_k("precision", Y_true, ranking, k)


def recall_at_k(Y_true: Any, ranking: Any, k: int = 5) -> float:
    """Recall at k: the mean fraction of each instance's true labels found in its top
    ``k`` (0 for an instance without true labels). ``ranking`` as in
    :func:`precision_at_k`."""
    return _ak.metric_at_k("recall", Y_true, ranking, k)


def ndcg_at_k(Y_true: Any, ranking: Any, k: int = 5) -> float:
    """nDCG at k: Σ_r rel_r / log2(r + 1) over the top ``k``, divided by its best value
    (all min(k, |y|) true labels first); 0 for an instance without true labels."""
    return _ak.metric_at_k("ndcg", Y_true, ranking, k)


def psprecision_at_k(Y_true: Any, ranking: Any, k: int = 5, *,
                     inv_propensity: Any = None) -> float:
    """Propensity-scored precision at k (Jain, Prabhu and Varma, KDD 2016), normalised
    by the best achievable: Σ_i Σ_{r<=k} rel_ir / p_l over Σ_i of the same for the true
    labels in decreasing 1/p_l. ``inv_propensity`` (L,) defaults to
    :func:`inverse_propensity` of ``Y_true``; pass the training labels' (with A and B
    of your dataset) to follow the repository's protocol."""
    return _ak.metric_at_k("psprecision", Y_true, ranking, k, inv_propensity=inv_propensity)


def psndcg_at_k(Y_true: Any, ranking: Any, k: int = 5, *,
                inv_propensity: Any = None) -> float:
    """Propensity-scored nDCG at k, normalised like :func:`psprecision_at_k`."""
    return _ak.metric_at_k("psndcg", Y_true, ranking, k, inv_propensity=inv_propensity)


__all__ = [
    "TopK",
    "BUILTIN_METRICS",
    "EvalContext",
    "accuracy",
    "auc_macro",
    "auc_micro",
    "average_precision",
    "average_precision_macro",
    "average_precision_micro",
    "cll_loss",
    "cll_loss_marginals",
    "coverage",
    "empty_prediction_rate",
    "empty_rate",
    "f1_example",
    "f1_macro",
    "f1_micro",
    "hamming_loss",
    "inverse_propensity",
    "log_loss",
    "ndcg_at_k",
    "one_error",
    "precision_example",
    "precision_macro",
    "precision_at_k",
    "precision_micro",
    "psndcg_at_k",
    "psprecision_at_k",
    "ranking_loss",
    "recall_at_k",
    "recall_example",
    "recall_macro",
    "recall_micro",
    "specificity_macro",
    "specificity_micro",
    "subset_accuracy",
    "top_k",
]
