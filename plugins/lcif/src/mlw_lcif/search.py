"""Hyper-parameter selection of the LCIF learners by k-fold cross-validation, with
the paper's caching: every neighbour list is computed once, at the largest k, and
the smaller k reuse its prefix.

How the caching stays exact across folds: one leave-one-out neighbour list of every
training instance is computed over the whole training set, with more neighbours than
the largest k (``2 k_max + 10``). For a fold, dropping the held-out instances from
these lists gives exactly the neighbours among the fold's training part, both for the
held-out instances (the queries) and for the training part scored leave-one-out (for
the threshold). In the rare case a list runs out after dropping, that row is
recomputed exactly. The same holds for LCIF2's sim_ALL lists (self included). The
feature→label neighbourhoods are recomputed per fold (a cheap sparse pass).

For each (k_ins, k_feat) the instance and feature confidences are dense matrices; a
parallel numba kernel then scores every lambda: cardinality-matching threshold on
the training part (the same search as ``mlw.thresholds.CardinalityMatching``, with
its top-label rule resolved on the fold's training part), metric on the held-out part.

Long searches (IMDB: ~70 CPU-s a fold) can be checkpointed: with ``checkpoint`` (a
directory) every fold's metric sums are saved as the fold finishes, under a digest of
the data, the grids and the options, and a search with the same arguments loads them
instead of recomputing the fold; ``only_folds`` scores a subset of the folds (the mean
over those), e.g. the folds an interrupted run finished.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.neighbors import NeighborIndex
from mlw.thresholds import resolve_top_label
from mlw.validation import check_param
from mlw_lcif import _kernels as K
from mlw_lcif import _prep as P

METRICS = {"accuracy": 0, "f1_example": 1, "f1_micro": 2, "f1_macro": 3,
           "hamming_loss": 4, "subset_accuracy": 5}


def _threshold_grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All thresholds two_pass_search can visit (0, 0.01, ..., 1 as it rounds them),
    the coarse indices, and for each coarse best the fine indices (-1 = outside)."""
    T = np.round(np.arange(101) * 0.01, 10)
    coarse_t = np.round(np.arange(11) * 0.1, 10)
    coarse = np.array([int(np.flatnonzero(T == t)[0]) for t in coarse_t], dtype=np.int64)
    fine = np.full((101, 11), -1, dtype=np.int64)
    for m in coarse:
        ts = np.round(T[m] + np.arange(-5, 6) * 0.01, 10)
        for c, t in enumerate(ts):
            if 0 <= t <= 1:
                fine[m, c] = int(np.flatnonzero(T == t)[0])
    return T, coarse, fine


def _folds(Y: sp.csr_matrix, n_folds: int, seed: int) -> np.ndarray:
    """The fold of every training row: multi-label iterative stratification (the
    core's ``IterativeStratifiedKFold``), so every fold sees each label about as often
    as the others; rare labels are not left out of a fold's training part by chance."""
    from mlw import IterativeStratifiedKFold

    return IterativeStratifiedKFold(int(n_folds), seed=seed).folds(Y)


def _fold_lists(idx: np.ndarray, sim: np.ndarray, drop: np.ndarray, k: int,
                M: sp.csr_matrix, index: NeighborIndex,
                exclude_self: bool) -> tuple[np.ndarray, np.ndarray]:
    """Neighbours among the rows not in ``drop``; rows whose cached list ran out are
    recomputed exactly."""
    fi, fs, short = K.filter_neighbours(idx, sim, drop, k)
    allowed = (1 - drop).astype(np.uint8)
    for r in np.flatnonzero(short):
        mask = allowed.copy()
        if exclude_self:
            mask[r] = 0
        i1, s1 = index.query(M[r:r + 1], k=k, allowed=mask)
        fi[r], fs[r] = i1[0], s1[0]
    return fi, fs


