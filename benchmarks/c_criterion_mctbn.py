"""Which C would each reading of "regularization parameters chosen by cross validation"
(Hong et al., CIKM 2014, Sec. 6.1) pick for a single CTBN, and what does that C give on
the test fold? Per fold of the paper protocol (examples/papers/mctbn.toml: the train and
test files joined, 10 folds by iterative stratification, seed 0) and per C of the grid:
a `ctbn` with that fixed C fitted on the internal training part of the fold's training
data (the learner's own 80/20 split, seed 0) and scored on the internal validation part
(mean log P(y|x), exact match of the MAP, per-label accuracy of the MAP); and a `ctbn`
with that C fitted on all the fold's training data and scored on the test fold (EMA,
CLL-loss sum). One JSON line per (dataset, fold, C), appended as it finishes.

    nice -n 5 python benchmarks/c_criterion_mctbn.py --dataset enron --folds 0,1 \
        --out benchmarks/results/c_criterion_mctbn.jsonl
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from map_check_mctbn import emit, load_full, protocol_folds

from mlw_mctbn import CTBN

GRID = (0.01, 0.1, 1.0, 10.0, 100.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="emotions")
    ap.add_argument("--folds", default="0")
    ap.add_argument("--Cs", default=",".join(str(c) for c in GRID))
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    ds = load_full(a.dataset)
    for f, tr_rows, te_rows in protocol_folds(ds, a.folds):
        Xtr, Ytr, Xte, Yte = ds.X[tr_rows], ds.Y[tr_rows], ds.X[te_rows], ds.Y[te_rows]
        itr, ival = CTBN()._split(len(tr_rows))  # the learner's own internal split
        for C in (float(c) for c in a.Cs.split(",")):
            t0, w0 = time.process_time(), time.time()
            m = CTBN(C=C, top_label=False).fit(Xtr[itr], Ytr[itr])
            P = m.predict(Xtr[ival])
            val_ll = float(m.log_proba_of(Xtr[ival], Ytr[ival]).mean())
            val_ema = float((P == Ytr[ival]).all(axis=1).mean())
            val_acc = float((P == Ytr[ival]).mean())
            m = CTBN(C=C, top_label=False).fit(Xtr, Ytr)
            P = m.predict(Xte)
            emit(a.out, dict(dataset=a.dataset, fold=f, C=C, val_loglik=val_ll,
                             val_ema=val_ema, val_label_acc=val_acc,
                             test_ema=float((P == Yte).all(axis=1).mean()),
                             test_cll=float(-m.log_proba_of(Xte, Yte).sum())), t0, w0)

if __name__ == "__main__":
    main()
