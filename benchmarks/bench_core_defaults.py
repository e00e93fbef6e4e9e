"""Every learner at its defaults on every shared dataset.

    nice -n 10 python benchmarks/bench_core_defaults.py [--datasets emotions,yeast,...]
        [--learners br,cc,...] [--cpu-limit 300] [--out benchmarks/results/defaults.jsonl]
    python benchmarks/bench_core_defaults.py --report benchmarks/results/defaults.jsonl

Protocol: the Mulan train -> test split (medical has none: a seeded iterative
stratification, fold 0 of 3 is the test part; MEKA's IMDB, only with ``--datasets imdb``,
none either: its first 72,551 rows train, the rest test); each learner is ``mlw.get_learner(name)``
with no parameter set, fit on the training part and scored on the test part.
Printed per cell: subset accuracy, example F1 and the empty-prediction rate
(``empty_prediction_rate``) next to the dataset's true empty rate in the test part, and
the same three for two fixed references every new user would try: one-vs-rest logistic
regression (scikit-learn, MaxAbsScaler + LogisticRegression C=1, cut at 0.5) and cosine
kNN (k=10, a label when at least half of the neighbours have it).

For every learner that predicts scores, the decision rules a default could be are
applied to the same fitted model ("alternatives": ``fixed`` 0.5, ``fixed`` with the
top-label rule ``auto``, ``cardinality`` with ``top_label="auto"``, ``pcut``, ``pcut``
with ``top_label="auto"``), so one
fit measures them all; the training scores for the strategies that need them are the
learner's own ``_training_scores`` where it defines them (LCIF, BRkNN: out-of-sample),
else ``predict_proba`` on the training part. A joint learner with the core's top-label
rule (``top_label``) also gets ``joint_raw``, its own decision without the rule (the
paper's), and, with ``log_proba_of``, ``joint_singleton``: an empty row filled with its
most probable single label argmax_j P({j} | x) instead of the top marginal.

Each cell runs in a child process with a CPU-time limit (RLIMIT_CPU, ``--cpu-limit``
seconds): a cell over it is recorded as ``cpu_limit``. CPU seconds are the child's
(fit + predict, after numba's on-disk cache is warm). Results are appended as JSON
lines, so an interrupted run keeps every finished cell and a re-run skips them.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _shared import SHARED_DATASETS

ROOT = Path(__file__).resolve().parents[1]
DATA = SHARED_DATASETS
DATASETS = ["emotions", "yeast", "scene", "flags", "birds", "genbase", "medical", "enron",
            "slashdot", "bibtex"]
#: opt-in (``--datasets imdb``): 120,919 rows, so a cell costs minutes; the first
#: 72,551 rows train, the rest test, as benchmarks/bench_lcif_imdb.py splits it
LARGE = ["imdb"]
IMDB_TRAIN = 72551
METRICS = ["subset_accuracy", "f1_example", "empty_prediction_rate"]
REFERENCES = ["ovr_lr", "knn_cos"]
SKIP = {"template_centroid"}  # the plugin template's example, not a method
_LOADED: dict[str, Any] = {}  # loaded in the parent once, inherited by the forked cells


def load(name: str) -> tuple[Any, Any, Any, Any]:
    import mlw

    if name == "imdb":  # MEKA's file has no split: the LCIF benchmarks' (60% / 40%)
        d = mlw.load_dataset(str(DATA / "meka" / "Imdb.arff.bz2"))
        return d.X[:IMDB_TRAIN], d.Y[:IMDB_TRAIN], d.X[IMDB_TRAIN:], d.Y[IMDB_TRAIN:]
    if name == "medical":
        from mlw.model_selection import iterative_stratification

        d = mlw.load_dataset(str(DATA / "mulan" / "medical.arff"))
        fold = iterative_stratification(d.Y, 3, seed=0)
        tr, te = np.flatnonzero(fold != 0), np.flatnonzero(fold == 0)
        return d.X[tr], d.Y[tr], d.X[te], d.Y[te]
    from mlw.model_selection import align_test

    tr = mlw.load_dataset(str(DATA / "mulan" / f"{name}-train.arff"))
    te = align_test(tr, mlw.load_dataset(str(DATA / "mulan" / f"{name}-test.arff")))
    return tr.X, tr.Y, te.X, te.Y


def _reference(name: str, Xtr: Any, Ytr: Any, Xte: Any) -> Any:
    import scipy.sparse as sp

    Yd = Ytr.toarray() if sp.issparse(Ytr) else np.asarray(Ytr)
    if name == "ovr_lr":
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import MaxAbsScaler

        sc = MaxAbsScaler().fit(Xtr)
        A, B = sc.transform(Xtr), sc.transform(Xte)
        P = np.zeros((B.shape[0], Yd.shape[1]), np.uint8)
        for j in range(Yd.shape[1]):
            y = Yd[:, j]
            if y.min() == y.max():
                P[:, j] = y[0]
                continue
            m = LogisticRegression(C=1.0, max_iter=1000).fit(A, y)
            P[:, j] = m.predict_proba(B)[:, 1] >= 0.5
        return P
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=min(10, Xtr.shape[0]), metric="cosine",
                          algorithm="brute").fit(Xtr)
    idx = nn.kneighbors(Xte, return_distance=False)
    return (Yd[idx].mean(axis=1) >= 0.5).astype(np.uint8)


def _alternatives(model: Any, Xtr: Any, Ytr: Any, S: Any, Yte: Any) -> dict[str, Any]:
    import mlw
    from mlw.thresholds import CardinalityMatching, FixedThreshold, PCut

    def train_scores() -> Any:
        if hasattr(model, "_training_scores") and not model._joint_prediction:
            return model._training_scores(Xtr, Ytr)
        return model.predict_proba(Xtr)

    cache: dict[str, Any] = {}

    def ts() -> Any:
        if "S" not in cache:
            cache["S"] = train_scores()
        return cache["S"]

    rules = {"fixed": lambda: FixedThreshold(0.5).fit(None, Ytr),
             "fixed_top_auto": lambda: FixedThreshold(0.5, top_label="auto").fit(None, Ytr),
             "cardinality_auto": lambda: CardinalityMatching(top_label="auto").fit(ts(), Ytr),
             "pcut": lambda: PCut().fit(None, Ytr),
             "pcut_top_auto": lambda: PCut(top_label="auto").fit(None, Ytr)}
    out: dict[str, Any] = {}
    for name, make in rules.items():
        try:
            rule = make()
            out[name] = mlw.evaluate(Yte, rule.predict(S), metrics=METRICS)
            if hasattr(rule, "threshold_"):
                out[name]["t"] = float(rule.threshold_)
        except Exception as e:  # noqa: BLE001 - a rule that cannot apply is reported
            out[name] = {"error": f"{type(e).__name__}: {e}"[:200]}
    return out


def run_cell(dataset: str, learner: str) -> dict[str, Any]:
    import mlw
    from mlw.metrics import empty_rate

    Xtr, Ytr, Xte, Yte = _LOADED[dataset] if dataset in _LOADED else load(dataset)
    rec: dict[str, Any] = {"dataset": dataset, "learner": learner,
                           "n_train": int(Xtr.shape[0]), "n_test": int(Xte.shape[0]),
                           "n_labels": int(Ytr.shape[1]),
                           "true_empty_train": empty_rate(Ytr),
                           "true_empty_test": empty_rate(Yte)}
    t0 = time.process_time()
    if learner in REFERENCES:
        P = _reference(learner, Xtr, Ytr, Xte)
        rec["decision"] = "fixed 0.5 (reference)"
        rec.update(mlw.evaluate(Yte, P, metrics=METRICS))
        rec["cpu_seconds"] = time.process_time() - t0
        return rec
    model = mlw.get_learner(learner)
    params = model.get_params(deep=False)
    rec["decision"] = (f"threshold {params['threshold']}"
                       if params.get("threshold") is not None else "joint")
    model.fit(Xtr, Ytr)
    P, S = model.predict_with_scores(Xte)
    rec["cpu_seconds"] = time.process_time() - t0
    rec.update(mlw.evaluate(Yte, P, metrics=METRICS))
    if hasattr(model, "threshold_"):
        rec["fitted_threshold"] = getattr(model.threshold_, "threshold_", None)
        rec["top_label"] = getattr(model.threshold_, "top_label_", None)
    if S is not None:
        rec["alternatives"] = _alternatives(model, Xtr, Ytr, S, Yte)
    if "top_label_" in vars(model):
        rec["top_label"] = model.top_label_
        rec["decision"] += f", top_label={params['top_label']}"
        rec.setdefault("alternatives", {}).update(_joint_rules(model, Xte, Yte))
    return rec


def _joint_rules(model: Any, Xte: Any, Yte: Any) -> dict[str, Any]:
    """A joint learner's own decision without the core's top-label rule
    (``joint_raw``, the paper's), and, for a joint model (``log_proba_of``), the rule's
    alternative that fills an empty row with its most probable single label,
    argmax_j P({j} | x) (``joint_singleton``), against the default's top marginal."""
    import scipy.sparse as sp

    import mlw

    raw = model._predict(Xte)
    raw = raw.toarray() if sp.issparse(raw) else np.asarray(raw)
    out = {"joint_raw": mlw.evaluate(Yte, raw, metrics=METRICS)}
    if hasattr(model, "log_proba_of"):  # where the rule is on (else the raw decision)
        empty = np.flatnonzero(~raw.any(axis=1) & bool(model.top_label_))
        P = raw.copy()
        if empty.size:
            L = raw.shape[1]
            logp = np.empty((empty.size, L))
            for j in range(L):
                Yj = np.zeros((empty.size, L), dtype=np.uint8)
                Yj[:, j] = 1
                logp[:, j] = model.log_proba_of(Xte[empty], Yj)
            P[empty, np.argmax(logp, axis=1)] = 1
        out["joint_singleton"] = mlw.evaluate(Yte, P, metrics=METRICS)
    return out


def _cpu_rlimit(cpu_limit: int) -> tuple[int, int]:
    """The child's (soft, hard) RLIMIT_CPU: ``cpu_limit`` seconds and 5 s of grace,
    within the hard limit inherited from the shell (``ulimit -t``), which a process can
    lower but never raise (raising it made every cell fail as a CPU-limit cell)."""
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    new_hard = cpu_limit + 5 if hard == resource.RLIM_INFINITY else min(cpu_limit + 5, hard)
    return min(cpu_limit, new_hard), new_hard


def _child(dataset: str, learner: str, cpu_limit: int, conn: Any) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, _cpu_rlimit(cpu_limit))
    try:
        import numba

        numba.set_num_threads(1)
    except Exception:  # noqa: BLE001
        pass
    try:
        conn.send(run_cell(dataset, learner))
    except BaseException as e:  # noqa: BLE001 - the cell's failure is its result
        conn.send({"dataset": dataset, "learner": learner,
                   "error": f"{type(e).__name__}: {e}"[:300]})


