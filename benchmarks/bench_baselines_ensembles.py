"""RAkEL-d and RAkEL-o of mlw side by side with scikit-multilearn's RakelD and RakelO,
and the parallel speed-up of mlw's ensembles (rakel, ecc, epcc) with ``n_jobs=2``.

    python benchmarks/bench_baselines_ensembles.py [--datasets emotions,scene,yeast,enron]
        [--seeds 3] [--parallel yeast,enron]

Both libraries get the same LP base classifier (MaxAbsScaler + LogisticRegression, lbfgs,
C=1, max_iter=1000, mlw's default) and k = 3; RAkEL-o uses m = 2L models. The
labelsets are random in both (mlw: ``random_state``; scikit-multilearn: Python's
``random``, seeded the same way), so quality is the mean over ``--seeds`` seeds; time
is the mean fit + predict CPU seconds of the process (``time.process_time``), with the
1-minute load average. Ratio = scikit-multilearn / mlw (above 1: mlw is faster).
All runs under ``threadpool_limits(1, "blas")`` (mlw limits BLAS itself).

First, both libraries run on mlw's labelsets (scikit-multilearn's
``FixedLabelSpaceClusterer``): the same LPs, so the predictions must agree except where
the voting rules differ (RAkEL-o: mlw and Mulan predict a vote of exactly 1/2,
scikit-multilearn's ``np.round`` does not).

The parallel part fits each ensemble with ``n_jobs=1`` and ``n_jobs=2`` (joblib's
processes) and prints the wall-clock fit times and their ratio, with the load: the
members run in worker processes, so the parent's CPU time says nothing there.
"""

from __future__ import annotations

import argparse
import os
import random
import time
import warnings

import numpy as np
import scipy.sparse as sp
from _shared import MULAN
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler
from threadpoolctl import threadpool_limits

import mlw

DATA = MULAN
METRICS = ["hamming_loss", "f1_micro", "f1_macro", "f1_example", "subset_accuracy"]


def base():
    return make_pipeline(MaxAbsScaler(), LogisticRegression(C=1.0, max_iter=1000))


def dense01(M) -> np.ndarray:
    return np.asarray(M.toarray() if sp.issparse(M) else M, dtype=np.uint8)


def load(name: str):
    tr = mlw.load_dataset(DATA / f"{name}-train.arff")
    te = mlw.load_dataset(DATA / f"{name}-test.arff")
    return tr.X, tr.Y, te.X, te.Y


def run_mlw(mode: str, seed: int, Xtr, Ytr, Xte):
    from mlw_baselines import RandomKLabelsets

    m = RandomKLabelsets(base_estimator=base(), mode=mode, labelset_size=3,
                         random_state=seed).fit(Xtr, Ytr)
    return dense01(m.predict(Xte))


def run_skml(mode: str, seed: int, Xtr, Ytr, Xte):
    from skmultilearn.ensemble import RakelD, RakelO

    random.seed(seed)
    Y = sp.csr_matrix(dense01(Ytr))
    if mode == "disjoint":
        m = RakelD(base_classifier=base(), labelset_size=3,
                   base_classifier_require_dense=[False, True])
    else:
        m = RakelO(base_classifier=base(), labelset_size=3, model_count=2 * Y.shape[1],
                   base_classifier_require_dense=[False, True])
    m.fit(Xtr, Y)
    return dense01(m.predict(Xte))


def same_labelsets(name: str) -> None:
    """Both libraries on mlw's labelsets (scikit-multilearn's fixed clusterer): the same
    LPs, so any difference in predictions is the voting rule."""
    from skmultilearn.cluster import FixedLabelSpaceClusterer
    from skmultilearn.ensemble import LabelSpacePartitioningClassifier, MajorityVotingClassifier
    from skmultilearn.problem_transform import LabelPowerset as SkLP

    from mlw_baselines import RandomKLabelsets

    Xtr, Ytr, Xte, Yte = load(name)
    Y = sp.csr_matrix(dense01(Ytr))
    for mode, peer in (("disjoint", LabelSpacePartitioningClassifier),
                       ("overlapping", MajorityVotingClassifier)):
        with threadpool_limits(1, "blas"):
            ours = RandomKLabelsets(base_estimator=base(), mode=mode, random_state=0).fit(Xtr, Ytr)
            P = dense01(ours.predict(Xte))
            sets = [s.tolist() for s in ours.labelsets_]
            theirs = peer(classifier=SkLP(classifier=base(), require_dense=[False, True]),
                          clusterer=FixedLabelSpaceClusterer(clusters=sets),
                          require_dense=[False, False]).fit(Xtr, Y)
            Q = dense01(theirs.predict(Xte))
        note = ""
        if mode == "overlapping":
            votes = ours.predict_votes(Xte)
            ties = np.isclose(votes, 0.5)
            note = (f"; entries with a vote of exactly 1/2: {ties.mean():.4f}, differing "
                    f"entries that are such ties: "
                    f"{(ties & (P != Q)).sum()}/{(P != Q).sum()}")
        print(f"{name:9s} {mode:11s} same labelsets: same pred {np.mean(P == Q):.4f}{note}",
              flush=True)


