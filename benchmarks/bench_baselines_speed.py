"""BR, CC and LP of mlw-baselines vs scikit-multilearn (and BR vs scikit-learn's
MultiOutputClassifier), side by side on the same data with the same base classifier.

    python benchmarks/bench_baselines_speed.py [--datasets yeast,enron] [--repeats 3]

Every learner gets the same base classifier, MaxAbsScaler + LogisticRegression (lbfgs,
C=1, max_iter=1000), mlw's default. Data come from ``mlw.load_dataset`` (enron stays
CSR for everyone). Each timing is fit + predict + predict_proba on the Mulan split, the
best of ``--repeats`` runs, in CPU seconds of the process (time.process_time) and
wall seconds. All runs, peers included, happen under
``threadpool_limits(1, "blas")`` (mlw-baselines limits BLAS to one thread itself; the
same limit for the peers keeps the comparison about the method code, not about
OpenBLAS threads spinning on a busy machine). The same models must give the same
predictions: the script prints the fraction of equal predicted entries
(scikit-multilearn's CC puts the chained labels into the features in the same way;
its LP and ours number the label sets differently, which does not change the argmax
unless two classes tie). The printed ratio is mlw / peer (below 1: mlw is faster).
A peer that raises (scikit-multilearn and MultiOutputClassifier both fail on enron,
whose training split has labels that never occur) is reported as failed, and the
dataset is run again as ``enron*`` without its constant labels.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp
from _shared import MULAN
from sklearn.linear_model import LogisticRegression
from sklearn.multioutput import MultiOutputClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler
from threadpoolctl import threadpool_limits

import mlw

DATA = MULAN


def base() -> object:
    return make_pipeline(MaxAbsScaler(), LogisticRegression(C=1.0, max_iter=1000))


def best_of(fn, repeats: int) -> tuple[float, float, object]:
    cpu, wall, out = np.inf, np.inf, None
    for _ in range(repeats):
        t, w = time.process_time(), time.perf_counter()
        out = fn()
        cpu = min(cpu, time.process_time() - t)
        wall = min(wall, time.perf_counter() - w)
    return cpu, wall, out


def dense01(M: object) -> np.ndarray:
    return np.asarray(M.toarray() if sp.issparse(M) else M, dtype=np.uint8)


def mlw_run(name: str, Xtr, Ytr, Xte):
    def fn():
        model = mlw.get_learner(name, base_estimator=base()).fit(Xtr, Ytr)
        return dense01(model.predict(Xte)), model.predict_proba(Xte)
    return fn


def skml_run(name: str, Xtr, Ytr, Xte):
    from skmultilearn.problem_transform import BinaryRelevance, ClassifierChain, LabelPowerset

    cls = {"br": BinaryRelevance, "cc": ClassifierChain, "lp": LabelPowerset}[name]

    def fn():
        model = cls(classifier=base(), require_dense=[False, True])
        model.fit(Xtr, dense01(Ytr))
        return dense01(model.predict(Xte)), model.predict_proba(Xte)
    return fn


def moc_run(Xtr, Ytr, Xte):
    def fn():
        model = MultiOutputClassifier(base()).fit(Xtr, dense01(Ytr))
        P = model.predict(Xte)
        S = np.column_stack([p[:, 1] for p in model.predict_proba(Xte)])
        return dense01(P), S
    return fn


def datasets(names: list[str]):
    """``(name, Xtr, Ytr, Xte)`` per dataset; when some labels are constant in the
    training split (the peers cannot fit them), also ``name*`` without those labels."""
    for ds in names:
        tr = mlw.load_dataset(DATA / f"{ds}-train.arff")
        te = mlw.load_dataset(DATA / f"{ds}-test.arff")
        yield ds, tr.X, tr.Y, te.X
        counts = np.asarray(tr.Y.sum(axis=0)).ravel()
        keep = np.flatnonzero((counts > 0) & (counts < tr.Y.shape[0]))
        if keep.size < tr.Y.shape[1]:
            Ytr = tr.Y[:, keep]
            yield f"{ds}*", tr.X, (Ytr.tocsr() if sp.issparse(Ytr) else Ytr), te.X


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="yeast,enron")
    ap.add_argument("--learners", default="br,cc,lp")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    print(f"{'dataset':<8} {'learner':<4} {'peer':<22} {'mlw cpu':>8} {'peer cpu':>9} "
          f"{'ratio':>6} {'mlw wall':>9} {'peer wall':>10} {'same pred':>10}")
    with threadpool_limits(limits=1, user_api="blas"):
        for ds, Xtr, Ytr, Xte in datasets(args.datasets.split(",")):
            for name in args.learners.split(","):
                peers = [("scikit-multilearn", skml_run(name, Xtr, Ytr, Xte))]
                if name == "br":
                    peers.append(("sklearn MultiOutput", moc_run(Xtr, Ytr, Xte)))
                c_m, w_m, (P_m, _) = best_of(mlw_run(name, Xtr, Ytr, Xte), args.repeats)
                for peer, fn in peers:
                    try:
                        c_p, w_p, (P_p, _) = best_of(fn, args.repeats)
                    except ValueError as exc:  # e.g. a label constant in training
                        print(f"{ds:<8} {name:<4} {peer:<22} {c_m:8.2f}   peer failed: "
                              f"{str(exc).splitlines()[0][:90]}", flush=True)
                        continue
                    same = float(np.mean(P_m == P_p))
                    print(f"{ds:<8} {name:<4} {peer:<22} {c_m:8.2f} {c_p:9.2f} "
                          f"{c_m / c_p:6.2f} {w_m:9.2f} {w_p:10.2f} {same:10.4f}",
                          flush=True)


if __name__ == "__main__":
    main()
