"""A reading of Sec. 6.1 of Hong et al. (CIKM 2014), "choose their regularization
parameters by cross validation", per label: C_i for label i by 3-fold CV (on the
fold's training rows) of the logistic regression P(y_i | x), scored by its
log-likelihood or its accuracy at 0.5; then one CTBN whose factors for Y_i (edges and
self-loop) all use C_i, fitted on the fold's training rows and scored on the test
fold (EMA of the MAP, CLL-loss sum). Folds as examples/papers/mctbn.toml (train and
test files joined, 10 folds by iterative stratification, seed 0). One JSON line per
(dataset, fold, criterion).

    nice -n 5 python benchmarks/label_c_mctbn.py --dataset enron --folds 0 \
        --out benchmarks/results/label_c_mctbn.jsonl
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from map_check_mctbn import emit, load_full, protocol_folds

from mlw_mctbn import CTBN, _learning, _logistic
from mlw_mctbn._learning import Mixture
from mlw_mctbn.model import _dense_labels

GRID = (0.01, 0.1, 1.0, 10.0, 100.0)


class LabelCTBN(CTBN):
    """A CTBN whose label i is regularised by ``1 / label_C[i]`` (structure and fit as
    :class:`CTBN` with a given C)."""

    label_C: np.ndarray

    def _fit(self, X, Y) -> None:
        self._check_common()
        Yd = _dense_labels(Y)
        Yt = np.ascontiguousarray(Yd.T, dtype=np.float64)
        design = _logistic.Design.from_matrix(X)
        rows = np.arange(design.n, dtype=np.int64)
        ones = np.ones(design.n)
        lam = 1.0 / self.label_C
        rng = np.random.default_rng(self._seed() + 1)
        parent, _, theta = _learning.learn_structure(design, Yt, ones, rows, lam,
                                                     float(self.holdout_fraction), rng)
        _learning.fit_tree(design, Yt, parent, ones, rows, lam, theta)
        self.C_, self.C_search_ = float("nan"), {}
        self._store(design, Mixture([parent], [theta], np.ones(1)))


def label_scores(X, Y: np.ndarray, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """(d, len(GRID)) summed validation log-likelihood and correct 0.5-cut decisions of
    P(y_i | x) over a seeded k-fold split of the rows."""
    design = _logistic.Design.from_matrix(X)
    Yt = np.ascontiguousarray(Y.T, dtype=np.float64)
    d, n = Yt.shape
    fold = np.random.default_rng(0).permutation(n) % k
    ones, all_one = np.ones(n), np.ones(n)
    ll, acc = np.zeros((d, len(GRID))), np.zeros((d, len(GRID)))
    for f in range(k):
        tr = np.flatnonzero(fold != f).astype(np.int64)
        va = np.flatnonzero(fold == f).astype(np.int64)
        for i in range(d):
            theta = _logistic.new_theta(design.m)
            for c, C in enumerate(GRID):  # warm-started from the stronger penalty
                _logistic.fit(design, Yt[i], ones, None, tr, 1.0 / C, theta)
                lp1 = np.array([_logistic.log_lik(design, theta, all_one, ones, None,
                                                  va[r:r + 1]) for r in range(va.size)])
                y = Yt[i][va] == 1
                ll[i, c] += float(np.where(y, lp1, np.log(-np.expm1(np.minimum(lp1, -1e-15))))
                                  .sum())
                acc[i, c] += float(((lp1 >= np.log(0.5)) == y).sum())
    return ll, acc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="emotions")
    ap.add_argument("--folds", default="0")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    ds = load_full(a.dataset)
    for f, tr, te in protocol_folds(ds, a.folds):
        Ytr, Yte = np.asarray(ds.Y[tr]), np.asarray(ds.Y[te])
        t0, w0 = time.process_time(), time.time()
        ll, acc = label_scores(ds.X[tr], Ytr)
        # accuracy ties (a rare label predicted 0 at every C) go to the better likelihood
        for name, score in (("loglik", ll), ("accuracy", acc + 1e-9 * ll / len(tr))):
            label_C = np.array([GRID[int(np.argmax(s))] for s in score])
            m = LabelCTBN(top_label=False)
            m.label_C = label_C
            m.fit(ds.X[tr], Ytr)
            P = m.predict(ds.X[te])
            emit(a.out, dict(dataset=a.dataset, fold=f, criterion=name,
                             labels_per_C={str(c): int((label_C == c).sum()) for c in GRID},
                             test_ema=float((P == Yte).all(axis=1).mean()),
                             test_cll=float(-m.log_proba_of(ds.X[te], Yte).sum())), t0, w0)

if __name__ == "__main__":
    main()
