"""Quality of BR, CC, ML-XGB, XDCC-std and XDCC-cum (the xdcc plugin) as in the paper.

    python benchmarks/quality_xdcc.py --grid small|deep|medium|full|text [--datasets ...]
                                      [--out results.jsonl] [--seed 0] [--table-only]
                                      [--refine-xdcc-split]

Protocol (Bohlender, Loza Mencía, Kulessa, DS 2020): for every method and dataset the
hyper-parameters are chosen on a 20% validation part of the Mulan train split (fit on
the other 80%) by example-based F1; the chosen setting is refit on the whole train
split and evaluated on the test split (Hamming accuracy = 1 - Hamming loss, subset
accuracy, example F1, training time).  XDCC-std and XDCC-cum come from the same
fitted chains (they differ only in the final decision, Eq. 9) but are tuned separately.
``medical`` has no split: it is evaluated by 10-fold CV; the setting is tuned once, on
a 20% validation part of the first fold's train part, and refit in every fold (tuning
in all ten folds did not fit the budget).

The rounds are a prefix: a booster fit with 200 rounds *is* the 50- and 100-round
booster up to its 50th/100th tree (``staged_predict*``, pinned equal to fresh fits by
``plugins/xdcc/tests/test_xdcc_staged.py``), so BR, CC and ML-XGB fit once per (depth,
eta, split) and score all rounds.  Not so for XDCC: round r of the chain propagates with
the *final* predictions of round r-1, so every rounds value is a separate chain fit.
The chain length is a prefix too: one chain of the default length (ceil(cardinality)
+ 1) scores every shorter chain; ``XDCC-*`` use the default length, ``XDCC-*-c`` also
tune the chain length in 1..default on the same validation part.

Grids (``split`` only matters for multi-label boosters; BR and CC boost one label):
* small: rounds {50}, depth {4}, eta {0.1, 0.3}, split {sum_gain, max_weight}
* deep:  one setting, rounds 200, depth 6, eta 0.1, sum_gain (a capacity check)
* full:  rounds {50, 100, 200} x depth {3, 6, 9} x eta {0.1, 0.3, 0.5} x six splits
  for ML-XGB (162 settings, 54 fits), BR and CC (27 settings, 9 fits); XDCC: rounds x
  depth x eta in full (27 chain fits) with the split criterion ML-XGB chose on the same
  validation part (the six-fold split grid for XDCC, 162 chain fits, did not fit the
  budget of two shared cores); ``--refine-xdcc-split`` afterwards scores XDCC's five
  other split criteria at each (rounds, depth, eta) an XDCC variant chose (5-20 chain
  fits) and appends the updated XDCC record (grid ``full+xdcc_split``)
* medium: the subgrid that fitted the session (2 cores shared by 4 jobs, load 4-6):
  rounds {50, 100, 200} x depth {3, 6} x eta {0.1, 0.3} x six splits for ML-XGB (72
  settings, 24 fits), BR and CC (12 settings, 4 fits); XDCC: rounds {50, 100} x depth
  {3, 6} x eta {0.1, 0.3} with ML-XGB's chosen split (8 chain fits)
* text:  the subgrid run on enron and bibtex: rounds {50, 100} x depth {6} x eta {0.3}
  x sum_gain (one fit per family; XDCC: rounds {100}, one chain fit)

Results are appended (one JSON object per dataset and method family) to ``--out`` as
they finish, and a markdown table with average ranks is printed at the end (or with
``--table-only``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

import mlw

ROOT = Path(__file__).resolve().parents[1]
MULAN = ROOT.parent / "shared" / "datasets" / "mulan"
METHODS = ("BR", "CC", "ML-XGB", "XDCC-std", "XDCC-cum")
TUNED_C = ("XDCC-std-c", "XDCC-cum-c")
MEASURES = ("hamming_accuracy", "subset_accuracy", "f1_example", "train_seconds")
ALL_SPLITS = ("sum_gain", "max_gain", "sum_weight", "max_weight", "sum_abs_g", "max_abs_g")
FAMILIES = ("ML-XGB", "BR", "CC", "XDCC")  # ML-XGB first: XDCC's full grid uses its split
GRIDS = {
    "small": dict(n_estimators=[50], max_depth=[4], learning_rate=[0.1, 0.3],
                  split=["sum_gain", "max_weight"]),
    "deep": dict(n_estimators=[200], max_depth=[6], learning_rate=[0.1], split=["sum_gain"]),
    "full": dict(n_estimators=[50, 100, 200], max_depth=[3, 6, 9],
                 learning_rate=[0.1, 0.3, 0.5], split=list(ALL_SPLITS)),
    "medium": dict(n_estimators=[50, 100, 200], max_depth=[3, 6], learning_rate=[0.1, 0.3],
                   split=list(ALL_SPLITS)),
    "text": dict(n_estimators=[50, 100], max_depth=[6], learning_rate=[0.3],
                 split=["sum_gain"]),
}
#: XDCC's rounds cannot be staged; under these grids it gets fewer rounds values
XDCC_ROUNDS = {"medium": [50, 100], "text": [100]}
#: grids under which XDCC uses the split criterion ML-XGB chose
XDCC_SPLIT_FROM_ML = ("full", "medium")


def dense(Y):
    return np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.uint8)


def scores(Y, P) -> dict:
    r = mlw.evaluate(Y, P, metrics=["hamming_loss", "subset_accuracy", "f1_example"])
    return {"hamming_accuracy": 1 - r["hamming_loss"], "subset_accuracy": r["subset_accuracy"],
            "f1_example": r["f1_example"]}


def f1(Y, P) -> float:
    return float(mlw.evaluate(Y, P, metrics=["f1_example"])["f1_example"])


def default_chain_length(Y) -> int:
    return int(min(Y.shape[1], math.ceil(Y.sum(axis=1).mean()) + 1))


def product(grid: dict, keys: list[str]) -> list[dict]:
    return [dict(zip(keys, v, strict=True)) for v in itertools.product(*(grid[k] for k in keys))]


def validation_scores(family: str, grid: dict, Xfi, Yfi, Xva, Yva, seed: int, split=None,
                      xdcc_rounds=None):
    """Every setting of the grid scored on the validation part: yields
    (variant, cfg, example F1).  Rounds are staged where that is exact (BR, CC, ML)."""
    from mlw_xdcc import BRXGB, CCXGB, MLXGB, XDCC

    rounds = sorted(grid["n_estimators"])
    if family in ("BR", "CC", "ML-XGB"):
        keys = ["max_depth", "learning_rate"] + (["split"] if family == "ML-XGB" else [])
        cls = {"BR": BRXGB, "CC": CCXGB, "ML-XGB": MLXGB}[family]
        for base in product(grid, keys):
            m = cls(n_estimators=rounds[-1], **base, random_state=seed).fit(Xfi, Yfi)
            for k, P in zip(rounds, m.staged_predict(Xva, rounds), strict=True):
                yield family, {"n_estimators": k, **base}, f1(Yva, P)
        return
    c = default_chain_length(Yfi)
    g = dict(grid, split=[split] if split else grid["split"])
    g["n_estimators"] = xdcc_rounds or grid["n_estimators"]
    for cfg in product(g, ["n_estimators", "max_depth", "learning_rate", "split"]):
        m = XDCC(chain_length=c, **cfg, random_state=seed).fit(Xfi, Yfi)
        for r, both in enumerate(m.staged_predict_all(Xva), start=1):
            for v in ("std", "cum"):
                s = f1(Yva, both[v])
                if r == c:
                    yield f"XDCC-{v}", dict(cfg), s
                yield f"XDCC-{v}-c", {**cfg, "chain_length": r}, s


def refit(variant: str, cfg: dict, Xtr, Ytr, Xte, seed: int):
    """Fit the chosen setting on the whole train split: (test predictions, CPU s)."""
    from mlw_xdcc import BRXGB, CCXGB, MLXGB, XDCC

    cfg = dict(cfg)
    t = time.process_time()
    if variant.startswith("XDCC"):
        c = cfg.pop("chain_length", None) or default_chain_length(Ytr)
        m = XDCC(chain_length=c, **cfg, random_state=seed).fit(Xtr, Ytr)
        fit = time.process_time() - t
        return m.predict_all(Xte), fit
    cls = {"BR": BRXGB, "CC": CCXGB, "ML-XGB": MLXGB}[variant]
    m = cls(**cfg, random_state=seed).fit(Xtr, Ytr)
    fit = time.process_time() - t
    return m.predict(Xte), fit


def tune(family: str, grid: dict, Xtr, Ytr, seed: int, log, split=None,
         xdcc_rounds=None) -> dict:
    """The paper's tuning on one train split: {variant: (val F1, cfg)}."""
    n = Xtr.shape[0]
    perm = np.random.default_rng(seed).permutation(n)
    n_val = max(1, int(round(0.2 * n)))
    va, fi = np.sort(perm[:n_val]), np.sort(perm[n_val:])
    best: dict[str, tuple[float, dict]] = {}
    t = time.time()
    count = 0
    for variant, cfg, s in validation_scores(family, grid, Xtr[fi], Ytr[fi], Xtr[va], Ytr[va],
                                             seed, split, xdcc_rounds):
        count += 1
        if variant not in best or s > best[variant][0]:
            best[variant] = (s, cfg)
    log(f"    {family}: {count} scored settings in {time.time() - t:.0f}s wall")
    return best


