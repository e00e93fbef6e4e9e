"""The mixture-of-CTBNs paper's protocol (Hong, Batal and Hauskrecht, CIKM 2014, Sec. 6):
10-fold cross-validation on the FULL datasets (each shared train and test split
concatenated), for mc, ctbn, BR, CC and PCC, all with L2-regularised logistic
regression whose C is chosen the same way (below). Metrics: exact match (EMA,
mlw's subset_accuracy), CLL-loss (the paper's sum of -log P(y|x) over each test fold,
and the per-instance mean), micro and macro F1.

Per fold, explicitly (so `mlw bench` can take it over):
  1. folds: mlw.iterative_stratification(Y_full, 10, seed=0);
  2. fit each learner on the other nine folds;
  3. predict on the fold: mc/ctbn/cc/pcc their joint decision, BR thresholds its
     marginals at 0.5; log_proba_of of the true label vectors gives the CLL-loss;
  4. record the metrics, the fit and predict CPU seconds and the load.
Choosing C: mc and ctbn choose C internally (a 20% internal validation split, the
grid DEFAULT_CS, ordered search, validation mean log P(y|x)). BR, CC and PCC get the
very same procedure here (`choose_C`): the same split fraction, grid and search,
scored by their own log_proba_of on the validation part; then refit on the fold's
training part. Features are max-abs scaled for every learner (MaxAbsScaler for the
baselines, the same scaling inside mc/ctbn).

CC's CLL-loss as the paper reports it: `--learners cc_paper` refits CC per fold (C from
the fold's cc record) and scores it three ways: the chain rule on true prefixes (mlw's
log_proba_of, identical to PCC's), the greedy-prefix reading (each factor conditioned on
CC's own greedy predicted prefix, the paper's "CC greedily seeks the mode ... and
results in large losses"; reported as cc_paper's cll_loss) and a chain trained on
predicted prefixes (Section 3's description of CC). Run it after the main learners.

Figure 3: --figure3 grows mc to 20 trees per fold (keep_path=True, C as chosen by
the fold's default mc fit) and records CLL-loss and EMA after each tree.

    nice -n 10 python benchmarks/quality_mctbn.py --datasets emotions --out R.jsonl
    python benchmarks/quality_mctbn.py --report R.jsonl [more.jsonl ...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import mlw

ROOT = Path(__file__).resolve().parents[1]
MULAN = ROOT.parent / "shared" / "datasets" / "mulan"
LEARNERS = ("mc", "ctbn", "br", "cc", "pcc")
#: pseudo-learner of the paper's CC CLL-loss (see cc_paper_cll): fitted like cc (its C
#: is taken from the fold's cc record when there is one) and scored both ways
CC_PAPER = "cc_paper"
#: extra parameters of every mc fit (--mc-params), recorded with each mc record
MC_PARAMS: dict = {}

#: The paper's Tables 2-5 (10-fold CV on the full data): EMA, CLL-loss (per fold sum),
#: micro F1, macro F1 for BR, CC, PCC, SC (our ctbn) and MC.
PAPER = {
    "emotions": {"br": (0.265, 153.5, 0.645, 0.632), "cc": (0.268, 169.6, 0.621, 0.620),
                 "pcc": (0.317, 134.9, 0.664, 0.659), "ctbn": (0.322, 147.4, 0.678, 0.670),
                 "mc": (0.346, 128.8, 0.693, 0.686)},
    "yeast": {"br": (0.151, 1500.3, 0.635, 0.457), "cc": (0.193, 2303.8, 0.628, 0.467),
              "pcc": (0.230, 932.1, 0.645, 0.486), "ctbn": (0.192, 1097.0, 0.631, 0.467),
              "mc": (0.235, 1000.0, 0.640, 0.477)},
    "scene": {"br": (0.541, 344.7, 0.696, 0.703), "cc": (0.632, 395.0, 0.697, 0.709),
              "pcc": (0.666, 258.9, 0.722, 0.729), "ctbn": (0.625, 306.3, 0.717, 0.728),
              "mc": (0.680, 260.1, 0.745, 0.755)},
    "enron": {"br": (0.164, 1287.3, 0.551, 0.478), "cc": (0.173, 1293.5, 0.577, 0.484),
              "pcc": (None, None, None, None), "ctbn": (0.167, 1437.9, 0.552, 0.470),
              "mc": (0.187, 1224.4, 0.556, 0.470)},
}


def load_full(name: str) -> mlw.Dataset:
    tr = mlw.load_dataset(MULAN / f"{name}-train.arff")
    te = mlw.load_dataset(MULAN / f"{name}-test.arff")
    if sp.issparse(tr.X):
        X = sp.vstack([tr.X, te.X], format="csr")
    else:
        X = np.vstack([tr.X, te.X])
    Ytr = tr.Y.toarray() if sp.issparse(tr.Y) else tr.Y
    Yte = te.Y.toarray() if sp.issparse(te.Y) else te.Y
    return mlw.Dataset(X=X, Y=np.vstack([Ytr, Yte]).astype(np.uint8),
                       feature_names=tr.feature_names, label_names=tr.label_names, name=name)


def baseline(name: str, C: float):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler

    base = make_pipeline(MaxAbsScaler(), LogisticRegression(C=C, max_iter=1000))
    # the paper's decisions (mlw's defaults threshold the marginals since issue 19): BR
    # cuts at 0.5, CC and PCC make their own joint decisions
    return mlw.get_learner(name, base_estimator=base,
                           threshold="fixed" if name == "br" else None)


def choose_C(name: str, X, Y, seed: int = 0) -> tuple[float, dict[float, float]]:
    """The C of mc/ctbn's search for a baseline: 20% validation split (the same seeded
    permutation as the plugin's), grid DEFAULT_CS, ordered search from the middle,
    validation mean log P(y|x) from the learner's log_proba_of."""
    from mlw_mctbn.model import DEFAULT_CS

    n = X.shape[0]
    perm = np.random.default_rng(seed).permutation(n)
    n_val = min(max(int(round(0.2 * n)), 1), n - 2)
    val, tr = np.sort(perm[:n_val]), np.sort(perm[n_val:])
    grid = sorted(DEFAULT_CS)
    seen: dict[float, float] = {}

    def at(i: int) -> float:
        if grid[i] not in seen:
            model = baseline(name, grid[i]).fit(X[tr], Y[tr])
            seen[grid[i]] = float(model.log_proba_of(X[val], Y[val]).mean())
        return seen[grid[i]]

    i = (len(grid) - 1) // 2
    best = at(i)
    for step in (1, -1):
        j, moved = i + step, False
        while 0 <= j < len(grid) and at(j) > best:
            best, i, moved = at(j), j, True
            j += step
        if moved:
            break
    return grid[i], seen


