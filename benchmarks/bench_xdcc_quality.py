"""Quality of BR, CC, ML-XGB, XDCC-std and XDCC-cum (the xdcc plugin) as in the paper
(Bohlender, Loza Mencía, Kulessa, DS 2020, Table 3), in two ways that share one
results store and one table.

    nice -n 5 python benchmarks/bench_xdcc_quality.py --grid paper [--datasets flags,...]
        [--out benchmarks/results/xdcc-paper.parquet] [--cache FITS.jsonl]
        [--xdcc-split ml|all] [--families ML-XGB,BR,CC,XDCC] [--fill-only] [--table]
    nice -n 10 python benchmarks/bench_xdcc_quality.py [--grid config|small]
        [--datasets ...] [--learners ...] [--folds 0] [--jobs 2] [--out xdcc.parquet] [--table]

``--grid paper`` is footnote 2's grid under the paper's protocol: rounds {10, 20, 50,
100} x learning rate {0.1, 0.2, 0.3} x depth {5, 10, 20, 50, 100} (x the six split
methods of Table 1 for ML-XGB and XDCC: 360 settings; BR and CC: 60, with XGBoost's
gain), every method's setting chosen by example F1 on a random 20% validation part of
the train split (``mlw.selection.validation_split``, the harness's), refit
on the whole train split and scored on the test split (medical, which has no split:
tuned once on the first of ``mlw.model_selection.cv_splits``' ten training parts, the
choice refit and scored in all ten folds).  It runs this procedure, not ``mlw bench``,
because the harness would fit XDCC-std and XDCC-cum as two 360-setting cells; here
(every shortcut exact, no setting approximated):

* XDCC-std and XDCC-cum are the two decisions (Eq. 9) of the same chains, tuned apart
  (chain length: the config's ``chain_length``, 3);
* ``--xdcc-split ml`` (default): XDCC searches rounds x eta x depth with the split
  method ML-XGB chose on the same validation part, then the five other methods at the
  (rounds, eta, depth) each XDCC variant chose (``all``: the 360 settings);
* BR, CC and ML-XGB read the rounds from one 100-round fit's stages (``staged_predict``
  equals fresh fits: plugins/xdcc/tests/test_xdcc_staged.py); XDCC fits every rounds
  value (round r of the chain propagates round r-1's final predictions);
* a depth limit that a fit never reached is that same fit: depths are fitted from the
  largest down and a smaller limit is fitted only when it is below the depth reached.

Every validation fit's scores go to ``--cache`` (JSON lines; default: the ``--out``
name with ``.fits.jsonl``) as it ends, so an interrupted run resumes where it stopped,
and a second process with ``--fill-only`` fits the grid in reverse order into the same
cache (two workers, one grid; it writes no results; XDCC's needs ML-XGB's choice in
the store first).  Results go to ``--out`` (the ``mlw bench`` store, one record per
dataset, method and fold) as each method family finishes; a family already there is
skipped.  Keep ``--out`` and the cache under benchmarks/results/ (gitignored).  The
refit's training time is the thread CPU time of its fit (single-threaded kernels).

``--grid config`` (default) runs ``mlw bench --config examples/papers/xdcc.toml`` (the
config's small grid); ``--grid small`` replaces its grids by rounds {10, 50} x eta {0.3}
x depth {5} (x split {sum_gain, max_weight} for ML-XGB and XDCC), the learner keys
tagged ``[small]``.  ``--table`` prints Table 3's layout for any of these stores
(Hamming accuracy = 1 - Hamming loss, subset accuracy, example F1, the final refit's
CPU seconds; fold means, average ranks; the chosen settings).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from _paper_config import config_arguments, run_config
from _shared import MULAN

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "examples" / "papers" / "xdcc.toml"
ALL_SPLITS = ["sum_gain", "max_gain", "sum_weight", "max_weight", "sum_abs_g", "max_abs_g"]
GRIDS = {
    "paper": dict(n_estimators=[10, 20, 50, 100], learning_rate=[0.1, 0.2, 0.3],
                  max_depth=[5, 10, 20, 50, 100], split=ALL_SPLITS),
    "small": dict(n_estimators=[10, 50], learning_rate=[0.3], max_depth=[5],
                  split=["sum_gain", "max_weight"]),
}
MEASURES = [("Hamming accuracy", "metric_hamming_loss"),
            ("subset accuracy", "metric_subset_accuracy"), ("example F1", "metric_f1_example"),
            ("fit CPU seconds", "fit_cpu_seconds")]
#: method families of the paper grid, ML-XGB first (XDCC may start from its split), and
#: the variants each one yields
FAMILIES = {"ML-XGB": ("ML-XGB",), "BR": ("BR",), "CC": ("CC",),
            "XDCC": ("XDCC-std", "XDCC-cum")}
#: the paper's decisions (mlw's defaults threshold the marginals): BR and
#: ML-XGB cut at 0.5, CC is the greedy chain, XDCC its own Eq. 9 decision
PAPER_DECISION = {"BR": "fixed", "CC": None, "ML-XGB": "fixed"}


def _timing(df):
    """Table 3's training time: the final refit's process CPU seconds, or the wall
    clock of a store written before they existed, which says so (the report's rule,
    :func:`mlw.experiments.report.fit_time_column`)."""
    from mlw.experiments.report import fit_time_column

    if fit_time_column(df) == "fit_cpu_seconds":
        return MEASURES
    return [*MEASURES[:-1], ("fit seconds (WALL CLOCK: an old store)", "fit_seconds")]


def with_grid(exp, name: str):
    """``exp`` with every learner's grid replaced by ``GRIDS[name]`` (``split`` only for
    learners whose grid has it: ML-XGB and XDCC; BR and CC boost with their default)."""
    grid = GRIDS[name]
    entries = []
    for e in exp.learners:
        g = {k: list(v) for k, v in grid.items() if k != "split" or "split" in e.grid}
        key = f"{e.key}[{name}]"
        entries.append(replace(e, grid=g, key=key, label=f"{e.display} [{name}]"))
    return replace(exp, learners=tuple(entries),
                   control=f"{exp.control}[{name}]" if exp.control else None)


def _short(chosen: str | None) -> str:
    """A chosen setting as rounds/eta/depth[/split]."""
    if not chosen:
        return "-"
    c = json.loads(chosen)
    parts = [c.get("n_estimators"), c.get("learning_rate"), c.get("max_depth"), c.get("split")]
    return "/".join(str(v) for v in parts if v is not None)


def table(path: Path) -> str:
    import polars as pl
    from scipy.stats import rankdata

    from mlw.experiments import load_config, read_results

    df = read_results(path).filter(pl.col("status") == "ok")
    order = [e.key for e in load_config(CONFIG).learners]
    learners = sorted(dict.fromkeys(df["learner"].to_list()),
                      key=lambda k: order.index(k.split("[")[0]) if k.split("[")[0] in order
                      else len(order))
    labels = dict(zip(df["learner"], df["label"], strict=True))
    datasets = [d for d in dict.fromkeys(df["dataset"].to_list())
                if set(df.filter(pl.col("dataset") == d)["learner"]) == set(learners)]
    lines = []
    for title, col in _timing(df):
        lower = col in ("fit_seconds", "fit_cpu_seconds")
        lines += [f"\n**{title}**\n", "| dataset | " + " | ".join(labels[k] for k in learners)
                  + " |", "|---" * (len(learners) + 1) + "|"]
        ranks = []
        for ds in datasets:
            part = df.filter(pl.col("dataset") == ds)
            vals = np.array([part.filter(pl.col("learner") == k)[col].mean() for k in learners])
            if col == "metric_hamming_loss":
                vals = 1.0 - vals
            ranks.append(rankdata(vals if lower else -np.round(vals, 6), method="average"))
            fmt = "{:.2f}" if lower else "{:.4f}"
            lines.append(f"| {ds} | " + " | ".join(fmt.format(v) for v in vals) + " |")
        if ranks:
            lines.append("| **avg. rank** | " + " | ".join(
                f"{a:.2f}" for a in np.mean(ranks, axis=0)) + " |")
    if "chosen_params" in df.columns and datasets:
        lines += ["\n**chosen (rounds/eta/depth/split; first fold)**\n",
                  "| dataset | " + " | ".join(labels[k] for k in learners) + " |",
                  "|---" * (len(learners) + 1) + "|"]
        for ds in datasets:
            part = df.filter(pl.col("dataset") == ds).sort("fold")
            lines.append(f"| {ds} | " + " | ".join(_short(
                part.filter(pl.col("learner") == k)["chosen_params"][0]) for k in learners)
                + " |")
    return "\n".join(lines)


# -- the paper grid (footnote 2) ---------------------------------------------------------

class FitCache:
    """Every validation fit's scores, appended to a JSON-lines file as it ends; re-read
    before a fit, so another worker's fits are used (complete lines only: a line cut by
    a kill is skipped)."""

    def __init__(self, path: Path) -> None:
        self.path, self.fits, self.offset = path, {}, 0
        self.refresh()

    def refresh(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            data = fh.read()
        end = data.rfind(b"\n") + 1
        for line in data[:end].splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            self.fits[rec["key"]] = (rec["res"], rec["depth"])
        self.offset += end

    def get(self, key: str) -> Any:
        if key not in self.fits:
            self.refresh()
        return self.fits.get(key)

    def put(self, key: str, res: list, depth: int) -> None:
        self.fits[key] = (res, depth)
        with open(self.path, "a") as fh:
            fh.write(json.dumps({"key": key, "res": res, "depth": depth,
                                 "cpu_total": time.process_time()}) + "\n")


def _f1(Y: np.ndarray, P: np.ndarray) -> float:
    import mlw

    return float(mlw.evaluate(Y, P, metrics=["f1_example"])["f1_example"])


def _chain_length(run: dict, Y: np.ndarray) -> int:
    """XDCC's chain length: the config's (``chain_length`` of its xdcc learners, 3: what
    every Table 3 run measured), else the learner's default for these labels."""
    from mlw_xdcc.xdcc import default_chain_length

    given = {e.params.get("chain_length") for e in run["config"].learners
             if e.learner == "xdcc"}
    if len(given) == 1 and None not in given:
        return min(int(given.pop()), Y.shape[1])
    return default_chain_length(float(Y.sum()) / Y.shape[0], Y.shape[1])


