"""Metrics at k: how many of the top k ranked labels are relevant, the measures of
extreme multi-label classification (precision@k, recall@k, nDCG@k and the
propensity-scored PSP@k and PSnDCG@k of Jain, Prabhu and Varma, KDD 2016).

They take a *top-k ranking*: for each instance, up to k label indices, best first
(:class:`TopK`, what :meth:`mlw.MultiLabelLearner.predict_topk` returns), or the
per-label scores it is read from (:func:`top_k`). Everything is sparse: the true labels
stay CSR, a ranking is an (n, k) array, and nothing of size n × L is built.

Conventions (``docs/guide/metrics.md``):

- ranking from scores: by decreasing score, equal scores by increasing label index; a
  label whose score is 0 (or absent from CSR scores) is never ranked, so a position can
  be empty (index -1) and counts as a miss;
- precision@k divides by k whatever the number of true labels; recall@k and nDCG@k are
  0 for an instance without true labels (such instances stay in the averages);
- PSP@k and PSnDCG@k are normalised as in the Extreme Classification Repository's
  code and ``napkinxc.metrics``: the propensity-weighted gains summed over all
  instances, divided by the same sum for the best possible ranking (each instance's
  true labels in decreasing inverse propensity).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from mlw.metrics.counts import as_csr_labels
from mlw.registry import MetricSpec
from mlw.validation import check_same_shape, check_scores, check_Y

if TYPE_CHECKING:
    from mlw.metrics.context import EvalContext

#: Jain et al.'s propensity parameters for datasets other than the Wikipedia and Amazon
#: ones of the Extreme Classification Repository.
PROPENSITY_A = 0.55
PROPENSITY_B = 1.5

#: The k of the registered metrics (``precision_at_1``, ``precision_at_3``, ...).
REGISTERED_K = (1, 3, 5)

#: Score entries one block of dense scores holds when a ranking is read from them.
BLOCK_ENTRIES = 1 << 22


class TopK(NamedTuple):
    """A top-k ranking of the labels of n instances.

    Attributes
    ----------
    indices : (n, k) int64
        Label indices, best first; -1 marks an empty position (fewer than k labels
        ranked).
    scores : (n, k) float64
        Their scores (0 at empty positions).
    """

    indices: np.ndarray
    scores: np.ndarray


def stack_topk(parts: list[TopK], k: int) -> TopK:
    """The rankings of consecutive blocks of rows as one."""
    if not parts:
        return TopK(np.empty((0, k), dtype=np.int64), np.empty((0, k)))
    return TopK(np.concatenate([p.indices for p in parts]),
                np.concatenate([p.scores for p in parts]))


def check_k(k: Any) -> int:
    """``k`` as a positive int, else ``ValueError``."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return int(k)


def check_topk(ranking: Any, n_labels: int, *, n_rows: int | None = None) -> TopK:
    """A ranking (a :class:`TopK`, an ``(indices, scores)`` pair, or an (n, k) index
    array) validated: integer indices in [-1, n_labels), no label twice in a row."""
    if isinstance(ranking, tuple):
        idx, sc = ranking
    else:
        idx, sc = ranking, None
    idx = np.asarray(idx)
    if idx.ndim != 2 or not (np.issubdtype(idx.dtype, np.integer) or idx.size == 0):
        raise ValueError(f"a top-k ranking must be a 2-D integer array of label indices, "
                         f"got shape {idx.shape} of {idx.dtype}")
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    if n_rows is not None and idx.shape[0] != n_rows:
        raise ValueError(f"the ranking has {idx.shape[0]} rows for {n_rows} instances")
    if idx.size and (idx.min() < -1 or idx.max() >= n_labels):
        raise ValueError(f"ranking indices must lie in [-1, {n_labels}) (-1: no label)")
    if idx.shape[1] > 1:
        s = np.sort(idx, axis=1)
        if ((s[:, 1:] == s[:, :-1]) & (s[:, 1:] >= 0)).any():
            raise ValueError("a row of the ranking names the same label twice")
    sc = np.zeros(idx.shape) if sc is None else np.asarray(sc, dtype=np.float64)
    if sc.shape != idx.shape:
        raise ValueError(f"ranking scores have shape {sc.shape}, indices {idx.shape}")
    return TopK(idx, sc)