def run_isolated(dataset: str, learner: str, cpu_limit: int) -> dict[str, Any]:
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child, args=(dataset, learner, cpu_limit, send))
    start = time.perf_counter()
    p.start()
    send.close()
    try:
        rec = recv.recv()
    except EOFError:
        rec = {"dataset": dataset, "learner": learner, "error": "cpu_limit",
               "cpu_limit": cpu_limit}
    p.join()
    rec["wall_seconds"] = time.perf_counter() - start
    rec["load"] = os.getloadavg()[0]
    return rec


def learners() -> list[str]:
    import mlw

    return REFERENCES + [n for n in mlw.list_learners() if n not in SKIP]


def _fmt(rec: dict[str, Any]) -> str:
    if "error" in rec:
        return f"{rec['error'][:60]}"
    return (f"{rec['subset_accuracy']:.3f} {rec['f1_example']:.3f} "
            f"{rec['empty_prediction_rate']:.3f}")


def report(path: Path, alternatives: bool, derive: tuple[str, ...] = ()) -> None:
    recs = [json.loads(line) for p in str(path).split(",")
            for line in Path(p).read_text().splitlines() if line.strip()]
    measured = list(recs)  # before the derived rows below
    by = {(r["dataset"], r["learner"]): r for r in recs}
    for (d, lname), r in list(by.items()):
        # BR's model is exactly the ovr_lr reference (MaxAbsScaler + LR, C=1): where the
        # reference cell was not run, its row is BR's fitted model cut at 0.5
        fixed = r.get("alternatives", {}).get("fixed")
        if lname == "br" and (d, "ovr_lr") not in by and fixed and "error" not in fixed:
            by[(d, "ovr_lr")] = {**r, **fixed, "learner": "ovr_lr",
                                 "decision": "fixed 0.5 (reference)", "alternatives": {}}
            recs.append(by[(d, "ovr_lr")])
    for lname in derive:
        # learners whose default became DEFAULT_THRESHOLD on their marginals after part
        # of the run: "NAME (own)" is the cell at its own joint decision, "NAME" the
        # cardinality_auto rule on the same fit (what the default now computes)
        for (d, l2), r in list(by.items()):
            if l2 != lname or "error" in r:
                continue
            alt = r.get("alternatives", {}).get("cardinality_auto")
            if r.get("decision") == "joint" and "fitted_threshold" not in r:
                by[(d, f"{lname} (own)")] = {**r, "learner": f"{lname} (own)"}
                recs.append(by[(d, f"{lname} (own)")])
            if alt and "error" not in alt:
                by[(d, lname)] = {**r, **alt, "decision": "threshold cardinality:top_label=auto"}
    ds = [d for d in DATASETS + LARGE if any(k[0] == d for k in by)]
    first = REFERENCES + ["br", "cc", "pcc", "ml_xgb", "br_xgb", "xdcc", "lacovac", "lcif"]
    ls = sorted(dict.fromkeys(k[1] for k in by),
                key=lambda n: (n.endswith("(own)"), first.index(n) if n in first else 99, n))
    true = {d: next((r["true_empty_test"] for r in recs
                     if r["dataset"] == d and "true_empty_test" in r), float("nan"))
            for d in ds}
    print("cells: subset accuracy / example F1 / empty-prediction rate; "
          "`!` marks an empty rate above twice the true one (and above 1%)\n")
    print("| learner | decision | " + " | ".join(f"{d} (true empty {true[d]:.3f})"
                                                 for d in ds) + " |")
    print("|---|---|" + "---|" * len(ds))
    # a learner's decision is its most recently measured cell's (files in the order given)
    rank = {id(r): i for i, r in enumerate(recs)}
    for lname in ls:
        cells = [by[(d, lname)] for d in ds
                 if (d, lname) in by and "decision" in by[(d, lname)]]
        latest = max(cells, key=lambda r: rank.get(id(r), len(recs)), default={})
        row = [lname, latest.get("decision", "")]
        for d in ds:
            r = by.get((d, lname))
            if r is None:
                row.append("—")
            elif "error" in r:
                row.append("cpu limit" if r["error"] == "cpu_limit" else "error")
            else:
                e = r["empty_prediction_rate"]
                bad = "!" if e > max(2 * true[d], 0.01) else ""
                row.append(f"{r['subset_accuracy']:.3f} / {r['f1_example']:.3f} / "
                           f"{e:.3f}{bad}")
        print("| " + " | ".join(row) + " |")
    cpu = sum(r.get("cpu_seconds", 0.0) for r in measured)
    wall = sum(r.get("wall_seconds", 0.0) for r in measured)
    loads = [r["load"] for r in measured if "load" in r]
    print(f"\n{len(measured)} cells measured, {cpu / 60:.1f} CPU-minutes in fit + predict "
          f"({wall / 60:.0f} wall-minutes, load average "
          f"{min(loads, default=0):.0f}-{max(loads, default=0):.0f} on 2 cores)")
    if not alternatives:
        return
    print("\nalternatives (same fit): subset accuracy / example F1 / empty rate per rule\n")
    rules = ["fixed", "fixed_top_auto", "cardinality_auto", "pcut", "pcut_top_auto",
             "joint_raw", "joint_singleton"]
    print("| learner | dataset | " + " | ".join(rules) + " |")
    print("|---|---|" + "---|" * len(rules))
    for lname in ls:
        for d in ds:
            r = by.get((d, lname))
            if not r or not r.get("alternatives"):
                continue
            cells = []
            for rule in rules:
                a = r["alternatives"].get(rule)
                if a is None:  # a rule added after the cell was measured
                    cells.append("—")
                    continue
                cells.append("error" if "error" in a or not a else
                             f"{a['subset_accuracy']:.3f} / {a['f1_example']:.3f} / "
                             f"{a['empty_prediction_rate']:.3f}")
            print(f"| {lname} | {d} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--learners", default=None, help="comma-separated; default: all")
    ap.add_argument("--cpu-limit", type=int, default=300)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "defaults.jsonl"))
    ap.add_argument("--report", default=None,
                    help="print the table of results files (comma-separated)")
    ap.add_argument("--alternatives", action="store_true",
                    help="with --report: the decision rules compared on the same fits")
    ap.add_argument("--derive", default=None,
                    help="with --report: learners measured at their own joint decision "
                         "whose default is now DEFAULT_THRESHOLD on the marginals")
    ap.add_argument("--rerun", action="store_true", help="re-run cells already in --out")
    args = ap.parse_args()
    if args.report:
        report(Path(args.report), args.alternatives,
               tuple(args.derive.split(",")) if args.derive else ())
        return
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists() and not args.rerun:
        done = {(r["dataset"], r["learner"]) for r in map(json.loads, out.read_text()
                                                          .splitlines()) if r}
    import mlw

    names = args.learners.split(",") if args.learners else learners()
    total = time.process_time()
    import sklearn.linear_model  # noqa: F401 - imported once, before the cells fork
    import sklearn.neighbors  # noqa: F401

    for lname in names:  # every learner's module, imported once before forking
        if lname not in REFERENCES:
            mlw.list_learners()[lname].load()
    for d in args.datasets.split(","):
        _LOADED.clear()
        for lname in names:
            if (d, lname) in done:
                continue
            if d not in _LOADED:
                _LOADED[d] = load(d)
            rec = run_isolated(d, lname, args.cpu_limit)
            with out.open("a") as f:
                f.write(json.dumps(rec) + "\n")
            print(f"{d:9s} {lname:16s} {_fmt(rec)}  cpu {rec.get('cpu_seconds', 0):7.1f}s "
                  f"wall {rec['wall_seconds']:7.1f}s load {rec['load']:.1f}", flush=True)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"children CPU {ru.ru_utime + ru.ru_stime:.0f}s, parent "
          f"{time.process_time() - total:.0f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