def search_hyperparameters(Xs: sp.csr_matrix, Y: sp.csr_matrix, *, kind: str = "lcif",
                           metric: str = "accuracy", n_folds: int = 10, seed: int = 0,
                           k_grid: Sequence[int] = tuple(range(1, 30, 2)),  # K_GRID
                           lam_grid: Sequence[float] | None = None,
                           top_label: bool | str = "auto",
                           feature_votes: str = "neighbour_mean",
                           checkpoint: str | os.PathLike[str] | None = None,
                           only_folds: Sequence[int] | None = None) -> dict[str, Any]:
    """Choose (k_ins, k_feat, lam) by ``n_folds``-fold cross-validation.

    ``Xs`` are scaled features (CSR), ``Y`` the CSR label matrix. Returns a dict with
    the best ``k_ins``, ``k_feat``, ``lam``, its ``score`` (mean over folds; for
    ``hamming_loss`` the negated loss), the grids and the full ``scores`` array of shape
    (len(k_ins grid), len(k_feat grid), len(lam grid)).

    ``checkpoint``: a directory where each fold's metric sums are saved when the fold
    finishes and loaded from by a search with the same data, grids and options.
    ``only_folds``: score only these folds of the ``n_folds`` (the mean over them).
    """
    check_param("cv_metric", metric, str, choices=tuple(METRICS))
    n, L = Y.shape
    check_param("cv", n_folds, int, low=2, high=n)
    lam_values = np.round(np.arange(11) * 0.1, 1) if lam_grid is None \
        else np.asarray(lam_grid, dtype=np.float64)
    uses_ins = kind != "feature_knn"
    uses_fl = kind != "instance_knn"
    fold = _folds(Y, int(n_folds), seed)
    run_folds = list(range(int(n_folds)))
    if only_folds is not None:
        run_folds = sorted({int(f) for f in only_folds})
        if not run_folds or run_folds[0] < 0 or run_folds[-1] >= int(n_folds):
            raise ValueError(f"only_folds must name folds in 0..{int(n_folds) - 1}, "
                             f"got {list(only_folds)}")
    n_tr_min = n - int(np.bincount(fold).max())
    kins = sorted({int(k) for k in k_grid if k <= n_tr_min}) if uses_ins else [1]
    kfeat = sorted({min(int(k), L) for k in k_grid}) if uses_fl else [1]
    if not kins:
        raise ValueError(f"every k in the grid is larger than a fold's training part "
                         f"({n_tr_min} instances)")
    lams = np.asarray(lam_values if kind in ("lcif", "lcif2")
                      else ([1.0] if kind == "instance_knn" else [0.0]), dtype=np.float64)
    Yd = Y.toarray().astype(np.uint8)
    Yf = Y.astype(np.float64)
    T, coarse, fine = _threshold_grid()
    kmax, kfmax = max(kins), max(kfeat)
    saved = {f: _checkpoint_file(checkpoint, f, Xs, Y, (
        kind, int(n_folds), seed, kins, kfeat, lams.tolist(), top_label, feature_votes))
        for f in run_folds} if checkpoint is not None else {}
    todo = [f for f in run_folds if f not in saved or not saved[f].exists()]
    big = min(n - 1, 2 * kmax + 10)
    index = NeighborIndex(Xs)
    if uses_ins and todo:
        nb_idx, nb_sim = index.query(k=max(big, 1), exclude_self=True)
    if kind == "lcif2" and todo:
        Z = sim_all = P.sim_all_matrix(Xs, Y)
        zindex = NeighborIndex(Z)
        z_idx, z_sim = zindex.query(k=min(n, 2 * kmax + 10), exclude_self=False)
    dummy_i = np.full((n, 1), -1, dtype=np.int32)
    dummy_s = np.zeros((n, 1))
    no_fl_i = np.full((Xs.shape[1], 1), -1, dtype=np.int32)
    total = np.zeros((len(kins), len(kfeat), len(lams), len(METRICS)))
    for f in run_folds:
        if f not in todo:
            total += np.load(saved[f])
            continue
        is_val = (fold == f).astype(np.uint8)
        tr = np.flatnonzero(is_val == 0)
        A = np.zeros((len(kins), n, L))
        if uses_ins:
            fi, fs = _fold_lists(nb_idx, nb_sim, is_val, kmax, Xs, index, True)
            if kind == "lcif2":
                zi, zs = _fold_lists(z_idx, z_sim, is_val, kmax, sim_all, zindex, False)
            for a, k in enumerate(kins):
                votes = Yf
                if kind == "lcif2":
                    votes = P.second_order_scores(Xs, Y, k, nbr=(zi[:, :k], zs[:, :k]))
                A[a] = P.score(fi[:, :k], fs[:, :k], k, votes, sp.csr_matrix((n, 1)),
                               no_fl_i[:1], no_fl_i[:1].astype(np.float64), 0, None, 1.0,
                               L).toarray()
        B = np.zeros((len(kfeat), n, L))
        if uses_fl:
            F = P.feature_label_similarities(Xs[tr], Y[tr])
            fl_i, fl_s = P.top_labels(F, kfmax)
            votes_of = F if feature_votes == "all" else None
            for b, k in enumerate(kfeat):
                B[b] = P.score(dummy_i, dummy_s, 0, Yf, Xs, fl_i[:, :k], fl_s[:, :k], k,
                               votes_of, 0.0, L,
                               mean=feature_votes == "neighbour_mean").toarray()
        target = float(Yd[tr].sum()) / max(tr.size, 1)
        # the top-label rule as the learner's strategy decides it on this training part
        rule = resolve_top_label(top_label, Yd[tr])
        part = K.grid_evaluate(A, B, lams, is_val, Yd, T, coarse, fine, target, rule)
        if f in saved:
            tmp = saved[f].with_suffix(".tmp.npy")
            np.save(tmp, part)
            os.replace(tmp, saved[f])
        total += part
    total /= len(run_folds)
    best_by_metric = {}
    for name, code in METRICS.items():
        sc = total[..., code]
        ia, ib, iq = (int(v) for v in np.unravel_index(int(np.argmax(sc)), sc.shape))
        best_by_metric[name] = {"k_ins": int(kins[ia]), "k_feat": int(kfeat[ib]),
                                "lam": float(lams[iq]), "score": float(sc[ia, ib, iq])}
    best = best_by_metric[metric]
    return {**best, "metric": metric, "n_folds": int(n_folds), "folds": run_folds,
            "k_ins_grid": list(kins), "k_feat_grid": list(kfeat),
            "lam_grid": [float(v) for v in lams], "scores": total[..., METRICS[metric]],
            "all_scores": total, "best_by_metric": best_by_metric}


