"""CC-XGB: a classifier chain of single-label boosters (the same booster as ML-XGB)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import mlw
from mlw.thresholds import DEFAULT_THRESHOLD
from mlw.validation import check_Y
from mlw_xdcc._common import augment, dense_labels
from mlw_xdcc._params import BoosterParams
from mlw_xdcc.binning import append_binary_block, bin_matrix, cuts_of
from mlw_xdcc.booster import TreeEnsemble, _sigmoid, fit_ensemble


@dataclass(kw_only=True, repr=False, eq=False)
class CCXGB(BoosterParams, mlw.MultiLabelLearner):
    """Classifier chain: label ``order[k]`` is learned from ``[x, y_order[0..k-1]]``.

    Training appends the true values of the previous labels (the usual CC training);
    ``predict`` is the greedy chain: each label is decided at 0.5 and its 0/1 decision
    appended for the next.  ``predict_proba`` returns the probabilities met along that
    greedy path and ``log_proba_of(X, Y)`` the chain's exact log P(y | x).

    The booster parameters are :class:`BoosterParams`'.

    Parameters
    ----------
    order : sequence of int or None
        Label order: ``None`` for a random order drawn from ``random_state``, or a
        permutation of ``range(L)``.
    threshold : str, strategy object or None
        ``None`` makes ``predict`` the greedy chain; by default
        (:data:`mlw.thresholds.DEFAULT_THRESHOLD`, as the baselines' ``cc``) a
        thresholding strategy decides on the greedy path's probabilities instead.
    """

    _allow_nan = True
    _joint_prediction = True

    order: Sequence[int] | None = None
    threshold: Any = DEFAULT_THRESHOLD

    def _fit(self, X: Any, Y: Any) -> None:
        params = self.booster_params()
        Yd = dense_labels(Y)
        L = Yd.shape[1]
        if self.order is None:
            order = np.random.default_rng(params.random_state).permutation(L)
        else:
            order = np.asarray(self.order)
            if order.ndim != 1 or sorted(order.tolist()) != list(range(L)):
                raise ValueError(f"order must be a permutation of range({L}), got "
                                 f"{list(self.order)!r}")
        self.order_ = order.astype(np.int64)
        edges, edge_off = cuts_of(X, params.max_bin)
        B0 = bin_matrix(X, edges, edge_off)
        self.ensembles_: list[TreeEnsemble] = []
        for k, j in enumerate(self.order_):
            prev = Yd[:, self.order_[:k]].astype(np.float64)
            B = append_binary_block(B0, prev) if k else B0
            ens, _ = fit_ensemble(B, Yd[:, j:j + 1], params,
                                  seed=params.random_state + k)
            self.ensembles_.append(ens)

    def _chain(self, X: Any, Y_given: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Walk the chain; with ``Y_given`` the given labels are appended, otherwise the
        greedy decisions.  Returns (probabilities, decisions) in label order."""
        n = X.shape[0]
        L = self.n_labels_
        P = np.empty((n, L))
        D = np.zeros((n, L), dtype=np.uint8)
        for k, j in enumerate(self.order_):
            prev = (Y_given if Y_given is not None else D)[:, self.order_[:k]]
            Xa = augment(X, prev) if k else X
            P[:, j] = self.ensembles_[k].predict_proba(Xa)[:, 0]
            D[:, j] = P[:, j] >= 0.5
        return P, D

    def staged_predict(self, X: Any, n_estimators: Sequence[int]) -> Iterator[np.ndarray]:
        """The greedy chain's decisions with the first ``k`` boosting rounds of every
        label's booster, for each ``k`` of the increasing ``n_estimators`` (with a
        ``threshold`` set, the fitted threshold applied to that walk's probabilities).

        Each label's booster is trained on the *true* earlier labels, so it does not
        depend on how many rounds the other boosters have, and its first ``k`` rounds are
        a fresh ``k``-round fit; at prediction the chain walks with the decisions of the
        ``k``-round boosters.  So every yield equals ``predict`` of a fresh fit with
        ``n_estimators=k`` (tested).  Cost: one chain walk per ``k``, every tree once."""
        X = self._validate_X(X, reset=False)
        ks = list(n_estimators)
        n, L = X.shape[0], self.n_labels_
        own = self._own_decision()
        D = np.zeros((len(ks), n, L), dtype=np.uint8)
        P = None if own else np.empty((len(ks), n, L))  # kept only for a threshold
        for k, j in enumerate(self.order_):
            # the k-th booster's input differs per stage (earlier decisions differ), so
            # it is evaluated per stage, but each stage only walks its own prefix
            for s, nk in enumerate(ks):
                prev = D[s][:, self.order_[:k]]
                Xa = augment(X, prev) if k else X
                m = next(iter(self.ensembles_[k].staged_decision_function(Xa, [nk])))
                p = _sigmoid(m[:, 0])
                D[s][:, j] = p >= 0.5
                if P is not None:
                    P[s][:, j] = p
        if P is None:
            yield from D
        else:   # the fitted threshold on each stage's greedy-path probabilities
            for Ps in P:
                yield self._thresholded(Ps)

    def _predict_proba(self, X: Any) -> np.ndarray:
        return self._chain(X, None)[0]

    def _predict(self, X: Any) -> np.ndarray:
        return self._chain(X, None)[1]

    def _predict_with_scores(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The greedy chain's decisions and the probabilities met along it, from one
        walk of the chain."""
        P, D = self._chain(X, None)
        return D, P

    def log_proba_of(self, X: Any, Y: Any) -> np.ndarray:
        """log P(y | x) of the given label vectors under the chain, shape (n,)."""
        X = self._validate_X(X, reset=False)
        Yd = dense_labels(check_Y(Y, n_rows=X.shape[0], n_labels=self.n_labels_))
        P, _ = self._chain(X, Yd)
        P = np.clip(P, 1e-15, 1 - 1e-15)
        return np.where(Yd == 1, np.log(P), np.log1p(-P)).sum(axis=1)