def top_k(scores: Any, k: int) -> TopK:
    """The top-k ranking of per-label scores (dense, or CSR with absent = 0).

    Decreasing score, equal scores by increasing label index, labels scored 0 left out
    (their positions are -1). Dense scores are ranked a block of rows at a time.

    >>> top_k(np.array([[0.1, 0.7, 0.7, 0.0], [0.0, 0.0, 0.2, 0.0]]), 3).indices
    array([[ 1,  2,  0],
           [ 2, -1, -1]])
    """
    k = check_k(k)
    if sp.issparse(scores):
        S = sp.csr_matrix(scores)
        S.sum_duplicates()
        rows = np.repeat(np.arange(S.shape[0]), np.diff(S.indptr))
        return _rank_entries(S.shape[0], k, rows, S.indices, S.data)
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim != 2:
        raise ValueError(f"scores must be a 2-D matrix, got shape {S.shape}")
    n, L = S.shape
    parts = []
    step = max(1, BLOCK_ENTRIES // max(L, 1))
    for a in range(0, n, step):
        B = S[a:a + step]
        if k < L:  # keep only the entries at least as high as each row's k-th largest
            kth = np.partition(B, L - k, axis=1)[:, L - k]
            keep = (B >= kth[:, None]) & (B > 0)
        else:
            keep = B > 0
        rows, cols = np.nonzero(keep)
        parts.append(_rank_entries(B.shape[0], k, rows, cols, B[rows, cols]))
    return stack_topk(parts, k)


def _rank_entries(n: int, k: int, rows: np.ndarray, cols: np.ndarray,
                  vals: np.ndarray) -> TopK:
    """The top k of scattered (row, label, score) entries, positive scores only."""
    pos = vals > 0
    rows, cols, vals = rows[pos], cols[pos], vals[pos]
    order = np.lexsort((cols, -vals, rows))
    rows, cols, vals = rows[order], cols[order], vals[order]
    start = np.searchsorted(rows, np.arange(n))
    rank = np.arange(rows.shape[0]) - start[rows]
    take = rank < k
    idx = np.full((n, k), -1, dtype=np.int64)
    sc = np.zeros((n, k), dtype=np.float64)
    idx[rows[take], rank[take]] = cols[take]
    sc[rows[take], rank[take]] = vals[take]
    return TopK(idx, sc)


def inverse_propensity(Y: Any, *, A: float = PROPENSITY_A, B: float = PROPENSITY_B,
                       n_instances: int | None = None) -> np.ndarray:
    """Jain et al.'s inverse propensity of every label, from the label matrix ``Y``
    (usually the training labels): ``1 + C (N_l + B)^-A`` with ``C = (ln N - 1)(B + 1)^A``,
    ``N_l`` the label's count and ``N`` the number of instances.

    >>> inverse_propensity(np.array([[1, 0], [1, 0], [1, 1], [0, 0]])).round(4)
    array([1.2796, 1.3863])
    """
    T = as_csr_labels(Y)
    N = T.shape[0] if n_instances is None else n_instances
    if N < 1:
        raise ValueError("propensities need at least one instance")
    counts = np.bincount(T.indices, minlength=T.shape[1]).astype(np.float64)
    C = (np.log(N) - 1.0) * (B + 1.0) ** A
    return 1.0 + C * (counts + B) ** (-A)


class AtKTable(NamedTuple):
    """Per-instance, per-position pieces every metric at k is summed from."""

    hits: np.ndarray       # (n, k) bool: the label at position r is relevant
    gains: np.ndarray      # (n, k) float: hits times the label's inverse propensity
    best: np.ndarray       # (n, k) float: the true labels' inverse propensities, desc.
    n_true: np.ndarray     # (n,) true labels per instance


def at_k_table(Y_true: Any, ranking: TopK, inv_ps: np.ndarray | None) -> AtKTable:
    """Hits of a ranking against CSR true labels, one sorted search over the row-major
    keys ``i * L + j`` of the true labels (nothing of size n × L)."""
    T = as_csr_labels(Y_true)
    n, L = T.shape
    idx = ranking.indices
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(T.indptr))
    keys = rows * L + T.indices
    q = np.arange(n, dtype=np.int64)[:, None] * L + idx
    pos = np.minimum(np.searchsorted(keys, q), max(keys.shape[0] - 1, 0))
    hits = (idx >= 0) & (keys[pos] == q) if keys.shape[0] else np.zeros(idx.shape, bool)
    n_true = np.diff(T.indptr)
    k = idx.shape[1]
    if inv_ps is None:
        return AtKTable(hits, hits.astype(np.float64), np.zeros((n, k)), n_true)
    gains = np.where(hits, inv_ps[np.maximum(idx, 0)], 0.0)
    vals = inv_ps[T.indices]
    order = np.lexsort((-vals, rows))
    start = T.indptr[:-1][rows]
    rank = np.arange(rows.shape[0]) - start
    take = rank < k
    best = np.zeros((n, k))
    best[rows[take], rank[take]] = vals[order][take]
    return AtKTable(hits, gains, best, n_true)