def _checkpoint_file(directory: str | os.PathLike[str], fold: int, Xs: sp.csr_matrix,
                     Y: sp.csr_matrix, options: tuple[Any, ...]) -> Path:
    """Where fold ``fold``'s metric sums are kept: named by a digest of the data, the
    grids and the options, so a search with other arguments never reads them."""
    h = hashlib.sha1()
    for a in (Xs.indptr, Xs.indices, Xs.data, Y.indptr, Y.indices):
        h.update(np.ascontiguousarray(a).tobytes())
    h.update(repr((Xs.shape, Y.shape, options)).encode())
    Path(directory).mkdir(parents=True, exist_ok=True)
    return Path(directory) / f"lcif-cv-{h.hexdigest()[:20]}-fold{int(fold)}.npy"


#: The paper's grid of k (Section IV-D1: 1 to 30 in steps of 2) and its extension to 60,
#: searched when the best k of the first grid is its largest.
K_GRID: tuple[int, ...] = tuple(range(1, 30, 2))
K_GRID_EXTENDED: tuple[int, ...] = tuple(range(1, 60, 2))


def _at_edge(res: dict[str, Any], k_grid: Sequence[int]) -> bool:
    """Whether the selected k_ins or k_feat is the largest k of the grid (and was not
    capped: k_feat at the number of labels, k_ins at a fold's training part)."""
    top = max(k_grid)
    return bool((res["k_ins"] == max(res["k_ins_grid"]) == top and len(res["k_ins_grid"]) > 1)
                or (res["k_feat"] == max(res["k_feat_grid"]) == top
                    and len(res["k_feat_grid"]) > 1))


def search_with_feature_norm(X: Any, Y: sp.csr_matrix, *,
                             norms: Sequence[str] = ("max", "l2"), extend_k: bool = True,
                             **kwargs: Any) -> dict[str, Any]:
    """:func:`search_hyperparameters` once per feature normalisation (raw ``X``, each
    normalisation fitted on the whole training data, the same folds), keeping the one
    whose best configuration scores highest for the metric (a tie keeps the first).

    With ``extend_k`` (the paper's protocol, Section IV-D1), when the winner's k_ins or
    k_feat is the grid's largest (29), the search is repeated on k = 1..59.

    Returns the winner's result with ``feature_norm`` added, ``best_by_metric`` taken
    over all normalisations (each entry with its ``feature_norm``), every
    normalisation's own result in ``by_feature_norm``, and ``k_grid_extended``.
    """
    from mlw_lcif._scaling import feature_scaler

    if not norms:
        raise ValueError("norms must name at least one feature normalisation")
    scaled = {norm: feature_scaler(norm).fit(X).transform(X) for norm in norms}
    k_grid = tuple(kwargs.pop("k_grid", K_GRID))
    extended = False
    while True:
        results = {norm: search_hyperparameters(scaled[norm], Y, k_grid=k_grid, **kwargs)
                   for norm in norms}
        best = max(norms, key=lambda nm: results[nm]["score"])
        if not (extend_k and not extended and k_grid == K_GRID
                and _at_edge(results[best], k_grid)):
            break
        k_grid, extended = K_GRID_EXTENDED, True
    best_by_metric = {}
    for name in METRICS:
        nm = max(norms, key=lambda v: results[v]["best_by_metric"][name]["score"])
        best_by_metric[name] = {**results[nm]["best_by_metric"][name], "feature_norm": nm}
    return {**results[best], "feature_norm": best, "best_by_metric": best_by_metric,
            "by_feature_norm": results, "k_grid_extended": extended}


