"""LaCovaC fit time vs scikit-learn's multi-output DecisionTreeClassifier, side by side.

    python benchmarks/bench_lacovac.py [--repeats 3] [--datasets yeast,bibtex]

Both learners fit the same training split of each dataset (mlw.load_dataset; bibtex
stays sparse CSR for both: scikit-learn's tree takes CSR X, and LaCovaC never
densifies it). scikit-learn's tree gets min_samples_leaf=5 (LaCovaC's m = 5, the peer
the issue names; LaCovaC's own children may be smaller on 0/1 features, see
``min_child``) and a dense Y (it does not accept a sparse target). Times are CPU
seconds of the process (time.process_time, so other jobs on the machine distort them
less than wall time), the best of ``--repeats`` runs, after one warm-up fit that also
compiles the numba kernels. Peak memory of one fit is measured with tracemalloc in a separate run
(numpy and scipy allocations are traced; numba's are not). The ratio printed is
LaCovaC / scikit-learn (the target is at most 3).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.tree import DecisionTreeClassifier

import mlw
from mlw_lacovac import MLC45, LaCovaC

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "mulan"


def cpu_best(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def peak_mb(fn) -> float:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--datasets", default="yeast,bibtex")
    args = ap.parse_args()
    print(f"{'dataset':8} {'n x d, L':>18} {'learner':22} {'fit cpu s':>9} {'sk cpu s':>8} "
          f"{'ratio':>6} {'peak MB':>8} {'sk MB':>6} {'nodes':>6}")
    for name in args.datasets.split(","):
        tr = mlw.load_dataset(DATA / f"{name}-train.arff")
        X, Y = tr.X, tr.Y
        Yd = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
        shape = f"{X.shape[0]}x{X.shape[1]}, {Y.shape[1]}"
        sk = DecisionTreeClassifier(min_samples_leaf=5, random_state=0)
        sk.fit(X, Yd)
        t_sk = cpu_best(lambda sk=sk, X=X, Yd=Yd: sk.fit(X, Yd), args.repeats)
        m_sk = peak_mb(lambda X=X, Yd=Yd: DecisionTreeClassifier(min_samples_leaf=5).fit(X, Yd))
        for label, make in [("lacovac (max_bins=64)", lambda: LaCovaC()),
                            ("lacovac (exact scan)", lambda: LaCovaC(max_bins=None)),
                            ("ml_c45", lambda: MLC45())]:
            if sp.issparse(X) and "exact" in label:
                continue  # sparse X is always scanned exactly
            make().fit(X, Y)  # warm-up (numba compile / cache load)
            model = make()
            t = cpu_best(lambda m=model, X=X, Y=Y: m.fit(X, Y), args.repeats)
            mem = peak_mb(lambda make=make, X=X, Y=Y: make().fit(X, Y))
            print(f"{name:8} {shape:>18} {label:22} {t:9.3f} {t_sk:8.3f} {t / t_sk:6.2f} "
                  f"{mem:8.1f} {m_sk:6.1f} {model.tree_.n_nodes:6d}", flush=True)


if __name__ == "__main__":
    main()
