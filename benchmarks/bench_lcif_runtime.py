"""The LCIF paper's runtime tables (IV and V) at k = 15, on bibtex and IMDB-F.

The paper (Section IV-E2) times each method at k = 15 on the public split; its figures
are wall-clock on an 8-core server. Here: process CPU time (user + system, all threads,
``time.process_time``) of fit + predict of each learner at its defaults with
k_ins = k_feat = 15 (lambda 0.5) and the paper's feature scaling (``max``), after one
untimed fit on a 500-row slice so that numba's compilation is not timed. ``lcif (all
rows)`` is ``threshold_sample=None``, the paper's threshold over every training row;
bibtex has fewer rows than the sample, so there both are the same procedure. The load
average is printed beside every figure (a shared machine inflates CPU time too).

    nice -n 5 python benchmarks/bench_lcif_runtime.py [--datasets bibtex,imdb] [--out F]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

from bench_lcif_quality import load  # the same splits (IMDB-F: first 72,551 rows train)

LEARNERS: list[tuple[str, str, dict[str, Any]]] = [
    ("feature kNN", "feature_knn", {"k_feat": 15}),
    ("instance kNN", "instance_knn", {"k_ins": 15}),
    ("lcif", "lcif", {"k_ins": 15, "k_feat": 15, "lam": 0.5}),
    ("lcif (all rows)", "lcif", {"k_ins": 15, "k_feat": 15, "lam": 0.5,
                                 "threshold_sample": None}),
    ("lcif2", "lcif2", {"k_ins": 15, "k_feat": 15, "lam": 0.5}),
]


def main() -> None:
    import mlw

    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--datasets", default="bibtex,imdb")
    ap.add_argument("--out", help="append the JSON lines to this file too")
    a = ap.parse_args()
    for name in a.datasets.split(","):
        Xtr, Ytr, Xte, Yte = load(name)
        for label, learner, params in LEARNERS:
            mlw.get_learner(learner, feature_norm="max", **params).fit(Xtr[:500], Ytr[:500])
            load0 = os.getloadavg()[0]
            c0, w0 = time.process_time(), time.perf_counter()
            m = mlw.get_learner(learner, feature_norm="max", **params).fit(Xtr, Ytr)
            c1 = time.process_time()
            P = m.predict(Xte)
            c2, w2 = time.process_time(), time.perf_counter()
            row = {"dataset": name, "learner": label, "fit_cpu_s": round(c1 - c0, 3),
                   "predict_cpu_s": round(c2 - c1, 3), "cpu_s": round(c2 - c0, 3),
                   "wall_s": round(w2 - w0, 3),
                   "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
                   "accuracy": round(float(mlw.evaluate(Yte, P, metrics=["accuracy"])
                                           ["accuracy"]), 4),
                   "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            print(json.dumps(row), flush=True)
            if a.out:
                with open(a.out, "a") as fh:
                    fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