def _depth_reached(model: Any) -> int:
    ens = [model.ensemble_] if hasattr(model, "ensemble_") else model.ensembles_
    return max(e.depth_reached() for e in ens)


def _fit_and_score(family: str, cfg: dict, rounds: list[int], c: int, Xfi: Any,
                   Yfi: np.ndarray, Xva: Any, Yva: np.ndarray, seed: int
                   ) -> tuple[list[tuple[str, dict, float]], int]:
    """One fit scored on the validation part: ([(variant, setting, example F1)], depth
    reached).  XDCC: both decisions of one chain of length ``c`` (the ``-c`` entries
    are the shorter chains, kept in the cache); the others: ``cfg`` without rounds,
    every value of ``rounds`` read from the stages."""
    from mlw_xdcc import BRXGB, CCXGB, MLXGB, XDCC

    out = []
    if family == "XDCC":
        m = XDCC(chain_length=c, **cfg, random_state=seed, threshold=None).fit(Xfi, Yfi)
        for r, both in enumerate(m.staged_predict_all(Xva), start=1):
            for v in ("std", "cum"):
                s = _f1(Yva, both[v])
                if r == c:
                    out.append((f"XDCC-{v}", dict(cfg), s))
                out.append((f"XDCC-{v}-c", {**cfg, "chain_length": r}, s))
        return out, _depth_reached(m)
    cls = {"BR": BRXGB, "CC": CCXGB, "ML-XGB": MLXGB}[family]
    m = cls(n_estimators=rounds[-1], **cfg, random_state=seed,
            threshold=PAPER_DECISION[family]).fit(Xfi, Yfi)
    for k, P in zip(rounds, m.staged_predict(Xva, rounds), strict=True):
        out.append((family, {"n_estimators": k, **cfg}, _f1(Yva, P)))
    return out, _depth_reached(m)


