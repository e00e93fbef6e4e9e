"""Chain-length curves of XDCC (the paper's Figure 2) from staged predictions.

    python benchmarks/quality_xdcc_chain.py [--datasets emotions,scene] [--max-length L]
        [--n-estimators 50] [--max-depth 4] [--learning-rate 0.3] [--split sum_gain]

Fits one XDCC per dataset with chain length ``--max-length`` (default: the number of
labels) and prints, after every round r, the test Hamming accuracy, subset accuracy
and example F1 of XDCC-std and XDCC-cum (``staged_predict``), with the training time
(process CPU seconds) of the first r rounds (``round_seconds_``).  Since round r's booster only depends on rounds < r, the
prefix of length r of one long chain *is* the chain of length r.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import mlw

ROOT = Path(__file__).resolve().parents[1]
MULAN = ROOT.parent / "shared" / "datasets" / "mulan"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="emotions,scene")
    ap.add_argument("--max-length", type=int, default=None)
    ap.add_argument("--n-estimators", type=int, default=50)
    ap.add_argument("--max-depth", type=int, default=4)
    ap.add_argument("--learning-rate", type=float, default=0.3)
    ap.add_argument("--split", default="sum_gain")
    args = ap.parse_args()
    from mlw_xdcc import XDCC
    from mlw_xdcc.xdcc import default_chain_length

    for name in [d for d in args.datasets.split(",") if d]:
        tr = mlw.load_dataset(MULAN / f"{name}-train.arff")
        te = mlw.load_dataset(MULAN / f"{name}-test.arff")
        Ytr = np.asarray(tr.Y.toarray() if hasattr(tr.Y, "toarray") else tr.Y, np.uint8)
        Yte = np.asarray(te.Y.toarray() if hasattr(te.Y, "toarray") else te.Y, np.uint8)
        L = Ytr.shape[1]
        c = min(L, args.max_length or L)
        t = time.process_time()
        model = XDCC(chain_length=c, n_estimators=args.n_estimators, max_depth=args.max_depth,
                     learning_rate=args.learning_rate, split=args.split,
                     threshold=None).fit(tr.X, Ytr)   # the chain's own decision
        fit = time.process_time() - t
        print(f"== {name}: L={L}, cardinality {Ytr.sum(1).mean():.2f}, chain length {c}, "
              f"fit {fit:.1f}s CPU (default length: "
              f"{default_chain_length(Ytr.sum(1).mean(), L)}); {args.n_estimators} trees, "
              f"depth {args.max_depth}, eta {args.learning_rate}, {args.split}")
        print("round | std: HA    SA     F1   | cum: HA    SA     F1   | train CPU s")
        std = list(model.set_params(cumulated=False).staged_predict(te.X))
        cumd = list(model.set_params(cumulated=True).staged_predict(te.X))
        for r, (a, b) in enumerate(zip(std, cumd, strict=True), start=1):
            ra = mlw.evaluate(Yte, a, metrics=["hamming_loss", "subset_accuracy", "f1_example"])
            rb = mlw.evaluate(Yte, b, metrics=["hamming_loss", "subset_accuracy", "f1_example"])
            print(f"{r:5d} | {1 - ra['hamming_loss']:.4f} {ra['subset_accuracy']:.4f} "
                  f"{ra['f1_example']:.4f} | {1 - rb['hamming_loss']:.4f} "
                  f"{rb['subset_accuracy']:.4f} {rb['f1_example']:.4f} | "
                  f"{model.round_seconds_[r - 1]:.1f}")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
