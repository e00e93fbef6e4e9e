"""Label sets with a guaranteed recall: conformal risk control over any learner with
scores.

:class:`ConformalRecall` fits a learner on part of the training data and chooses, on
the rest (the calibration split), one cut-off ``lambda_`` on its scores: the predicted
set of a row is every label scoring at least ``lambda_``. The loss of a row is its
false-negative rate, FNR = |true labels missed| / |true labels| (0 for a row without
true labels), which only falls as the cut-off falls. On exchangeable data:

- ``method="crc"``, conformal risk control (Angelopoulos, Bates, Fisch, Lei and
  Schuster, "Conformal Risk Control", ICLR 2024): the largest cut-off with
  (n R(lambda) + 1) / (n + 1) <= alpha, where R is the mean FNR on the n calibration
  rows. Then the *expected* FNR of a new row is at most ``alpha``: the mean recall
  over test sets is at least 1 - alpha (over random calibration sets; a single test
  set's recall scatters around its expectation).
- ``method="ltt"``, Learn-then-Test (Angelopoulos, Bates, Candès, Jordan and Lei,
  2021): cut-offs on the grid 0, 0.001, ..., 1 are tested in increasing order
  (fixed-sequence testing) with the Hoeffding-Bentkus p-value of "FNR(lambda) >
  alpha", and the last one rejected at level ``delta`` is kept. Then, with
  probability at least 1 - delta over the calibration set, the expected FNR of the
  chosen cut-off is at most ``alpha``.

``mlw fit --conformal recall:0.9`` wraps the chosen learner with ``alpha = 0.1`` and
prints the recall achieved on the test set next to the target.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from mlw.calibration import calibration_split, dense_scores, resolve_estimator
from mlw.learner import MultiLabelLearner
from mlw.validation import check_param

#: The cut-offs Learn-then-Test tests, in this order.
LTT_GRID = np.linspace(0.0, 1.0, 1001)


def parse_target(choice: Any) -> float:
    """The target recall of a conformal choice: ``"recall:0.9"`` or a number in (0, 1).

    Examples
    --------
    >>> parse_target("recall:0.9")
    0.9
    """
    text = str(choice).strip()
    measure, colon, value = text.partition(":")
    if colon and measure.strip() != "recall":
        raise ValueError(f"--conformal {text!r}: only recall can be guaranteed "
                         f"(recall:0.9)")
    raw = value if colon else text
    try:
        target = float(raw)
    except ValueError:
        raise ValueError(f"--conformal {text!r}: expected recall:TARGET with TARGET in "
                         f"(0, 1), such as recall:0.9") from None
    if not 0.0 < target < 1.0:
        raise ValueError(f"--conformal {text!r}: the target recall must be in (0, 1)")
    return target


def false_negative_rate(Y_true: Any, Y_pred: Any) -> np.ndarray:
    """Each row's FNR: the fraction of its true labels not predicted (0 for a row
    without true labels), shape (n,).

    Examples
    --------
    >>> import numpy as np
    >>> false_negative_rate(np.array([[1, 1, 0], [0, 0, 0]]), np.array([[1, 0, 1], [1, 0, 0]]))
    array([0.5, 0. ])
    """
    T = sp.csr_matrix(Y_true, dtype=np.float64)
    P = sp.csr_matrix(Y_pred, dtype=np.float64)
    size = np.asarray(T.sum(axis=1)).ravel()
    hit = np.asarray(T.multiply(P).sum(axis=1)).ravel()
    return np.where(size > 0, 1.0 - hit / np.maximum(size, 1), 0.0)


def positive_pairs(Y: Any, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The score of every (row, true label) pair and its weight 1 / |true labels of the
    row|: the FNR of a row at cut-off ``lam`` is the weight summed over its pairs
    scoring below ``lam``."""
    T = sp.csr_matrix(Y)
    T.eliminate_zeros()
    rows = np.repeat(np.arange(T.shape[0]), np.diff(T.indptr))
    size = np.diff(T.indptr).astype(np.float64)
    return S[rows, T.indices], 1.0 / size[rows]


def crc_cutoff(pair_scores: np.ndarray, pair_weights: np.ndarray, n: int,
               alpha: float) -> float:
    """The conformal-risk-control cut-off: the largest ``lam`` with
    ``(sum of weights of pairs scoring below lam + 1) / (n + 1) <= alpha``; ``-inf``
    (every label) when even that is impossible, ``inf`` (no label) when the empty sets
    already satisfy it."""
    budget = alpha * (n + 1) - 1.0
    if budget < 0:
        return -math.inf
    order = np.argsort(pair_scores, kind="mergesort")
    cum = np.cumsum(pair_weights[order])
    over = np.flatnonzero(cum > budget + 1e-12)
    if over.size == 0:
        return math.inf
    return float(pair_scores[order][over[0]])


def hoeffding_bentkus_pvalue(risk: Any, alpha: float, n: int) -> Any:
    """The Hoeffding-Bentkus p-value of "the expected loss exceeds ``alpha``" from the
    mean ``risk`` (a number or an array) of a [0, 1] loss on ``n`` rows (Bates et al.
    2021, used by Learn-then-Test)."""
    from scipy.special import xlogy
    from scipy.stats import binom

    r = np.asarray(risk, dtype=np.float64)
    a = np.minimum(r, alpha)
    h = xlogy(a, a / alpha) + xlogy(1 - a, (1 - a) / (1 - alpha))
    hoeffding = np.exp(-n * h)
    bentkus = np.e * binom.cdf(np.ceil(n * r - 1e-9), n, alpha)
    p = np.minimum(np.minimum(hoeffding, bentkus), 1.0)
    return float(p) if p.ndim == 0 else p