def compare(names, seeds: int) -> None:
    print("RAkEL (k=3; -o: m=2L): mean over seeds; cpu s = fit + predict; "
          "ratio = scikit-multilearn / mlw")
    for name in names:
        Xtr, Ytr, Xte, Yte = load(name)
        for mode in ("disjoint", "overlapping"):
            rows = {}
            for who, fn in (("mlw", run_mlw), ("scikit-multilearn", run_skml)):
                cpus, res = [], []
                load0 = os.getloadavg()[0]
                try:
                    for seed in range(seeds):
                        t = time.process_time()
                        with threadpool_limits(1, "blas"):
                            P = fn(mode, seed, Xtr, Ytr, Xte)
                        cpus.append(time.process_time() - t)
                        res.append(mlw.evaluate(Yte, P, metrics=METRICS))
                except Exception as exc:
                    print(f"{name:9s} {mode:11s} {who:18s} FAILED: {type(exc).__name__}: {exc}")
                    continue
                mean = {m: float(np.mean([r[m] for r in res])) for m in METRICS}
                sd = {m: float(np.std([r[m] for r in res])) for m in METRICS}
                rows[who] = float(np.mean(cpus))
                ratio = (f" | ratio {rows[who] / rows['mlw']:5.2f}x"
                         if who != "mlw" and "mlw" in rows else "")
                print(f"{name:9s} {mode:11s} {who:18s} cpu {rows[who]:7.2f} load "
                      f"{load0:4.1f} | " + " ".join(f"{m}={mean[m]:.4f}±{sd[m]:.4f}"
                                                    for m in METRICS) + ratio, flush=True)


def parallel(names) -> None:
    from mlw_baselines import (
        EnsembleOfClassifierChains,
        EnsembleOfProbabilisticClassifierChains,
        RandomKLabelsets,
    )

    print("\nparallel fit: wall seconds with n_jobs=1 and n_jobs=2 (joblib processes, "
          "started and warmed up before timing)")
    from joblib import Parallel, delayed

    Xw, Yw = load(names[0])[:2] if names else (None, None)
    Parallel(n_jobs=2)(delayed(len)([i]) for i in range(4))  # start the two workers
    if Xw is not None:  # and import mlw and scikit-learn in them
        RandomKLabelsets(n_jobs=2, n_estimators=2).fit(Xw[:50], Yw[:50])
    for name in names:
        Xtr, Ytr, _, _ = load(name)
        for label, cls in (("rakel-o", RandomKLabelsets), ("ecc", EnsembleOfClassifierChains),
                           ("epcc", EnsembleOfProbabilisticClassifierChains)):
            walls = []
            loads = []
            for n_jobs in (1, 2):
                loads.append(os.getloadavg()[0])
                w = time.perf_counter()
                cls(n_jobs=n_jobs).fit(Xtr, Ytr)
                walls.append(time.perf_counter() - w)
            print(f"{name:9s} {label:8s} n_jobs=1 {walls[0]:7.2f} s (load {loads[0]:4.1f}) "
                  f"n_jobs=2 {walls[1]:7.2f} s (load {loads[1]:4.1f}) speed-up "
                  f"{walls[0] / walls[1]:4.2f}x", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="emotions,scene,yeast,enron")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--parallel", default="yeast,enron")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    names = [d for d in args.datasets.split(",") if d]
    for name in names:
        same_labelsets(name)
    if args.seeds:
        compare(names, args.seeds)
    parallel([d for d in args.parallel.split(",") if d])


if __name__ == "__main__":
    main()
