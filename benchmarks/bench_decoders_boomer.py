"""mlw's learners decoded for each measure beside BOOMER (gradient-boosted multi-label
rules, ``mlrl-boomer``) at its defaults and with its non-decomposable logistic loss, on
the shared train/test splits of emotions, yeast, scene, enron and bibtex: subset
accuracy, Hamming loss and example-based F1, with process CPU seconds beside each.

Every mlw learner is fitted once per dataset and decoded three ways: ``subset`` for
subset accuracy, ``hamming`` for Hamming loss, ``f1`` for example F1 (each measure
scored on the labels decoded for it). BOOMER runs in its own environment (it pins older
numpy and scikit-learn; a benchmark-only dependency) on the same matrices, exported
once; its metrics are computed here with the conventions of ``mlw.evaluate`` (an empty
true and predicted set has F1 1). BOOMER fits on one thread (its parallel options for
rule refinement and statistic updates off; prediction at its default, see
``boomer_one``), mlw with one BLAS and one numba thread.

    python benchmarks/bench_decoders_boomer.py export --work DIR
    /path/to/boomer-venv/bin/python benchmarks/bench_decoders_boomer.py boomer --work DIR
    python benchmarks/bench_decoders_boomer.py ours --work DIR [--learners br,pcc,...]
        (a learner may carry parameters: lp:base_estimator=sklearn.svm.SVC,base__probability=true)
    python benchmarks/bench_decoders_boomer.py table --work DIR
    python benchmarks/bench_decoders_boomer.py cv --work DIR --datasets scene --learners lp,...
        (5-fold cross-validation on the train splits only: how a configuration is chosen)

Results are appended to ``DIR/results.jsonl`` (one line per learner and dataset; a
rerun skips what is there).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _shared import MULAN

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ("emotions", "yeast", "scene", "enron", "bibtex")
MEASURES = (("subset_accuracy", "subset", True), ("hamming_loss", "hamming", False),
            ("f1_example", "f1", True))
BOOMER_VARIANTS = {"boomer": {}, "boomer_nd": {"loss": "logistic-non-decomposable"}}


def scores_of(Y: np.ndarray, P: np.ndarray) -> dict[str, float]:
    """Subset accuracy, Hamming loss and example F1 (F1 of two empty sets: 1)."""
    Y, P = np.asarray(Y, dtype=bool), np.asarray(P, dtype=bool)
    tp = (Y & P).sum(axis=1)
    den = Y.sum(axis=1) + P.sum(axis=1)
    f1 = np.where(den > 0, 2 * tp / np.maximum(den, 1), 1.0)
    return {"subset_accuracy": float(np.mean((Y == P).all(axis=1))),
            "hamming_loss": float(np.mean(Y != P)), "f1_example": float(f1.mean())}


def _dense(M):
    return M.toarray() if sp.issparse(M) else np.asarray(M)


def _done(work: Path) -> set:
    path = work / "results.jsonl"
    if not path.exists():
        return set()
    return {(r["learner"], r["dataset"]) for r in map(json.loads, path.read_text().splitlines())}


def _append(work: Path, rec: dict) -> None:
    with open(work / "results.jsonl", "a") as fh:
        fh.write(json.dumps(rec) + "\n")
    print(json.dumps(rec), flush=True)


def export(work: Path) -> None:
    import mlw

    work.mkdir(parents=True, exist_ok=True)
    for name in DATASETS:
        tr = mlw.load_dataset(MULAN / f"{name}-train.arff")
        te = mlw.load_dataset(MULAN / f"{name}-test.arff")
        for part, ds in (("train", tr), ("test", te)):
            sp.save_npz(work / f"{name}-{part}-X.npz", sp.csr_matrix(ds.X))
            sp.save_npz(work / f"{name}-{part}-Y.npz", sp.csr_matrix(ds.Y))


def _load(work: Path, name: str, part: str):
    return (sp.load_npz(work / f"{name}-{part}-X.npz"),
            sp.load_npz(work / f"{name}-{part}-Y.npz"))


def boomer(work: Path, datasets: list[str], attempts: int = 5) -> None:
    """Each (variant, dataset) in a child process, so that a crash of BOOMER's native code
    loses one cell only, tried up to ``attempts`` times (a fit is deterministic:
    ``random_state=1``)."""
    import subprocess
    import sys

    done = _done(work)
    for name in datasets:
        for variant in BOOMER_VARIANTS:
            for attempt in range(attempts):
                if (variant, name) in done:
                    break
                subprocess.run([sys.executable, __file__, "boomer-one", "--work", str(work),
                                "--datasets", name, "--variant", variant], check=False)
                done = _done(work)
                if (variant, name) not in done:
                    print(f"{variant} {name}: attempt {attempt + 1} aborted", flush=True)


def boomer_one(work: Path, name: str, variant: str) -> None:
    from mlrl.boosting import Boomer

    # fit on one thread. Prediction stays at its default (parallel): mlrl-boomer 0.11.4
    # and 0.12.3 with parallel_prediction="false" size the score buffer of their binary
    # predictor for fewer threads than OpenMP runs, write past it and abort (or corrupt
    # the heap) in predict() on every dataset; predict_proba is not affected
    off = {"parallel_rule_refinement": "false", "parallel_statistic_update": "false"}
    Xtr, Ytr = _load(work, name, "train")
    Xte, Yte = _load(work, name, "test")
    c0 = time.process_time()
    model = Boomer(random_state=1, **off, **BOOMER_VARIANTS[variant]).fit(Xtr, _dense(Ytr))
    P = _dense(model.predict(Xte))
    rec = {"learner": variant, "dataset": name, "cpu": time.process_time() - c0,
           "load": os.getloadavg()[0]}
    rec.update(scores_of(_dense(Yte), P))
    _append(work, rec)


def _learner(spec: str):
    """An unfitted mlw learner from a name or a spec ``NAME:key=value,...``."""
    import mlw
    from mlw.experiments.config import learner_from_spec

    entry = learner_from_spec(spec)
    params = dict(entry.params)
    if entry.threshold is not None:
        params["threshold"] = entry.threshold
    return mlw.get_learner(entry.learner, **params)


def _decoded(model, X, Y: np.ndarray, rec: dict) -> float:
    """Each measure of ``MEASURES`` on the labels decoded for it, into ``rec``; returns
    the CPU seconds of the three decodings."""
    import mlw

    total = 0.0
    for metric, decoder, _ in MEASURES:
        c0 = time.process_time()
        res = mlw.get_decoder(decoder).decode_detailed(model, X)
        total += time.process_time() - c0
        rec[metric] = scores_of(Y, _dense(res.labels))[metric]
        rec[f"{decoder}_route"] = res.route
    return total


def _train_test(work: Path, name: str):
    Xtr, Ytr = _load(work, name, "train")
    Xte, Yte = _load(work, name, "test")
    if Xtr.nnz > 0.3 * Xtr.shape[0] * Xtr.shape[1]:  # dense data stays dense
        Xtr, Xte = Xtr.toarray(), Xte.toarray()
    return Xtr, _dense(Ytr).astype(np.uint8), Xte, _dense(Yte)


def ours(work: Path, learners: list[str], datasets: list[str]) -> None:
    done = _done(work)
    for name in datasets:
        Xtr, Ytr_d, Xte, Yte_d = _train_test(work, name)
        for learner_name in learners:
            if (learner_name, name) in done:
                continue
            c0 = time.process_time()
            model = _learner(learner_name).fit(Xtr, Ytr_d)
            fit_cpu = time.process_time() - c0
            rec = {"learner": learner_name, "dataset": name, "fit_cpu": fit_cpu,
                   "load": os.getloadavg()[0]}
            rec["cpu"] = fit_cpu + _decoded(model, Xte, Yte_d, rec)
            own = scores_of(Yte_d, _dense(model.predict(Xte)))
            rec.update({f"own_{m}": v for m, v in own.items()})
            _append(work, rec)


def cross_validate(work: Path, learners: list[str], datasets: list[str],
                   folds: int = 5) -> None:
    """``folds``-fold cross-validation on each dataset's TRAIN split only (iterative
    stratification, seed 0), decoded per measure: how a learner or a configuration is
    chosen without looking at the test split. Mean ± standard error over the folds."""
    from mlw.model_selection import iterative_stratification

    for name in datasets:
        X, Y, _, _ = _train_test(work, name)
        fold = iterative_stratification(Y, folds, seed=0)
        for spec in learners:
            c0 = time.process_time()
            recs = []
            for f in range(folds):
                model = _learner(spec).fit(X[fold != f], Y[fold != f])
                rec: dict = {}
                _decoded(model, X[fold == f], Y[fold == f], rec)
                recs.append(rec)
            cells = []
            for metric, _, _ in MEASURES:
                v = np.array([r[metric] for r in recs])
                cells.append(f"{metric} {v.mean():.4f} ± {v.std(ddof=1) / np.sqrt(folds):.4f}")
            print(f"{name} {spec}: " + ", ".join(cells) +
                  f" ({time.process_time() - c0:.1f} CPU s)", flush=True)


def table(work: Path) -> None:
    rows = [json.loads(line) for line in (work / "results.jsonl").read_text().splitlines()]
    by = {(r["learner"], r["dataset"]): r for r in rows}
    datasets = [d for d in DATASETS if any(k[1] == d for k in by)]
    print("| dataset | measure | best mlw (decoded) | BOOMER | BOOMER non-decomposable | "
          "mlw ahead of both |")
    print("|---|---|---|---|---|---|")
    wins = {m: 0 for m, _, _ in MEASURES}
    for d in datasets:
        ours_rows = [r for (lrn, dd), r in by.items() if dd == d and not lrn.startswith("boomer")]
        for metric, _, higher in MEASURES:
            if not ours_rows:
                continue
            best = (max if higher else min)(ours_rows, key=lambda r, m=metric: r[m])
            b = [by.get((v, d)) for v in BOOMER_VARIANTS]
            vals = [x[metric] if x else None for x in b]
            compared = all(v is not None for v in vals)
            ahead = compared and all((best[metric] > v if higher else best[metric] < v)
                                     for v in vals)
            wins[metric] += ahead
            # bibtex's Hamming losses differ in the sixth decimal
            digits = 6 if metric == "hamming_loss" else 4
            cells = [f"{v:.{digits}f} ({x['cpu']:.1f} s)" if x else "—"
                     for v, x in zip(vals, b, strict=True)]
            print(f"| {d} | {metric} | {best[metric]:.{digits}f} `{best['learner']}` "
                  f"({best['cpu']:.1f} s) | {cells[0]} | {cells[1]} | "
                  f"{('yes' if ahead else 'no') if compared else '—'} |")
    print()
    n_compared = sum(all((v, d) in by for v in BOOMER_VARIANTS) for d in datasets)
    for metric, n in wins.items():
        print(f"{metric}: best mlw ahead of both BOOMER variants on {n} of {n_compared} "
              f"datasets with both")
    print()
    print("| learner | dataset | subset (`subset`) | own subset | Hamming (`hamming`) | "
          "own Hamming | F1 (`f1`) | own F1 | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (lrn, d), r in sorted(by.items(), key=lambda kv: (DATASETS.index(kv[0][1]), kv[0][0])):
        if lrn.startswith("boomer"):
            continue
        print(f"| {lrn} | {d} | {r['subset_accuracy']:.4f} | {r['own_subset_accuracy']:.4f} | "
              f"{r['hamming_loss']:.4f} | {r['own_hamming_loss']:.4f} | "
              f"{r['f1_example']:.4f} | {r['own_f1_example']:.4f} | {r['cpu']:.1f} |")


def split_learners(text: str) -> list[str]:
    """``"lp,lp:base_estimator=sklearn.svm.SVC,base__probability=true,pcc"`` -> the three
    learner specs: a comma ends a learner unless a ``key=`` follows it."""
    return [s for s in re.split(r",(?!\s*[A-Za-z_]\w*\s*=)", text) if s.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=("export", "boomer", "boomer-one", "ours", "cv", "table"))
    ap.add_argument("--variant", default="boomer")
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--learners", default="br,ml_xgb,pcc,epcc,ctbn,mc,lp,pct_forest",
                    help="learners, each a name or a spec NAME:key=value,key=value (a "
                         "comma starts the next learner unless key= follows it)")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    args = ap.parse_args()
    datasets = args.datasets.split(",")
    if args.step == "export":
        export(args.work)
    elif args.step == "boomer":
        boomer(args.work, datasets)
    elif args.step == "boomer-one":
        boomer_one(args.work, datasets[0], args.variant)
    elif args.step in ("ours", "cv"):
        from threadpoolctl import threadpool_limits

        run = ours if args.step == "ours" else cross_validate
        with threadpool_limits(limits=1, user_api="blas"):
            run(args.work, split_learners(args.learners), datasets)
    else:
        table(args.work)


if __name__ == "__main__":
    main()