def validation_scores(run: dict, family: str, grid: dict, Xfi: Any, Yfi: np.ndarray,
                      Xva: Any, Yva: np.ndarray, log: Any, reverse: bool = False):
    """Every setting of ``grid`` scored on the validation part: yields (variant, setting,
    example F1), depth limits from the largest down (a limit above the depth the last
    fit reached reuses it), through the fit cache."""
    rounds = sorted(grid["n_estimators"])
    keys = ["learning_rate"]
    if family in ("ML-XGB", "XDCC"):
        keys.append("split")
    if family == "XDCC":
        keys.insert(0, "n_estimators")
    c, seed = _chain_length(run, Yfi), run["seed"]
    bases = [dict(zip(keys, v, strict=True)) for v in itertools.product(*(grid[k] for k in keys))]
    fits = reused = 0
    for base in (bases[::-1] if reverse else bases):
        fitted = None
        for depth in sorted(grid["max_depth"], reverse=True):
            if fitted is None or depth < fitted[1]:
                cfg = {**base, "max_depth": depth}
                key = json.dumps([run["dataset"], family, cfg, rounds, c, seed, Xfi.shape[0]],
                                 sort_keys=True)
                fitted = run["cache"].get(key)
                if fitted is None:
                    fitted = _fit_and_score(family, cfg, rounds, c, Xfi, Yfi, Xva, Yva, seed)
                    run["cache"].put(key, *fitted)
                fits += 1
            else:
                reused += 1
            for variant, cfg, s in fitted[0]:
                yield variant, {**cfg, "max_depth": depth}, s
    log(f"    {family}: {fits} fits, {reused} depth limits reused")


