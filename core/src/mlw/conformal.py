"""Label sets with a guaranteed recall or precision: conformal risk control and
Learn-then-Test over any learner with scores.

:class:`ConformalLabelSets` fits a learner on part of the training data and chooses, on
the rest (the calibration split), one cut-off ``lambda_`` on its scores: the predicted
set of a row is every label scoring at least ``lambda_``. ``control`` names the loss of
a row that is controlled:

- ``"recall"``: its false-negative rate, FNR = |true labels missed| / |true labels| (0
  for a row without true labels), which only falls as the cut-off falls;
- ``"precision"``: one minus its precision, 1 - |true labels predicted| / |predicted
  labels|, with the conventions of the metric ``precision_example``: an empty
  predicted set has precision 0 for a row with true labels (it claims nothing right)
  and 1 for a row without (nothing to find, nothing claimed), and a non-empty set for a
  row without true labels has precision 0. On rows that all have true labels this is
  MAPIE's ``PrecisionRecallController`` loss (MAPIE refuses rows without labels).
  Precision is *not* monotone in the cut-off (a higher cut-off drops wrong labels, but
  in the end empties the sets).

On exchangeable data:

- ``method="crc"``, conformal risk control (Angelopoulos, Bates, Fisch, Lei and
  Schuster, "Conformal Risk Control", ICLR 2024), recall only: the largest cut-off with
  (n R(lambda) + 1) / (n + 1) <= alpha, where R is the mean FNR on the n calibration
  rows. Then the *expected* FNR of a new row is at most ``alpha``: the mean recall
  over test sets is at least 1 - alpha (over random calibration sets; a single test
  set's recall scatters around its expectation). Its guarantee needs a loss that is
  monotone in the cut-off, so it does not apply to precision.
- ``method="ltt"``, Learn-then-Test (Angelopoulos, Bates, Candès, Jordan and Lei,
  "Learn then Test: Calibrating Predictive Algorithms to Achieve Risk Control", 2021):
  each cut-off of a grid is a hypothesis "its expected loss exceeds alpha", tested with
  the Hoeffding-Bentkus p-value of the calibration loss; any procedure that controls
  the family-wise error rate at ``delta`` over the grid gives, with probability at
  least 1 - delta over the calibration set, an expected loss of at most ``alpha`` at
  every rejected cut-off (the paper's main theorem). For recall the cut-offs 0, 0.001,
  ..., 1 are tested in increasing order (fixed-sequence testing, powerful because the
  FNR grows with the cut-off) and the last one rejected is kept. For precision the loss
  is not monotone, so a fixed order would stop at the first cut-off that empties the
  sets: the cut-offs 0, 0.01, ..., 1 are tested by Holm's step-down Bonferroni
  procedure (valid for any dependence between the tests; what MAPIE uses), and the
  smallest rejected cut-off is kept (the largest certified sets, so the best recall
  among them). When none is rejected no cut-off is certified: ``lambda_`` is ``inf``
  (every set empty), ``certified_`` is False and a warning says so.

``mlw fit --conformal recall:0.9`` (or ``precision:0.9``) wraps the chosen learner with
``alpha = 0.1`` and prints the value achieved on the test set next to the target.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from mlw.calibration import calibration_split, dense_scores, resolve_estimator
from mlw.learner import MultiLabelLearner
from mlw.validation import check_param

#: The cut-offs Learn-then-Test tests for recall, in this order.
LTT_GRID = np.linspace(0.0, 1.0, 1001)
#: The cut-offs Learn-then-Test tests for precision (Holm's procedure over all of them:
#: a coarser grid than recall's, as each test pays for the size of the family).
PRECISION_GRID = np.linspace(0.0, 1.0, 101)
#: The losses that can be controlled, and the methods that control each.
METHODS: dict[str, tuple[str, ...]] = {"recall": ("crc", "ltt"), "precision": ("ltt",)}
#: The metric of :func:`mlw.evaluate` that measures each controlled quantity.
ACHIEVED_METRIC = {"recall": "fnr_example", "precision": "precision_example"}


@dataclass(frozen=True)
class ConformalTarget:
    """What ``--conformal`` asks for: the controlled quantity (``"recall"`` or
    ``"precision"``), its target (1 - alpha) and the method (``"crc"`` or ``"ltt"``).

    Examples
    --------
    >>> t = ConformalTarget("precision", 0.9, "ltt")
    >>> t.metric, t.achieved({"precision_example": 0.93})
    ('precision_example', 0.93)
    """

    control: str
    target: float
    method: str
    delta: float = 0.1

    @property
    def metric(self) -> str:
        """The metric whose value gives the achieved recall or precision."""
        return ACHIEVED_METRIC[self.control]

    def achieved(self, metrics: dict[str, float]) -> float:
        """The recall (1 - ``fnr_example``) or precision (``precision_example``) the
        label sets achieved, from computed metrics."""
        value = float(metrics[self.metric])
        return 1.0 - value if self.control == "recall" else value

    @property
    def guarantee(self) -> str:
        """How the target holds, in words."""
        if self.method == "crc":
            return "in expectation over calibration sets"
        return f"with probability >= {1 - self.delta:g} over calibration sets"


def resolve_method(control: str, method: str | None) -> str:
    """The method for ``control`` (``None``: ``"crc"`` for recall, ``"ltt"`` for
    precision); ``ValueError`` for a method that cannot control it.

    Examples
    --------
    >>> resolve_method("precision", None)
    'ltt'
    """
    check_param("control", control, str, choices=tuple(METHODS))
    if method is None:
        return METHODS[control][0]
    check_param("method", method, str, choices=("crc", "ltt"))
    if method not in METHODS[control]:
        raise ValueError(f"method {method!r} cannot control {control}: precision is not "
                         f"monotone in the cut-off, so conformal risk control's guarantee "
                         f"does not hold; use method 'ltt'")
    return method


def parse_target(choice: Any) -> ConformalTarget:
    """A conformal choice: ``"recall:0.9"``, ``"precision:0.9"``, either with a method
    (``"recall:0.9:ltt"``), or a bare target recall (a number in (0, 1)).

    Examples
    --------
    >>> parse_target("recall:0.9")
    ConformalTarget(control='recall', target=0.9, method='crc', delta=0.1)
    >>> parse_target("precision:0.8").method
    'ltt'
    """
    text = str(choice).strip()
    parts = [p.strip() for p in text.split(":")]
    if len(parts) == 1:
        parts = ["recall", parts[0]]
    usage = ("expected MEASURE:TARGET[:METHOD] with MEASURE recall or precision, TARGET "
             "in (0, 1) and METHOD crc or ltt, such as recall:0.9 or precision:0.9")
    if len(parts) > 3:
        raise ValueError(f"--conformal {text!r}: {usage}")
    if parts[0] not in METHODS:
        raise ValueError(f"--conformal {text!r}: only recall or precision can be "
                         f"guaranteed (recall:0.9, precision:0.9)")
    try:
        target = float(parts[1])
    except ValueError:
        raise ValueError(f"--conformal {text!r}: {usage}") from None
    if not 0.0 < target < 1.0:
        raise ValueError(f"--conformal {text!r}: the target {parts[0]} must be in (0, 1)")
    method = parts[2] if len(parts) == 3 else None
    if method is not None and method not in ("crc", "ltt"):
        raise ValueError(f"--conformal {text!r}: unknown method {method!r} (crc or ltt)")
    try:
        method = resolve_method(parts[0], method)
    except ValueError as exc:
        raise ValueError(f"--conformal {text!r}: {exc}") from None
    return ConformalTarget(parts[0], target, method)


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


def precision_loss(Y_true: Any, Y_pred: Any) -> np.ndarray:
    """Each row's precision loss, 1 - |true labels predicted| / |predicted labels|,
    shape (n,): 1 for an empty predicted set of a row with true labels, 0 for an empty
    set of a row without (the conventions of ``precision_example``).

    Examples
    --------
    >>> import numpy as np
    >>> precision_loss(np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0]]),
    ...                np.array([[1, 0, 1], [0, 0, 0], [0, 0, 0]]))
    array([0.5, 1. , 0. ])
    """
    T = sp.csr_matrix(Y_true, dtype=np.float64)
    P = sp.csr_matrix(Y_pred, dtype=np.float64)
    size = np.asarray(P.sum(axis=1)).ravel()
    hit = np.asarray(T.multiply(P).sum(axis=1)).ravel()
    empty = np.where(np.diff(T.indptr) > 0, 1.0, 0.0)
    return np.where(size > 0, 1.0 - hit / np.maximum(size, 1), empty)


def precision_risks(S: Any, Y: Any, grid: np.ndarray = PRECISION_GRID) -> np.ndarray:
    """The mean :func:`precision_loss` over the rows of scores ``S`` (n, L) and labels
    ``Y`` at each cut-off of ``grid`` (sets: every label scoring at least it), shape
    (len(grid),), in O(n L log G + n G)."""
    S = dense_scores(S)
    n, G = S.shape[0], grid.size
    T = sp.csr_matrix(Y).toarray() != 0
    # a label is in the set at grid[k] exactly when k < (number of grid points <= score)
    reach = np.searchsorted(grid, S, side="right")
    rows = np.repeat(np.arange(n), S.shape[1]).reshape(S.shape)

    def at_least(mask: np.ndarray) -> np.ndarray:  # (n, G): labels in mask within the set
        hist = np.bincount((rows[mask] * (G + 1) + reach[mask]).ravel(),
                           minlength=n * (G + 1)).reshape(n, G + 1)
        return np.cumsum(hist[:, ::-1], axis=1)[:, ::-1][:, 1:]

    size = at_least(np.ones_like(T))
    hit = at_least(T)
    empty = np.where(T.any(axis=1), 1.0, 0.0)[:, None]
    loss = np.where(size > 0, 1.0 - hit / np.maximum(size, 1), empty)
    return loss.mean(axis=0)


def holm_rejections(p: np.ndarray, delta: float) -> np.ndarray:
    """Holm's step-down Bonferroni procedure: which hypotheses are rejected (a bool
    mask) with family-wise error rate at most ``delta``, for any dependence between
    the p-values ``p``: the r-th smallest p-value (r = 0, 1, ...) is rejected while it
    is at most delta / (m - r).

    Examples
    --------
    >>> holm_rejections(np.array([0.01, 0.04, 0.03, 0.5]), 0.1).tolist()
    [True, True, True, False]
    """
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="mergesort")
    ok = p[order] <= delta / (m - np.arange(m))
    n_rejected = int(np.argmin(ok)) if not ok.all() else m
    out = np.zeros(m, dtype=bool)
    out[order[:n_rejected]] = True
    return out


def ltt_precision_cutoff(S: Any, Y: Any, alpha: float, delta: float,
                         grid: np.ndarray = PRECISION_GRID) -> float:
    """Learn-then-Test for the precision loss: the smallest cut-off of ``grid`` whose
    hypothesis "mean precision loss > alpha" Holm's procedure rejects at ``delta``
    (Hoeffding-Bentkus p-values); ``inf`` (every set empty) when none is."""
    n = dense_scores(S).shape[0]
    p = hoeffding_bentkus_pvalue(precision_risks(S, Y, grid), alpha, n)
    rejected = np.flatnonzero(holm_rejections(np.atleast_1d(p), delta))
    return float(grid[rejected[0]]) if rejected.size else math.inf


def conformal_cutoff(S: Any, Y: Any, *, control: str = "recall", alpha: float,
                     method: str | None = None, delta: float = 0.1) -> tuple[float, float]:
    """The cut-off :class:`ConformalLabelSets` chooses from calibration scores ``S``
    (n, L) and labels ``Y``, and the mean loss on them at that cut-off (FNR, or 1 -
    precision): ``(lambda, loss)``. For scores computed once (a simulation over many
    calibration splits). ``method=None``: ``"crc"`` for recall, ``"ltt"`` for
    precision."""
    method = resolve_method(control, method)
    check_param("alpha", alpha, float, low=0.0, high=1.0, low_open=True, high_open=True)
    check_param("delta", delta, float, low=0.0, high=1.0, low_open=True, high_open=True)
    S = dense_scores(S)
    n = S.shape[0]
    if control == "precision":
        lam = ltt_precision_cutoff(S, Y, float(alpha), float(delta))
        return lam, float(precision_loss(Y, (S >= lam).astype(np.uint8)).mean())
    scores, weights = positive_pairs(Y, S)
    if method == "crc":
        lam = crc_cutoff(scores, weights, n, float(alpha))
    else:
        lam = ltt_cutoff(scores, weights, n, float(alpha), float(delta))
    return lam, float(np.sum(weights[scores < lam]) / n)


class ConformalLabelSets(MultiLabelLearner):
    """Label sets of a learner with scores whose recall or precision is guaranteed on
    exchangeable data: the expected loss (FNR, or 1 - precision) of a new row is at
    most ``alpha`` (``method="crc"``, recall only), or is so with probability at least
    ``1 - delta`` over the calibration set (``method="ltt"``). See
    :mod:`mlw.conformal` for the losses and the procedures.

    Parameters
    ----------
    estimator : str or estimator
        The learner: a registered name (``"br"``) or an unfitted estimator with
        ``fit`` and ``predict_proba`` (cloned).
    control : {"recall", "precision"}
        What is guaranteed: the recall (the false-negative rate is the loss) or the
        precision (1 - precision is the loss) of the predicted sets.
    alpha : float
        The loss to control, in (0, 1): target recall or precision ``1 - alpha``.
    method : {"crc", "ltt"} or None
        Conformal risk control (the expected loss; recall only) or Learn-then-Test
        (the same with probability ``1 - delta``). ``None``: ``"crc"`` for recall,
        ``"ltt"`` for precision; ``"crc"`` with precision is a ``ValueError``.
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
    calibration_loss_ : float
        The mean loss on the calibration split at ``lambda_`` (FNR, or 1 - precision).
    certified_ : bool
        Whether a cut-off was certified. False only for precision when no cut-off of
        the grid passes the test (the target is too high for the learner's scores or
        for the calibration split's size): ``lambda_`` is then ``inf`` and every
        predicted set is empty, and ``fit`` warns.
    n_calibration_ : int

    Examples
    --------
    >>> import mlw
    >>> train = mlw.load_dataset("emotions")
    >>> model = ConformalLabelSets("br", control="precision", alpha=0.6).fit(train.X, train.Y)
    >>> model.certified_, bool(model.calibration_loss_ <= 0.6)
    (True, True)
    """

    _joint_prediction: ClassVar[bool] = True

    def __init__(self, estimator: Any = "br", *, control: str = "recall", alpha: float = 0.1,
                 method: str | None = None, delta: float = 0.1,
                 calibration_size: float = 0.3, random_state: int | None = 0) -> None:
        self.estimator = estimator
        self.control = control
        self.alpha = alpha
        self.method = method
        self.delta = delta
        self.calibration_size = calibration_size
        self.random_state = random_state

    def _fit(self, X: Any, Y: Any) -> None:
        conformal_cutoff(np.zeros((1, 1)), np.zeros((1, 1)), control=self.control,
                         alpha=self.alpha, method=self.method,
                         delta=self.delta)  # the parameters, early
        fit_rows, cal_rows = calibration_split(X.shape[0], self.calibration_size,
                                               self.random_state)
        self.estimator_ = resolve_estimator(self.estimator, self.random_state)
        self.estimator_.fit(X[fit_rows], Y[fit_rows])
        self._calibrate(dense_scores(self.estimator_.predict_proba(X[cal_rows])),
                        Y[cal_rows])

    def _calibrate(self, S: np.ndarray, Y: Any) -> None:
        """Choose ``lambda_`` from calibration scores ``S`` and labels ``Y``."""
        self.lambda_, self.calibration_loss_ = conformal_cutoff(
            S, Y, control=self.control, alpha=self.alpha, method=self.method,
            delta=self.delta)
        self.n_calibration_ = int(S.shape[0])
        self.certified_ = self.control != "precision" or self.lambda_ != math.inf
        if not self.certified_:
            warnings.warn(f"no cut-off certifies a precision of {1 - self.alpha:g} with "
                          f"probability {1 - self.delta:g} on {self.n_calibration_} "
                          f"calibration rows: every predicted set is empty",
                          UserWarning, stacklevel=3)

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


class ConformalRecall(ConformalLabelSets):
    """:class:`ConformalLabelSets` with ``control="recall"``: label sets whose
    false-negative rate is at most ``alpha`` in expectation (``method="crc"``) or with
    probability at least ``1 - delta`` (``method="ltt"``).

    Parameters
    ----------
    estimator : str or estimator
        As in :class:`ConformalLabelSets`.
    alpha : float
        The false-negative rate to control, in (0, 1): target recall ``1 - alpha``.
    method : {"crc", "ltt"}
        Conformal risk control or Learn-then-Test.
    delta : float
        Learn-then-Test's error probability, in (0, 1).
    calibration_size : float
        As in :class:`ConformalLabelSets`.
    random_state : int or None
        As in :class:`ConformalLabelSets`.

    Attributes
    ----------
    calibration_fnr_ : float
        The mean FNR on the calibration split at ``lambda_`` (``calibration_loss_``);
        the other attributes are those of :class:`ConformalLabelSets`.

    Examples
    --------
    >>> import mlw
    >>> train = mlw.load_dataset("emotions")
    >>> model = ConformalRecall("br", alpha=0.1).fit(train.X, train.Y)
    >>> bool(model.calibration_fnr_ <= 0.1)
    True
    """

    #: Fixed: not a parameter of this class (the class default serves model files
    #: saved before the attribute existed).
    control = "recall"

    def __init__(self, estimator: Any = "br", *, alpha: float = 0.1, method: str = "crc",
                 delta: float = 0.1, calibration_size: float = 0.3,
                 random_state: int | None = 0) -> None:
        super().__init__(estimator, control="recall", alpha=alpha, method=method,
                         delta=delta, calibration_size=calibration_size,
                         random_state=random_state)

    @property
    def calibration_fnr_(self) -> float:
        saved = self.__dict__  # a model file written before calibration_loss_ existed
        return saved["calibration_fnr_"] if "calibration_fnr_" in saved else \
            self.calibration_loss_
