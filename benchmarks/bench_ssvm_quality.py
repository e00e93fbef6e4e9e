"""Table 2 of Díez et al. on our synthetic generator, plus BR over LinearSVC: a thin
wrapper over ``mlw bench --config examples/papers/ssvm.toml`` (the 48 noise-free
datasets) and ``examples/papers/ssvm_noisy.toml`` (the 480 noisy ones); the protocol is
in those files. Plus scene and yeast (``real``), which stays a script.

    nice -n 10 python benchmarks/bench_ssvm_quality.py run [--per-L 16] [--labels 10,25,50]
        [--noise all|none|bernoulli:0.01,...] [--jobs 2] [--out ssvm.parquet]
        [--loss-scale auto|100|L] [--epsilon X|X/L] [--learners struct_f1,...]
    python benchmarks/bench_ssvm_quality.py report [--out ssvm.parquet[,old.jsonl,...]]
    python benchmarks/bench_ssvm_quality.py compare --out default.parquet --against v.parquet
    nice -n 10 python benchmarks/bench_ssvm_quality.py real                # scene and yeast

``run`` selects the configs' datasets (dataset j of L labels and a noise is
``L{L}-{j:02d}-{noise}``, e.g. ``L10-00-none``, ``L25-03-bernoulli0.05``) in the
former script's order (dataset index first, then L, then noise, so a partial run covers
every setting evenly; ``--per-L K`` takes K of the 16 indices in the bit-reversed order
0, 8, 4, 12, 2, ..., so any K spread over the cardinality range as the paper's 16 do)
and appends to one results file; a rerun skips finished cells.
The configs fit each learner's C grid in ascending order on one learner with
``warm_start`` (``select.warm_start``) and keep the chosen C's model of that path, as
the former script did by hand: checked equal on L10-00-none, all four learners.
``report`` prints the method page's table (docs/methods/ssvm.md) (percent, mean over the
datasets of each (noise, L), the paper's in brackets).

``real`` (scene, yeast: C on a 25% hold-out of the training split, warm-started path,
then a cold refit on the whole training split) is not ported: the harness's validation
split rounds the hold-out (303 of scene's 1211 rows) where this takes the floor (302),
and its warm-started path is for a dataset's own validation split.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
from _shared import MULAN

import mlw

ROOT = Path(__file__).resolve().parents[1]
DATA = MULAN
CONFIGS = {"clean": ROOT / "examples" / "papers" / "ssvm.toml",
           "noisy": ROOT / "examples" / "papers" / "ssvm_noisy.toml"}
NOISES = ["none"] + [f"bernoulli:{p}" for p in (0.01, 0.03, 0.05, 0.07, 0.09)] + [
    f"swap:{p}" for p in (0.05, 0.1, 0.2, 0.3, 0.4)]
LEARNERS = {"Struct(Hl)": ("struct_hamming", "hamming"), "Struct(F1)": ("struct_f1", "f1"),
            "Struct(01)": ("struct_subset", "subset")}
ROWS = [*LEARNERS, "BR (LinearSVC)"]
#: the 16 dataset indices in bit-reversed order: every prefix spreads over j = 0..15
SPREAD = sorted(range(16), key=lambda j: int(f"{j:04b}"[::-1], 2))
#: the paper's Table 1: mean cardinality of its 16 noise-free datasets per L
PAPER_CARDINALITY = {10: 2.9, 25: 3.1, 50: 3.3}

# The paper's Table 2 (percent): {(noise, L): {learner: (0/1, Hl, 1-F1)}}
_P = """none 50 49.39 2.07 14.24 52.04 2.12 14.73 47.70 2.02 14.16
none 25 36.55 2.52 9.71 39.62 2.60 10.18 35.70 2.46 9.51
none 10 21.57 2.62 5.18 23.49 2.88 5.63 20.90 2.56 5.02
bernoulli:0.01 50 62.41 2.88 21.68 71.81 3.35 22.29 75.31 4.03 27.55
bernoulli:0.01 25 48.18 3.47 13.81 51.01 3.63 13.65 50.34 3.74 14.66
bernoulli:0.01 10 29.02 3.68 7.06 30.94 3.90 7.39 29.03 3.88 7.60
bernoulli:0.03 50 67.86 3.27 25.35 74.52 3.52 23.45 91.45 6.49 41.50
bernoulli:0.03 25 51.01 3.81 15.13 55.56 4.05 15.20 76.86 7.14 26.69
bernoulli:0.03 10 33.41 4.37 8.39 37.04 4.91 9.12 38.77 5.51 10.29
bernoulli:0.05 50 75.51 3.86 31.43 78.99 4.07 26.38 96.33 8.61 50.96
bernoulli:0.05 25 56.68 4.45 17.86 63.00 4.90 18.10 87.58 9.73 34.55
bernoulli:0.05 10 37.16 5.09 9.98 41.97 5.82 10.76 56.52 8.85 16.47
bernoulli:0.07 50 79.53 4.15 37.95 84.20 4.76 29.95 98.43 10.28 56.68
bernoulli:0.07 25 62.47 5.05 20.40 70.20 5.92 21.34 91.98 11.78 42.77
bernoulli:0.07 10 39.92 5.62 11.11 47.56 6.92 12.42 68.50 12.00 22.57
bernoulli:0.09 50 81.05 4.34 39.80 88.73 5.59 33.47 99.56 11.96 61.07
bernoulli:0.09 25 66.32 5.63 23.71 75.84 6.90 23.95 95.36 14.17 47.21
bernoulli:0.09 10 44.51 6.47 12.80 54.81 8.43 14.80 76.13 14.17 25.96
swap:0.05 50 56.16 2.43 17.57 60.17 2.54 17.53 53.58 2.30 17.03
swap:0.05 25 44.14 3.04 12.30 47.02 3.23 12.54 42.47 2.86 12.16
swap:0.05 10 30.37 3.82 7.76 32.68 4.15 7.86 29.91 3.91 7.78
swap:0.1 50 59.51 2.64 19.57 64.09 2.81 19.25 58.70 2.54 19.20
swap:0.1 25 48.60 3.41 14.04 51.19 3.56 13.65 47.81 3.48 14.41
swap:0.1 10 33.12 4.28 8.74 34.11 4.40 8.35 33.15 4.42 9.00
swap:0.2 50 64.83 2.94 24.09 70.21 3.21 21.66 69.45 3.29 24.95
swap:0.2 25 52.71 3.81 16.39 55.15 3.96 14.97 60.08 4.67 19.15
swap:0.2 10 36.97 4.96 10.62 39.72 5.39 10.08 48.32 7.20 14.49
swap:0.3 50 68.66 3.16 27.44 74.29 3.58 24.00 79.14 4.19 32.75
swap:0.3 25 58.40 4.28 19.55 59.94 4.43 16.97 74.70 6.59 27.76
swap:0.3 10 42.29 5.88 12.82 45.85 6.54 11.97 66.74 11.20 23.41
swap:0.4 50 71.69 3.34 30.93 77.16 3.91 25.85 84.42 4.77 37.04
swap:0.4 25 61.64 4.59 21.53 62.77 4.83 18.11 77.87 7.22 30.41
swap:0.4 10 48.22 7.09 16.09 51.53 7.60 13.67 75.17 13.82 27.01"""
PAPER = {}
for _line in _P.splitlines():
    _f = _line.split()
    _v = [float(x) for x in _f[2:]]
    PAPER[(_f[0], int(_f[1]))] = {"Struct(Hl)": _v[0:3], "Struct(F1)": _v[3:6],
                                  "Struct(01)": _v[6:9]}


def dataset_name(L: int, j: int, noise: str) -> str:
    return f"L{L}-{j:02d}-{noise.replace(':', '')}"


def run(args) -> int:
    from mlw.experiments import load_config, run_experiment

    labels = [int(x) for x in args.labels.split(",")]
    noises = NOISES if args.noise == "all" else args.noise.split(",")
    if not 1 <= args.per_L <= 16:
        raise SystemExit("--per-L must be between 1 and 16 (the paper's 16 datasets per L)")
    # a setting that depends on L ("L", "0.1/L") needs one experiment per L
    per_label = "L" in args.loss_scale or "L" in args.epsilon
    errors = 0
    for kind, config in CONFIGS.items():
        for group in ([[L] for L in labels] if per_label else [labels]):
            wanted = [dataset_name(L, j, noise) for j in SPREAD[:args.per_L] for L in group
                      for noise in noises if (noise == "none") == (kind == "clean")]
            if not wanted:
                continue
            exp = load_config(config).with_overrides(
                datasets=wanted, learners=args.learners.split(",") if args.learners else None)
            exp = _scaled(exp, args.loss_scale, args.epsilon, group[0])
            summary = run_experiment(exp, args.out, jobs=args.jobs)
            errors += len(summary.errors)
            print(f"{kind}: {summary.ran} cells run, {summary.skipped} skipped, "
                  f"{len(summary.errors)} failed; results in {args.out}", file=sys.stderr)
    report(args)
    return 1 if errors else 0


def _per_label(value: str, L: int) -> float:
    """'100' -> 100; 'L' -> L; '0.1/L' -> 0.1 / L."""
    if value == "L":
        return float(L)
    if value.endswith("/L"):
        return float(value[:-2]) / L
    return float(value)


def _scaled(exp, loss_scale: str, epsilon: str, L: int):
    """The structured SVMs (not BR) trained with loss_scale x the loss in [0, 1] and/or
    another epsilon (docs/methods/ssvm.md, "Loss scale and epsilon"); 'L' and '0.1/L' are taken
    at the experiment's number of labels L. Struct(Hl) keeps its own default epsilon
    when only epsilon changes: the count b + c at epsilon = 0.1 is already 0.1/L of the
    loss in [0, 1]."""
    params = {}
    if loss_scale != "auto":
        params["loss_scale"] = _per_label(loss_scale, L)
    name = exp.name + "".join(f"-{k}{v:g}" for k, v in params.items())
    learners = tuple(replace(e, params={**e.params, **params})
                     if e.learner.startswith("struct_") else e for e in exp.learners)
    if epsilon != "default":
        eps = _per_label(epsilon, L)
        name += f"-epsilon{eps:g}"
        learners = tuple(replace(e, params={**e.params, "epsilon": eps})
                         if e.learner in ("struct_f1", "struct_subset") else e
                         for e in learners)
    return replace(exp, name=name, learners=learners)


def read(paths: str):
    """One table (dataset, label, zero_one, hamming, one_minus_f1 in percent,
    cpu_seconds) from comma-separated results files: Parquet of ``run``, or the JSON
    lines of the former script (as of 016c98c: one line per dataset, same datasets,
    protocol and learners), so runs of both can be reported together."""
    import json

    import polars as pl

    from mlw.experiments import read_results

    parts = []
    for path in paths.split(","):
        if path.endswith(".jsonl"):
            rows = []
            for line in Path(path).read_text().splitlines():
                r = json.loads(line)
                for label, v in r["learners"].items():
                    rows.append({"dataset": dataset_name(r["L"], r["index"], r["noise"]),
                                 "label": "BR (LinearSVC)" if label.startswith("BR") else label,
                                 **v["test"], "cpu_seconds": sum(f["cpu"] for f in v["fits"])})
            parts.append(pl.DataFrame(rows))
            continue
        df = read_results(path).filter(pl.col("status") == "ok")
        parts.append(df.select(
            "dataset", "label", zero_one=100 * (1 - pl.col("metric_subset_accuracy")),
            hamming=100 * pl.col("metric_hamming_loss"),
            one_minus_f1=100 * (1 - pl.col("metric_f1_example")),
            cpu_seconds=pl.col("cpu_seconds")))
    return pl.concat(parts, how="vertical_relaxed").unique(["dataset", "label"], keep="first")


def report(args) -> int:
    import polars as pl

    df = read(str(args.out))
    keys = ("zero_one", "hamming", "one_minus_f1")
    print("| noise | L | n | target cardinality (paper's mean) | "
          + " | ".join(f"{n} 0/1 · Hl · 1−F1" for n in ROWS) + " |")
    print("|---|---|---|---|" + "---|" * len(ROWS))
    for noise in NOISES:
        for L in (50, 25, 10):
            names = [dataset_name(L, j, noise) for j in range(16)]
            part = df.filter(pl.col("dataset").is_in(names))
            done = [d for d in names if set(part.filter(pl.col("dataset") == d)["label"])
                    >= set(ROWS)]  # datasets every learner finished
            if not done:
                continue
            part = part.filter(pl.col("dataset").is_in(done))
            cells = []
            for n in ROWS:
                g = part.filter(pl.col("label") == n)
                v = [float(g[k].mean()) for k in keys]
                p = PAPER[(noise, L)].get(n)
                paper = f" ({p[0]:.1f} · {p[1]:.2f} · {p[2]:.1f})" if p else ""
                cells.append(f"{v[0]:.1f} · {v[1]:.2f} · {v[2]:.1f}{paper}")
            # a row over other cardinalities than the paper's is not comparable with it
            card = np.mean([2 + 2 * int(d.split("-")[1]) / 15 for d in done])
            print(f"| {noise} | {L} | {len(done)} | {card:.2f} ({PAPER_CARDINALITY[L]}) | "
                  + " | ".join(cells) + " |")
    cpu = df.filter(pl.col("label").is_in(list(LEARNERS)))["cpu_seconds"].sum()
    print(f"\n{df['dataset'].n_unique()} datasets, {cpu:.0f} CPU s in the SSVM cells")
    return 0


def compare(args) -> int:
    """Struct(F1) (or ``--learner``) of each results file of ``--against`` (a training
    variant, e.g. ``run --loss-scale L``) beside the one of ``--out`` (the default) and
    Struct(Hl) of ``--out``, per (noise, L), on the datasets all three have: mean test
    0/1, Hamming and 1-F1 (percent), on how many datasets the learner beats Struct(Hl)
    on each of the three (strictly lower test loss), and how often validation chose the
    grid's largest C."""
    import json

    import polars as pl

    from mlw.experiments import read_results

    def table(paths):  # one variant's results, in one file or several joined by "+"
        df = pl.concat([read_results(p) for p in paths.split("+")], how="vertical_relaxed")
        df = df.filter(pl.col("status") == "ok").unique(["dataset", "label"], keep="first")
        return df.select("dataset", "label", f1=100 * (1 - pl.col("metric_f1_example")),
                         zero_one=100 * (1 - pl.col("metric_subset_accuracy")),
                         hamming=100 * pl.col("metric_hamming_loss"),
                         C=pl.col("chosen_params").map_elements(
                             lambda s: json.loads(s)["C"], return_dtype=pl.Float64))

    base = table(str(args.out))
    ham = base.filter(pl.col("label") == "Struct(Hl)")
    variants = [("default", base.filter(pl.col("label") == args.learner))]
    variants += [(v, table(v).filter(pl.col("label") == args.learner))
                 for v in args.against.split(",") if v]
    print("| noise | L | n | Struct(Hl) 0/1 · Hl · 1−F1 | "
          + " | ".join(f"{args.learner} {v}: 0/1 · Hl · 1−F1 (beats Hl on 0/1 · Hl · 1−F1;"
                       " C max)" for v, _ in variants) + " |")
    print("|---|---|---|---|" + "---|" * len(variants))
    for noise in NOISES:
        for L in (50, 25, 10):
            names = {dataset_name(L, j, noise) for j in range(16)}
            done = names & set(ham["dataset"])
            for _, t in variants:
                done &= set(t["dataset"])
            if not done:
                continue
            h = ham.filter(pl.col("dataset").is_in(done)).sort("dataset")
            cells = []
            for _, t in variants:
                g = t.filter(pl.col("dataset").is_in(done)).sort("dataset")
                wins = " · ".join(str(int((g[k].to_numpy() < h[k].to_numpy()).sum()))
                                  for k in ("zero_one", "hamming", "f1"))
                cmax = int((g["C"] == (1e6 if noise == "none" else 1e5)).sum())
                cells.append(f"{g['zero_one'].mean():.1f} · {g['hamming'].mean():.2f} · "
                             f"{g['f1'].mean():.1f} ({wins} of {len(done)}; {cmax})")
            print(f"| {noise} | {L} | {len(done)} | {h['zero_one'].mean():.1f} · "
                  f"{h['hamming'].mean():.2f} · {h['f1'].mean():.1f} | " + " | ".join(cells)
                  + " |")
    return 0