def greedy_cll(cc, X, Y) -> np.ndarray:
    """The paper-protocol CC log-likelihood (variant A): each factor conditioned on the
    *greedy predicted* prefix instead of the true one,
    log P_A(y|x) = sum_j log P(y_j | x, yhat_<j), yhat the chain's greedy decision.
    CC's predict_proba is exactly P(y_j = 1 | x, yhat_<j) along the greedy path (label
    order). Floored per factor at 1e-12 like log_proba_of. Not a distribution over y
    (the links were trained on true prefixes): it scores CC as the paper's CC is used,
    a greedy mode seeker."""
    from mlw_baselines._base_estimator import LOG_PROBA_FLOOR

    _, P = cc.predict_with_scores(X)
    P = np.asarray(P, dtype=np.float64)
    with np.errstate(divide="ignore"):
        terms = np.where(Y == 1, np.log(P), np.log1p(-P))
    return np.maximum(terms, LOG_PROBA_FLOOR).sum(axis=1)


def predicted_prefix_chain_cll(C: float, Xtr, Ytr, Xte, Yte) -> tuple[np.ndarray, np.ndarray]:
    """Variant B: the chain as Section 3 of the paper describes CC ("each component
    ... learned ... by incorporating the predictions of preceding classifiers as
    additional features"): link j is trained on [x, yhat_<j] with yhat the earlier
    links' predictions on the training rows, and P(y|x) = prod_j P(y_j | x, yhat_<j)
    at test time (a proper distribution: the prefix depends on x only).
    Returns (log P(y|x) per test row, the greedy decision)."""
    from mlw_baselines._base_estimator import LOG_PROBA_FLOOR
    from mlw_baselines._common import chain_features

    L = Ytr.shape[1]
    Htr = np.zeros((Xtr.shape[0], 0), dtype=np.uint8)
    Hte = np.zeros((Xte.shape[0], 0), dtype=np.uint8)
    out = np.zeros(Xte.shape[0])
    for j in range(L):
        y = Ytr[:, j]
        Ftr, Fte = chain_features(Xtr, Htr), chain_features(Xte, Hte)
        if y.min() == y.max():
            p_tr = np.full(Xtr.shape[0], float(y[0]))
            p_te = np.full(Xte.shape[0], (y.sum() + 1.0) / (len(y) + 2.0))
        else:
            model = baseline_estimator(C).fit(Ftr, y)
            p_tr = model.predict_proba(Ftr)[:, 1]
            p_te = model.predict_proba(Fte)[:, 1]
        with np.errstate(divide="ignore"):
            t = np.where(Yte[:, j] == 1, np.log(p_te), np.log1p(-p_te))
        out += np.maximum(t, LOG_PROBA_FLOOR)
        Htr = np.column_stack([Htr, (p_tr >= 0.5).astype(np.uint8)])
        Hte = np.column_stack([Hte, (p_te >= 0.5).astype(np.uint8)])
    return out, Hte


