"""Quality and time of the baselines on the Mulan train/test splits.

    python benchmarks/bench_baselines_quality.py [--datasets emotions,yeast,scene,enron]
        [--learners br,cc,lp,pcc,rakel,ecc,epcc,homer,mlknn,brknn,iblr]
        [--base logistic_regression] [--json out.json]

Every learner uses its defaults (base classifier: MaxAbsScaler + logistic regression,
C=1; BR thresholds at 0.5; CC/PCC in the labels' own order; PCC exact up to 15
labels, beam width 16 above). Data come from ``mlw.load_dataset`` and scores from
``mlw.evaluate`` (``log_loss`` is MEKA's capped per-label log loss; ``cll_loss`` the
summed -log P(y|x) of the joint learners, from ``log_proba_of``); learners without a
``base_estimator`` (mlknn, brknn) ignore ``--base``. Times are CPU
seconds of this process (time.process_time) for one fit and one predict +
predict_proba (+ log_proba_of), after numba compilation.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from _shared import MULAN

import mlw

DATA = MULAN
METRICS = ["subset_accuracy", "hamming_loss", "accuracy", "f1_example", "f1_micro",
           "f1_macro", "log_loss", "cll_loss"]


def run(dataset: str, learner: str, base: str) -> dict[str, object]:
    tr = mlw.load_dataset(DATA / f"{dataset}-train.arff")
    te = mlw.load_dataset(DATA / f"{dataset}-test.arff")
    takes_base = "base_estimator" in mlw.list_learners()[learner].signature_params()
    model = mlw.get_learner(learner, **({"base_estimator": base} if takes_base else {}))
    t = time.process_time()
    model.fit(tr.X, tr.Y)
    fit_s = time.process_time() - t
    t = time.process_time()
    P = model.predict(te.X)
    S = model.predict_proba(te.X)
    lp = model.log_proba_of(te.X, te.Y) if hasattr(model, "log_proba_of") else None
    pred_s = time.process_time() - t
    names = [m for m in METRICS if m != "cll_loss" or lp is not None]
    scores = mlw.evaluate(te.Y, P, scores=S, metrics=names, log_proba=lp)
    return {"dataset": dataset, "learner": learner, "base": base,
            "n_train": tr.X.shape[0], "n_test": te.X.shape[0], "n_labels": tr.Y.shape[1],
            "fit_seconds": fit_s, "predict_seconds": pred_s, **scores}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="emotions,yeast")
    ap.add_argument("--learners", default="br,cc,lp,pcc")
    ap.add_argument("--base", default="logistic_regression")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    # compile the numba kernels outside the timings
    X = np.random.default_rng(0).normal(size=(20, 3))
    Y = (X[:, :2] > 0).astype(np.uint8)
    for name in ("cc", "pcc"):
        mlw.get_learner(name).fit(X, Y).predict(X)
    mlw.get_learner("pcc", max_exact_labels=0).fit(X, Y).predict(X)
    for name in ("epcc", "mlknn"):
        if name in args.learners.split(","):
            mlw.get_learner(name).fit(X, Y).predict(X)

    rows = []
    head = (f"{'dataset':<9} {'learner':<7} {'subset':>7} {'hamming':>8} {'jaccard':>8} "
            f"{'f1_ex':>7} {'f1_mi':>7} {'f1_ma':>7} {'logloss':>8} {'cll':>9} "
            f"{'fit s':>7} {'pred s':>7}")
    print(head)
    for ds in args.datasets.split(","):
        for name in args.learners.split(","):
            r = run(ds, name, args.base)
            rows.append(r)
            cll = r.get("cll_loss")
            cll_s = f"{cll:9.1f}" if cll is not None else f"{'-':>9}"
            print(f"{ds:<9} {name:<7} {r['subset_accuracy']:7.4f} {r['hamming_loss']:8.4f} "
                  f"{r['accuracy']:8.4f} {r['f1_example']:7.4f} {r['f1_micro']:7.4f} "
                  f"{r['f1_macro']:7.4f} {r['log_loss']:8.4f} {cll_s} "
                  f"{r['fit_seconds']:7.2f} {r['predict_seconds']:7.2f}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
