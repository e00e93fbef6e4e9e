"""What the growth of Sec. 5.3.2 builds, fold by fold (the paper's protocol, as
growth_stop_mctbn.py): per fit of `mc` (``--params`` JSON), the trees kept, the reading of
Eq. 10 chosen, the validation curve, the final mixture weights lambda, each tree's
structure (parent per label), how many trees repeat an earlier tree's structure, how many
edges each tree shares with the first, and, along the growth path (``keep_path``), the
weights omega = 1 - P(y | x, M) each new tree was learned on (their effective sample
size as a share of the internal training rows) and the lambdas after each EM.

    nice -n 5 python benchmarks/growth_anatomy_mctbn.py --dataset emotions \\
        --out benchmarks/results_mctbn7/s10_anatomy.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from map_check_mctbn import emit, load_full, protocol_folds

from mlw.metrics import cll_loss, subset_accuracy
from mlw_mctbn import MixtureOfCTBNs, _kernels, _learning

#: per growth of ``mc`` (None outside one): ``seen``, the structures so far
#: (``--distinct``); ``base``, every tree's parameters as first fitted (``--authors-em``)
_GROWTH: dict[str, list[np.ndarray] | None] = {"seen": None, "base": None}


def around_growth(key: str, start) -> None:
    """Wrap ``MixtureOfCTBNs._grow`` so that ``_GROWTH[key]`` is ``start(first)`` (the
    growth's first mixture) during a growth and None outside it."""
    grow = MixtureOfCTBNs._grow

    def _grow(self, design, X, Yd, Yt, tr, val, lam, first, normalised):
        _GROWTH[key] = start(first)
        try:
            return grow(self, design, X, Yd, Yt, tr, val, lam, first, normalised)
        finally:
            _GROWTH[key] = None
    MixtureOfCTBNs._grow = _grow


def _score(W: np.ndarray, parent: np.ndarray) -> float:
    return float(sum(W[p if p >= 0 else i, i] for i, p in enumerate(parent)))


def distinct_structure(learn):
    """``learn_structure`` made to return a structure no earlier tree of the growth has,
    as the authors' released code does (``learn_weighted_structure.m``: the best of the
    per-root maximum trees that is not a duplicate): candidates are the maximum branching
    and, per label r, the maximum branching with r the only root; the best-scoring one
    not already in the mixture (all duplicates: the maximum branching)."""
    def wrapped(design, Yt, s, rows, lam, holdout_fraction, rng, switching=False):
        parent, W, theta = learn(design, Yt, s, rows, lam, holdout_fraction, rng, switching)
        seen = _GROWTH["seen"]
        if seen is None:
            return parent, W, theta
        cands = [parent]
        for r in range(W.shape[0]):
            Wr = W.copy()
            # every label but r (and a constant one, which has no parent) gets a parent
            off = np.array([i != r and (W[:, i] > _learning._NO_EDGE).sum() > 1
                            for i in range(W.shape[0])])
            Wr[off, off] = _learning._NO_EDGE
            cands.append(_kernels.max_branching(Wr))
        fresh = [c for c in cands if not any(np.array_equal(c, q) for q in seen)]
        if fresh:
            parent = max(fresh, key=lambda c: _score(W, c))
        seen.append(parent.copy())
        return parent, W, theta
    return wrapped


def install_distinct() -> None:
    _learning.learn_structure = distinct_structure(_learning.learn_structure)
    around_growth("seen", lambda first: [first.parents[0].copy()])


_FIT_NEW_UNWEIGHTED = False


def install_authors_em() -> None:
    """The growth's EM started as the authors' released code starts it (``train_MC.m``,
    ``learn_weighted_structure.m``, ``learn_output_tree_MT.m``): the new tree's
    factors fitted on uniform weights (omega chooses only its structure), and every EM
    run of the growth started from each tree's parameters as first fitted, with
    lambda = 1/K; the plugin fits the new tree on omega and warm-starts EM from the
    mixture so far. The final refit on all the training data is unchanged."""
    learn, fit, em = _learning.learn_structure, _learning.fit_tree, _learning.em

    def learn_structure(*args, **kwargs):
        global _FIT_NEW_UNWEIGHTED
        out = learn(*args, **kwargs)
        _FIT_NEW_UNWEIGHTED = _GROWTH["base"] is not None  # the next fit_tree: the new tree
        return out

    def fit_tree(design, Yt, parent, s, rows, lam, theta, *rest):
        global _FIT_NEW_UNWEIGHTED
        if not _FIT_NEW_UNWEIGHTED:
            return fit(design, Yt, parent, s, rows, lam, theta, *rest)
        _FIT_NEW_UNWEIGHTED = False
        fit(design, Yt, parent, np.ones(design.n), rows, lam, theta, *rest)
        _GROWTH["base"].append(theta.copy())
        return theta

    def em_(design, X, Y, Yt, mix, rows, *rest, **kwargs):
        base = _GROWTH["base"]
        if base is not None and len(base) == mix.K:
            mix.thetas[:] = [t.copy() for t in base]
            mix.lam = np.full(mix.K, 1.0 / mix.K)
        return em(design, X, Y, Yt, mix, rows, *rest, **kwargs)

    _learning.learn_structure, _learning.fit_tree, _learning.em = learn_structure, fit_tree, em_
    around_growth("base", lambda first: [first.thetas[0].copy()])


def edges(parent: np.ndarray) -> set[tuple[int, int]]:
    return {(int(p), i) for i, p in enumerate(parent) if p >= 0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="emotions")
    ap.add_argument("--folds", default=",".join(str(f) for f in range(10)))
    ap.add_argument("--params", default="{}", help="JSON dict of mc parameters")
    ap.add_argument("--partition-seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--distinct", action="store_true",
                    help="every new tree's structure differs from the earlier ones' "
                         "(the authors' code; not the plugin's behaviour)")
    ap.add_argument("--authors-em", action="store_true",
                    help="start the growth's EM as the authors' code does (not the "
                         "plugin's behaviour)")
    a = ap.parse_args()
    if a.distinct:
        install_distinct()
    if a.authors_em:
        install_authors_em()
    params = json.loads(a.params)
    ds = load_full(a.dataset)
    for f, tr, te in protocol_folds(ds, a.folds, a.partition_seed):
        t0, w0 = time.process_time(), time.time()
        m = MixtureOfCTBNs(top_label=False, keep_path=True, **params).fit(ds.X[tr], ds.Y[tr])
        Xtr, Ytr = ds.X[tr], np.asarray(ds.Y[tr])
        itr, _ = m._split(len(tr))  # the internal training rows of the growth
        stages = m.staged_models()
        ess, path_lam = [], []
        for st in stages:
            P = np.exp(st.log_proba_of(Xtr[itr], Ytr[itr]))
            w = np.clip(1.0 - P, 0.0, None)
            ess.append(float(w.sum() ** 2 / (w ** 2).sum() / len(itr)) if w.sum() > 0 else 0.0)
            path_lam.append([round(float(v), 3) for v in st.mixture_weights_])
        par = [tuple(int(v) for v in p) for p in m.parents_]
        path_par = [tuple(int(v) for v in p) for p in stages[-1].parents_]
        first = edges(np.array(par[0]))
        P_te = m.predict(ds.X[te])
        emit(a.out, dict(
            dataset=a.dataset, params=params, distinct=a.distinct, authors_em=a.authors_em,
            partition_seed=a.partition_seed, fold=f,
            n_trees=m.n_trees_, em_weights=m.em_weights_, C=m.C_,
            ema=subset_accuracy(ds.Y[te], P_te),
            cll=cll_loss(ds.Y[te], m.log_proba_of(ds.X[te], ds.Y[te])),
            curve=[round(v, 4) for v in m.validation_curve_],
            lam=[round(float(v), 3) for v in m.mixture_weights_],
            parents=par, n_distinct=len(set(par)),
            path_trees=len(path_par), path_distinct=len(set(path_par)),
            shared_with_first=[len(edges(np.array(p)) & first) for p in par],
            n_edges=[len(edges(np.array(p))) for p in par],
            omega_ess=[round(v, 3) for v in ess], path_lam=path_lam), t0, w0)


if __name__ == "__main__":
    main()
