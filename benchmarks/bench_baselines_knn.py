"""mlw's ML-kNN and BRkNN side by side with scikit-multilearn's and with a plain
scikit-learn ``KNeighborsClassifier``, on the same splits, in one run.

    python benchmarks/bench_baselines_knn.py [--datasets emotions,scene,yeast,enron,bibtex]
        [--imdb] [--imdb-skml] [--metric euclidean] [--k 10]

Every side uses k = 10 and the same metric (Euclidean by default: ML-kNN's paper,
scikit-multilearn and scikit-learn's default). Timings are fit + predict +
predict_proba (BRkNN: + predict only where the peer has no scores) on the Mulan
train/test split, in process CPU seconds (``time.process_time``, all threads) and wall
seconds, with the 1-minute load average before and after; the first mlw call is
preceded by a tiny warm-up fit so numba's compilation is not timed (the kernels are
cached on disk anyway). The ratio printed is peer / mlw (above 1: mlw is faster),
for CPU time and for wall time.

scikit-multilearn 0.2.0 calls ``NearestNeighbors(self.k)`` positionally, which
scikit-learn >= 1.0 refuses; the script patches that one call (keyword argument) and
changes nothing else. Its ML-kNN counts every training instance as its own nearest
neighbour when estimating the likelihoods (``ignore_first_neighbours=0`` by default;
mlw leaves it out, as the paper does), so its predictions differ: the script also runs
a loop-free reference of the paper's ML-kNN built on scikit-learn's
``NearestNeighbors`` (leave-one-out) and prints the agreement of mlw with it.

IMDB (``--imdb``): MEKA's Imdb.arff.bz2, first 72,551 rows train, the other 48,368 test
(the LCIF paper's split). scikit-multilearn is left out there unless ``--imdb-skml``
(its per-instance, per-label Python loops take very long).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import mlw

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
METRICS = ["hamming_loss", "f1_micro", "f1_macro", "f1_example", "subset_accuracy"]
N_TRAIN_IMDB = 72551


def load(name: str):
    if name == "imdb":
        d = mlw.load_dataset(str(SHARED / "meka" / "Imdb.arff.bz2"))
        return d.X[:N_TRAIN_IMDB], d.Y[:N_TRAIN_IMDB], d.X[N_TRAIN_IMDB:], d.Y[N_TRAIN_IMDB:]
    tr = mlw.load_dataset(SHARED / "mulan" / f"{name}-train.arff")
    te = mlw.load_dataset(SHARED / "mulan" / f"{name}-test.arff")
    return tr.X, tr.Y, te.X, te.Y


def dense01(M) -> np.ndarray:
    return np.asarray(M.toarray() if sp.issparse(M) else M, dtype=np.uint8)


def timed(fn):
    load0 = os.getloadavg()[0]
    t, w = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - t, time.perf_counter() - w, load0, os.getloadavg()[0], out


def patch_skml() -> None:
    import sklearn.neighbors
    import skmultilearn.adapt.brknn as brknn
    import skmultilearn.adapt.mlknn as mlknn

    class KeywordNearestNeighbors(sklearn.neighbors.NearestNeighbors):
        def __init__(self, n_neighbors=5, **kwargs):
            super().__init__(n_neighbors=n_neighbors, **kwargs)

    mlknn.NearestNeighbors = KeywordNearestNeighbors
    brknn.NearestNeighbors = KeywordNearestNeighbors


def reference_mlknn(Xtr, Ytr, Xte, k: int, metric: str, s: float = 1.0) -> np.ndarray:
    """The paper's ML-kNN on scikit-learn's exact neighbours, leave-one-out in training."""
    from sklearn.neighbors import NearestNeighbors

    Y = dense01(Ytr).astype(np.int64)
    n, L = Y.shape
    nn = NearestNeighbors(n_neighbors=k + 1, metric=metric, algorithm="brute").fit(Xtr)
    idx = nn.kneighbors(Xtr, return_distance=False)
    # drop each row itself (it may not come first when another row is at distance 0)
    own = idx == np.arange(n)[:, None]
    keep = np.where(own.any(axis=1)[:, None], ~own, np.arange(k + 1)[None, :] < k)
    idx = idx[keep].reshape(n, k)
    C = Y[idx].sum(axis=1)
    prior = (s + Y.sum(axis=0)) / (2 * s + n)
    a = np.stack([np.bincount(C[Y[:, j] == 1, j], minlength=k + 1) for j in range(L)])
    b = np.stack([np.bincount(C[Y[:, j] == 0, j], minlength=k + 1) for j in range(L)])
    e1 = (s + a) / (s * (k + 1) + a.sum(axis=1, keepdims=True))
    e0 = (s + b) / (s * (k + 1) + b.sum(axis=1, keepdims=True))
    Ct = Y[nn.kneighbors(Xte, n_neighbors=k, return_distance=False)].sum(axis=1)
    j = np.arange(L)[None, :]
    on, off = prior * e1[j, Ct], (1 - prior) * e0[j, Ct]
    return on / (on + off)


def sides(k: int, metric: str, skml: bool):
    from sklearn.neighbors import KNeighborsClassifier

    from mlw_baselines import BRkNN, MLkNN

    def mlw_mlknn(Xtr, Ytr, Xte):
        m = MLkNN(k=k, metric=metric).fit(Xtr, Ytr)
        P, S = m.predict_with_scores(Xte)
        return dense01(P), S

    def mlw_brknn(Xtr, Ytr, Xte):
        P, S = BRkNN(k=k, metric=metric).fit(Xtr, Ytr).predict_with_scores(Xte)
        return dense01(P), S

    def sk_knn(Xtr, Ytr, Xte):
        algorithm = "brute" if sp.issparse(Xtr) else "auto"
        m = KNeighborsClassifier(n_neighbors=k, metric=metric, algorithm=algorithm)
        m.fit(Xtr, dense01(Ytr))
        P = m.predict(Xte)
        S = np.column_stack([p[:, -1] if p.shape[1] == 2 else np.zeros(p.shape[0])
                             for p in m.predict_proba(Xte)])
        return dense01(P), S

    def skml_mlknn(Xtr, Ytr, Xte):
        from skmultilearn.adapt import MLkNN as SkMLkNN

        m = SkMLkNN(k=k)
        m.fit(Xtr, sp.csr_matrix(dense01(Ytr)))
        return dense01(m.predict(Xte)), np.asarray(m.predict_proba(Xte).todense())

    def skml_brknn(Xtr, Ytr, Xte):
        from skmultilearn.adapt import BRkNNaClassifier

        m = BRkNNaClassifier(k=k)
        m.fit(Xtr, sp.csr_matrix(dense01(Ytr)))
        return dense01(m.predict(Xte)), None

    out = [("mlknn", "mlw", mlw_mlknn), ("mlknn", "scikit-learn KNeighborsClassifier", sk_knn)]
    if skml:
        out.append(("mlknn", "scikit-multilearn MLkNN", skml_mlknn))
    out.append(("brknn-a", "mlw", mlw_brknn))
    if skml:
        out.append(("brknn-a", "scikit-multilearn BRkNNa", skml_brknn))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="emotions,scene,yeast,enron,bibtex")
    ap.add_argument("--imdb", action="store_true")
    ap.add_argument("--imdb-skml", action="store_true")
    ap.add_argument("--metric", default="euclidean", choices=["euclidean", "cosine"])
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    patch_skml()
    from mlw_baselines import MLkNN

    MLkNN(k=2).fit(sp.random(20, 5, density=0.5, format="csr", random_state=0),
                   np.eye(20, 3, dtype=np.uint8)).predict(np.ones((2, 5)))  # warm-up
    names = [d for d in args.datasets.split(",") if d] + (["imdb"] if args.imdb else [])
    print(f"k={args.k} metric={args.metric}; cpu/wall in s; ratio = peer / mlw")
    for name in names:
        Xtr, Ytr, Xte, Yte = load(name)
        skml = name != "imdb" or args.imdb_skml
        print(f"\n== {name}: {Xtr.shape[0]} train / {Xte.shape[0]} test, "
              f"{Xtr.shape[1]} features ({'CSR' if sp.issparse(Xtr) else 'dense'}), "
              f"{Ytr.shape[1]} labels")
        base: dict[str, tuple[float, float, np.ndarray]] = {}
        for method, who, fn in sides(args.k, args.metric, skml):
            try:
                cpu, wall, l0, l1, (P, S) = timed(lambda: fn(Xtr, Ytr, Xte))
            except Exception as exc:  # a peer that breaks is reported, not fatal
                print(f"{method:8s} {who:34s} FAILED: {type(exc).__name__}: {exc}")
                continue
            res = mlw.evaluate(Yte, P, metrics=METRICS)
            line = " ".join(f"{m}={res[m]:.4f}" for m in METRICS)
            if who == "mlw":
                base[method] = (cpu, wall, P)
                extra = ""
            else:
                c0, w0, P0 = base[method]
                extra = (f" | ratio cpu {cpu / max(c0, 1e-9):6.1f}x wall "
                         f"{wall / max(w0, 1e-9):6.1f}x | same pred {np.mean(P == P0):.4f}")
            print(f"{method:8s} {who:34s} cpu {cpu:8.2f} wall {wall:8.2f} "
                  f"load {l0:4.1f}->{l1:4.1f} | {line}{extra}", flush=True)
        if name != "imdb" or args.imdb_skml:
            ref = reference_mlknn(Xtr, Ytr, Xte, args.k, args.metric)
            P0 = base["mlknn"][2]
            print(f"mlknn    agreement with the paper's ML-kNN on scikit-learn neighbours: "
                  f"{np.mean((ref >= 0.5) == P0):.4f} of entries")


if __name__ == "__main__":
    main()