def baseline_estimator(C: float):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler

    return make_pipeline(MaxAbsScaler(), LogisticRegression(C=C, max_iter=1000))


def cc_paper_record(X, Y, Xte, Yte, C: float | None) -> dict:
    """Both readings of the paper's CC CLL-loss on one fold (C: the fold's cc choice,
    or chosen here the same way)."""
    extra: dict = {}
    if C is None:
        C, seen = choose_C("cc", X, Y)
        extra["C_search"] = {str(k): v for k, v in seen.items()}
    cc = baseline("cc", C).fit(X, Y)
    rec = metrics_of(cc, Xte, Yte)
    lp_a = greedy_cll(cc, Xte, Yte)
    lp_b, Yb = predicted_prefix_chain_cll(C, X, Y, Xte, Yte)
    rec.update(C=C, cll_chain_rule=rec["cll_loss"], cll_greedy_prefix=float(-lp_a.sum()),
               cll_predicted_prefix_chain=float(-lp_b.sum()),
               ema_predicted_prefix_chain=float((Yb == Yte).all(axis=1).mean()), **extra)
    # the paper's CC column: variant A (see the README for why)
    rec["cll_loss"] = rec["cll_greedy_prefix"]
    rec["cll_mean"] = rec["cll_loss"] / Xte.shape[0]
    return rec


def fit_learner(name: str, X, Y):
    if name in ("mc", "ctbn"):
        params = MC_PARAMS if name == "mc" else {}
        return mlw.get_learner(name, **params).fit(X, Y), \
            ({"mc_params": dict(params)} if params else {})
    C, seen = choose_C(name, X, Y)
    return baseline(name, C).fit(X, Y), {"C": C, "C_search": seen}


def metrics_of(model, X, Y) -> dict[str, float]:
    Yp, S = model.predict_with_scores(X)
    lp = model.log_proba_of(X, Y)
    out = mlw.evaluate(Y, Yp, scores=S, log_proba=lp,
                       metrics=["subset_accuracy", "f1_micro", "f1_macro", "cll_loss"])
    out["cll_mean"] = out["cll_loss"] / X.shape[0]
    return out


def _recorded_C(out: Path, ds_name: str, fold: int, learner: str) -> float | None:
    if not out.exists():
        return None
    for line in open(out):
        if line.strip():
            r = json.loads(line)
            if r["dataset"] == ds_name and r["fold"] == fold and r["learner"] == learner:
                return float(r["C"])
    return None


def _done(out: Path) -> set[tuple[str, int, str]]:
    if not out.exists():
        return set()
    return {(r["dataset"], r["fold"], r["learner"])
            for r in (json.loads(x) for x in open(out) if x.strip())}


