"""Our figures next to the papers', for the method pages (docs/methods/): reads the results of
``mlw bench --config examples/papers/PAPER.toml`` and prints Markdown tables with the
paper's value beside ours (and the difference).

    python benchmarks/bench_core_paper_tables.py lacovac RESULTS.parquet
    python benchmarks/bench_core_paper_tables.py lcif RESULTS.parquet
    python benchmarks/bench_core_paper_tables.py xdcc RESULTS.parquet

The LaCovaC paper's Tables 4-6 are read from ../shared/papers/lacovac-ecai2016.md
itself (no transcription); the other papers' figures are quoted below with their
table numbers.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

from _shared import PAPERS

ROOT = Path(__file__).resolve().parents[1]

# --- LaCovaC (ECAI 2016), Tables 4-6 ------------------------------------------------------
LACOVAC_METRICS = {"multi-label accuracy": "accuracy", "exact-match": "subset_accuracy",
                   "Hamming loss": "hamming_loss", "log-loss": "log_loss",
                   "micro $F_1$": "f1_micro", "macro $f_1$": "f1_macro",
                   "macro $f_e$": "f1_example"}
LACOVAC_LEARNERS = {"BR": "br_tree", "LP": "lp_tree", "CC": "cc_tree", "ML-C4.5": "ml_c45",
                    "LaCova": "lacova", "LaCovaC": "lacovac"}
LACOVAC_DATASETS = {"Genebase": "genbase"}


def lacovac_paper() -> dict[str, dict[str, dict[str, float]]]:
    """``{metric: {dataset: {learner key: value}}}`` from the paper's Tables 4-6."""
    text = (PAPERS / "lacovac-ecai2016.md").read_text()
    out: dict[str, dict[str, dict[str, float]]] = {}
    header: list[str] = []
    metric = None
    for line in text.splitlines():
        if not line.startswith("|"):
            continue
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "" and "LaCovaC" in cells:
            header = cells
            continue
        if not header or set(cells[0]) <= {"-"}:
            continue
        if cells[0] in LACOVAC_METRICS and all(c == "" for c in cells[1:]):
            metric = LACOVAC_METRICS[cells[0]]
            continue
        if metric is None or cells[0] == "Average ranks":
            continue
        dataset = LACOVAC_DATASETS.get(cells[0], cells[0].lower())
        for name, cell in zip(header[1:], cells[1:], strict=False):
            m = re.match(r"([0-9.]+)\(", cell)
            if m and name in LACOVAC_LEARNERS:
                out.setdefault(metric, {}).setdefault(dataset, {})[
                    LACOVAC_LEARNERS[name]] = float(m.group(1))
    return out


def _means(path: str) -> dict[tuple[str, str, str], float]:
    import polars as pl

    from mlw.experiments import read_results

    df = read_results(path).filter(pl.col("status") == "ok")
    out = {}
    metrics = [c for c in df.columns if c.startswith("metric_")]
    for (learner, dataset), group in df.group_by(["learner", "dataset"]):
        for col in metrics:
            values = group[col].drop_nulls()
            if values.len():
                out[(str(learner), str(dataset), col.removeprefix("metric_"))] = float(
                    values.mean())
    return out


def _fmt(v: float | None) -> str:
    return "-" if v is None or not math.isfinite(v) else f"{v:.3f}"


def _avg_ranks(values: dict[str, dict[str, float]], learners: list[str], lower: bool
               ) -> list[float] | None:
    """Average ranks (1 = best, ties shared) over the datasets where every learner has a
    value; None when there is none."""
    from scipy.stats import rankdata

    rows = [[values[ds][ln] for ln in learners] for ds in values
            if all(ln in values[ds] for ln in learners)]
    if not rows:
        return None
    ranks = [rankdata(r if lower else [-v for v in r]) for r in rows]
    return [sum(r[j] for r in ranks) / len(ranks) for j in range(len(learners))]


