"""Is the structure search's looser edge tolerance harmless? (session 11, issue 10)

``ctbn`` on each dataset's shared train split, fitted with the edge models of the
structure search (Sec. 5.3.1) stopped at three L-BFGS tolerances: 1e-8 (converged),
1e-4 (the solver's TOL, every fit before session 11, and mc's edge models still) and
EDGE_TOL (1e-3, ctbn's since session 11). Per fit: CPU s, the parents that differ
from the converged tree's and from the 1e-4 tree's, and on the shared test split the
CLL-loss (sum of -log P(y|x)) and EMA.
At C = 1 and at the default C search. One BLAS thread.

    python benchmarks/edge_tol_mctbn.py [--datasets emotions,scene,yeast,enron]
        [--tols 1e-8,1e-4,1e-3] [--cs 1,search]

The parents are compared with the first tolerance's tree and with 1e-4's.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

import mlw
from mlw.metrics import cll_loss, subset_accuracy
from mlw.validation import dense_labels
from mlw_mctbn import _learning, _logistic

MULAN = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "mulan"
TOLS = (1e-8, 1e-4, _logistic.EDGE_TOL)


def load(name: str, split: str):
    ds = mlw.load_dataset(MULAN / f"{name}-{split}.arff")
    return ds.X, dense_labels(ds.Y)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="emotions,scene,yeast,enron")
    ap.add_argument("--tols", default=",".join(f"{t:g}" for t in TOLS))
    ap.add_argument("--cs", default="1,search", help="C values; 'search': ctbn's C search")
    args = ap.parse_args()
    tols = [float(t) for t in args.tols.split(",")]
    cs = [None if c == "search" else float(c) for c in args.cs.split(",")]
    learn = _learning.learn_structure
    with threadpool_limits(limits=1, user_api="blas"):
        for name in args.datasets.split(","):
            X, Y = load(name, "train")
            Xte, Yte = load(name, "test")
            mlw.get_learner("ctbn", C=1.0).fit(X[:60], Y[:60])  # numba compiled first
            for C in cs:
                parents = {}
                for tol in tols:
                    def with_tol(*a, tol=tol, **k):
                        k["edge_tol"] = tol
                        return learn(*a, **k)
                    _learning.learn_structure = with_tol
                    try:
                        c0 = time.process_time()
                        model = mlw.get_learner("ctbn", C=C).fit(X, Y)
                        cpu = time.process_time() - c0
                    finally:
                        _learning.learn_structure = learn
                    parents[tol] = model.parents_[0]
                    vs_old = parents.get(1e-4, parents[tol])
                    cll = cll_loss(Yte, model.log_proba_of(Xte, Yte))
                    ema = subset_accuracy(Yte, model.predict(Xte))
                    print(f"{name:8s} C={'search' if C is None else C:6} (C_ {model.C_:g}) "
                          f"edge_tol {tol:g}: fit {cpu:6.2f} CPU s, parents differing "
                          f"from {tols[0]:g}'s {int((parents[tol] != parents[tols[0]]).sum()):2d}, "
                          f"from 1e-4's {int((parents[tol] != vs_old).sum()):2d}"
                          f" (of {Y.shape[1]}); test CLL-loss {cll:9.2f}, EMA {ema:.4f}",
                          flush=True)


if __name__ == "__main__":
    main()