def run(datasets: list[str], learners: list[str], out: Path, folds: list[int] | None,
        figure3: bool) -> None:
    done = _done(out)
    for ds_name in datasets:
        ds = load_full(ds_name)
        fold_of = mlw.iterative_stratification(ds.Y, 10, seed=0)
        for f in folds if folds is not None else range(10):
            tr, te = np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f)
            Xtr, Ytr, Xte, Yte = ds.X[tr], ds.Y[tr], ds.X[te], ds.Y[te]
            for name in learners:
                if (ds_name, f, name) in done:
                    continue  # resumable: every (dataset, fold, learner) once
                load0 = os.getloadavg()[0]
                if name == CC_PAPER:
                    c0, w0 = time.process_time(), time.time()
                    rec = cc_paper_record(Xtr, Ytr, Xte, Yte, _recorded_C(out, ds_name, f, "cc"))
                    rec.update(dataset=ds_name, learner=name, fold=f, n_test=len(te),
                               fit_cpu=time.process_time() - c0,
                               fit_wall=time.time() - w0, load=load0)
                    _write(out, rec)
                    print(f"{ds_name} fold {f} cc_paper: CLL chain rule "
                          f"{rec['cll_chain_rule']:.1f}, greedy prefix "
                          f"{rec['cll_greedy_prefix']:.1f}, predicted-prefix chain "
                          f"{rec['cll_predicted_prefix_chain']:.1f}", file=sys.stderr,
                          flush=True)
                    continue
                c0, w0 = time.process_time(), time.time()
                model, extra = fit_learner(name, Xtr, Ytr)
                fit_cpu, fit_wall = time.process_time() - c0, time.time() - w0
                c0 = time.process_time()
                rec = metrics_of(model, Xte, Yte)
                rec.update(dataset=ds_name, learner=name, fold=f, n_test=len(te),
                           fit_cpu=fit_cpu, fit_wall=fit_wall,
                           predict_cpu=time.process_time() - c0, load=load0, **extra)
                if name in ("mc", "ctbn"):
                    rec["C"] = model.C_
                    rec["C_search"] = {str(k): v for k, v in model.C_search_.items()}
                if name == "mc":
                    rec.update(n_trees=model.n_trees_, stopped=model.stopped_because_,
                               validation_curve=model.validation_curve_)
                if "C_search" in rec:
                    rec["C_search"] = {str(k): v for k, v in rec["C_search"].items()}
                _write(out, rec)
                print(f"{ds_name} fold {f} {name}: EMA {rec['subset_accuracy']:.3f} "
                      f"CLL {rec['cll_loss']:.1f} fit {fit_cpu:.1f}s CPU (load {load0:.1f})",
                      file=sys.stderr, flush=True)
            if figure3 and (ds_name, f, "mc_path") not in done:
                C = _recorded_C(out, ds_name, f, "mc")
                if C is None:
                    raise SystemExit(f"{ds_name} fold {f}: --figure3 needs the fold's mc "
                                     f"record (its C); run mc first")
                c0 = time.process_time()
                grown = mlw.get_learner("mc", C=C, n_trees=20, keep_path=True,
                                        **MC_PARAMS).fit(Xtr, Ytr)
                for k, staged in enumerate(grown.staged_models(), start=1):
                    r = metrics_of(staged, Xte, Yte)
                    _write(out, {"dataset": ds_name, "learner": "mc_path", "fold": f,
                                 "n_trees": k, "C": C, **r})
                print(f"{ds_name} fold {f} figure 3 path: {time.process_time() - c0:.1f}s "
                      f"CPU", file=sys.stderr, flush=True)


def _write(out: Path, rec: dict) -> None:
    with open(out, "a") as fh:
        fh.write(json.dumps(rec, default=float) + "\n")


#: metrics marked like the paper's tables: key -> True if larger is better
MARKED = {"subset_accuracy": True, "cll_loss": False, "f1_micro": True, "f1_macro": True}


def _versus_mc(recs: list[dict], ds: str, name: str, key: str) -> str:
    """The paper's markers: " *" if mc is significantly better than `name` on `key`
    (paired t-test over the folds both finished, two-sided, 0.05), " @" if worse."""
    if name == "mc":
        return ""
    from scipy.stats import ttest_rel

    a = {r["fold"]: r[key] for r in recs if r["dataset"] == ds and r["learner"] == "mc"}
    b = {r["fold"]: r[key] for r in recs if r["dataset"] == ds and r["learner"] == name}
    folds = sorted(set(a) & set(b))
    if len(folds) < 2:
        return ""
    x, y = np.array([a[f] for f in folds]), np.array([b[f] for f in folds])
    if np.allclose(x, y):
        return ""
    pval = ttest_rel(x, y).pvalue
    if not pval < 0.05:
        return ""
    mc_better = (x.mean() > y.mean()) == MARKED[key]
    return " *" if mc_better else " @"


