"""Quality of instance kNN, feature kNN, LCIF and LCIF2 on the shared datasets, with
hyper-parameters chosen by 10-fold cross-validation (the paper's grid and caching).

For each dataset one LCIF search covers three learners (instance kNN is LCIF with
lambda = 1, feature kNN with lambda = 0), and one LCIF2 search the fourth. Printed per
learner: the selected (k_ins, k_feat, lambda) for the selection metric and the 10-fold
CV mean of every metric at those parameters (the folds that selected them, so slightly
optimistic). With a train/test split (bibtex, IMDB) the learner is refitted on the
whole training part with the selected parameters and scored on the test part as well;
``--per-metric`` also refits with the parameters selected for each metric separately.

    nice python benchmarks/bench_lcif_quality.py --datasets bibtex,enron,medical \
        [--kinds lcif,lcif2] [--per-metric]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("MLW_SHARED_DATASETS", ROOT.parent / "shared" / "datasets"))
SHOW = ["accuracy", "f1_example", "hamming_loss", "f1_micro", "f1_macro"]


def load(name: str):
    import mlw

    if name == "imdb":
        d = mlw.load_dataset(str(DATA / "meka" / "Imdb.arff.bz2"))
        return d.X[:72551], d.Y[:72551], d.X[72551:], d.Y[72551:]
    if name == "medical":
        d = mlw.load_dataset(str(DATA / "mulan" / "medical.arff"))
        return d.X, d.Y, None, None
    tr = mlw.load_dataset(str(DATA / "mulan" / f"{name}-train.arff"))
    te = mlw.load_dataset(str(DATA / "mulan" / f"{name}-test.arff"))
    return tr.X, tr.Y, te.X, te.Y


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="bibtex,enron,medical")
    ap.add_argument("--metric", default="accuracy")
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--per-metric", action="store_true")
    ap.add_argument("--kinds", default="lcif,lcif2", help="searches to run")
    ap.add_argument("--out", default="/tmp/bench_lcif_quality.jsonl")
    a = ap.parse_args()

    import mlw
    from mlw_lcif import LCIF, LCIF2, FeatureKNN, InstanceKNN, search_hyperparameters
    from mlw_lcif._prep import FeatureScaler
    from mlw_lcif.search import METRICS

    for name in a.datasets.split(","):
        Xtr, Ytr, Xte, Yte = load(name)
        import scipy.sparse as sp

        Ycsr = sp.csr_matrix(Ytr)
        Xs = FeatureScaler().fit(Xtr).transform(Xtr)
        results = {}
        for kind in a.kinds.split(","):
            t = time.perf_counter()
            res = search_hyperparameters(Xs, Ycsr, kind=kind, metric=a.metric,
                                         n_folds=a.folds, seed=0)
            secs = time.perf_counter() - t
            lams = res["lam_grid"]
            allsc = res["all_scores"]
            code = METRICS[a.metric]
            views = {kind: (slice(None), slice(None), slice(None))}
            if kind == "lcif":
                views["instance_knn"] = (slice(None), slice(0, 1), slice(lams.index(1.0),
                                                                       lams.index(1.0) + 1))
                views["feature_knn"] = (slice(0, 1), slice(None), slice(lams.index(0.0),
                                                                      lams.index(0.0) + 1))
            for learner, (sa, sb, sq) in views.items():
                sub = allsc[sa, sb, sq]
                ia, ib, iq = np.unravel_index(int(np.argmax(sub[..., code])), sub.shape[:3])
                ka = res["k_ins_grid"][sa][ia]
                kf = res["k_feat_grid"][sb][ib]
                lam = lams[sq][iq]
                cv = {m: float(sub[ia, ib, iq, METRICS[m]]) * (-1 if m == "hamming_loss" else 1)
                      for m in SHOW}
                row = {"dataset": name, "learner": learner, "k_ins": ka, "k_feat": kf,
                       "lam": lam, "cv_metrics": cv, "search_s": secs}
                if Xte is not None:
                    cls = {"lcif": LCIF, "lcif2": LCIF2, "instance_knn": InstanceKNN,
                           "feature_knn": FeatureKNN}[learner]
                    kw = {"lcif": dict(k_ins=ka, k_feat=kf, lam=lam),
                          "lcif2": dict(k_ins=ka, k_feat=kf, lam=lam),
                          "instance_knn": dict(k_ins=ka), "feature_knn": dict(k_feat=kf)}[learner]
                    m = cls(**kw).fit(Xtr, Ytr)
                    row["test_metrics"] = mlw.evaluate(Yte, m.predict(Xte), metrics=SHOW)
                    if a.per_metric and learner in ("lcif", "lcif2"):
                        per = {}
                        for met, best in res["best_by_metric"].items():
                            if met not in SHOW:
                                continue
                            mm = cls(k_ins=best["k_ins"], k_feat=best["k_feat"],
                                     lam=best["lam"]).fit(Xtr, Ytr)
                            per[met] = {"params": [best["k_ins"], best["k_feat"], best["lam"]],
                                        "test": mlw.evaluate(Yte, mm.predict(Xte),
                                                             metrics=[met])[met]}
                        row["test_per_metric_selection"] = per
                results[learner] = row
                print(json.dumps(row), flush=True)
                with open(a.out, "a") as fh:
                    fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