def evaluate_choice(best: dict, Xtr, Ytr, Xte, Yte, seed: int, log) -> dict:
    out, cache = {}, {}
    for variant, (f1_val, cfg) in best.items():
        fam = "XDCC" if variant.startswith("XDCC") else variant
        key = (fam, json.dumps(cfg, sort_keys=True))
        if key not in cache:
            cache[key] = refit(variant, cfg, Xtr, Ytr, Xte, seed)
        preds, fit = cache[key]
        P = preds[variant.split("-")[1]] if variant.startswith("XDCC") else preds
        res = scores(Yte, P)
        res.update(train_seconds=fit, chosen=cfg, val_f1_example=f1_val,
                   empty_rate=float((P.sum(axis=1) == 0).mean()))
        out[variant] = res
        log(f"    {variant:11s} {cfg} val F1 {f1_val:.4f} -> test HA "
            f"{res['hamming_accuracy']:.4f} SA {res['subset_accuracy']:.4f} "
            f"F1 {res['f1_example']:.4f} ({fit:.1f}s)")
    return out


def _data(name: str, seed: int) -> tuple[tuple, list[tuple]]:
    """``((X, Y) the tuning sees, [(X_train, Y_train, X_test, Y_test), ...])``: the Mulan
    split, or medical's ten folds (tuned once, on the first fold's train part)."""
    if name == "medical":
        from sklearn.model_selection import KFold

        ds = mlw.load_dataset(MULAN / "medical.arff")
        X, Y = ds.X, dense(ds.Y)
        folds = list(KFold(10, shuffle=True, random_state=seed).split(X))
        return (X[folds[0][0]], Y[folds[0][0]]), [(X[a], Y[a], X[b], Y[b]) for a, b in folds]
    tr = mlw.load_dataset(MULAN / f"{name}-train.arff")
    te = mlw.load_dataset(MULAN / f"{name}-test.arff")
    Ytr = dense(tr.Y)
    return (tr.X, Ytr), [(tr.X, Ytr, te.X, dense(te.Y))]