def report(paths: list[Path]) -> None:
    recs = [json.loads(line) for p in paths for line in open(p) if line.strip()]
    main = [r for r in recs if r["learner"] in LEARNERS]
    # only folds every learner finished (a run stopped early leaves a partial fold)
    done: dict[tuple[str, int], set[str]] = {}
    for r in main:
        done.setdefault((r["dataset"], r["fold"]), set()).add(r["learner"])
    names = {r["learner"] for r in main}
    main = [r for r in main if done[(r["dataset"], r["fold"])] == names]
    print("Markers: * mc significantly better, @ mc significantly worse (paired t-test "
          "over the folds, 0.05), like the paper's * and ⊗.\n")
    print("| dataset | learner | folds | EMA (paper) | CLL-loss per fold (paper) | CLL per "
          "instance | micro F1 (paper) | macro F1 (paper) | fit CPU s/fold |")
    print("|---|---|---|---|---|---|---|---|---|")
    for ds in PAPER:
        for name in LEARNERS:
            rs = [r for r in main if r["dataset"] == ds and r["learner"] == name]
            if not rs:
                continue
            p = PAPER[ds][name]

            def col(key: str, i: int, fmt: str, rs=rs, p=p, name=name, ds=ds) -> str:
                ours = format(np.mean([r[key] for r in rs]), fmt)
                mark = _versus_mc(main, ds, name, key) if key in MARKED else ""
                return f"{ours}{mark} ({format(p[i], fmt) if p[i] is not None else '-'})"

            print(f"| {ds} | {name} | {len(rs)} | {col('subset_accuracy', 0, '.3f')} | "
                  f"{col('cll_loss', 1, '.1f')} | {np.mean([r['cll_mean'] for r in rs]):.3f} | "
                  f"{col('f1_micro', 2, '.3f')} | {col('f1_macro', 3, '.3f')} | "
                  f"{np.mean([r['fit_cpu'] for r in rs]):.1f} |")
    ccp = [r for r in recs if r["learner"] == CC_PAPER]
    if ccp:
        print("\nCC's CLL-loss per fold read three ways (paper's CC column in brackets; "
              "mc's own CLL-loss on the same folds beside it)")
        print("| dataset | folds | chain rule (mlw's log_proba_of) | greedy prefix (paper) | "
              "predicted-prefix chain | its EMA | mc on these folds |")
        print("|---|---|---|---|---|---|---|")
        for ds in PAPER:
            rs = [r for r in ccp if r["dataset"] == ds]
            if not rs:
                continue
            fs = {r["fold"] for r in rs}
            mc = list({r["fold"]: r["cll_loss"] for r in recs if r["learner"] == "mc"
                       and r["dataset"] == ds and r["fold"] in fs}.values())
            print(f"| {ds} | {len(rs)} | {np.mean([r['cll_chain_rule'] for r in rs]):.1f} | "
                  f"{np.mean([r['cll_greedy_prefix'] for r in rs]):.1f}"
                  f"{_versus_mc(recs, ds, CC_PAPER, 'cll_loss')} "
                  f"({PAPER[ds]['cc'][1]}) | "
                  f"{np.mean([r['cll_predicted_prefix_chain'] for r in rs]):.1f} | "
                  f"{np.mean([r['ema_predicted_prefix_chain'] for r in rs]):.3f} | "
                  f"{np.mean(mc) if len(mc) == len(rs) else float('nan'):.1f} |")
    mcs = [r for r in main if r["learner"] == "mc"]
    if mcs:
        print("\nmc: trees chosen per fold, and C")
        for ds in PAPER:
            rs = [r for r in mcs if r["dataset"] == ds]
            if rs:
                print(f"- {ds}: trees {[r['n_trees'] for r in rs]}, C {[r['C'] for r in rs]}")
    path = [r for r in recs if r["learner"] == "mc_path"]
    if path:
        print("\n| dataset | trees | CLL-loss per fold | EMA | folds |")
        print("|---|---|---|---|---|")
        for ds in PAPER:
            for k in range(1, 21):
                rs = [r for r in path if r["dataset"] == ds and r["n_trees"] == k]
                if rs:
                    print(f"| {ds} | {k} | {np.mean([r['cll_loss'] for r in rs]):.1f} | "
                          f"{np.mean([r['subset_accuracy'] for r in rs]):.3f} | {len(rs)} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="emotions,yeast,scene,enron")
    ap.add_argument("--learners", default=",".join(LEARNERS))
    ap.add_argument("--folds", default=None, help="e.g. 0,1,2 (default: all ten)")
    ap.add_argument("--figure3", action="store_true")
    ap.add_argument("--mc-params", default="{}", help="JSON: extra mc parameters")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--report", type=Path, nargs="+")
    args = ap.parse_args()
    if args.report:
        report(args.report)
        return
    if args.out is None:
        ap.error("--out is required (a .jsonl file, appended to)")
    folds = [int(f) for f in args.folds.split(",")] if args.folds else None
    MC_PARAMS.update(json.loads(args.mc_params))
    run(args.datasets.split(","), args.learners.split(","), args.out, folds, args.figure3)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(f"total CPU {ru.ru_utime + ru.ru_stime:.0f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
