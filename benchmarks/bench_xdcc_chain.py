"""Chain-length curves of XDCC (the paper's Figure 2) from staged predictions.

    python benchmarks/bench_xdcc_chain.py [--datasets emotions,scene] [--max-length L]
        [--n-estimators 50] [--max-depth 4] [--learning-rate 0.3] [--split sum_gain]
        [--propagation in_sample|out_of_fold] [--propagation-folds 5]

Fits one XDCC per dataset with chain length ``--max-length`` (default: the number of
labels) and prints, after every round r, the test Hamming accuracy, subset accuracy
and example F1 of XDCC-std and XDCC-cum (the chain's own decisions, one pass of the
chain), with the training time (process CPU seconds) of the first r rounds
(``round_seconds_``).  Since round r's booster only depends on rounds < r, the prefix of
length r of one long chain *is* the chain of length r.

Where XDCC-cum's Hamming accuracy goes: ``cum flips test`` counts the test label
decisions of XDCC-cum that round r changes from round r-1's, as ``+a/-b`` (a changed
to the true value, b away from it; HA moves by (a - b) / (n L); then how many of them
went from 0 to 1: a later round's probability reaching 0.5 for a label not propagated,
Eq. 9's maximum); ``cum HA train`` is
XDCC-cum's Hamming accuracy on the training rows after r rounds, from the chain's pass
over them, which is the training propagation itself for ``--propagation in_sample``
(printed only then).  After each table: the share of propagated label values that are
right on the training rows (the training propagation) and on the test rows.
``--propagation out_of_fold`` trains with out-of-fold propagation
(``XDCC(propagation="out_of_fold")``, an extension, not the paper's method).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from _shared import MULAN

import mlw

ROOT = Path(__file__).resolve().parents[1]
MEASURES = ["hamming_loss", "subset_accuracy", "f1_example"]


def _propagated_accuracy(state, Y: np.ndarray) -> float:
    f = state.frozen == 1
    return float(((state.values == 1.0) == (Y == 1))[f].mean())


def _scores(Y: np.ndarray, P: np.ndarray) -> str:
    r = mlw.evaluate(Y, P, metrics=MEASURES)
    return f"{1 - r['hamming_loss']:.4f} {r['subset_accuracy']:.4f} {r['f1_example']:.4f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="emotions,scene")
    ap.add_argument("--max-length", type=int, default=None)
    ap.add_argument("--n-estimators", type=int, default=50)
    ap.add_argument("--max-depth", type=int, default=4)
    ap.add_argument("--learning-rate", type=float, default=0.3)
    ap.add_argument("--split", default="sum_gain")
    ap.add_argument("--propagation", choices=["in_sample", "out_of_fold"],
                    default="in_sample")
    ap.add_argument("--propagation-folds", type=int, default=5)
    args = ap.parse_args()
    from mlw.validation import dense_labels
    from mlw_xdcc import XDCC
    from mlw_xdcc.xdcc import default_chain_length

    in_sample = args.propagation == "in_sample"
    for name in [d for d in args.datasets.split(",") if d]:
        tr = mlw.load_dataset(MULAN / f"{name}-train.arff")
        te = mlw.load_dataset(MULAN / f"{name}-test.arff")
        Ytr, Yte = dense_labels(tr.Y), dense_labels(te.Y)
        L = Ytr.shape[1]
        c = min(L, args.max_length or L)
        t = time.process_time()
        model = XDCC(chain_length=c, n_estimators=args.n_estimators, max_depth=args.max_depth,
                     learning_rate=args.learning_rate, split=args.split,
                     propagation=args.propagation, propagation_folds=args.propagation_folds,
                     threshold=None).fit(tr.X, Ytr)   # the chain's own decision
        fit = time.process_time() - t
        print(f"== {name}: L={L}, cardinality {Ytr.sum(1).mean():.2f}, chain length {c}, "
              f"fit {fit:.1f}s CPU (default length: "
              f"{default_chain_length(Ytr.sum(1).mean(), L)}); {args.n_estimators} trees, "
              f"depth {args.max_depth}, eta {args.learning_rate}, {args.split}, "
              f"{args.propagation} propagation")
        print("round | std: HA    SA     F1   | cum: HA    SA     F1   | cum flips test "
              "| cum HA train | train CPU s")
        Xte = model._validate_X(te.X, reset=False)
        train_states = model._states(model._validate_X(tr.X, reset=False))
        before = None
        for r, st in enumerate(model._states(Xte), start=1):
            cum = st.decision(True)
            flips = "-"
            if before is not None:
                changed = cum != before
                right = int((changed & (cum == Yte)).sum())
                up = int((changed & (cum == 1)).sum())
                flips = f"+{right}/-{int(changed.sum()) - right} ({up} to 1)"
            before = cum
            trs = next(train_states)
            ha_tr = (f"{(trs.decision(True) == Ytr).mean():.4f}" if in_sample else "-")
            print(f"{r:5d} | {_scores(Yte, st.decision(False))} | {_scores(Yte, cum)} | "
                  f"{flips} | {ha_tr} | {model.round_seconds_[r - 1]:.1f}", flush=True)
        acc_tr = _propagated_accuracy(model.train_state_, Ytr)
        print(f"propagated label values right: train {acc_tr:.3f} / test "
              f"{_propagated_accuracy(st, Yte):.3f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