def _evaluate(best: dict, splits: list[tuple], seed: int, log) -> dict:
    """The chosen settings refit and scored on every split; measures averaged."""
    per_split = []
    for k, (Xa, Ya, Xb, Yb) in enumerate(splits):
        if len(splits) > 1:
            log(f"  fold {k}")
        per_split.append(evaluate_choice(best, Xa, Ya, Xb, Yb, seed, log))
    res = {v: {m: float(np.mean([f[v][m] for f in per_split]))
               for m in (*MEASURES, "empty_rate")} for v in per_split[0]}
    for v in res:
        res[v]["chosen"] = best[v][1]
        res[v]["val_f1_example"] = best[v][0]
    return res


def run_dataset(name: str, grid_name: str, seed: int, log, emit) -> None:
    grid = GRIDS[grid_name]
    (Xt, Yt), splits = _data(name, seed)
    split = None
    for fam in FAMILIES:
        best = tune(fam, grid, Xt, Yt, seed, log,
                    split=split if grid_name in XDCC_SPLIT_FROM_ML else None,
                    xdcc_rounds=XDCC_ROUNDS.get(grid_name))
        if fam == "ML-XGB":
            split = best["ML-XGB"][1]["split"]
        emit(name, fam, _evaluate(best, splits, seed, log))


