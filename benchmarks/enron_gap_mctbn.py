"""Is enron's common EMA gap (every learner below Hong et al., CIKM 2014, Table 2) in the
logistic-regression protocol, the features or the folds? BR (one L2 logistic regression
per label, 0.5 cut; no label dependences, so no reading of the mixture enters) on the
paper protocol's data (the Mulan train and test files joined), per reading:

- ``lbfgs_cC``: scikit-learn's lbfgs, intercept not penalised (as mlw's BR and the
  plugin's solver), one C for every label;
- ``lib_cC``: liblinear with a bias feature of value 1 (``-s 0 -B 1``), so the bias
  is penalised like any weight, one C;
- ``lib_cv``: the authors' released code (charmgil/M-CTBN, ``common/LR_train.m`` and
  ``choose_LR_cost.m``): liblinear ``-s 0 -B 1``, C chosen per label by 3-fold CV of the
  validation log-likelihood over (0.001, 0.01, 0.1, 1, 10, 100);
- a ``_tfidf``, ``_l2`` (rows L2-normalised) or ``_std`` (columns scaled to unit
  variance) suffix transforms enron's 0/1 word features first (fitted on the training
  rows).

Folds: ``iterstrat`` (the protocol's: iterative stratification, seed 0), ``label1``
(stratified on the first label only, as the authors' demo's ``cvpartition(Y(:,1))``),
``random``; ``--seed`` for the last two. Per fold: EMA, CLL-loss (sum of -log P(y|x)),
rate of empty predictions, micro F1 and macro F1 as mlw computes them, and the macro F1
of the authors' evaluation code (charmgil/CTBN ``auxiliary/getMeasuresMLC.m``: the F1
of the macro-averaged precision and recall, a label never predicted having precision 1
and a label absent from the fold recall 1). One JSON line per (reading, fold).

    nice -n 5 python benchmarks/enron_gap_mctbn.py --readings lib_cv,lbfgs_c0.1 \
        --folds 0,1 --out benchmarks/results/enron_gap_mctbn.jsonl
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from map_check_mctbn import emit, load_full
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.preprocessing import StandardScaler, normalize

import mlw

GRID = (0.001, 0.01, 0.1, 1.0, 10.0, 100.0)


def transform(reading: str, A, B):
    if reading.endswith("_tfidf"):
        t = TfidfTransformer().fit(A)
        return t.transform(A), t.transform(B)
    if reading.endswith("_l2"):
        return normalize(A), normalize(B)
    if reading.endswith("_std"):
        t = StandardScaler(with_mean=False).fit(A)
        return t.transform(A), t.transform(B)
    return A, B


def proba(reading: str, C: float, X, y: np.ndarray, Xt) -> np.ndarray:
    if y.min() == y.max():  # as the plugin: the Laplace-smoothed prior
        return np.full(Xt.shape[0], (y.sum() + 1.0) / (y.shape[0] + 2.0))
    lr = LogisticRegression(C=C, solver="liblinear") if reading.startswith("lib") \
        else LogisticRegression(C=C, max_iter=1000)
    return lr.fit(X, y).predict_proba(Xt)[:, 1]


def log_lik(P: np.ndarray, Y: np.ndarray) -> np.ndarray:
    P = np.clip(P, 1e-12, 1 - 1e-12)
    return Y * np.log(P) + (1 - Y) * np.log1p(-P)


def label_C(reading: str, X, y: np.ndarray) -> float:
    """The authors' choose_LR_cost: 3-fold CV, the best mean validation log-likelihood."""
    folds = list(KFold(3, shuffle=True, random_state=0).split(np.zeros(y.shape[0])))
    scores = [sum(log_lik(proba(reading, C, X[a], y[a], X[b]), y[b]).sum() for a, b in folds)
              for C in GRID]
    return GRID[int(np.argmax(scores))]


def authors_macro_f1(Y: np.ndarray, P: np.ndarray) -> float:
    tp = (Y * P).sum(0)
    prec = np.where(P.sum(0) > 0, tp / np.maximum(P.sum(0), 1), 1.0)
    rec = np.where(Y.sum(0) > 0, tp / np.maximum(Y.sum(0), 1), 1.0)
    mp, mr = prec.mean(), rec.mean()
    return 0.0 if mp + mr == 0 else 2 * mp * mr / (mp + mr)


def fold_rows(Y: np.ndarray, scheme: str, seed: int):
    if scheme == "iterstrat":
        f = mlw.iterative_stratification(Y, 10, seed=seed)
        return [(np.flatnonzero(f != k), np.flatnonzero(f == k)) for k in range(10)]
    if scheme == "label1":
        return list(StratifiedKFold(10, shuffle=True, random_state=seed).split(Y, Y[:, 0]))
    return list(KFold(10, shuffle=True, random_state=seed).split(Y))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readings", default="lib_cv")
    ap.add_argument("--folds", default=",".join(str(f) for f in range(10)))
    ap.add_argument("--scheme", default="iterstrat", choices=("iterstrat", "label1", "random"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    ds = load_full("enron")
    Yall = ds.Y.astype(np.float64)
    rows = fold_rows(ds.Y, a.scheme, a.seed)
    for f in (int(x) for x in a.folds.split(",")):
        tr, te = rows[f]
        for reading in a.readings.split(","):
            t0, w0 = time.process_time(), time.time()
            Xtr, Xte = transform(reading, ds.X[tr], ds.X[te])
            Ytr, Yte = Yall[tr], Yall[te]
            base = reading.split("_")[0] if reading.startswith("lbfgs") else "lib"
            P, Cs = np.zeros(Yte.shape), []
            for j in range(Ytr.shape[1]):
                if "_cv" in reading:
                    C = label_C(reading, Xtr, Ytr[:, j])
                else:
                    C = float(reading.split("_c")[1].split("_")[0])
                Cs.append(C)
                P[:, j] = proba(base, C, Xtr, Ytr[:, j], Xte)
            Yp = (P >= 0.5).astype(np.float64)
            emit(a.out, dict(reading=reading, scheme=a.scheme, seed=a.seed, fold=f,
                             ema=float((Yp == Yte).all(1).mean()),
                             cll=float(-log_lik(P, Yte).sum()),
                             empty=float((Yp.sum(1) == 0).mean()),
                             f1_micro=float(mlw.metrics.f1_micro(Yte, Yp)),
                             f1_macro=float(mlw.metrics.f1_macro(Yte, Yp)),
                             f1_macro_authors=authors_macro_f1(Yte, Yp),
                             Cs={str(c): Cs.count(c) for c in GRID if Cs.count(c)}), t0, w0)


if __name__ == "__main__":
    main()
