"""RAkEL (Tsoumakas, Katakis and Vlahavas, TKDE 2011): an ensemble of label powerset
classifiers, each on a small random subset of the labels (a *k-labelset*)."""

from __future__ import annotations

import itertools
import math
from typing import Any, ClassVar

import numpy as np

from mlw import MultiLabelLearner
from mlw.validation import check_param
from mlw_baselines._common import dense_labels, single_blas_thread
from mlw_baselines._ensemble import parallel_map
from mlw_baselines.label_powerset import LabelPowerset

#: Attempts at drawing an overlapping ensemble that covers every label.
COVERAGE_ATTEMPTS = 1000


def disjoint_labelsets(n_labels: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """RAkEL-d: a random partition of the labels into ``ceil(L / k)`` sets, all of size
    ``k`` except the last (``L mod k`` labels when ``k`` does not divide ``L``)."""
    perm = rng.permutation(n_labels)
    return [np.sort(perm[s:s + k]).astype(np.int64) for s in range(0, n_labels, k)]


def overlapping_labelsets(n_labels: int, k: int, m: int,
                          rng: np.random.Generator) -> list[np.ndarray]:
    """RAkEL-o: ``m`` distinct k-labelsets drawn uniformly at random (without
    replacement from the ``C(L, k)`` possible ones), redrawn as a whole until every
    label is in at least one of them (when ``m * k >= L`` makes that possible; at most
    :data:`COVERAGE_ATTEMPTS` draws, keeping the last)."""
    total = math.comb(n_labels, k)
    m = min(m, total)
    chosen: list[np.ndarray] = []
    for _ in range(COVERAGE_ATTEMPTS):
        if total <= 4 * m or total <= 20_000:
            combos = list(itertools.combinations(range(n_labels), k))
            pick = rng.choice(total, size=m, replace=False)
            chosen = [np.array(combos[i], dtype=np.int64) for i in np.sort(pick)]
        else:  # rejection sampling of distinct sets: m <= total / 4, so few rejections
            seen: set[tuple[int, ...]] = set()
            chosen = []
            while len(chosen) < m:
                key = tuple(sorted(int(v) for v in rng.choice(n_labels, size=k, replace=False)))
                if key not in seen:
                    seen.add(key)
                    chosen.append(np.array(key, dtype=np.int64))
        if m * k < n_labels:
            break
        covered = np.zeros(n_labels, dtype=bool)
        for s in chosen:
            covered[s] = True
        if covered.all():
            break
    return chosen


def _fit_member(base_estimator: Any, base_params: dict | None, random_state: int, X: Any,
                Y: np.ndarray, labels: np.ndarray) -> LabelPowerset:
    return LabelPowerset(base_estimator=base_estimator, base_params=base_params,
                         random_state=random_state).fit(X, Y[:, labels])


class RandomKLabelsets(MultiLabelLearner):
    """RAkEL: label powerset (LP) classifiers on random k-labelsets (Tsoumakas,
    Katakis and Vlahavas, "Random k-Labelsets for Multilabel Classification", IEEE
    TKDE 23(7), 2011).

    - ``mode="overlapping"`` (RAkEL-o, the default): ``n_estimators`` distinct random
      k-labelsets (default ``min(2L, C(L, k))``, the paper's recommendation), each with
      its own LP. A label's *vote* is the fraction of the LPs containing it that
      predict it; ``predict`` gives the labels whose vote is ``>= vote_threshold``
      (0.5), as the paper and Mulan do.
    - ``mode="disjoint"`` (RAkEL-d): the labels are split at random into ``ceil(L/k)``
      disjoint sets; ``predict`` is each LP's own decision on its set.

    ``predict_proba`` is the mean over the LPs containing a label of their marginal
    probability of it (the LP's class distribution summed over the label sets with
    that label; Mulan's "confidence" of the labels); :meth:`predict_votes` gives the
    votes. ``predict`` is RAkEL's own voting rule (a joint decision per labelset),
    not a threshold on ``predict_proba``.

    Every label is covered: an overlapping draw that misses a label is redrawn (the
    paper and Mulan do not redraw; scikit-multilearn does), unless ``n_estimators *
    k < L`` makes covering impossible, in which case an uncovered label has vote and
    score 0. ``k >= L`` gives one LP over all labels.

    Parameters
    ----------
    base_estimator : None, str or scikit-learn classifier
        The multi-class classifier of every LP (see :class:`LabelPowerset`).
    base_params : dict or None
        Parameters of the base classifier, set on it with ``set_params``
        (``{"C": 10}``; on a pipeline shortcut, names its last step lacks go to
        the classifier); ``--param base__C=10`` on the command line.
    mode : {"overlapping", "disjoint"}
        RAkEL-o or RAkEL-d.
    labelset_size : int
        ``k``, labels per labelset (>= 1; default 3, the paper's choice).
    n_estimators : int or None
        RAkEL-o's number of labelsets ``m`` (``None``: ``min(2L, C(L, k))``; at most
        ``C(L, k)`` are used). Ignored by RAkEL-d.
    vote_threshold : float
        RAkEL-o predicts a label when its vote is at least this (in [0, 1]).
    random_state : int or None
        Seed of the labelsets and of the randomised shortcut classifiers.
    n_jobs : int or None
        LPs fitted in parallel by joblib (``None``: one at a time, ``-1``: all cores).
    top_label : bool or "auto"
        The core's top-label rule on the vote: a row with no label voted in gets its
        label of highest ``predict_proba``. ``"auto"`` (default) only when at most 1% of
        the training label sets are empty; ``False`` is the paper's vote alone, which
        left 10.3% of scene's test rows empty where none is
        (``docs/guide/thresholds.md``).

    Attributes
    ----------
    labelsets_ : list of ndarray of int
        The label indices of every member, sorted.
    estimators_ : list of LabelPowerset
        The fitted LPs (``estimators_[i]`` predicts ``labelsets_[i]``).
    coverage_ : ndarray of int, shape (n_labels,)
        Number of labelsets containing each label.

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_baselines import RandomKLabelsets
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 3))
    >>> Y = (X @ rng.normal(size=(3, 5)) > 0).astype(int)
    >>> rakel = RandomKLabelsets(labelset_size=2).fit(X, Y)
    >>> len(rakel.labelsets_), rakel.predict(X).shape
    (10, (80, 5))
    """

    _joint_prediction: ClassVar[bool] = True

    def __init__(self, *, base_estimator: Any = None, base_params: dict | None = None,
                 mode: str = "overlapping",
                 labelset_size: int = 3, n_estimators: int | None = None,
                 vote_threshold: float = 0.5, random_state: int | None = 0,
                 n_jobs: int | None = None, top_label: bool | str = "auto") -> None:
        self.top_label = top_label
        self.base_estimator = base_estimator
        self.base_params = base_params
        self.mode = mode
        self.labelset_size = labelset_size
        self.n_estimators = n_estimators
        self.vote_threshold = vote_threshold
        self.random_state = random_state
        self.n_jobs = n_jobs

    @single_blas_thread
    def _fit(self, X: Any, Y: Any) -> None:
        mode = check_param("mode", self.mode, str, choices=("overlapping", "disjoint"))
        k = check_param("labelset_size", self.labelset_size, int, low=1)
        m = check_param("n_estimators", self.n_estimators, int, low=1, allow_none=True)
        check_param("vote_threshold", self.vote_threshold, float, low=0, high=1)
        L = Y.shape[1]
        k = min(k, L)
        rng = np.random.default_rng(self.random_state)
        if mode == "disjoint":
            sets = disjoint_labelsets(L, k, rng)
        else:
            sets = overlapping_labelsets(L, k, min(2 * L, math.comb(L, k)) if m is None
                                         else m, rng)
        seeds = rng.integers(0, 2**31 - 1, size=len(sets))
        Yd = dense_labels(Y)
        members = parallel_map(self.n_jobs, _fit_member,
                               [(self.base_estimator, self.base_params, int(s), X, Yd, labels)
                                for s, labels in zip(seeds, sets, strict=False)])
        self.labelsets_ = sets
        self.estimators_ = list(members)
        self.coverage_ = np.zeros(L, dtype=np.int64)
        for labels in sets:
            self.coverage_[labels] += 1

    def _member_outputs(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Summed votes and summed marginals over the members, shape (n, L) each."""
        n, L = X.shape[0], self.n_labels_
        votes = np.zeros((n, L))
        marg = np.zeros((n, L))
        for labels, lp in zip(self.labelsets_, self.estimators_, strict=False):
            P = lp._class_proba(X)
            sets = lp.label_sets_
            votes[:, labels] += sets[np.argmax(P, axis=1)]
            marg[:, labels] += P @ sets.astype(np.float64)
        return votes, marg

    def _normalise(self, S: np.ndarray) -> np.ndarray:
        cover = self.coverage_.astype(np.float64)
        return np.divide(S, cover, out=np.zeros_like(S), where=cover > 0)

    def _decide(self, votes: np.ndarray) -> np.ndarray:
        if self.mode == "disjoint":
            return (votes > 0).astype(np.uint8)
        covered = self.coverage_ > 0
        return ((votes >= float(self.vote_threshold)) & covered).astype(np.uint8)

    @single_blas_thread
    def _predict_with_scores(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        votes, marg = self._member_outputs(X)
        votes = self._normalise(votes)
        return self._decide(votes), self._normalise(marg)

    def _predict(self, X: Any) -> np.ndarray:
        return self._predict_with_scores(X)[0]

    def _predict_proba(self, X: Any) -> np.ndarray:
        return self._predict_with_scores(X)[1]

    @single_blas_thread
    def predict_votes(self, X: Any) -> np.ndarray:
        """Each label's vote: the fraction of the LPs containing it that predict it,
        shape (n, L) (0 for a label in no labelset)."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "labelsets_")
        return self._normalise(self._member_outputs(self._validate_X(X, reset=False))[0])