def ltt_cutoff(pair_scores: np.ndarray, pair_weights: np.ndarray, n: int, alpha: float,
               delta: float, grid: np.ndarray = LTT_GRID) -> float:
    """Learn-then-Test by fixed-sequence testing: the largest cut-off of ``grid`` (in
    increasing order) before the first whose Hoeffding-Bentkus p-value exceeds
    ``delta``; ``-inf`` (every label) when the first already does."""
    order = np.argsort(pair_scores, kind="mergesort")
    s, cum = pair_scores[order], np.r_[0.0, np.cumsum(pair_weights[order])]
    below = np.searchsorted(s, grid, side="left")  # pairs scoring strictly below
    p = hoeffding_bentkus_pvalue(cum[below] / n, alpha, n)
    stop = np.flatnonzero(p > delta)
    last = (stop[0] if stop.size else grid.size) - 1
    return float(grid[last]) if last >= 0 else -math.inf


def recall_cutoff(S: Any, Y: Any, *, alpha: float, method: str = "crc",
                  delta: float = 0.1) -> tuple[float, float]:
    """The cut-off ``ConformalRecall`` chooses from calibration scores ``S`` (n, L) and
    labels ``Y``, and the mean FNR on them at that cut-off: ``(lambda, fnr)``. For
    scores computed once (a simulation over many calibration splits)."""
    check_param("alpha", alpha, float, low=0.0, high=1.0, low_open=True, high_open=True)
    check_param("method", method, str, choices=("crc", "ltt"))
    check_param("delta", delta, float, low=0.0, high=1.0, low_open=True, high_open=True)
    S = dense_scores(S)
    n = S.shape[0]
    scores, weights = positive_pairs(Y, S)
    if method == "crc":
        lam = crc_cutoff(scores, weights, n, float(alpha))
    else:
        lam = ltt_cutoff(scores, weights, n, float(alpha), float(delta))
    return lam, float(np.sum(weights[scores < lam]) / n)


class ConformalRecall(MultiLabelLearner):
    """Label sets of a learner with scores whose recall is guaranteed on exchangeable
    data: the expected false-negative rate is at most ``alpha`` (``method="crc"``), or
    is so with probability at least ``1 - delta`` over the calibration set
    (``method="ltt"``). See :mod:`mlw.conformal`.

    Parameters
    ----------
    estimator : str or estimator
        The learner: a registered name (``"br"``) or an unfitted estimator with
        ``fit`` and ``predict_proba`` (cloned).
    alpha : float
        The false-negative rate to control, in (0, 1): target recall ``1 - alpha``.
    method : {"crc", "ltt"}
        Conformal risk control (the expected FNR) or Learn-then-Test (the same with
        probability ``1 - delta``).
    delta : float
        Learn-then-Test's error probability, in (0, 1).
    calibration_size : float
        Fraction of the training rows held out to choose the cut-off on (the learner
        is fitted on the rest).
    random_state : int or None
        Seed of the split and of a learner given by name.

    Attributes
    ----------
    estimator_ : the fitted learner
    lambda_ : float
        The cut-off: a label is predicted when its score is at least this (``-inf``:
        every label; ``inf``: none).
    calibration_fnr_ : float
        The mean FNR on the calibration split at ``lambda_``.
    n_calibration_ : int

    Examples
    --------
    >>> import mlw
    >>> from mlw.conformal import ConformalRecall
    >>> train = mlw.load_dataset("emotions")
    >>> model = ConformalRecall("br", alpha=0.1).fit(train.X, train.Y)
    >>> bool(model.calibration_fnr_ <= 0.1)
    True
    """

    _joint_prediction: ClassVar[bool] = True

    def __init__(self, estimator: Any = "br", *, alpha: float = 0.1, method: str = "crc",
                 delta: float = 0.1, calibration_size: float = 0.3,
                 random_state: int | None = 0) -> None:
        self.estimator = estimator
        self.alpha = alpha
        self.method = method
        self.delta = delta
        self.calibration_size = calibration_size
        self.random_state = random_state

    def _fit(self, X: Any, Y: Any) -> None:
        recall_cutoff(np.zeros((1, 1)), np.zeros((1, 1)), alpha=self.alpha,
                      method=self.method, delta=self.delta)  # the parameters, early
        fit_rows, cal_rows = calibration_split(X.shape[0], self.calibration_size,
                                               self.random_state)
        self.estimator_ = resolve_estimator(self.estimator, self.random_state)
        self.estimator_.fit(X[fit_rows], Y[fit_rows])
        self._calibrate(dense_scores(self.estimator_.predict_proba(X[cal_rows])),
                        Y[cal_rows])

    def _calibrate(self, S: np.ndarray, Y: Any) -> None:
        """Choose ``lambda_`` from calibration scores ``S`` and labels ``Y``."""
        self.lambda_, self.calibration_fnr_ = recall_cutoff(
            S, Y, alpha=self.alpha, method=self.method, delta=self.delta)
        self.n_calibration_ = int(S.shape[0])

    def _predict_proba(self, X: Any) -> Any:
        return self.estimator_.predict_proba(X)

    def _predict(self, X: Any) -> Any:
        return self.sets_from_scores(self.estimator_.predict_proba(X))

    def sets_from_scores(self, S: Any) -> Any:
        """The predicted sets for scores ``S``: every label scoring at least
        ``lambda_`` (CSR scores stay CSR unless the cut-off is not positive, when every
        label, absent entries too, is in the set)."""
        if sp.issparse(S) and self.lambda_ > 0:
            out = sp.csr_matrix(S >= self.lambda_, dtype=np.uint8)
            out.eliminate_zeros()
            return out
        return (dense_scores(S) >= self.lambda_).astype(np.uint8)