def tune(run: dict, family: str, grid: dict, log: Any) -> dict:
    """The paper's tuning on the tuning split: {variant: (validation F1, setting)}; the
    first setting in the search order wins a tie."""
    from mlw.selection import validation_split

    X, Y = run["tuning"]
    fi, va = validation_split(X.shape[0], 0.2, run["seed"])
    best: dict[str, tuple[float, dict]] = {}
    t = time.process_time()
    for variant, cfg, s in validation_scores(run, family, grid, X[fi], Y[fi], X[va], Y[va],
                                             log, reverse=run["fill_only"]):
        if variant not in best or s > best[variant][0]:
            best[variant] = (s, cfg)
    log(f"    {family}: tuned in {time.process_time() - t:.0f} CPU-s")
    return {v: best[v] for v in FAMILIES[family]}


def _xdcc_split_refinement(run: dict, best: dict, log: Any) -> dict:
    """``--xdcc-split ml``'s second step: every other split method at each (rounds, eta,
    depth) an XDCC variant chose; a variant moves only when one beats its validation F1."""
    bases: dict[tuple, set] = {}
    for _, cfg in best.values():
        key = (cfg["n_estimators"], cfg["learning_rate"], cfg["max_depth"])
        bases.setdefault(key, set()).add(cfg["split"])
    for (r, e, d), done in bases.items():
        grid = dict(n_estimators=[r], learning_rate=[e], max_depth=[d],
                    split=[s for s in ALL_SPLITS if s not in done])
        for v, (f, cfg) in tune(run, "XDCC", grid, log).items():
            if f > best[v][0]:
                best[v] = (f, cfg)
    return best