def refine_xdcc_split(name: str, seed: int, log, emit, out: Path) -> None:
    """XDCC's own split search, after the fact: the full grid gives XDCC the split
    criterion ML-XGB chose (162 chains per set did not fit); here every other criterion
    is scored at each (rounds, depth, eta) an XDCC variant chose, on the same validation
    part, and a variant moves only if a criterion beats its validation F1."""
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    prev = [r for r in recs if r["dataset"] == name and r["family"] == "XDCC"][-1]["results"]
    best = {v: (r["val_f1_example"], dict(r["chosen"])) for v, r in prev.items()}
    (Xt, Yt), splits = _data(name, seed)
    bases = {}
    for _, cfg in best.values():
        key = (cfg["n_estimators"], cfg["max_depth"], cfg["learning_rate"])
        bases.setdefault(key, set()).add(cfg["split"])
    for (r, d, e), done in bases.items():
        grid = dict(n_estimators=[r], max_depth=[d], learning_rate=[e],
                    split=[s for s in ALL_SPLITS if s not in done])
        for v, (f, cfg) in tune("XDCC", grid, Xt, Yt, seed, log).items():
            if f > best[v][0]:
                best[v] = (f, cfg)
    res = _evaluate(best, splits, seed, log)
    emit(name, "XDCC", res)


def load_results(path: Path) -> dict:
    """{dataset: {variant: measures}} from the JSON lines (later lines win)."""
    results: dict[str, dict] = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        results.setdefault(rec["dataset"], {}).update(rec["results"])
    return results


def table(results: dict, methods=METHODS) -> str:
    """Markdown tables (one per measure) with average ranks (1 = best; ties share)."""
    from scipy.stats import rankdata

    lines = []
    names = [d for d in results if all(m in results[d] for m in methods)]
    for meas in MEASURES:
        lower_better = meas == "train_seconds"
        lines.append(f"\n**{meas}**\n")
        lines.append("| dataset | " + " | ".join(methods) + " |")
        lines.append("|---" * (len(methods) + 1) + "|")
        ranks = []
        for ds in names:
            vals = np.array([results[ds][m][meas] for m in methods])
            r = rankdata(vals if lower_better else -np.round(vals, 6), method="average")
            ranks.append(r)
            fmt = "{:.1f}" if lower_better else "{:.4f}"
            lines.append(f"| {ds} | " + " | ".join(fmt.format(v) for v in vals) + " |")
        avg = np.mean(ranks, axis=0)
        lines.append("| **avg. rank** | " + " | ".join(f"{a:.2f}" for a in avg) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", choices=sorted(GRIDS), default="small")
    ap.add_argument("--datasets", default="emotions,scene,yeast,flags,birds,genbase,enron")
    ap.add_argument("--out", default="/tmp/quality_xdcc.jsonl")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--table-only", action="store_true")
    ap.add_argument("--refine-xdcc-split", action="store_true",
                    help="after a run: score XDCC's other split criteria at its chosen "
                         "(rounds, depth, eta) and append the updated XDCC record")
    args = ap.parse_args()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    out = Path(args.out)

    def emit(name: str, family: str, res: dict) -> None:
        with out.open("a") as fh:
            grid = args.grid + ("+xdcc_split" if args.refine_xdcc_split else "")
            fh.write(json.dumps({"dataset": name, "grid": grid, "family": family,
                                 "results": res}) + "\n")

    if args.refine_xdcc_split:
        for name in [d for d in args.datasets.split(",") if d]:
            log(f"== {name} (XDCC split refinement)")
            refine_xdcc_split(name, args.seed, log, emit, out)
    elif not args.table_only:
        for name in [d for d in args.datasets.split(",") if d]:
            log(f"== {name} (grid {args.grid})")
            t = time.time()
            run_dataset(name, args.grid, args.seed, log, emit)
            log(f"   done in {time.time() - t:.0f}s")
    results = load_results(out)
    print(table(results))
    if any(all(m in r for m in TUNED_C) for r in results.values()):
        print("\nwith the chain length tuned (1..default) for XDCC:")
        print(table(results, ("BR", "CC", "ML-XGB", *TUNED_C)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