def _discount(k: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, k + 2))


def precision_from_table(t: AtKTable, k: int) -> float:
    return float(np.mean(t.hits[:, :k].sum(axis=1) / k))


def recall_from_table(t: AtKTable, k: int) -> float:
    hit = t.hits[:, :k].sum(axis=1)
    return float(np.mean(np.where(t.n_true > 0, hit / np.maximum(t.n_true, 1), 0.0)))


def _idcg(t: AtKTable, k: int) -> np.ndarray:
    cum = np.concatenate([[0.0], np.cumsum(_discount(k))])
    return cum[np.minimum(t.n_true, k)]


def ndcg_from_table(t: AtKTable, k: int) -> float:
    dcg = (t.hits[:, :k] * _discount(k)).sum(axis=1)
    idcg = _idcg(t, k)
    return float(np.mean(np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)))


def psprecision_from_table(t: AtKTable, k: int) -> float:
    best = t.best[:, :k].sum()
    return float(t.gains[:, :k].sum() / best) if best > 0 else 0.0


def psndcg_from_table(t: AtKTable, k: int) -> float:
    idcg = _idcg(t, k)
    w = np.where(idcg > 0, 1.0 / np.where(idcg > 0, idcg, 1.0), 0.0)
    d = _discount(k)
    best = ((t.best[:, :k] * d).sum(axis=1) * w).sum()
    return float(((t.gains[:, :k] * d).sum(axis=1) * w).sum() / best) if best > 0 else 0.0


_FROM_TABLE = {"precision": precision_from_table, "recall": recall_from_table,
               "ndcg": ndcg_from_table, "psprecision": psprecision_from_table,
               "psndcg": psndcg_from_table}


def measure_at_k(name: str) -> tuple[Any, int]:
    """The measure and the k of a metric name at k, for code that scores many rankings
    from their :func:`at_k_table` (a parameter search, say).

    Examples
    --------
    >>> measure, k = measure_at_k("precision_at_3")
    >>> measure is precision_from_table, k
    (True, 3)
    """
    kind, _, k_txt = name.rpartition("_at_")
    if kind not in _FROM_TABLE or not k_txt.isdigit() or int(k_txt) < 1:
        raise ValueError(f"{name!r} is not a metric at k "
                         f"(e.g. precision_at_{REGISTERED_K[0]})")
    return _FROM_TABLE[kind], int(k_txt)