def _refit(run: dict, family: str, cfg: dict, Xtr: Any, Ytr: np.ndarray, Xte: Any
           ) -> tuple[dict[str, np.ndarray], float, float]:
    """The chosen setting fit on the whole training part: ({variant: test decisions},
    fit wall seconds, fit thread CPU seconds)."""
    from mlw_xdcc import BRXGB, CCXGB, MLXGB, XDCC

    seed = run["seed"]
    t, c = time.perf_counter(), time.thread_time()
    if family == "XDCC":
        m = XDCC(chain_length=_chain_length(run, Ytr), **cfg, random_state=seed,
                 threshold=None).fit(Xtr, Ytr)
        wall, cpu = time.perf_counter() - t, time.thread_time() - c
        both = m.predict_all(Xte)
        return {"XDCC-std": both["std"], "XDCC-cum": both["cum"]}, wall, cpu
    cls = {"BR": BRXGB, "CC": CCXGB, "ML-XGB": MLXGB}[family]
    m = cls(**cfg, random_state=seed, threshold=PAPER_DECISION[family]).fit(Xtr, Ytr)
    wall, cpu = time.perf_counter() - t, time.thread_time() - c
    return {family: m.predict(Xte)}, wall, cpu


def _data(name: str, seed: int) -> tuple[tuple, list[tuple]]:
    """``((X, Y) the tuning sees, [(X_train, Y_train, X_test, Y_test), ...])``: the Mulan
    split, or medical's ten iteratively stratified folds (tuned on the first training
    part)."""
    import mlw
    from mlw.model_selection import cv_splits
    from mlw.validation import dense_labels

    if name == "medical":
        folds = [(a.X, dense_labels(a.Y), b.X, dense_labels(b.Y))
                 for _, a, b in cv_splits(mlw.load_dataset(MULAN / "medical.arff"), 10, seed)]
        return folds[0][:2], folds
    tr = mlw.load_dataset(MULAN / f"{name}-train.arff")
    te = mlw.load_dataset(MULAN / f"{name}-test.arff")
    Ytr = dense_labels(tr.Y)
    return (tr.X, Ytr), [(tr.X, Ytr, te.X, dense_labels(te.Y))]


def _records(run: dict, family: str, best: dict, log: Any) -> list[dict]:
    """The chosen settings refit and scored on every split: one store record per
    variant and fold (XDCC's two variants share a refit when they chose alike)."""
    import mlw
    from mlw.metrics import empty_prediction_rate

    keys = {e.display: e for e in run["config"].learners}
    out = []
    for fold, (Xa, Ya, Xb, Yb) in enumerate(run["splits"]):
        refits: dict[str, tuple] = {}
        for variant, (f_val, cfg) in best.items():
            k = json.dumps(cfg, sort_keys=True)
            if k not in refits:
                refits[k] = _refit(run, family, cfg, Xa, Ya, Xb)
            preds, wall, cpu = refits[k]
            P = preds[variant]
            m = mlw.evaluate(Yb, P, metrics=["hamming_loss", "subset_accuracy", "f1_example"])
            e = keys[variant]
            out.append({
                "cell_id": f"{run['config'].name}-paper-{run['dataset']}-{e.key}-{fold}",
                "experiment": run["experiment"], "learner": f"{e.key}[paper]",
                "label": f"{variant} [paper]", "learner_name": e.learner,
                "dataset": run["dataset"],
                "evaluation": "cv" if len(run["splits"]) > 1 else "holdout",
                "n_folds": len(run["splits"]), "fold": fold, "seed": run["seed"],
                "status": "ok", "chosen_params": json.dumps(cfg, sort_keys=True),
                "selection": json.dumps({"metric": "f1_example", "validation_score": f_val,
                                         "xdcc_split": run["xdcc_split"]}),
                "decision": "fixed 0.5" if PAPER_DECISION.get(family) else "own",
                "n_train": Xa.shape[0], "n_test": Xb.shape[0], "n_features": Xa.shape[1],
                "n_labels": Ya.shape[1], "fit_seconds": wall, "fit_cpu_seconds": cpu,
                "attributes": json.dumps({"empty_rate": empty_prediction_rate(Yb, P)}),
                "finished": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
                **{f"metric_{n}": float(v) for n, v in m.items()}})
            log(f"    {variant:8s} fold {fold} {cfg} val F1 {f_val:.4f} -> test HA "
                f"{1 - m['hamming_loss']:.4f} SA {m['subset_accuracy']:.4f} "
                f"F1 {m['f1_example']:.4f} ({cpu:.2f} CPU-s)")
    return out


