"""Fit time of mc and ctbn against scikit-learn's ClassifierChain(LogisticRegression()),
side by side in one run, on the same data (the shared train split of yeast and enron).

Prints, per dataset: each learner's fit CPU seconds (process time, so the shared
machine's load inflates wall time but not this), wall seconds, the load average
before each fit, and the ratio to the scikit-learn chain. ``ctbn`` and ``mc`` run
twice: with their defaults (C chosen by internal validation over the grid) and with
C=1 fixed, which is what the scikit-learn chain uses (like for like). Numba's first
compilation is excluded (a warm-up fit on a small slice first). Every fit runs under
``threadpool_limits(1, "blas")`` (as bench_baselines_speed.py does): with OpenBLAS's default
threads the chain's fit cost 10-16x more process CPU on this 2-core machine (threads
spinning: yeast 0.97-1.48 against 0.08-0.09 CPU s), which made earlier ratios
look 4x better than like for like.

    python benchmarks/bench_mctbn_speed.py [--datasets yeast,enron] [--skip-mc]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.multioutput import ClassifierChain
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler
from threadpoolctl import threadpool_limits

import mlw
from mlw.validation import dense_labels

MULAN = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "mulan"


def timed(fit, X, Y):
    load = os.getloadavg()[0]
    c0, w0 = time.process_time(), time.perf_counter()
    fit(X, Y)
    return time.process_time() - c0, time.perf_counter() - w0, load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="yeast,enron")
    ap.add_argument("--skip-mc", action="store_true")
    args = ap.parse_args()
    with threadpool_limits(limits=1, user_api="blas"):
        run(args)


def load_train(name: str) -> tuple[object, np.ndarray, int]:
    """The shared train split's X, its dense labels with both classes present, and how
    many labels were dropped: scikit-learn's LogisticRegression refuses a constant
    target (enron has labels never present in its train split), so every learner gets
    the same labels."""
    ds = mlw.load_dataset(MULAN / f"{name}-train.arff")
    Y = dense_labels(ds.Y)
    keep = (Y.min(axis=0) == 0) & (Y.max(axis=0) == 1)
    return ds.X, np.ascontiguousarray(Y[:, keep]), int((~keep).sum())


def run(args: argparse.Namespace) -> None:
    for name in args.datasets.split(","):
        X, Y, dropped = load_train(name)
        mlw.get_learner("mc", C=1.0, n_trees=2, em_max_iter=2).fit(X[:60], Y[:60])  # JIT
        chain = make_pipeline(MaxAbsScaler(),
                              ClassifierChain(LogisticRegression(max_iter=1000)))
        runs = [("sklearn ClassifierChain(LogisticRegression())", chain),
                ("ctbn C=1", mlw.get_learner("ctbn", C=1.0)),
                ("ctbn (C by validation)", mlw.get_learner("ctbn"))]
        if not args.skip_mc:
            runs += [("mc C=1", mlw.get_learner("mc", C=1.0)),
                     ("mc (C by validation)", mlw.get_learner("mc"))]
        print(f"\n{name}: {X.shape[0]} x {X.shape[1]} "
              f"({'CSR' if sp.issparse(X) else 'dense'}), {Y.shape[1]} labels"
              + (f" ({dropped} constant labels dropped)" if dropped else ""))
        print(f"{'learner':48s} {'fit CPU s':>10s} {'wall s':>8s} {'load':>6s} "
              f"{'CPU ratio':>10s}")
        base = None
        for label, model in runs:
            cpu, wall, load = timed(model.fit, X, Y)
            base = cpu if base is None else base
            print(f"{label:48s} {cpu:10.2f} {wall:8.1f} {load:6.1f} {cpu / base:10.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