def metric_at_k(kind: str, Y_true: Any, ranking: Any, k: int, *,
                inv_propensity: Any = None) -> float:
    """One metric at k of a ranking (a :class:`TopK`, an index array, or per-label
    scores: anything else than a ranking is read as scores through :func:`top_k`)."""
    k = check_k(k)
    Y = check_Y(Y_true, what="Y_true")
    R = _as_ranking(ranking, k, Y.shape)
    if R.indices.shape[1] < k:
        raise ValueError(f"{kind}@{k} needs a ranking of at least {k} labels; it has "
                         f"{R.indices.shape[1]}")
    inv = None
    if kind.startswith("ps"):
        inv = (inverse_propensity(Y) if inv_propensity is None
               else _check_inv(inv_propensity, Y.shape[1]))
    return _FROM_TABLE[kind](at_k_table(Y, R, inv), k)


def _as_ranking(ranking: Any, k: int, shape: tuple[int, int]) -> TopK:
    n, L = shape
    if isinstance(ranking, tuple) or (
            not sp.issparse(ranking) and np.issubdtype(np.asarray(ranking).dtype, np.integer)):
        return check_topk(ranking, L, n_rows=n)
    S = check_scores(ranking)
    check_same_shape(np.empty(shape, dtype=bool), S, "Y_true", "scores")
    return top_k(S, k)


def _check_inv(inv: Any, n_labels: int) -> np.ndarray:
    v = np.asarray(inv, dtype=np.float64).ravel()
    if v.shape[0] != n_labels:
        raise ValueError(f"inverse propensities: {v.shape[0]} values for {n_labels} labels")
    if not np.isfinite(v).all() or (v < 0).any():
        raise ValueError("inverse propensities must be finite and non-negative")
    return v


# -- the registered metrics: read the context's ranking (or its scores) -------------------
def _context_table(ctx: EvalContext, k: int, propensity: bool) -> AtKTable:
    """The at-k table of a context, computed once per (depth, propensity) and shared by
    every metric at k (cache key ``"mlw.at_k"``)."""
    depth = max(REGISTERED_K)

    def compute(c: EvalContext) -> TopK:
        if c.topk is not None:
            return c.topk
        if c.scores is None:
            raise ValueError("metrics at k need scores or a top-k ranking")
        return top_k(c.scores, depth)

    ranking = ctx.cached("mlw.at_k.ranking", compute)
    if ranking.indices.shape[1] < k:
        raise ValueError(f"metrics at {k} need a ranking of at least {k} labels; the "
                         f"ranking given has {ranking.indices.shape[1]}")

    def table(c: EvalContext) -> AtKTable:
        inv = None
        if propensity:
            inv = (inverse_propensity(c.Y_true) if c.inv_propensity is None
                   else c.inv_propensity)
        return at_k_table(c.Y_true, ranking, inv)

    return ctx.cached(f"mlw.at_k.table.{propensity}", table)


def registered_at_k(kind: str, k: int) -> Any:
    """The ``compute(ctx)`` of the registered metric ``<kind>_at_<k>``."""
    fn = _FROM_TABLE[kind]
    ps = kind.startswith("ps")

    def compute(ctx: EvalContext) -> float:
        return fn(_context_table(ctx, k, ps), k)

    compute.__name__ = f"{kind}_at_{k}"
    return compute


_DESCRIPTIONS = {
    "precision": "fraction of the top {k} ranked labels that are relevant (P@{k})",
    "recall": "fraction of the true labels found in the top {k} ranked labels",
    "ndcg": "normalised discounted cumulative gain of the top {k} ranked labels",
    "psprecision": "propensity-scored precision at {k} (Jain et al. 2016), normalised",
    "psndcg": "propensity-scored nDCG at {k} (Jain et al. 2016), normalised",
}


def at_k_specs() -> tuple[Any, ...]:
    """The registrations of the metrics at k: ``<kind>_at_<k>`` for every kind and k in
    :data:`REGISTERED_K`, each computable from scores or from a top-k ranking of at
    least k labels alone (``MetricSpec.at_k``)."""
    return tuple(
        MetricSpec(f"{kind}_at_{k}", registered_at_k(kind, k), True, "scores",
                   _DESCRIPTIONS[kind].format(k=k), at_k=k)
        for kind in _FROM_TABLE for k in REGISTERED_K)
