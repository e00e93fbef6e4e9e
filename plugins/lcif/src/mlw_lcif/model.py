"""LCIF learners: instance kNN, feature kNN, their linear combination (LCIF) and the
second-order variant (LCIF2), after Feremans, Cule, Vens and Goethals (DSAA 2017)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

import mlw
from mlw.neighbors import NeighborIndex
from mlw.validation import check_param
from mlw_lcif import _prep as P
from mlw_lcif._scaling import AUTO_NORMS_LABEL_SETS, FEATURE_NORMS, feature_scaler

#: How conf_FL's features vote: ``"all"``, the paper's printed formula (every non-zero
#: feature votes for every candidate label, over the sum of all its feature values);
#: ``"neighbours"``, each feature only for the labels of its own k_feat-neighbourhood,
#: over the same sum (cheaper on data with very many labels); ``"neighbour_mean"``, each
#: feature only for its own neighbourhood, over the sum of the voting features' values
#: (the mean similarity of the features that vote for the label: the reading that
#: reproduces the paper's Table II, see ``docs/methods/lcif.md``).
FEATURE_VOTES: tuple[str, ...] = ("all", "neighbours", "neighbour_mean")

#: The paper's grid: k_ins, k_feat in 1..30 step 2, lambda in 0..1 step 0.1.
K_GRID: tuple[int, ...] = tuple(range(1, 30, 2))
LAM_GRID: tuple[float, ...] = tuple(float(v) for v in np.round(np.arange(11) * 0.1, 1))


class _LCIFBase(mlw.MultiLabelLearner):
    """Shared machinery; subclasses fix which parts are used (``_kind``).

    Parameters
    ----------
    k_ins : int
        Number of instance neighbours.
    k_feat : int
        Number of label neighbours of each feature (capped at the number of labels).
    threshold : str or object
        Thresholding strategy (default: the core's ``cardinality``).
    cv : int or None
        When set, choose ``k_ins``, ``k_feat`` and ``lam`` on the paper's grid by
        ``cv``-fold cross-validation of the training data (``best`` in ``cv_results_``).
    cv_metric : str
        Metric maximised by the search (``accuracy``, ``f1_example``, ``f1_micro``,
        ``f1_macro``, ``hamming_loss`` (minimised), ``subset_accuracy``), or a metric
        at k (``precision_at_1``, ``ndcg_at_3``, ``psprecision_at_5``, any k): then
        the search ranks, without a threshold, and also chooses ``sim_power`` and
        ``feature_norm`` (when ``"auto"``) on its own grid
        (``mlw_lcif.search.search_ranking``).
    random_state : int
        Seed of the cross-validation folds.
    feature_norm : str
        ``"max"``: features scaled to [0, 1]; ``"l2"``: then every feature column
        divided by its L2 norm over the training rows (unit-length feature vectors: a
        rare word weighs more than a frequent one); ``"idf"``: then every feature
        multiplied by its inverse document frequency ``ln((n + 1) / (df + 1)) + 1``
        (tf-idf, the weighting the paper leaves to future work). ``"auto"`` (default): chosen by
        the cross-validation with the other hyper-parameters when ``cv`` is set
        (between ``"max"`` and ``"l2"`` for a label-set metric, among all three for a
        metric at k), ``"max"`` otherwise. The fitted choice is ``feature_norm_``.
    threshold_sample : int or None
        The cardinality threshold is fitted on the leave-one-out scores of this many
        training rows drawn at random (seeded by ``random_state``; each still scored
        against all other training rows) when the training set is larger; ``None``:
        all rows, the paper's exact procedure. Default 20,000: small data sets use all
        rows, IMDB-sized ones a subsample (the threshold is one scalar on a 0.01 grid).
        Used by strategies fitted from score blocks (``cardinality``).
    feature_votes : str
        The reading of conf_FL (the method page, "conf_FL"). ``"neighbour_mean"`` (default): a
        feature votes only for the labels of its own ``k_feat``-neighbourhood, and a
        label's score is the value-weighted mean similarity of the features voting for
        it (the reading that reproduces the paper's Table II). ``"all"`` (the formula as
        printed): every non-zero feature votes, with its similarity, for every candidate
        label (a label in the neighbourhood of at least one of the query's features),
        over the sum of all the query's feature values. ``"neighbours"``: votes as
        ``"neighbour_mean"``, denominator as ``"all"``.
    sim_power : float
        Each of the ``k_ins`` neighbours votes with weight ``sim ** sim_power`` in
        conf_INS (still a weighted mean). 1 (default): the paper's cosine-weighted
        vote; larger values let the nearest neighbours dominate, which sharpens the top
        of the ranking (precision@k).
    """

    _sparse_output = True  # CSR Y in fit: CSR scores and predictions
    _kind = "lcif"

    # parameters every subclass stores (those it does not take are fixed here)
    k_ins: int = 1
    k_feat: int = 1
    lam: float = 1.0
    cv: int | None = None
    cv_metric: str = "accuracy"
    random_state: int = 0
    threshold: Any = "cardinality"
    feature_norm: str = "auto"
    threshold_sample: int | None = 20000
    feature_votes: str = "neighbour_mean"
    sim_power: float = 1.0

    # -- fitting ------------------------------------------------------------------------
    def _lam_value(self) -> float:
        if self._kind == "instance_knn":
            return 1.0
        if self._kind == "feature_knn":
            return 0.0
        return float(check_param("lam", self.lam, float, low=0.0, high=1.0))

    def _uses_ins(self) -> bool:
        return self._kind != "feature_knn"

    def _uses_fl(self) -> bool:
        return self._kind != "instance_knn"

    def _fit(self, X: Any, Y: Any) -> None:
        n, L = X.shape[0], Y.shape[1]
        Ycsr = sp.csr_matrix(Y, dtype=np.uint8) if not sp.issparse(Y) else Y
        check_param("feature_votes", self.feature_votes, str, choices=FEATURE_VOTES)
        check_param("feature_norm", self.feature_norm, str, choices=("auto", *FEATURE_NORMS))
        check_param("random_state", self.random_state, int)
        check_param("threshold_sample", self.threshold_sample, int, low=1, allow_none=True)
        check_param("cv", self.cv, int, low=2, high=n, allow_none=True)
        self.sim_power_ = float(check_param("sim_power", self.sim_power, float, low=0.0,
                                            high=16.0, low_open=True))
        if self.cv is not None and "_at_" in str(self.cv_metric):
            from mlw_lcif.search import search_ranking

            norms = FEATURE_NORMS if self.feature_norm == "auto" else (self.feature_norm,)
            res = search_ranking(X, Ycsr, norms=norms, kind=self._kind,
                                 metric=self.cv_metric, n_folds=self.cv,
                                 seed=self.random_state, feature_votes=self.feature_votes)
            self.cv_results_ = res
            self.k_ins_, self.k_feat_, self.lam_ = res["k_ins"], res["k_feat"], res["lam"]
            self.feature_norm_, self.sim_power_ = res["feature_norm"], res["sim_power"]
        elif self.cv is not None:
            from mlw_lcif.search import search_with_feature_norm

            norms = (AUTO_NORMS_LABEL_SETS if self.feature_norm == "auto"
                     else (self.feature_norm,))
            res = search_with_feature_norm(X, Ycsr, norms=norms, kind=self._kind,
                                           metric=self.cv_metric, n_folds=self.cv,
                                           seed=self.random_state,
                                           feature_votes=self.feature_votes,
                                           top_label=self._search_top_label())
            self.cv_results_ = res
            self.k_ins_, self.k_feat_, self.lam_ = res["k_ins"], res["k_feat"], res["lam"]
            self.feature_norm_ = res["feature_norm"]
        else:
            self.feature_norm_ = "max" if self.feature_norm == "auto" else self.feature_norm
            # k_ins up to the number of training instances; k_feat capped at the labels
            self.k_ins_ = check_param("k_ins", self.k_ins, int, low=1, high=n) \
                if self._uses_ins() else 1
            self.k_feat_ = min(check_param("k_feat", self.k_feat, int, low=1), L) \
                if self._uses_fl() else 1
            self.lam_ = self._lam_value()
        self.scaler_ = feature_scaler(self.feature_norm_).fit(X)
        Xs = self.scaler_.transform(X)
        self.Xs_ = Xs
        self.index_ = NeighborIndex(Xs)
        if self._kind == "lcif2":
            self.votes_ = P.second_order_scores(Xs, Ycsr, self.k_ins_)
        else:
            self.votes_ = Ycsr.astype(np.float64)
        if self._uses_fl():
            self.fl_matrix_ = P.feature_label_similarities(Xs, Ycsr)
            self.fl_idx_, self.fl_sim_ = P.top_labels(self.fl_matrix_, self.k_feat_)
        else:
            self.fl_matrix_ = None
            self.fl_idx_ = np.full((X.shape[1], 1), -1, dtype=np.int32)
            self.fl_sim_ = np.zeros((X.shape[1], 1))

    # -- scoring ------------------------------------------------------------------------
    def _sparse_scores(self, Qs: sp.csr_matrix, self_offset: int = -1,
                       own: np.ndarray | None = None) -> sp.csr_matrix:
        """CSR scores of the scaled queries; with ``self_offset >= 0`` query i is
        training row ``i + self_offset`` and is left out of its own neighbourhood
        (with ``own``, query i is training row ``own[i]``)."""
        if self.lam_ > 0.0:
            if own is None and self_offset >= 0:
                own = np.arange(self_offset, self_offset + Qs.shape[0], dtype=np.int64)
            nbr_idx, nbr_sim = self.index_.query(Qs, k=self.k_ins_, exclude=own)
            if getattr(self, "sim_power_", 1.0) != 1.0:
                nbr_sim = nbr_sim ** self.sim_power_
        else:
            nbr_idx = np.full((Qs.shape[0], 1), -1, dtype=np.int32)
            nbr_sim = np.zeros((Qs.shape[0], 1))
        return P.score(nbr_idx, nbr_sim, nbr_idx.shape[1], self.votes_, Qs, self.fl_idx_,
                       self.fl_sim_, self.fl_idx_.shape[1],
                       self.fl_matrix_ if self.feature_votes == "all" else None, self.lam_,
                       self.n_labels_, mean=self.feature_votes == "neighbour_mean")

    def _scores(self, Qs: sp.csr_matrix, self_offset: int = -1) -> Any:
        S = self._sparse_scores(Qs, self_offset)
        return S if self.sparse_labels_ else S.toarray()

    def _predict_proba(self, X: Any) -> Any:
        return self._scores(self.scaler_.transform(X))

    def _predict_topk(self, X: Any, k: int) -> Any:
        """The top k of each block's CSR scores: no dense (n, L) score matrix, at any
        number of labels."""
        from mlw.metrics.at_k import stack_topk, top_k

        Qs = self.scaler_.transform(X)
        parts = [top_k(self._sparse_scores(Qs[a:a + 32768]), k)
                 for a in range(0, Qs.shape[0], 32768)]
        return stack_topk(parts, k)

    def _training_scores(self, X: Any, Y: Any) -> Any:
        # each training instance is left out of its own neighbourhood
        return self._scores(self.Xs_, self_offset=0)

    def _search_top_label(self) -> bool | str:
        """The top-label rule the CV search applies (its threshold search replicates
        cardinality matching): the ``top_label`` of the learner's strategy when it has
        one (``True``, ``False`` or ``"auto"``, resolved on each fold's training part),
        else ``"auto"`` (the core's default)."""
        from mlw.learner import make_threshold

        strategy, _ = make_threshold(self.threshold)
        return getattr(strategy, "top_label", "auto")

    def _fit_threshold(self, X: Any, Y: Any) -> None:
        """A strategy that can learn from score blocks (the core's cardinality matching
        can) is fed block by block: the training scores of all instances are never held
        at once (at extreme scale they would not fit). It sees the leave-one-out scores
        of ``threshold_rows_`` (all training rows, or the seeded random subsample of
        ``threshold_sample`` rows, each still scored against all other training rows)."""
        from mlw.learner import make_threshold

        strategy, _ = make_threshold(self.threshold)
        if not hasattr(strategy, "fit_blocks"):
            super()._fit_threshold(X, Y)
            return
        rows = self._threshold_rows(X.shape[0])
        self.threshold_rows_ = X.shape[0] if rows is None else int(rows.size)
        Yt = Y if rows is None else Y[rows]
        per_row = np.diff(Yt.indptr) if sp.issparse(Yt) else np.count_nonzero(Yt, axis=1)
        self.threshold_ = strategy.fit_blocks(self._training_score_blocks(rows=rows),
                                              n_rows=self.threshold_rows_,
                                              n_positive=int(per_row.sum()),
                                              n_empty=int(np.count_nonzero(per_row == 0)))

    def _threshold_rows(self, n: int) -> np.ndarray | None:
        """The sorted training rows the threshold is fitted on, or None for all."""
        s = check_param("threshold_sample", self.threshold_sample, int, low=1, allow_none=True)
        if s is None:
            return None
        if s >= n:
            return None
        rng = np.random.default_rng(self.random_state)
        return np.sort(rng.choice(n, size=int(s), replace=False))

    def _training_score_blocks(self, block: int = 32768, rows: np.ndarray | None = None):
        n = self.Xs_.shape[0] if rows is None else rows.size
        for start in range(0, n, block):
            if rows is None:
                yield self._sparse_scores(self.Xs_[start:start + block], self_offset=start)
            else:
                r = rows[start:start + block]
                yield self._sparse_scores(self.Xs_[r], own=r)

    def kneighbors(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The fitted number of nearest training instances of each row of X by cosine
        similarity: (indices int32 (n, k_ins_), similarities); -1 pads rows with fewer
        training instances of positive similarity."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "n_labels_")
        Qs = self.scaler_.transform(self._validate_X(X, reset=False))
        return self.index_.query(Qs, k=self.k_ins_)


class LCIF(_LCIFBase):
    """LCIF: ``lam * conf_INS + (1 - lam) * conf_FL``.

    conf_INS(x, y) is the cosine-similarity-weighted vote of the ``k_ins`` nearest
    training instances; conf_FL(x, y) = sum_j x_j sim(f_j, y) / sum_j x_j over the
    non-zero features j that have y among their ``k_feat`` most similar labels (cosine
    between feature and label columns of the training data; ``feature_votes``). Features
    are scaled to [0, 1]. One threshold is chosen by cardinality matching on leave-one-out training
    scores, with the top-label rule on.

    The parameters shared by the four LCIF learners (``k_ins``, ``k_feat``,
    ``threshold``, ``cv``, ``cv_metric``, ``random_state``, ``feature_norm``,
    ``threshold_sample``, ``feature_votes``) are documented on their base class
    ``_LCIFBase``; ``mlw learners lcif`` lists them all.

    Parameters
    ----------
    lam : float
        Weight of the instance part, in [0, 1] (``1 - lam`` goes to the feature part).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1], [1, 0, 0]], dtype=float)
    >>> Y = np.array([[1, 0], [1, 1], [0, 1], [1, 0]])
    >>> LCIF(k_ins=2, k_feat=1, lam=0.5).fit(X, Y).predict(X).shape
    (4, 2)
    """

    _kind = "lcif"

    def __init__(self, *, k_ins: int = 15, k_feat: int = 15, lam: float = 0.5,
                 threshold: Any = "cardinality", cv: int | None = None,
                 cv_metric: str = "accuracy", random_state: int = 0,
                 feature_norm: str = "auto", threshold_sample: int | None = 20000,
                 feature_votes: str = "neighbour_mean", sim_power: float = 1.0) -> None:
        self.k_ins = k_ins
        self.k_feat = k_feat
        self.lam = lam
        self.feature_votes = feature_votes
        self.sim_power = sim_power
        self.threshold = threshold
        self.cv = cv
        self.cv_metric = cv_metric
        self.random_state = random_state
        self.feature_norm = feature_norm
        self.threshold_sample = threshold_sample


class LCIF2(LCIF):
    """LCIF2: LCIF whose instance part votes with second-order scores.

    Every training instance first gets re-weighted label scores: the vote of its
    ``k_ins`` nearest training instances (itself included) under sim_ALL, the cosine
    over features and labels together, each half L1-normalised. A query's ``k_ins``
    nearest instances then vote with those scores instead of their 0/1 labels.
    Parameters as :class:`LCIF`.
    """

    _kind = "lcif2"


class InstanceKNN(_LCIFBase):
    """Instance kNN: the cosine-weighted label vote of the ``k_ins`` nearest training
    instances, thresholded by cardinality matching (LCIF with ``lam = 1``)."""

    _kind = "instance_knn"

    def __init__(self, *, k_ins: int = 15, threshold: Any = "cardinality",
                 cv: int | None = None, cv_metric: str = "accuracy",
                 random_state: int = 0,
                 feature_norm: str = "auto", threshold_sample: int | None = 20000,
                 sim_power: float = 1.0) -> None:
        self.k_ins = k_ins
        self.sim_power = sim_power
        self.threshold = threshold
        self.cv = cv
        self.cv_metric = cv_metric
        self.random_state = random_state
        self.feature_norm = feature_norm
        self.threshold_sample = threshold_sample


class FeatureKNN(_LCIFBase):
    """Feature kNN: conf_FL alone, each non-zero feature voting for its ``k_feat`` most
    similar labels (LCIF with ``lam = 0``)."""

    _kind = "feature_knn"

    def __init__(self, *, k_feat: int = 15, threshold: Any = "cardinality",
                 cv: int | None = None, cv_metric: str = "accuracy",
                 random_state: int = 0,
                 feature_norm: str = "auto", threshold_sample: int | None = 20000,
                 feature_votes: str = "neighbour_mean") -> None:
        self.k_feat = k_feat
        self.feature_votes = feature_votes
        self.threshold = threshold
        self.cv = cv
        self.cv_metric = cv_metric
        self.random_state = random_state
        self.feature_norm = feature_norm
        self.threshold_sample = threshold_sample
