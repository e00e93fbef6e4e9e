"""The estimators: :class:`MixtureOfCTBNs` (``mc``) and :class:`CTBN` (``ctbn``).

Hong, Batal and Hauskrecht, "A Mixtures-of-Trees Framework for Multi-Label
Classification", CIKM 2014 (MC), and its single conditional tree-structured Bayesian
network (CTBN, Batal, Hong and Hauskrecht, CIKM 2013; the paper's "SC").
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from mlw import MultiLabelLearner
from mlw.jit import kernel_seed
from mlw.validation import check_param, check_Y
from mlw_mctbn import _kernels, _learning, _logistic
from mlw_mctbn._learning import Mixture

#: Above this many labels, ``size_marginals`` (O(L^3) per row and tree) gives ``None``
#: and the ``f1`` decoder samples from the model instead.
EXACT_SIZE_LABELS = 64

#: The default grid of inverse regularisation strengths searched by internal CV.
DEFAULT_CS = (0.01, 0.1, 1.0, 10.0, 100.0)


def _dense_labels(Y: Any) -> np.ndarray:
    return np.ascontiguousarray(Y.toarray() if sp.issparse(Y) else Y, dtype=np.uint8)


class _TreeMixtureLearner(MultiLabelLearner):
    """What ``mc`` and ``ctbn`` share: regularisation by internal CV, the fitted
    mixture's arrays, and inference (exact marginals and log P(y|x); MAP by max-sum
    for one tree, by simulated annealing for a mixture)."""

    _joint_prediction: ClassVar[bool] = True

    # parameters common to both (set by the subclasses' __init__)
    C: float | None
    Cs: tuple[float, ...]
    holdout_fraction: float
    validation_fraction: float
    random_state: int | None

    # -- parameters ----------------------------------------------------------------------
    def _check_common(self) -> None:
        check_param("C", self.C, float, low=0.0, low_open=True, allow_none=True)
        Cs = self.Cs
        if isinstance(Cs, str):  # --param Cs=0.1,1,10 from the CLI
            try:
                Cs = tuple(float(c) for c in Cs.replace(" ", "").split(","))
            except ValueError:
                raise ValueError(f"parameter 'Cs' must be positive numbers, got "
                                 f"{self.Cs!r}") from None
        Cs = tuple(Cs)
        if not Cs:
            raise ValueError("parameter 'Cs' must hold at least one value")
        self._Cs = tuple(check_param("Cs", c, float, low=0.0, low_open=True) for c in Cs)
        for name in ("holdout_fraction", "validation_fraction"):
            check_param(name, getattr(self, name), float, low=0.0, high=1.0, low_open=True,
                        high_open=True)

    def _seed(self) -> int:
        return 0 if self.random_state is None else int(self.random_state)

    def _split(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``(internal train, internal validation)`` rows, a seeded random split; no
        validation rows below 4 instances."""
        perm = np.random.default_rng(self._seed()).permutation(n)
        n_val = int(round(float(self.validation_fraction) * n)) if n >= 4 else 0
        if n >= 4:
            n_val = min(max(n_val, 1), n - 2)
        return np.sort(perm[n_val:]).astype(np.int64), np.sort(perm[:n_val]).astype(np.int64)

    def _choose_C(self, score: Callable[[float], float]) -> float:
        """``C`` if given, else the value of ``Cs`` with the best internal-validation
        score, searched in order: from the middle of the sorted grid, towards the better
        neighbour, until the score gets worse (the validation log-likelihood is
        unimodal in C in every run we looked at; this evaluates 2-3 values instead of
        all). ``C_search_`` records every value evaluated."""
        if self.C is not None:
            self.C_search_ = {}
            return float(self.C)
        grid = sorted(set(float(c) for c in self._Cs))
        seen: dict[float, float] = {}

        def at(i: int) -> float:
            if grid[i] not in seen:
                seen[grid[i]] = score(grid[i])
            return seen[grid[i]]

        i = (len(grid) - 1) // 2
        best = at(i)
        for step in (1, -1):
            j = i + step
            moved = False
            while 0 <= j < len(grid) and at(j) > best:
                best, i, moved = at(j), j, True
                j += step
            if moved:
                break
        self.C_search_ = dict(sorted(seen.items()))
        return grid[i]

    # -- the fitted model as arrays ----------------------------------------------------------
    def _check_factor(self) -> bool:
        """Whether the factors are switching (``factor="switching"``)."""
        check_param("factor", self.factor, str, choices=("feature", "switching"))
        return self.factor == "switching"

    def _store(self, design: _logistic.Design, mix: Mixture) -> None:
        self.feature_scale_ = design.scale
        self._set_trees(mix.stacked(design), mix.lam)

    def _set_trees(self, st: _learning.Stacked, lam: np.ndarray) -> None:
        self.coef_ = st.coef
        self.parent_coef_ = st.parent_coef
        self.intercept_ = st.intercept
        self.switch_coef_ = st.switch_coef
        self.switch_intercept_ = st.switch_intercept
        self.parents_ = st.parents.astype(np.int64)
        self.orders_ = np.stack([_learning.topological_order(p) for p in self.parents_])
        self.children_ptr_, self.children_ = _learning.children_lists(self.parents_)
        self.mixture_weights_ = np.asarray(lam, dtype=np.float64).copy()
        self.n_trees_ = int(self.parents_.shape[0])

    def _logits(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The kernels' ``(A, V)``, each (n, K, d): every factor's logit with the
        parent at 0, and its change when the parent is 1."""
        return _learning.logits(X, self.coef_, self.intercept_, self.parent_coef_,
                                getattr(self, "switch_coef_", None),
                                getattr(self, "switch_intercept_", None))

    def _log_lam(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.mixture_weights_)

    # -- inference ------------------------------------------------------------------------------
    def _map_from_logits(self, A: np.ndarray, V: np.ndarray) -> np.ndarray:
        cand, _ = _kernels.tree_map(A, V, self.parents_, self.orders_)
        if self.n_trees_ == 1:
            return np.ascontiguousarray(cand[:, 0, :])
        log_lam = self._log_lam()
        scores = np.column_stack([
            _kernels.mixture_log_proba(A, V, self.parents_, log_lam,
                                       np.ascontiguousarray(cand[:, k, :]))
            for k in range(self.n_trees_)])
        start = np.ascontiguousarray(cand[np.arange(A.shape[0]), scores.argmax(axis=1), :])
        if self.n_anneal_iter == 0:
            return start
        Y, _ = _kernels.anneal_map(A, V, self.parents_, self.children_ptr_,
                                   self.children_, log_lam, start, int(self.n_anneal_iter),
                                   float(self.anneal_t_start), float(self.anneal_t_end),
                                   self._seed())
        return Y

    def _marginals_from_logits(self, A: np.ndarray, V: np.ndarray) -> np.ndarray:
        return _kernels.mixture_marginals(A, V, self.parents_, self.orders_,
                                          self.mixture_weights_)

    def _predict(self, X: Any) -> np.ndarray:
        return self._map_from_logits(*self._logits(X))

    def _predict_proba(self, X: Any) -> np.ndarray:
        return self._marginals_from_logits(*self._logits(X))

    def _predict_with_scores(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The MAP label sets and the exact marginals from one pass over ``X`` (the
        logits are computed once)."""
        AV = self._logits(X)
        return self._map_from_logits(*AV), self._marginals_from_logits(*AV)

    # -- what the decoders use (mlw.decoders) -----------------------------------------------
    def _checked_logits(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        check_is_fitted(self, "n_labels_")
        return self._logits(self._validate_X(X, reset=False))

    def joint_mode(self, X: Any) -> np.ndarray:
        """The MAP label vector of each row, shape (n, L): exact for one tree (max-sum),
        by simulated annealing for a mixture (as ``predict`` without the top-label
        rule)."""
        return self._map_from_logits(*self._checked_logits(X))

    def size_marginals(self, X: Any) -> np.ndarray | None:
        """Exact P(y_j = 1, |y| = s | x), shape (n, L, L) (entry ``[i, j, s - 1]``), by
        a leaves-up count of set sizes in every tree with each label clamped to 1
        (O(trees L^3) per row); ``None`` above ``EXACT_SIZE_LABELS`` labels, where
        the decoders sample instead."""
        if self.n_labels_ > EXACT_SIZE_LABELS:
            check_is_fitted(self, "n_labels_")
            return None
        A, V = self._checked_logits(X)
        return _kernels.mixture_size_marginals(A, V, self.parents_, self.orders_,
                                               self.mixture_weights_)

    def sample_labels(self, X: Any, *, n_samples: int = 100,
                      random_state: int | None = None) -> np.ndarray:
        """``n_samples`` label vectors per row drawn from P(y | x) (a tree by its mixture
        weight, then its labels root down), uint8 of shape (n, n_samples, L), seeded by
        ``random_state``."""
        check_param("n_samples", n_samples, int, low=1)
        A, V = self._checked_logits(X)
        seed = kernel_seed(random_state)
        return _kernels.mixture_sample(A, V, self.parents_, self.orders_,
                                       self.mixture_weights_, int(n_samples), seed)

    def log_proba_of(self, X: Any, Y: Any) -> np.ndarray:
        """Exact log P(y | x) = log sum_k lam_k prod_i P(y_i | x, y_parent_k(i)),
        shape (n,)."""
        check_is_fitted(self, "n_labels_")
        X = self._validate_X(X, reset=False)
        Y = _dense_labels(check_Y(Y, n_rows=X.shape[0], n_labels=self.n_labels_))
        A, V = self._logits(X)
        return _kernels.mixture_log_proba(A, V, self.parents_, self._log_lam(), Y)

    def to_text(self) -> str:
        """The trees: each label's parent, per tree, with the mixture weights."""
        check_is_fitted(self, "n_labels_")
        lines = [f"{type(self).__name__}: {self.n_trees_} tree(s), {self.n_labels_} labels"]
        for k in range(self.n_trees_):
            edges = ", ".join(f"{int(p)}->{i}" for i, p in enumerate(self.parents_[k])
                              if p >= 0) or "(no edges)"
            lines.append(f"tree {k}: weight {self.mixture_weights_[k]:.4f}; {edges}")
        return "\n".join(lines)


class CTBN(_TreeMixtureLearner):
    """A single conditional tree-structured Bayesian network (the paper's "SC").

    P(y | x) = prod_i P(y_i | x, y_parent(i)) (Eq. 4), each factor an L2-regularised
    logistic regression on x plus the parent label's value. The structure is the
    maximum branching of the edge weights of Sec. 5.3.1 (each edge's conditional
    log-likelihood on a random ``holdout_fraction`` of the training data, its model
    fitted on the rest); the factors of the chosen tree are then refitted on all the
    training data. ``predict`` is the exact MAP (max-sum), ``predict_proba`` the exact
    marginals, ``log_proba_of`` the exact log P(y | x).

    Parameters
    ----------
    C : float or None
        Inverse L2 strength of every factor (on max-abs scaled features); ``None``
        chooses it from ``Cs`` by the log-likelihood of a tree learned on an internal
        training part, on the ``validation_fraction`` held out.
    Cs : tuple of float
        The grid searched when ``C`` is None.
    holdout_fraction : float
        Share of the training data that scores the edges of the structure search.
    validation_fraction : float
        Share of the training data held out to choose C.
    random_state : int or None
        Seed of the splits.
    top_label : bool or "auto"
        The core's top-label rule on the MAP: a row whose MAP is the empty set gets its
        label of highest marginal. ``"auto"`` (default) only when at most 1% of the
        training label sets are empty; ``False`` is the paper's MAP alone, which left
        3-12% of the test rows empty on data where none is
        (``docs/guide/thresholds.md``).
    factor : {"feature", "switching"}
        The form of P(y_i | x, y_parent): ``"switching"`` (default),
        one logistic regression on x per value of the parent (the authors' released
        code), each fitted on the rows with that parent value; ``"feature"``, one
        logistic regression on x and the parent's 0/1 value (the default before;
        ``docs/methods/mctbn.md`` gives the evidence for the change).

    Attributes
    ----------
    parents_ : ndarray (1, d)
        Each label's parent label, -1 for a root.
    coef_, parent_coef_, intercept_, switch_coef_, switch_intercept_ : ndarray
        Factor i: logit = x . coef_[0, i] + intercept_[0, i] + y_parent
        (parent_coef_[0, i] + x . switch_coef_[0, i] + switch_intercept_[0, i]); the
        switch_* are None for ``factor="feature"``, parent_coef_ zero for
        ``"switching"`` (whose regression at parent 1 is coef_ + switch_coef_).
    C_ : float
        The C used.
    C_search_ : dict
        Validation mean log P(y | x) of every C evaluated.
    edge_weights_ : ndarray (d, d)
        W[j, i] (W[i, i]: no parent) of the structure search.

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_mctbn import CTBN
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y0 = (X[:, 0] > 0).astype(int)
    >>> Y = np.column_stack([y0, y0 ^ (rng.random(200) < 0.1), X[:, 1] > 0])
    >>> model = CTBN(C=1.0).fit(X, Y)
    >>> model.parents_.shape, bool(np.allclose(np.exp(model.log_proba_of(X[:1], Y[:1])) <= 1, True))
    ((1, 3), True)
    """

    n_anneal_iter = 0
    anneal_t_start = 1.0
    anneal_t_end = 0.05

    def __init__(self, *, C: float | None = None, Cs: tuple[float, ...] = DEFAULT_CS,
                 holdout_fraction: float = 0.3, validation_fraction: float = 0.2,
                 random_state: int | None = 0, top_label: bool | str = "auto",
                 factor: str = "switching") -> None:
        self.top_label = top_label
        self.factor = factor
        self.C = C
        self.Cs = Cs
        self.holdout_fraction = holdout_fraction
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    def _fit(self, X: Any, Y: Any) -> None:
        self._check_common()
        sw = self._check_factor()
        Yd = _dense_labels(Y)
        Yt = np.ascontiguousarray(Yd.T, dtype=np.float64)
        design = _logistic.Design.from_matrix(X)
        d = Yt.shape[0]
        ones = np.ones(design.n)
        hold = float(self.holdout_fraction)
        tr, val = self._split(design.n)

        def score(C: float) -> float:
            lam = np.full(d, 1.0 / C)
            rng = np.random.default_rng(self._seed() + 1)
            parent, _, theta = _learning.learn_structure(design, Yt, ones, tr, lam, hold, rng,
                                                         sw, edge_tol=_logistic.EDGE_TOL)
            _learning.fit_tree(design, Yt, parent, ones, tr, lam, theta)
            mix = Mixture([parent], [theta], np.ones(1))
            return float(_learning.mixture_log_lik(design, X, mix, Yd, val).mean()) \
                if val.size else 0.0

        self.C_ = self._choose_C(score)
        lam = np.full(d, 1.0 / self.C_)
        rows = np.arange(design.n, dtype=np.int64)
        rng = np.random.default_rng(self._seed() + 1)
        parent, W, theta = _learning.learn_structure(design, Yt, ones, rows, lam, hold, rng,
                                                     sw, edge_tol=_logistic.EDGE_TOL)
        _learning.fit_tree(design, Yt, parent, ones, rows, lam, theta)
        self.edge_weights_ = W
        self._store(design, Mixture([parent], [theta], np.ones(1)))


class MixtureOfCTBNs(_TreeMixtureLearner):
    """Mixture of conditional tree-structured Bayesian networks (MC; Hong, Batal and
    Hauskrecht, CIKM 2014).

    P(y | x) = sum_k lam_k P(y | x, T_k) (Eq. 5), each T_k a CTBN. Learning
    (Sec. 5.2-5.3): the training data are split into an internal training part and a
    ``validation_fraction`` internal validation part. The first tree is learned on the
    internal training part as in :class:`CTBN`; each further tree's structure is
    learned on instance weights proportional to 1 - P(y | x, M) under the mixture M so
    far, its factors fitted on those weights, and the whole mixture refitted by EM
    (Algorithm 1). Growth stops when the validation log-likelihood gets worse (the
    last tree is dropped; with ``patience`` > 1, after that many trees in a row below
    the best, which is kept), or at ``max_trees``; with ``n_trees`` set, exactly that
    many trees are grown. The kept mixture is then refitted by EM on all the training
    data.

    Prediction (Sec. 5.4): ``predict`` approximates the MAP label vector by simulated
    annealing (``n_anneal_iter`` sweeps), started from the best of the trees' exact
    MAPs; ``predict_proba`` gives the exact marginals; ``log_proba_of`` the exact
    log P(y | x).

    Parameters
    ----------
    C, Cs, holdout_fraction, random_state
        As for :class:`CTBN`: with ``C=None``, the C of the grid whose first tree
        (learned on the internal training part) has the best validation
        log-likelihood; every tree then uses it.
    max_trees : int
        Upper bound on the number of trees grown.
    n_trees : int or None
        Grow exactly this many trees (no early stop); None: stop by validation.
    validation_fraction : float
        Share of the training data held out to stop the growth and choose C.
    em_max_iter : int
        M-steps per EM run at most.
    em_tol : float
        EM stops when the penalised log-likelihood improves by less than this
        (relative).
    n_anneal_iter : int
        Sweeps of simulated annealing for the MAP (0: the best tree MAP).
    anneal_t_start, anneal_t_end : float
        Temperatures of the first and last sweep (geometric schedule).
    keep_path : bool
        Keep the mixture after each tree of the growth (:meth:`staged_models`).
    patience : int
        Growth stops after this many trees in a row whose validation log-likelihood
        is below the best so far; the mixture with the best value is kept (1: stop at
        the first tree that makes it worse, the paper's rule, Sec. 5.3.2).
    em_weights : {"auto", "gamma", "normalised"}
        Instance weights of each tree's M-step (Sec. 5.2.2, Eq. 10). ``"gamma"``: the
        responsibilities gamma_k(n), so a tree's L2 term weighs against the Gamma_k
        instances it explains (MAP-EM: the penalised log-likelihood never decreases).
        ``"normalised"``: Eq. 10 read literally, w_k(n) = gamma_k(n) / Gamma_k scaled to
        sum N, so every tree is regularised as a tree of the whole data (no monotone
        objective; EM stops when the observed log-likelihood stops improving).
        ``"auto"``: grow the mixture both ways (the C search and the first tree are
        shared) and keep the one with the better internal-validation log-likelihood,
        the signal of Sec. 5.3.2 (about twice the growth's cost).
    top_label : bool or "auto"
        As for :class:`CTBN`: the core's top-label rule on the (annealed) MAP.
    factor : {"feature", "switching"}
        As for :class:`CTBN`.

    Attributes
    ----------
    n_trees_ : int
        Trees in the fitted mixture.
    mixture_weights_ : ndarray (K,)
        lam_k.
    parents_, coef_, parent_coef_, intercept_, switch_coef_, switch_intercept_ : ndarray
        Per tree, as for :class:`CTBN`.
    validation_curve_ : list of float
        Mean validation log P(y | x) after each tree was added (``patience`` more
        entries than ``n_trees_`` when growth stopped on worse values).
    stopped_because_ : str
        ``"validation"``, ``"max_trees"``, ``"n_trees"`` or ``"weights all zero"``.
    em_trace_ : EMTrace
        Observed and penalised log-likelihood per iteration of the final EM.
    C_, C_search_
        As for :class:`CTBN`.
    em_weights_ : str
        The M-step weights used (``em_weights``, or the one ``"auto"`` chose).
    em_weights_search_ : dict
        Validation mean log P(y | x) of the kept mixture, per reading grown.

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_mctbn import MixtureOfCTBNs
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> Y = np.column_stack([X[:, 0] > 0, X[:, 0] + X[:, 1] > 0, X[:, 2] > 0]).astype(int)
    >>> mc = MixtureOfCTBNs(C=1.0, n_trees=2).fit(X, Y)
    >>> mc.n_trees_, round(float(mc.mixture_weights_.sum()), 6)
    (2, 1.0)
    """

    def __init__(self, *, C: float | None = None, Cs: tuple[float, ...] = DEFAULT_CS,
                 holdout_fraction: float = 0.3, max_trees: int = 20,
                 n_trees: int | None = None, validation_fraction: float = 0.2,
                 em_max_iter: int = 30, em_tol: float = 1e-4, n_anneal_iter: int = 150,
                 anneal_t_start: float = 1.0, anneal_t_end: float = 0.05,
                 keep_path: bool = False, random_state: int | None = 0,
                 em_weights: str = "auto", patience: int = 2,
                 top_label: bool | str = "auto", factor: str = "switching") -> None:
        self.top_label = top_label
        self.factor = factor
        self.patience = patience
        self.C = C
        self.Cs = Cs
        self.holdout_fraction = holdout_fraction
        self.max_trees = max_trees
        self.n_trees = n_trees
        self.validation_fraction = validation_fraction
        self.em_max_iter = em_max_iter
        self.em_tol = em_tol
        self.n_anneal_iter = n_anneal_iter
        self.anneal_t_start = anneal_t_start
        self.anneal_t_end = anneal_t_end
        self.keep_path = keep_path
        self.random_state = random_state
        self.em_weights = em_weights

    def _check_params(self) -> None:
        self._check_common()
        check_param("max_trees", self.max_trees, int, low=1)
        check_param("n_trees", self.n_trees, int, low=1, allow_none=True)
        check_param("em_max_iter", self.em_max_iter, int, low=0)
        check_param("em_tol", self.em_tol, float, low=0.0)
        check_param("n_anneal_iter", self.n_anneal_iter, int, low=0)
        check_param("anneal_t_start", self.anneal_t_start, float, low=0.0, low_open=True)
        check_param("anneal_t_end", self.anneal_t_end, float, low=0.0, low_open=True)
        check_param("keep_path", self.keep_path, bool)
        check_param("patience", self.patience, int, low=1)
        check_param("em_weights", self.em_weights, str,
                    choices=("auto", "gamma", "normalised"))
        self._check_factor()

    def _fit(self, X: Any, Y: Any) -> None:
        self._check_params()
        Yd = _dense_labels(Y)
        Yt = np.ascontiguousarray(Yd.T, dtype=np.float64)
        design = _logistic.Design.from_matrix(X)
        d = Yt.shape[0]
        tr, val = self._split(design.n)
        first: dict[float, Mixture] = {}

        def score(C: float) -> float:
            first[C] = self._first_tree(design, Yt, tr, np.full(d, 1.0 / C))
            return self._validation(design, X, Yd, first[C], val) if val.size else 0.0

        C = self._choose_C(score)
        lam = np.full(d, 1.0 / C)
        first_tree = first[C] if C in first else self._first_tree(design, Yt, tr, lam)
        # em_weights="auto": grow the mixture under both readings of Eq. 10 and keep the
        # one whose kept mixture has the better internal-validation log-likelihood (the
        # signal that already stops the growth); "gamma" wins ties and NaN.
        modes = ("gamma", "normalised") if self.em_weights == "auto" else (self.em_weights,)
        grown: dict[str, tuple[Mixture, list[float], str, list[Mixture]]] = {}
        self.em_weights_search_ = {}
        for mode in modes:
            grown[mode] = self._grow(design, X, Yd, Yt, tr, val, lam, first_tree,
                                     mode == "normalised")
            mix, curve = grown[mode][0], grown[mode][1]
            self.em_weights_search_[mode] = curve[mix.K - 1]
        best = modes[0]
        for mode in modes[1:]:
            if self.em_weights_search_[mode] > self.em_weights_search_[best]:
                best = mode
        mix, curve, why, path = grown[best]
        self.em_weights_ = best
        self.path_ = [(p.stacked(design), p.lam.copy()) for p in path] if self.keep_path \
            else None
        self.C_ = C
        self.validation_curve_ = curve
        self.stopped_because_ = why
        # refit the kept mixture on all the training data (warm start: the parameters
        # learned on the internal training part)
        all_rows = np.arange(design.n, dtype=np.int64)
        if mix.K == 1:
            _learning.fit_tree(design, Yt, mix.parents[0], np.ones(design.n), all_rows, lam,
                               mix.thetas[0])
        self.em_trace_ = _learning.em(design, X, Yd, Yt, mix, all_rows, lam,
                                      int(self.em_max_iter), float(self.em_tol),
                                      best == "normalised")
        self._store(design, mix)

    def _first_tree(self, design: _logistic.Design, Yt: np.ndarray, tr: np.ndarray,
                    lam: np.ndarray) -> Mixture:
        """T_1: the CTBN of uniform weights on the internal training rows."""
        rng = np.random.default_rng(self._seed() + 1)
        ones = np.ones(design.n)
        parent, _, theta = _learning.learn_structure(design, Yt, ones, tr, lam,
                                                     float(self.holdout_fraction), rng,
                                                     self.factor == "switching")
        _learning.fit_tree(design, Yt, parent, ones, tr, lam, theta)
        return Mixture([parent], [theta], np.ones(1))

    def _grow(self, design: _logistic.Design, X: Any, Yd: np.ndarray, Yt: np.ndarray,
              tr: np.ndarray, val: np.ndarray, lam: np.ndarray, first: Mixture,
              normalised: bool) -> tuple[Mixture, list[float], str, list[Mixture]]:
        """Sec. 5.3.2 on the internal training rows ``tr`` from the first tree: the kept
        mixture, the validation curve (mean log P(y|x) on ``val`` after each tree), why
        growth stopped, and (``keep_path``) a copy of the mixture after each tree."""
        n = design.n
        rng = np.random.default_rng(self._seed() + 2)
        hold = float(self.holdout_fraction)
        em_iter, em_tol = int(self.em_max_iter), float(self.em_tol)
        target = int(self.n_trees) if self.n_trees is not None else int(self.max_trees)
        patience = int(self.patience)
        mix = first.copy()
        curve = [self._validation(design, X, Yd, mix, val)]
        path = [mix.copy()] if self.keep_path else []
        why = "n_trees" if self.n_trees is not None else "max_trees"
        # the kept mixture: the last one whose validation score was not below the best
        # so far; growth stops after ``patience`` trees in a row below it
        best, best_score, below = mix, curve[0], 0
        while mix.K < target:
            P = np.exp(_learning.mixture_log_lik(design, X, mix, Yd, tr))
            omega = np.zeros(n)
            omega[tr] = np.clip(1.0 - P, 0.0, None)
            total = omega[tr].sum()
            if not total > 1e-12 * tr.shape[0]:  # every instance predicted with P = 1
                why = "weights all zero"
                break
            omega[tr] *= tr.shape[0] / total
            parent, _, theta = _learning.learn_structure(design, Yt, omega, tr, lam, hold, rng,
                                                         self.factor == "switching")
            _learning.fit_tree(design, Yt, parent, omega, tr, lam, theta)
            K = mix.K + 1
            cand = Mixture(mix.parents + [parent], mix.thetas + [theta],
                           np.append(mix.lam * (K - 1) / K, 1.0 / K)).copy()
            _learning.em(design, X, Yd, Yt, cand, tr, lam, em_iter, em_tol, normalised)
            curve.append(self._validation(design, X, Yd, cand, val))
            mix = cand
            if self.keep_path:
                path.append(mix.copy())
            if self.n_trees is not None or not val.size or curve[-1] >= best_score:
                best, best_score, below = mix, curve[-1], 0
                continue
            below += 1
            if below >= patience:
                why = "validation"
                break
        if self.n_trees is not None:
            return mix, curve, why, path
        return best, curve, why, path[:best.K]

    def staged_models(self) -> list[MixtureOfCTBNs]:
        """With ``keep_path=True``: the mixture after each tree of the growth, as
        fitted learners (``[k]`` has k + 1 trees). These are the mixtures learned on
        the internal training part, before the final refit on all the data (the last
        one is the fitted model before that refit); Figure 3 of the paper is measured
        on them (``benchmarks/bench_mctbn_quality.py``)."""
        check_is_fitted(self, "n_labels_")
        if self.path_ is None:
            raise ValueError("staged_models needs keep_path=True at fit time")
        out = []
        for st, lam in self.path_:
            m = copy.copy(self)
            m._set_trees(st, lam)
            out.append(m)
        return out

    @staticmethod
    def _validation(design: _logistic.Design, X: Any, Yd: np.ndarray, mix: Mixture,
                    val: np.ndarray) -> float:
        if val.size == 0:
            return float("nan")
        return float(_learning.mixture_log_lik(design, X, mix, Yd, val).mean())
