"""Ensembles of classifier chains: ECC (Read, Pfahringer, Holmes and Frank, 2009/2011)
and EPCC (Dembczyński, Cheng and Hüllermeier, 2010).

Both train ``n_estimators`` chains, each on its own random label order and its own
bootstrap sample of the training data (bagging). ECC averages the members' greedy
chain outputs and thresholds the average; EPCC reads the ensemble as the mixture
``P(y | x) = (1/m) sum_k P_k(y | x)`` of the members' joint models.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

import numpy as np
from scipy.special import logsumexp

from mlw import MultiLabelLearner
from mlw.validation import check_param
from mlw_baselines import _inference, _kernels
from mlw_baselines._common import single_blas_thread, validate_joint_query
from mlw_baselines._ensemble import check_sampling, parallel_map, sample_rows
from mlw_baselines.classifier_chain import ChainModel, ClassifierChain
from mlw_baselines.probabilistic_chain import JointChainInference, ProbabilisticClassifierChain

#: EPCC's exact inference keeps a table of 2**L probabilities per instance being
#: scored (per thread): at most 2**20 (8 MB).
EPCC_MAX_EXACT_LABELS = 20


def _fit_member(member: ChainModel, X: Any, Y: Any, rows: np.ndarray) -> ChainModel:
    return member.fit(X[rows], Y[rows])


class _ChainEnsemble(MultiLabelLearner):
    """Training shared by ECC and EPCC: random orders, bagging, members in parallel."""

    def _make_member(self, order: np.ndarray, seed: int) -> ChainModel:
        raise NotImplementedError  # pragma: no cover

    @single_blas_thread
    def _fit(self, X: Any, Y: Any) -> None:
        m = check_param("n_estimators", self.n_estimators, int, low=1)
        check_sampling(self.bootstrap, self.max_samples)
        n, L = Y.shape
        rng = np.random.default_rng(self.random_state)
        plans = []
        for _ in range(m):
            order = rng.permutation(L).astype(np.int64)
            rows = sample_rows(n, bool(self.bootstrap), float(self.max_samples), rng)
            seed = int(rng.integers(0, 2**31 - 1))
            plans.append((self._make_member(order, seed), X, Y, rows))
        self.estimators_ = parallel_map(self.n_jobs, _fit_member, plans)
        self.estimators_samples_ = [plan[3] for plan in plans]
        self.orders_ = np.stack([member.order_ for member in self.estimators_])
        self.linear_ = all(member.linear_coef_ is not None for member in self.estimators_)


class EnsembleOfClassifierChains(_ChainEnsemble):
    """Ensemble of classifier chains (ECC; Read et al., "Classifier chains for
    multi-label classification", Machine Learning 85(3), 2011).

    ``n_estimators`` classifier chains, each with a random label order and trained on a
    bootstrap sample of the training set. ``predict_proba`` averages the members'
    outputs for every label: with ``voting="soft"`` (default) their link probabilities
    along each chain's greedy path (Mulan's ECC with confidences), with
    ``voting="hard"`` their 0/1 greedy decisions (the vote share of Read et al.).
    ``predict`` applies the ``threshold`` strategy to that average (default
    ``"fixed:top_label=auto"``: 0.5, as Mulan and MEKA, and a row with no average at
    0.5 gets its top label when at most 1% of the training label sets are empty, the
    core's adaptive rule; ``"fixed"`` is the cut alone, which left 1-13% of the test
    rows empty where none is: emotions 3.5%, scene 11.1%, medical 13.3%).

    Parameters
    ----------
    base_estimator : None, str or scikit-learn classifier
        The classifier of every link (see :class:`ClassifierChain`).
    base_params : dict or None
        Parameters of the base classifier, set on it with ``set_params``
        (``{"C": 10}``; on a pipeline shortcut, names its last step lacks go to
        the classifier); ``--param base__C=10`` on the command line.
    n_estimators : int
        Number of chains (default 10, as Read et al. and Mulan).
    bootstrap : bool
        Each chain's sample is drawn with replacement (bagging) or, with ``False``,
        without (subsampling).
    max_samples : float
        Size of each sample as a fraction of the training set (default 1.0: a
        bootstrap sample of n rows; at most 1 without replacement).
    voting : {"soft", "hard"}
        Average probabilities or 0/1 decisions.
    threshold : str or strategy object
        The thresholding strategy applied to the average, tuned in ``fit``.
    random_state : int or None
        Seed of the orders, the samples and the randomised shortcut classifiers.
    n_jobs : int or None
        Chains fitted in parallel by joblib (``None``: one at a time, ``-1``: all cores).

    Attributes
    ----------
    estimators_ : list of ClassifierChain
        The fitted chains (each with its ``order_``).
    orders_ : ndarray of int, shape (n_estimators, n_labels)
        The chain orders.
    estimators_samples_ : list of ndarray of int
        The training rows of every chain (with repeats under bootstrap).

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_baselines import EnsembleOfClassifierChains
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 3))
    >>> Y = np.column_stack([X[:, 0] > 0, X[:, 0] + X[:, 1] > 0]).astype(int)
    >>> ecc = EnsembleOfClassifierChains(n_estimators=5).fit(X, Y)
    >>> ecc.orders_.shape, bool((ecc.predict(X) == Y).mean() > 0.9)
    ((5, 2), True)
    """

    def __init__(self, *, base_estimator: Any = None, base_params: dict | None = None,
                 n_estimators: int = 10,
                 bootstrap: bool = True, max_samples: float = 1.0, voting: str = "soft",
                 threshold: Any = "fixed:top_label=auto", random_state: int | None = 0,
                 n_jobs: int | None = None) -> None:
        self.base_estimator = base_estimator
        self.base_params = base_params
        self.n_estimators = n_estimators
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.voting = voting
        self.threshold = threshold
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _make_member(self, order: np.ndarray, seed: int) -> ChainModel:
        return ClassifierChain(base_estimator=self.base_estimator,
                               base_params=self.base_params, order=order.tolist(),
                               random_state=seed, threshold=None)

    def _fit(self, X: Any, Y: Any) -> None:
        check_param("voting", self.voting, str, choices=("soft", "hard"))
        super()._fit(X, Y)

    @single_blas_thread
    def _predict_proba(self, X: Any) -> np.ndarray:
        total = np.zeros((X.shape[0], self.n_labels_))
        hard = self.voting == "hard"
        for member in self.estimators_:
            Yhat, P = member._greedy(X)
            total += Yhat if hard else P
        return total / len(self.estimators_)


class EnsembleOfProbabilisticClassifierChains(JointChainInference, _ChainEnsemble):
    """Ensemble of probabilistic classifier chains (EPCC; Dembczyński, Cheng and
    Hüllermeier, ICML 2010): the chains of :class:`EnsembleOfClassifierChains` (random
    orders, bagging) read as the mixture ``P(y | x) = (1/m) sum_k P_k(y | x)``.

    - ``n_labels <= max_exact_labels`` (default 15): exact inference over all ``2**L``
      label vectors. ``predict`` is the mixture's mode (the most probable label vector
      under the averaged joint distribution: the Bayes decision for subset accuracy),
      ``predict_proba`` its exact marginals (= the average of the members' exact
      marginals).
    - above: every member runs beam search (``beam_width``); ``predict`` is the most
      probable vector under the mixture among the union of the members' final beams
      (each candidate scored exactly by every member), ``predict_proba`` the average
      of the members' beam marginals (see :class:`ProbabilisticClassifierChain`).

    ``log_proba_of(X, Y)`` is ``log((1/m) sum_k P_k(Y | X))`` with each member's
    chain-rule factors floored as in :class:`ProbabilisticClassifierChain`. Ties go to
    the lexicographically smallest vector in label order. With linear links the
    inference runs in numba kernels; otherwise the links are queried in batches.

    Parameters
    ----------
    base_estimator, base_params, n_estimators, bootstrap, max_samples, random_state, n_jobs
        As for :class:`EnsembleOfClassifierChains`.
    max_exact_labels : int
        Exact inference up to this many labels (at most 20: the mixture keeps a table
        of ``2**L`` probabilities per instance), beam search above.
    beam_width : int
        Prefixes kept per depth by each member's beam search.
    top_label : bool or "auto"
        The core's top-label rule on the mode: a row whose mode is the empty set gets
        its label of highest marginal. ``"auto"`` (default) only when at most 1% of the
        training label sets are empty; ``False`` is the mode alone, which left 2.2-32% of
        the test rows empty on shared datasets where none is
        (``docs/guide/thresholds.md``).

    Attributes
    ----------
    estimators_ : list of ProbabilisticClassifierChain
        The fitted chains.
    orders_ : ndarray of int, shape (n_estimators, n_labels)
    inference_ : str
        ``"exact"`` or ``"beam"``.

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_baselines import EnsembleOfProbabilisticClassifierChains
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 3))
    >>> Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0, X[:, 2] > 0]).astype(int)
    >>> epcc = EnsembleOfProbabilisticClassifierChains(n_estimators=4).fit(X, Y)
    >>> epcc.inference_, epcc.predict_proba(X[:1]).shape
    ('exact', (1, 3))
    """

    _joint_prediction: ClassVar[bool] = True

    def __init__(self, *, base_estimator: Any = None, base_params: dict | None = None,
                 n_estimators: int = 10,
                 bootstrap: bool = True, max_samples: float = 1.0,
                 max_exact_labels: int = 15, beam_width: int = 16,
                 random_state: int | None = 0, n_jobs: int | None = None,
                 top_label: bool | str = "auto") -> None:
        self.top_label = top_label
        self.base_estimator = base_estimator
        self.base_params = base_params
        self.n_estimators = n_estimators
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.max_exact_labels = max_exact_labels
        self.beam_width = beam_width
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _make_member(self, order: np.ndarray, seed: int) -> ChainModel:
        return ProbabilisticClassifierChain(
            base_estimator=self.base_estimator, base_params=self.base_params,
            order=order.tolist(), random_state=seed,
            max_exact_labels=min(int(self.max_exact_labels), EPCC_MAX_EXACT_LABELS),
            beam_width=self.beam_width, threshold=None)

    def _fit(self, X: Any, Y: Any) -> None:
        check_param("max_exact_labels", self.max_exact_labels, int, low=0,
                    high=EPCC_MAX_EXACT_LABELS)
        check_param("beam_width", self.beam_width, int, low=1)
        super()._fit(X, Y)
        self.inference_ = "exact" if Y.shape[1] <= self.max_exact_labels else "beam"

    # -- inference ---------------------------------------------------------------------
    def _stacked(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Feature logits of every member side by side (n, m*L) and chained weights."""
        A = np.hstack([member._feature_logits(X) for member in self.estimators_])
        W = np.stack([member.linear_chain_weights_ for member in self.estimators_])
        return np.ascontiguousarray(A), W

    def _infer(self, X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(marginals, mode, mode_log_proba)`` of the mixture, in label order."""
        n, L = X.shape[0], self.n_labels_
        if self.inference_ == "exact":
            if self.linear_:
                A, W = self._stacked(X)
                chunks = max(1, min(n, 4 * (os.cpu_count() or 1)))
                return _kernels.epcc_exact_linear(A, W, self.orders_, chunks)
            per_row = L + (X.nnz / max(n, 1) if hasattr(X, "nnz") else X.shape[1])
            max_rows = max(1, int((1 << 24) // per_row))
            return _inference.mixture_exact([member._oracle(X) for member in self.estimators_],
                                            self.orders_, n, L, max_rows=max_rows)
        # beam: candidates = union of the members' final beams, scored by the mixture
        width = int(self.beam_width)
        marg = np.zeros((n, L))
        cands = []
        if self.linear_:
            A, W = self._stacked(X)
        for k, member in enumerate(self.estimators_):
            if self.linear_:
                Ak = np.ascontiguousarray(A[:, k * L:(k + 1) * L])
                vectors, lp = _kernels.pcc_beam_final_linear(Ak, W[k], width)
            else:
                vectors, lp = _inference.beam_search(member._oracle(X), n, L, width)
            w = np.exp(lp - lp.max(axis=1, keepdims=True))
            w /= w.sum(axis=1, keepdims=True)
            in_labels = np.empty_like(vectors)
            in_labels[:, :, member.order_] = vectors
            marg += np.einsum("nb,nbl->nl", w, in_labels.astype(np.float64))
            cands.append(in_labels)
        cand = np.ascontiguousarray(np.concatenate(cands, axis=1))
        if self.linear_:
            mix = _kernels.mixture_log_proba_linear(A, W, self.orders_, cand)
        else:
            mix = _inference.mixture_log_proba([m._oracle(X) for m in self.estimators_],
                                               self.orders_, cand)
        mode, mode_lp = _inference.best_vectors(cand, mix)
        return marg / len(self.estimators_), mode, mode_lp

    @single_blas_thread
    def _predict_with_scores(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        marg, mode, _ = self._infer(X)
        return mode, marg

    def _predict(self, X: Any) -> np.ndarray:
        return self._predict_with_scores(X)[0]

    def _predict_proba(self, X: Any) -> np.ndarray:
        return self._predict_with_scores(X)[1]

    @single_blas_thread
    def predict_joint(self, X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Marginals, the mixture's mode and the mode's log-probability, one pass."""
        return self._infer(self._checked_X(X))

    def _linear_mixture(self, X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        if not self.linear_:
            return None
        A, W = self._stacked(X)
        return A, W, np.ascontiguousarray(self.orders_, dtype=np.int64)

    def _mixture_oracles(self, X: Any) -> tuple[list[_inference.Oracle], np.ndarray]:
        return [member._oracle(X) for member in self.estimators_], self.orders_

    def log_proba_of(self, X: Any, Y: Any) -> np.ndarray:
        """log P(Y | X) under the mixture of the chains, shape (n,)."""
        X, Yd = validate_joint_query(self, X, Y)
        return self._log_proba_of(X, Yd)

    @single_blas_thread
    def _log_proba_of(self, X: Any, Y: np.ndarray) -> np.ndarray:
        member = np.stack([m._log_proba_of(X, Y) for m in self.estimators_])
        return logsumexp(member, axis=0) - np.log(len(self.estimators_))
