"""What decoding for the measure gains on the shared Mulan datasets, per joint learner:
example-based F1 with the ``f1`` decoder (GFM) against F1 with the best of the
registered thresholds chosen on the training data, and subset accuracy with the
``subset`` decoder (the joint mode) against the 0.5 cut of the marginals; 10-fold
cross-validation (iterative stratification, seed 0) of the train and test splits
together (medical: its one file), differences with their standard errors over folds.

Each fold fits the learner once; the thresholds are fitted on its training scores
(``predict_proba`` on the training rows) and the one with the best training F1 is
applied to the test scores. Results are appended to a JSON-lines file, one line per
(learner, dataset, fold), so a run can be resumed and extended; ``table`` prints the
table of the docs from one or more such files (several runs merged; a fold recorded
twice counts once, its last record). Process CPU seconds of the fit and of each decoder are
recorded, and the mean expected F1 of the ``f1`` decoder's sets under the learner's own
model (against the realised F1: how well calibrated its joint is). One BLAS and one
numba thread.

    NUMBA_NUM_THREADS=1 python benchmarks/bench_decoders_mulan.py run --out gains.jsonl
        [--learners pcc,ctbn] [--datasets emotions,yeast,...] [--folds 10] [--only-folds 0,1]
    python benchmarks/bench_decoders_mulan.py table gains.jsonl [more.jsonl ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _shared import MULAN
from threadpoolctl import threadpool_limits

import mlw

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ("emotions", "yeast", "scene", "enron", "medical", "bibtex")
#: Registered thresholds that take no required option, and F1-tuned OneThreshold.
EXCLUDED_THRESHOLDS = ("fixed_per_label",)


def load_all(name: str) -> tuple[object, object]:
    """X and Y of the whole dataset (train and test stacked; medical has one file)."""
    if (MULAN / f"{name}.arff").exists():
        ds = mlw.load_dataset(MULAN / f"{name}.arff")
        return ds.X, ds.Y
    tr = mlw.load_dataset(MULAN / f"{name}-train.arff")
    te = mlw.load_dataset(MULAN / f"{name}-test.arff")
    stack = sp.vstack if sp.issparse(tr.X) else np.vstack
    X = stack([tr.X, te.X])
    Y = (sp.vstack([sp.csr_matrix(tr.Y), sp.csr_matrix(te.Y)]).tocsr()
         if sp.issparse(tr.Y) else np.vstack([tr.Y, te.Y]))
    return (X.tocsr() if sp.issparse(X) else X), Y


def threshold_choices() -> list[str]:
    names = [n for n in mlw.list_thresholds() if n not in EXCLUDED_THRESHOLDS]
    return names + ["one_threshold:metric=f1_example"]


def cpu(fn):
    c0 = time.process_time()
    out = fn()
    return out, time.process_time() - c0


def run_fold(learner_name: str, X, Y, train, test) -> dict:
    from mlw.learner import fit_threshold

    learner, fit_cpu = cpu(lambda: mlw.get_learner(learner_name).fit(X[train], Y[train]))
    Xte, Yte = X[test], Y[test]
    S_tr, S_te = learner.predict_proba(X[train]), learner.predict_proba(Xte)
    best = (-1.0, "")
    for choice in threshold_choices():
        strategy = fit_threshold(choice, lambda: S_tr, Y[train])
        f1_tr = mlw.evaluate(Y[train], strategy.predict(S_tr), metrics=["f1_example"])
        if f1_tr["f1_example"] > best[0]:
            best = (f1_tr["f1_example"], choice)
    strategy = fit_threshold(best[1], lambda: S_tr, Y[train])
    thr = mlw.evaluate(Yte, strategy.predict(S_te), metrics=["f1_example"])["f1_example"]
    cut = mlw.evaluate(Yte, mlw.get_threshold("fixed").fit(None, Y[train]).predict(S_te),
                       metrics=["subset_accuracy", "hamming_loss"])
    out = {"fit_cpu": fit_cpu, "f1_threshold": thr, "threshold": best[1],
           "subset_cut": cut["subset_accuracy"], "hamming_cut": cut["hamming_loss"]}
    for dec, metric in (("f1", "f1_example"), ("subset", "subset_accuracy"),
                        ("hamming", "hamming_loss")):
        res, c = cpu(lambda dec=dec: mlw.get_decoder(dec).decode_detailed(learner, Xte))
        out[f"{dec}_decoded"] = mlw.evaluate(Yte, res.labels, metrics=[metric])[metric]
        out[f"{dec}_route"] = res.route
        out[f"{dec}_cpu"] = c
        if dec == "f1" and res.expected is not None:
            out["f1_expected"] = float(np.mean(res.expected))
    return out


def run(args: argparse.Namespace) -> None:
    done = set()
    if Path(args.out).exists():
        for line in Path(args.out).read_text().splitlines():
            r = json.loads(line)
            done.add((r["learner"], r["dataset"], r["fold"]))
    for dataset in args.datasets.split(","):
        X, Y = load_all(dataset)
        folds = mlw.IterativeStratifiedKFold(n_splits=args.folds, seed=0).folds(Y)
        for learner_name in args.learners.split(","):
            for k in range(args.folds):
                if (learner_name, dataset, k) in done or (
                        args.only_folds is not None and k not in args.only_folds):
                    continue
                test = np.flatnonzero(folds == k)
                train = np.flatnonzero(folds != k)
                load = os.getloadavg()[0]
                rec = run_fold(learner_name, X, Y, train, test)
                rec.update(learner=learner_name, dataset=dataset, fold=k, load=load)
                with open(args.out, "a") as fh:
                    fh.write(json.dumps(rec) + "\n")
                print(f"{learner_name} {dataset} fold {k}: F1 {rec['f1_decoded']:.4f} vs "
                      f"{rec['f1_threshold']:.4f} ({rec['threshold']}), subset "
                      f"{rec['subset_decoded']:.4f} vs {rec['subset_cut']:.4f}, fit "
                      f"{rec['fit_cpu']:.1f} CPU s", file=sys.stderr, flush=True)


def expected(rs: list[dict]) -> str:
    """The mean over folds of the expected F1 of the ``f1`` decoder's sets under the
    learner's own model (beside the realised F1, a check of the model's calibration);
    "–" unless every fold recorded it."""
    if not rs or any("f1_expected" not in r for r in rs):
        return "–"
    return f"{np.mean([r['f1_expected'] for r in rs]):.4f}"


def table(paths: list[str]) -> None:
    records = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            r = json.loads(line)
            records[(r["learner"], r["dataset"], r["fold"])] = r
    rows = list(records.values())
    keys = sorted({(r["learner"], r["dataset"]) for r in rows},
                  key=lambda k: (k[0], DATASETS.index(k[1]) if k[1] in DATASETS else 99))
    print("| learner | dataset | folds | F1 `f1` | F1 best threshold | Δ F1 (± s.e.) | "
          "subset `subset` | subset 0.5 cut | Δ subset (± s.e.) | fit CPU s/fold | "
          "`f1` decode CPU s/fold | F1 `f1` expected by the model |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    wins = {}
    for learner, dataset in keys:
        rs = [r for r in rows if r["learner"] == learner and r["dataset"] == dataset]
        k = len(rs)

        def col(name, rs=rs):
            return np.array([r[name] for r in rs])

        df1 = col("f1_decoded") - col("f1_threshold")
        dsub = col("subset_decoded") - col("subset_cut")

        def se(d, k=k):
            return d.std(ddof=1) / np.sqrt(k) if k > 1 else float("nan")

        wins.setdefault(learner, [0, 0, 0])
        wins[learner][0] += df1.mean() >= 0
        wins[learner][1] += dsub.mean() >= 0
        wins[learner][2] += 1
        print(f"| {learner} | {dataset} | {k} | {col('f1_decoded').mean():.4f} | "
              f"{col('f1_threshold').mean():.4f} | {df1.mean():+.4f} ± {se(df1):.4f} | "
              f"{col('subset_decoded').mean():.4f} | {col('subset_cut').mean():.4f} | "
              f"{dsub.mean():+.4f} ± {se(dsub):.4f} | {col('fit_cpu').mean():.1f} | "
              f"{col('f1_cpu').mean():.2f} | {expected(rs)} |")
    print()
    print("| learner | datasets with F1 `f1` >= best threshold | "
          "datasets with subset `subset` >= 0.5 cut |")
    print("|---|---|---|")
    for learner, (a, b, n) in wins.items():
        print(f"| {learner} | {a} of {n} | {b} of {n} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--learners", default="pcc,ctbn")
    r.add_argument("--datasets", default=",".join(DATASETS))
    r.add_argument("--folds", type=int, default=10)
    r.add_argument("--only-folds", type=lambda v: {int(k) for k in v.split(",")},
                   default=None, help="run only these folds (e.g. 0,1), to split a long run")
    t = sub.add_parser("table")
    t.add_argument("paths", nargs="+")
    args = ap.parse_args()
    if args.command == "table":
        table(args.paths)
        return
    with threadpool_limits(limits=1, user_api="blas"):
        run(args)


if __name__ == "__main__":
    main()
