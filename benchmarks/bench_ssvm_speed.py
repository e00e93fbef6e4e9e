"""Structured-SVM fit time, side by side with scikit-learn's one-vs-rest LinearSVC.

    python benchmarks/bench_ssvm_speed.py [--repeats 3] [--labels 50] [--C 1e4] [--seed 1]

Data: the paper's synthetic generator, n = 400 training instances, p = 25 inputs (26
with the bias), L labels (default 50), cardinality 3, noise free. Three timings in one
run:

1. ``struct_hamming`` against ``OneVsRestClassifier(LinearSVC())`` on the same X, Y
   (scikit-learn's defaults: squared hinge, C = 1, intercept): the ratio of fit times.
   Both solve L linear SVMs; ours shares one regularisation and solves the 1-slack
   structural problem with the cutting-plane algorithm, so the ratio is the price of
   the structural machinery on a decomposable loss.
2. ``struct_f1`` and ``struct_subset`` fit times for the same C (the issue's target: one
   ``struct_f1`` fit under 5 s at n = 400, p = 26, L = 50).
3. cutting-plane iterations, oracle passes and constraints taken from the cache, per
   learner, with the cache (SVM-struct's default of 5 vectors per example) and without.

Times are CPU seconds of this process (``time.process_time``), the best of
``--repeats``, after a warm-up fit that compiles the numba kernels; the load average is
printed next to them because the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

import mlw


def cpu_best(fn, repeats: int) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeats):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--labels", type=int, default=50)
    ap.add_argument("--C", type=float, default=1e4)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    sets = mlw.generate_dataset("synthetic", seed=args.seed, labels=args.labels,
                                cardinality=3.0)
    tr, te = sets["train"], sets["test"]
    X, Y = tr.X, tr.Y
    print(f"synthetic seed={args.seed}: n={X.shape[0]}, p={X.shape[1]} (+ bias), "
          f"L={Y.shape[1]}, cardinality {tr.cardinality:.2f}; C={args.C:g}, epsilon=0.1")
    mlw.get_learner("struct_f1", C=10.0).fit(X[:50], Y[:50])  # compile the kernels

    def fit(name, **kw):
        def go():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return mlw.get_learner(name, C=args.C, **kw).fit(X, Y)
        return go

    def sk():
        # one BLAS thread like ours (liblinear does not use BLAS anyway)
        with threadpool_limits(limits=1, user_api="blas"):
            return OneVsRestClassifier(LinearSVC()).fit(X, Y)

    load0 = os.getloadavg()[0]
    t_ham, ham = cpu_best(fit("struct_hamming"), args.repeats)
    t_sk, skm = cpu_best(sk, args.repeats)
    load1 = os.getloadavg()[0]
    q_ham = mlw.evaluate(te.Y, ham.predict(te.X), metrics=["hamming_loss"])["hamming_loss"]
    q_sk = mlw.evaluate(te.Y, skm.predict(te.X), metrics=["hamming_loss"])["hamming_loss"]
    print(f"\n{'':34} {'fit CPU s':>9} {'test Hl %':>9}")
    print(f"{'struct_hamming':34} {t_ham:9.3f} {100 * q_ham:9.2f}")
    print(f"{'OneVsRestClassifier(LinearSVC())':34} {t_sk:9.3f} {100 * q_sk:9.2f}")
    print(f"ratio struct_hamming / OvR LinearSVC: {t_ham / t_sk:.1f}x   "
          f"(load {load0:.1f} -> {load1:.1f}, {os.cpu_count()} cores)")

    print(f"\n{'learner':15} {'cache':>5} {'fit CPU s':>9} {'iterations':>10} "
          f"{'oracle passes':>13} {'from cache':>10} {'constraints':>11} {'load':>5}")
    for name in ("struct_hamming", "struct_f1", "struct_subset"):
        for cache in (5, 0):
            t, m = cpu_best(fit(name, cache_size=cache), args.repeats)
            print(f"{name:15} {cache:5d} {t:9.3f} {m.n_iter_:10d} {m.n_oracle_passes_:13d} "
                  f"{m.n_cached_constraints_:10d} {m.n_constraints_:11d} "
                  f"{os.getloadavg()[0]:5.1f}", flush=True)


if __name__ == "__main__":
    main()