#: The grid of the search for a metric at k (:func:`search_ranking`): the
#: neighbourhood sizes, reaching beyond the paper's 29 since the top of a ranking
#: profits from more neighbours; the vote sharpness; the feature neighbourhoods.
RANK_K_INS: tuple[int, ...] = (5, 10, 20, 40, 80, 160)
RANK_SIM_POWER: tuple[float, ...] = (1.0, 2.0, 4.0)
RANK_K_FEAT: tuple[int, ...] = (5, 15, 29)


def search_ranking(X: Any, Y: sp.csr_matrix, *, norms: Sequence[str], kind: str,
                   metric: str, n_folds: int, seed: int,
                   feature_votes: str = "neighbour_mean") -> dict[str, Any]:
    """Choose ``feature_norm``, ``k_ins``, ``sim_power``, ``k_feat`` and ``lam`` for a
    metric at k (``precision_at_1``, ``ndcg_at_3``, ...) by ``n_folds``-fold
    cross-validation: the paper's selection by CV, for the measure of a ranking (no
    threshold is involved). For each fold and normalisation the held-out rows' k
    nearest training rows are found once, at the largest k; conf_INS of every smaller
    k and power is read from that list, conf_FL computed once per k_feat, and every
    lam on the paper's grid scored from the two. Returns the best parameters, its
    ``score`` (mean over folds) and the whole ``scores`` table by parameter tuple.
    """
    from mlw.metrics.at_k import at_k_table, measure_at_k, top_k
    from mlw_lcif._scaling import feature_scaler

    try:
        measure, at = measure_at_k(metric)
    except ValueError as exc:
        raise ValueError(f"cv_metric {exc}") from None
    n, L = Y.shape
    fold = _folds(Y, int(n_folds), seed)
    uses_ins, uses_fl = kind != "feature_knn", kind != "instance_knn"
    lams = (np.round(np.arange(11) * 0.1, 1) if kind in ("lcif", "lcif2")
            else np.array([1.0 if uses_ins else 0.0]))
    n_tr_min = n - int(np.bincount(fold).max())
    kins = [k for k in RANK_K_INS if k <= n_tr_min] or [n_tr_min] if uses_ins else [1]
    pows = list(RANK_SIM_POWER) if uses_ins else [1.0]
    kfeat = sorted({min(k, L) for k in RANK_K_FEAT}) if uses_fl else [1]
    Yf = Y.astype(np.float64)
    inv = None
    if metric.startswith("ps"):
        from mlw.metrics.at_k import inverse_propensity

        inv = inverse_propensity(Y)
    totals: dict[tuple[Any, ...], float] = {}
    for f in range(int(n_folds)):
        va, tr = np.flatnonzero(fold == f), np.flatnonzero(fold != f)
        for norm in norms:
            scaler = feature_scaler(norm).fit(X[tr])
            Xtr, Xva = scaler.transform(X[tr]), scaler.transform(X[va])
            A = {(1, 1.0): np.zeros((va.size, L))}
            if uses_ins:
                idx, sim = NeighborIndex(Xtr).query(Xva, k=max(kins))
                for k in kins:
                    for p in pows:
                        W = np.where(idx[:, :k] >= 0, sim[:, :k] ** p, 0.0)
                        rows = np.repeat(np.arange(va.size), k)
                        cols = np.maximum(idx[:, :k], 0).ravel()
                        M = sp.csr_matrix((W.ravel(), (rows, cols)), shape=(va.size, tr.size))
                        den = np.maximum(W.sum(axis=1, keepdims=True), 1e-300)
                        A[(k, p)] = (M @ Yf[tr]).toarray() / den
                A.pop((1, 1.0), None)
            B = {1: np.zeros((va.size, L))}
            if uses_fl:
                F = P.feature_label_similarities(Xtr, Y[tr])
                fl_i, fl_s = P.top_labels(F, max(kfeat))
                dummy_i = np.full((va.size, 1), -1, dtype=np.int32)
                for kf in kfeat:
                    B[kf] = P.score(dummy_i, np.zeros((va.size, 1)), 0, Yf, Xva,
                                    fl_i[:, :kf], fl_s[:, :kf], kf,
                                    F if feature_votes == "all" else None, 0.0, L,
                                    mean=feature_votes == "neighbour_mean").toarray()
            Yva = Y[va]
            for (k, p), a in A.items():
                for kf, b in B.items():
                    for lam in lams:
                        ranking = top_k(lam * a + (1.0 - lam) * b, at)
                        key = (norm, k, p, kf, float(lam))
                        value = measure(at_k_table(Yva, ranking, inv), at)
                        totals[key] = totals.get(key, 0.0) + value / n_folds
    best = max(totals, key=lambda key: (totals[key], -key[1]))
    norm, k, p, kf, lam = best
    return {"feature_norm": norm, "k_ins": int(k), "sim_power": float(p),
            "k_feat": int(kf), "lam": float(lam), "score": totals[best],
            "metric": metric, "n_folds": int(n_folds), "scores": totals}