def run_paper(args: argparse.Namespace, log: Any) -> int:
    """``--grid paper``: each dataset's families tuned, refit and stored in turn."""
    import polars as pl

    from mlw.experiments import load_config
    from mlw.experiments.store import ResultStore

    config = load_config(CONFIG)
    store = ResultStore(args.out)
    cache = FitCache(args.cache or args.out.with_suffix(".fits.jsonl"))
    grid = GRIDS["paper"]
    families = [f for f in FAMILIES if not args.families or f in args.families.split(",")]
    names = (args.datasets or ",".join(d.name for d in config.datasets)).split(",")
    for name in [n for n in names if n]:
        log(f"== {name} (footnote-2 grid, XDCC split {args.xdcc_split})")
        t = time.process_time()
        tuning, splits = _data(name, args.seed)
        run = dict(dataset=name, seed=args.seed, cache=cache, tuning=tuning, splits=splits,
                   config=config, xdcc_split=args.xdcc_split, fill_only=args.fill_only,
                   experiment=f"{config.name}[paper]")
        for fam in families:
            df = store.read()
            mine = (df.filter((pl.col("dataset") == name) & (pl.col("status") == "ok")
                              & pl.col("experiment").eq(run["experiment"]))
                    if df.height else df)
            have = set(mine["label"].to_list()) if df.height else set()
            if all(f"{v} [paper]" in have for v in FAMILIES[fam]):
                log(f"    {fam}: in {args.out}, skipped")
                continue
            g = dict(grid)
            if fam in ("BR", "CC"):
                g["split"] = ["sum_gain"]
            if fam == "XDCC" and args.xdcc_split == "ml":
                ml = mine.filter(pl.col("label") == "ML-XGB [paper]") if df.height else df
                if not ml.height:
                    raise SystemExit(f"error: {name}: --xdcc-split ml needs ML-XGB's choice "
                                     f"in {args.out}: run --families ML-XGB first")
                g["split"] = [json.loads(ml["chosen_params"][0])["split"]]
            best = tune(run, fam, g, log)
            if fam == "XDCC" and args.xdcc_split == "ml":
                best = _xdcc_split_refinement(run, best, log)
            if args.fill_only:
                log(f"    {fam}: fill-only, the grid's fits are in {cache.path}")
                continue
            records = _records(run, fam, best, log)
            with store.locked():
                for rec in records:
                    store.append(rec)
                store.compact()
        log(f"   {name} done in {time.process_time() - t:.0f} CPU-s")
    if not args.fill_only:
        print(table(args.out))
    return 0


def main() -> int:
    from mlw.experiments import load_config

    ap = config_arguments(__doc__, "xdcc.parquet",
                          folds_help="run only these folds (medical's CV), e.g. 0,1")
    ap.add_argument("--grid", choices=["config", *GRIDS], default="config")
    ap.add_argument("--cache", type=Path, help="--grid paper: the validation fits' JSON "
                    "lines (default: --out with .fits.jsonl)")
    ap.add_argument("--xdcc-split", choices=["ml", "all"], default="ml",
                    help="--grid paper: XDCC's split methods: ML-XGB's choice, then the "
                         "other five at XDCC's setting (ml), or all six in the grid (all)")
    ap.add_argument("--families", help="--grid paper: only these of ML-XGB,BR,CC,XDCC")
    ap.add_argument("--seed", type=int, default=0, help="--grid paper: the validation "
                    "part's and the learners' seed")
    ap.add_argument("--fill-only", action="store_true", help="--grid paper: a second "
                    "worker: the grid's validation fits, in reverse order, into the cache")
    args = ap.parse_args()
    if args.grid == "paper" and not args.table:
        if args.learners or args.folds or args.jobs != 1:
            ap.error("--grid paper takes --families and --fill-only, not --learners, "
                     "--folds or --jobs")
        return run_paper(args, lambda msg: print(msg, file=sys.stderr, flush=True))
    return run_config(load_config(CONFIG), args, table,
                      adjust=None if args.grid == "config" else
                      lambda exp: with_grid(exp, args.grid))


if __name__ == "__main__":
    sys.exit(main())