def lacovac(path: str) -> None:
    paper = lacovac_paper()
    ours = _means(path)
    learners = list(LACOVAC_LEARNERS.values())
    datasets = ["flags", "emotions", "birds", "genbase", "medical", "yeast", "scene", "enron",
                "bibtex"]
    run = {d for (_, d, _) in ours}
    print(f"run: {', '.join(d for d in datasets if d in run)}; not in the results (-): "
          f"{', '.join(d for d in datasets if d not in run) or 'none'}")
    ranks_ours: dict[str, dict[str, dict[str, float]]] = {}
    ranks_paper: dict[str, dict[str, dict[str, float]]] = {}
    for metric in LACOVAC_METRICS.values():
        print(f"\n**{metric}** (ours / paper)\n")
        print("| dataset | " + " | ".join(learners) + " |")
        print("|---" * (len(learners) + 1) + "|")
        for ds in datasets:
            row = []
            for ln in learners:
                o = ours.get((ln, ds, metric))
                p = paper.get(metric, {}).get(ds, {}).get(ln)
                if o is not None:
                    ranks_ours.setdefault(metric, {}).setdefault(ds, {})[ln] = o
                if p is not None:
                    ranks_paper.setdefault(metric, {}).setdefault(ds, {})[ln] = p
                row.append(f"{_fmt(o)} / {_fmt(p)}")
            print(f"| {ds} | " + " | ".join(row) + " |")
    print("\n**Average ranks over the same datasets** (ours / the paper's values ranked "
          "over the same datasets and six learners)\n")
    print("| metric | " + " | ".join(learners) + " |")
    print("|---" * (len(learners) + 1) + "|")
    for metric in LACOVAC_METRICS.values():
        lower = metric in ("hamming_loss", "log_loss")
        common = {ds for ds in ranks_ours.get(metric, {}) if ds in ranks_paper.get(metric, {})}
        o = _avg_ranks({d: ranks_ours[metric][d] for d in common}, learners, lower)
        p = _avg_ranks({d: ranks_paper[metric][d] for d in common}, learners, lower)
        if o is None or p is None:
            continue
        print(f"| {metric} ({len(common)}) | " + " | ".join(
            f"{a:.2f} / {b:.2f}" for a, b in zip(o, p, strict=True)) + " |")
    joint = [(ds, ours.get(("lacovac_joint", ds, "subset_accuracy"))) for ds in datasets]
    print("\nLaCovaC's own joint decision, exact match: " +
          ", ".join(f"{ds} {_fmt(v)}" for ds, v in joint))


# --- LCIF (DSAA 2017), Table II (instance kNN, feature kNN, LCIF) -----------------------------
LCIF_METRICS = ("accuracy", "f1_example", "hamming_loss", "f1_micro", "f1_macro")
LCIF_PAPER = {  # {dataset: {learner: values in LCIF_METRICS order}}
    "medical": {"instance_knn": (0.597, 0.641, 0.020, 0.643, 0.348),
                "feature_knn": (0.515, 0.562, 0.026, 0.557, 0.398),
                "lcif": (0.709, 0.751, 0.014, 0.750, 0.429)},
    "bibtex": {"instance_knn": (0.351, 0.419, 0.017, 0.432, 0.332),
               "feature_knn": (0.202, 0.274, 0.022, 0.289, 0.146),
               "lcif": (0.362, 0.444, 0.016, 0.457, 0.341)},
    "imdb": {"instance_knn": (0.247, 0.329, 0.095, 0.337, 0.089),
             "feature_knn": (0.234, 0.311, 0.095, 0.307, 0.076),
             "lcif": (0.252, 0.335, 0.092, 0.344, 0.095)},
}


def lcif(path: str) -> None:
    ours = _means(path)
    datasets = sorted({d for (_, d, _) in ours})
    for ds in datasets:
        print(f"\n**{ds}** (ours / paper)\n")
        print("| learner | " + " | ".join(LCIF_METRICS) + " |")
        print("|---" * (len(LCIF_METRICS) + 1) + "|")
        for ln in ("instance_knn", "feature_knn", "lcif", "lcif2"):
            paper = LCIF_PAPER.get(ds, {}).get(ln)
            cells = [f"{_fmt(ours.get((ln, ds, m)))} / {_fmt(paper[i]) if paper else '-'}"
                     for i, m in enumerate(LCIF_METRICS)]
            print(f"| {ln} | " + " | ".join(cells) + " |")


def xdcc(path: str) -> None:
    ours = _means(path)
    learners = ("br_xgb", "cc_xgb", "ml_xgb", "xdcc_std", "xdcc_cum")
    datasets = sorted({d for (_, d, _) in ours})
    for metric, flip in (("hamming_loss", True), ("subset_accuracy", False),
                         ("f1_example", False)):
        name = "hamming accuracy" if flip else metric
        print(f"\n**{name}**\n")
        print("| dataset | " + " | ".join(learners) + " |")
        print("|---" * (len(learners) + 1) + "|")
        for ds in datasets:
            vals = [ours.get((ln, ds, metric)) for ln in learners]
            vals = [None if v is None else (1 - v if flip else v) for v in vals]
            print(f"| {ds} | " + " | ".join(_fmt(v) for v in vals) + " |")


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in ("lacovac", "lcif", "xdcc"):
        print(__doc__)
        return 2
    {"lacovac": lacovac, "lcif": lcif, "xdcc": xdcc}[sys.argv[1]](sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
