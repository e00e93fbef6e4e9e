"""XDCC: dynamic classifier chains of multi-label boosters (the paper's Section 3)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import mlw
from mlw.thresholds import DEFAULT_THRESHOLD
from mlw.validation import check_param
from mlw_xdcc._common import augment, dense_labels
from mlw_xdcc._params import BoosterParams
from mlw_xdcc.binning import append_binary_block, append_block, bin_matrix, cuts_of
from mlw_xdcc.booster import TreeEnsemble, _sigmoid, fit_ensemble

#: the default chain length never exceeds this many rounds (a chain of c rounds
#: costs about c ML-XGB fits, and 3 rounds put a fit at 2.67-3.11 ML-XGB fits on a
#: generated set with 174 labels; 2 rounds changed example F1 by -0.0003..+0.0095 on the
#: shared sets: ``docs/methods/xdcc.md``, "High label cardinality")
MAX_DEFAULT_CHAIN_LENGTH = 2


def default_chain_length(cardinality: float, n_labels: int) -> int:
    """The chain length ``XDCC(chain_length=None)`` uses: ``ceil(cardinality) + 1``, at
    most :data:`MAX_DEFAULT_CHAIN_LENGTH` and at most ``n_labels``.

    ``ceil(cardinality) + 1`` is at least 2 whenever a training row has a label, so the
    cap makes the default 2 rounds there; 1 round (ML-XGB) when no row has a label or
    there is one label.

    >>> [default_chain_length(c, L) for c, L in ((1.07, 6), (4.24, 14), (26.0, 174))]
    [2, 2, 2]
    >>> default_chain_length(0.9, 6), default_chain_length(0.0, 6), default_chain_length(3.0, 1)
    (2, 1, 1)
    """
    return int(max(1, min(math.ceil(cardinality) + 1, MAX_DEFAULT_CHAIN_LENGTH, n_labels)))


def propagate_one(P: np.ndarray, frozen: np.ndarray, values: np.ndarray,
                  prob_at: np.ndarray, chosen: np.ndarray, over_all: bool) -> None:
    """One step of the paper's Eq. (8) for every instance (arrays updated in place).

    ``over_all`` (Eq. 8 as printed): take the most probable label over *all* labels; if
    its probability is >= 0.5 it is propagated (value 1), otherwise the least probable
    label over all labels is (value 0); when that label was propagated before, the
    instance propagates nothing this round.  ``over_all=False``: the extremes are taken
    over the labels not yet propagated, so every instance propagates exactly one label
    per round while any is left.  A propagated label is frozen (``frozen``, uint8), its
    0/1 value written to ``values`` and the probability it was propagated with to
    ``prob_at``; ``chosen[i]`` gets the label (-1: nothing propagated).  Ties go to the
    lowest label index (``argmax``/``argmin`` return the first extreme).

    numpy over whole rows, not a numba kernel: a fresh install then has one kernel less
    to compile (~0.7 s CPU of the first ``mlw fit``), for a step that runs once per chain
    round (warm: 0.03 s CPU on 20,000 x 100 against the kernel's 0.01).
    """
    n, L = P.shape
    if L == 0:
        chosen[:] = -1
        return
    if over_all:
        hi = P.argmax(axis=1)
        lo = P.argmin(axis=1)
        has_open = np.ones(n, dtype=bool)
    else:
        is_open = frozen == 0
        hi = np.where(is_open, P, -np.inf).argmax(axis=1)
        lo = np.where(is_open, P, np.inf).argmin(axis=1)
        has_open = is_open.any(axis=1)
    rows = np.arange(n)
    positive = P[rows, hi] >= 0.5
    j = np.where(positive, hi, lo)
    ok = has_open & (frozen[rows, j] == 0)
    chosen[:] = np.where(ok, j, -1)
    r, c = rows[ok], j[ok]
    values[r, c] = np.where(positive[ok], 1.0, 0.0)
    frozen[r, c] = 1
    prob_at[r, c] = P[r, c]


class ChainState:
    """What the dynamic chain knows about each instance after some rounds.

    ``frozen[i, j]`` says label ``j`` of instance ``i`` was propagated, ``values`` holds
    the propagated 0/1 (NaN: not yet), ``prob_at`` the probability it was propagated
    with, ``last`` the latest round's probabilities and ``cum`` their maximum over the
    rounds so far.  ``over_all``: Eq. (8) as printed (the extremes over all labels;
    see :func:`propagate_one`), else over the open labels.
    """

    def __init__(self, n: int, L: int, over_all: bool = True) -> None:
        self.over_all = over_all
        self.frozen = np.zeros((n, L), dtype=np.uint8)
        self.values = np.full((n, L), np.nan)
        self.prob_at = np.zeros((n, L))
        self.last = np.zeros((n, L))
        self.cum = np.zeros((n, L))
        self.chosen = np.empty(n, dtype=np.int64)
        self.rounds = 0

    def step(self, P: np.ndarray) -> None:
        """Record a round's probabilities and propagate at most one label per instance
        (Eq. 8)."""
        self.last = P
        self.cum = P.copy() if self.rounds == 0 else np.maximum(self.cum, P)
        propagate_one(P, self.frozen, self.values, self.prob_at, self.chosen,
                        self.over_all)
        self.rounds += 1

    def label_features(self, probability: bool) -> np.ndarray:
        """The label-feature block ``p``: missing (NaN) until a label is propagated,
        then the probability it was propagated with (Eq. 8) or its 0/1 value."""
        if not probability:
            return self.values
        return np.where(self.frozen == 1, self.prob_at, np.nan)

    def proba(self, cumulated: bool) -> np.ndarray:
        """Frozen labels: the probability they were propagated with; the others: the
        maximum over rounds (Eq. 9, ``cumulated``) or the last round's probability (a
        score only: XDCC-std decides them negative)."""
        free = self.cum if cumulated else self.last
        return np.where(self.frozen == 1, self.prob_at, free)

    def decision(self, cumulated: bool) -> np.ndarray:
        """Frozen labels keep their propagated value; the others are cut at 0.5 on the
        maximum over rounds (Eq. 9, XDCC-cum) or are negative (XDCC-std: "probabilities
        p < 0.5 or equal to ? are interpreted as negative labels", Section 3.2)."""
        if cumulated:
            free = self.cum >= 0.5
            return np.where(self.frozen == 1, self.values == 1.0, free).astype(np.uint8)
        return (self.values == 1.0).astype(np.uint8)


@dataclass(kw_only=True, repr=False, eq=False)
class XDCC(BoosterParams, mlw.MultiLabelLearner):
    """Extreme gradient boosted dynamic classifier chain (XDCC).

    Round ``r = 1..chain_length`` boosts a multi-label booster (ML-XGB) on
    ``[x, p]`` where ``p`` holds one label-feature per label: missing until the label is
    propagated, then the probability it was propagated with (Eq. 8;
    ``label_features="binary"``: its 0/1 value).  After each round an instance
    propagates a label (Eq. 8): the most probable label if its probability is >= 0.5
    (value 1), else the least probable one (value 0), the extremes taken over all labels
    as the equation prints them, so an instance whose extreme label was propagated
    before propagates nothing that round (``extremes_over="open"``: over the labels not
    yet propagated, so exactly one per round).  A propagated label is frozen, and in
    later rounds its gradient and hessian for that instance are zero
    (separate-and-conquer).  The same procedure runs on the training data (with the
    training predictions) and at prediction time.

    The chain's own decision: propagated labels keep their propagated
    value; the others are cut at 0.5 on the maximum of their probabilities over the
    rounds (``cumulated=True``, Eq. 9; XDCC-cum) or are negative (``cumulated=False``,
    XDCC-std: "probabilities p < 0.5 or equal to ? are interpreted as negative labels").
    ``predict_proba`` returns the propagated probability for propagated labels and, for
    the others, the maximum over rounds (XDCC-cum) or the last round's probability
    (XDCC-std, a score: its decision for them is negative whatever the score).
    ``round_seconds_`` holds the process CPU time at the end of each training round.
    The booster parameters are :class:`BoosterParams`'.

    Parameters
    ----------
    chain_length : int or None
        Number of rounds (``None``: :func:`default_chain_length`, the training label
        cardinality rounded up plus one, at most :data:`MAX_DEFAULT_CHAIN_LENGTH` = 2
        and at most the number of labels: 2 rounds on any data with a label). Each
        round costs about one ML-XGB fit, so the cap bounds the default fit time
        whatever the cardinality; XDCC-cum converges in the first rounds (the paper's
        Figure 2). Set it for a longer chain (the paper's grids do).
    cumulated : bool
        Eq. 9: labels never propagated take the maximum of their probabilities over
        the rounds (XDCC-cum); ``False``: they are negative (XDCC-std).
    label_features : "probability" or "binary"
        What a propagated label feeds the later rounds: the probability it was
        propagated with (Eq. 8) or its 0/1 value.
    extremes_over : "all" or "open"
        Eq. 8's most and least probable label among ``"all"`` labels (as printed: an
        instance may propagate nothing in a round) or among the ``"open"`` ones, not
        yet propagated (exactly one per round).
    propagation : "in_sample" or "out_of_fold"
        How the *training* instances' labels are propagated. ``"in_sample"``
        (default, the paper's): with the training predictions of the round's booster,
        which has seen those rows, so the training label-features are more often right
        than the test ones will be. ``"out_of_fold"`` (an extension, not in the paper):
        with the predictions of ``propagation_folds`` boosters, each fit on the other
        folds of the training rows (same features, same separate-and-conquer mask, the
        same quantile cuts) and predicting its held-out fold; the booster kept for
        prediction is still the one fit on all rows, so prediction is unchanged and fit
        costs ``propagation_folds + 1`` boosters per round.
    propagation_folds : int
        Folds of ``"out_of_fold"`` propagation (at least 2).
    threshold : str, strategy object or None
        ``None`` makes ``predict`` the chain's own decision (above, the paper's); by
        default (:data:`mlw.thresholds.DEFAULT_THRESHOLD`) a thresholding strategy
        fitted on the training scores decides on ``predict_proba`` instead, because the
        chain's 0.5 decision left up to 8% of test rows empty on data with no empty
        label set (the Thresholds guide, "The default decision").

    Notes
    -----
    ``fit(X, Y, sample_weight=w)``: each booster of the chain weighs its rows'
    gradients and hessians and its label priors by ``w``, the quantile cuts of the
    features and of each round's label-features are weighted quantiles, and rows of
    weight 0 are left out of every tree (they are still propagated, so the chain is the
    same for every row).  With in-sample propagation an integer weight is the row
    repeated that many times and a weight of 0 dropping the row (tested; equal up to
    the rounding of the gradient sums).  Out-of-fold propagation draws the folds per
    row.  The threshold is fitted unweighted (the core's rule).

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_xdcc import XDCC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 3)); Y = np.c_[X[:, 0] > 0, X[:, 0] > 0.5].astype(np.uint8)
    >>> model = XDCC(n_estimators=10, max_depth=2).fit(X, Y)
    >>> model.chain_length_, model.predict(X).shape
    (2, (80, 2))
    """

    _allow_nan = True
    _joint_prediction = True

    chain_length: int | None = None
    cumulated: bool = True
    label_features: str = "probability"
    extremes_over: str = "all"
    propagation: str = "in_sample"
    propagation_folds: int = 5
    threshold: Any = DEFAULT_THRESHOLD

    def _fit(self, X: Any, Y: Any, sample_weight: np.ndarray | None = None) -> None:
        params = self.booster_params()
        w = sample_weight
        Yd = dense_labels(Y)
        n, L = Yd.shape
        c = check_param("chain_length", self.chain_length, int, low=1, allow_none=True)
        check_param("cumulated", self.cumulated, bool)
        prob = check_param("label_features", self.label_features, str,
                           choices=("probability", "binary")) == "probability"
        over_all = check_param("extremes_over", self.extremes_over, str,
                               choices=("all", "open")) == "all"
        if c is None:
            c = default_chain_length(self.label_cardinality_, L)
        self.chain_length_ = int(min(c, L))
        self.probability_features_, self.over_all_ = prob, over_all
        folds = self._propagation_folds(n)
        if folds is not None and w is not None:
            for k in range(self.propagation_folds):
                if not w[folds != k].sum() > 0:
                    raise ValueError(f"sample_weight is zero on every training row outside "
                                     f"propagation fold {k} (propagation='out_of_fold')")
        edges, edge_off = cuts_of(X, params.max_bin, w)
        B0 = bin_matrix(X, edges, edge_off)
        if folds is not None:
            B0_in = [bin_matrix(X[folds != k], edges, edge_off)
                     for k in range(self.propagation_folds)]
        state = ChainState(n, L, over_all)
        self.ensembles_: list[TreeEnsemble] = []
        self.round_seconds_: list[float] = []
        t0 = time.process_time()
        for r in range(self.chain_length_):
            seed = params.random_state + r
            p = state.label_features(prob)
            if prob:        # quantile cuts of this round's training label-features
                cuts = cuts_of(p, params.max_bin, w)
                B = append_block(B0, p, *cuts)
            else:
                B = append_binary_block(B0, p)
            ens, margin = fit_ensemble(B, Yd, params, seed=seed, mask=1 - state.frozen,
                                       sample_weight=w)
            self.ensembles_.append(ens)
            if folds is None:
                state.step(_sigmoid(margin))
                self.round_seconds_.append(time.process_time() - t0)
                continue
            P = np.empty((n, L))
            for k in range(self.propagation_folds):
                a, b = folds != k, folds == k
                Bk = (append_block(B0_in[k], p[a], *cuts) if prob
                      else append_binary_block(B0_in[k], p[a]))
                ens_k, _ = fit_ensemble(Bk, Yd[a], params, seed=seed,
                                        mask=1 - state.frozen[a],
                                        sample_weight=None if w is None else w[a])
                P[b] = ens_k.predict_proba(augment(X[b], p[b]))
            state.step(P)
            self.round_seconds_.append(time.process_time() - t0)
        self.train_state_ = state

    def _training_scores(self, X: Any, Y: Any) -> np.ndarray:
        """The threshold's training scores.  With in-sample propagation the training
        state *is* the chain's pass over the training rows (tested equal to
        ``predict_proba(X)``), so its marginals are reused instead of a second pass; the
        out-of-fold state differs from ``predict_proba``, which is then recomputed."""
        if self.propagation != "in_sample":
            return super()._training_scores(X, Y)
        return self.train_state_.proba(self.cumulated)

    def _propagation_folds(self, n: int) -> np.ndarray | None:
        """Fold id of each training row for out-of-fold propagation (None: in-sample)."""
        k = check_param("propagation_folds", self.propagation_folds, int, low=2)
        if check_param("propagation", self.propagation, str,
                       choices=("in_sample", "out_of_fold")) == "in_sample":
            return None
        if k > n:
            raise ValueError(f"propagation_folds={k} is more than the {n} training rows")
        return np.random.default_rng(self.random_state).permutation(n) % k

    # -- prediction ------------------------------------------------------------------------
    def _states(self, X: Any) -> Iterator[ChainState]:
        state = ChainState(X.shape[0], self.n_labels_, self.over_all_)
        for ens in self.ensembles_:
            state.step(ens.predict_proba(augment(X, state.label_features(
                self.probability_features_))))
            yield state

    def _final(self, X: Any) -> ChainState:
        states = iter(self._states(X))
        state = next(states)
        for state in states:  # noqa: B007 - the last state is the result
            pass
        return state

    def _predict_proba(self, X: Any) -> np.ndarray:
        return self._final(X).proba(self.cumulated)

    def _predict(self, X: Any) -> np.ndarray:
        return self._final(X).decision(self.cumulated)

    def _predict_with_scores(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The decision and the marginals from one pass of the chain."""
        state = self._final(X)
        return state.decision(self.cumulated), state.proba(self.cumulated)

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """``predict`` after each round 1..chain_length_ (the paper's chain-length
        curves): the chain's decision, or with a ``threshold`` set the fitted threshold
        applied to that round's marginals; yields (n, L) 0/1 matrices."""
        X = self._validate_X(X, reset=False)
        own = self._own_decision()
        for state in self._states(X):
            if own:
                yield state.decision(self.cumulated)
            else:
                yield self._thresholded(state.proba(self.cumulated))

    def staged_predict_proba(self, X: Any) -> Iterator[np.ndarray]:
        """The marginals after each round 1..chain_length_."""
        X = self._validate_X(X, reset=False)
        for state in self._states(X):
            yield state.proba(self.cumulated)

    def staged_predict_all(self, X: Any) -> Iterator[dict[str, np.ndarray]]:
        """Both variants' own decisions (``threshold=None``'s) after each round
        1..chain_length_, from one pass:
        ``{"cum": ..., "std": ...}`` per round.  Round ``r``'s booster only depends on
        rounds ``< r``, so the yield after ``r`` rounds is the decision of a chain of
        length ``r`` (tested): one long chain scores every shorter chain length."""
        X = self._validate_X(X, reset=False)
        for state in self._states(X):
            yield {"cum": state.decision(True), "std": state.decision(False)}

    def predict_all(self, X: Any) -> dict[str, np.ndarray]:
        """Both variants' own decisions (``threshold=None``'s) from one pass:
        ``{"cum": ..., "std": ...}``."""
        state = self._final(self._validate_X(X, reset=False))
        return {"cum": state.decision(True), "std": state.decision(False)}