def measures(Y_true, Y_pred) -> dict[str, float]:
    m = mlw.evaluate(Y_true, Y_pred, metrics=["subset_accuracy", "hamming_loss", "f1_example"])
    return {"zero_one": 100 * (1 - m["subset_accuracy"]), "hamming": 100 * m["hamming_loss"],
            "one_minus_f1": 100 * (1 - m["f1_example"])}


_OWN = {"hamming": "hamming", "f1": "one_minus_f1", "subset": "zero_one"}


def fit_grid(name: str, own: str, grid, tr, va, te) -> dict:
    """Fit every C (ascending, warm-started), keep the best on validation, score test."""
    learner = mlw.get_learner(name, warm_start=True)
    best = None
    fits = []
    for C in grid:
        learner.set_params(C=C)
        t = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            learner.fit(tr.X, tr.Y)
        cpu = time.process_time() - t
        val = measures(va.Y, learner.predict(va.X))[_OWN[own]]
        fits.append({"C": C, "cpu": cpu, "n_iter": learner.n_iter_,
                     "converged": learner.converged_, "validation": val})
        if best is None or val < best[0]:
            best = (val, C, measures(te.Y, learner.predict(te.X)))
    return {"C": best[1], "test": best[2], "fits": fits}


def real(args) -> None:
    """scene and yeast: C on a 25% hold-out of the training split, refit, test split."""
    grid = (1e1, 1e2, 1e3, 1e4)
    for name in ("scene", "yeast"):
        tr = mlw.load_dataset(DATA / f"{name}-train.arff")
        te = mlw.load_dataset(DATA / f"{name}-test.arff")
        rng = np.random.default_rng(0)
        perm = rng.permutation(tr.n_instances)
        cut = tr.n_instances // 4
        va_rows, fit_rows = np.sort(perm[:cut]), np.sort(perm[cut:])
        fit, va = tr.subset(fit_rows), tr.subset(va_rows)
        for label, (lname, own) in LEARNERS.items():
            res = fit_grid(lname, own, grid, fit, va, va)
            learner = mlw.get_learner(lname, C=res["C"])
            t = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                learner.fit(tr.X, tr.Y)
            cpu = time.process_time() - t
            m = measures(te.Y, learner.predict(te.X))
            print(f"{name:6} {label:11} C={res['C']:g} fit {cpu:6.1f} CPU s "
                  f"it={learner.n_iter_} 0/1={m['zero_one']:.2f} Hl={m['hamming']:.2f} "
                  f"1-F1={m['one_minus_f1']:.2f} load={os.getloadavg()[0]:.1f}", flush=True)
        br = mlw.get_learner("br", base_estimator="linear_svc", threshold="fixed")
        t = time.process_time()
        br.fit(tr.X, tr.Y)
        cpu = time.process_time() - t
        m = measures(te.Y, br.predict(te.X))
        print(f"{name:6} {'BR(LinearSVC)':11} fit {cpu:6.1f} CPU s 0/1={m['zero_one']:.2f} "
              f"Hl={m['hamming']:.2f} 1-F1={m['one_minus_f1']:.2f}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("command", choices=["run", "report", "real", "compare"])
    ap.add_argument("--per-L", type=int, default=16)
    ap.add_argument("--labels", default="10,25,50")
    ap.add_argument("--noise", default="all")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--loss-scale", default="auto",
                    help="run: the structured SVMs' loss_scale ('auto': the configs' "
                         "default; 100: SVM-struct's percent; L: the number of labels, "
                         "every loss scaled as the Hamming count)")
    ap.add_argument("--epsilon", default="default",
                    help="run: Struct(F1)'s and Struct(01)'s epsilon, a number or X/L "
                         "(X divided by the number of labels); Struct(Hl) keeps 0.1")
    ap.add_argument("--learners", default="",
                    help="run: only these config keys, comma-separated "
                         "(e.g. struct_hamming,struct_f1)")
    ap.add_argument("--against", default="",
                    help="compare: results files of training variants, comma-separated "
                         "(one variant's files joined by '+')")
    ap.add_argument("--learner", default="Struct(F1)", help="compare: the row compared")
    ap.add_argument("--out", default="ssvm.parquet",
                    help="results file; report: several, comma-separated")
    args = ap.parse_args()
    return {"run": run, "report": report, "real": real,
            "compare": compare}[args.command](args) or 0


if __name__ == "__main__":
    sys.exit(main())
