"""Cardinality matching on training scores that fit the training labels exactly
(docs/guide/thresholds.md, "When the training scores fit the training labels exactly").

    nice -n 5 python benchmarks/bench_core_threshold_ties.py [--learners br,ml_xgb,xdcc]
        [--datasets emotions,yeast,scene,flags,birds,genbase,medical,enron]

For each learner at its defaults and each dataset (``benchmarks/bench_core_defaults.py``'s split),
the learner's in-sample training scores go to the core's ``CardinalityMatching``
(``top_label="auto"``, the default decision's); the coarse pass's thresholds whose
predicted training cardinality is equally close to the target are the tie. Printed: the
tied thresholds, and the test subset accuracy / example F1 at the threshold the search
keeps (the first best, then the fine pass) and at the middle of the tie (no fine pass).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core_defaults import load  # noqa: E402  (benchmarks/ is not a package)


def tie_row(learner: str, data: tuple) -> dict:
    import mlw
    from mlw.thresholds import COARSE_GRID, CardinalityMatching, apply_threshold

    Xtr, Ytr, Xte, Yte = data
    model = mlw.get_learner(learner).fit(Xtr, Ytr)
    S_tr, S_te = model.predict_proba(Xtr), model.predict_proba(Xte)
    cm = CardinalityMatching(top_label="auto").fit(S_tr, Ytr)
    coarse = cm.search_[:len(COARSE_GRID)]   # (threshold, training cardinality)
    gaps = np.array([abs(c - cm.target_cardinality_) for _, c in coarse])
    tied = [round(t, 2) for (t, _), g in zip(coarse, gaps, strict=True) if g == gaps.min()]
    row = {"tied": tied}
    for name, t in (("kept", cm.threshold_), ("middle", float(np.median(tied)))):
        r = mlw.evaluate(Yte, apply_threshold(S_te, t, top_label=cm.top_label_),
                         metrics=["subset_accuracy", "f1_example"])
        row[name] = (t, r["subset_accuracy"], r["f1_example"])
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--learners", default="br,ml_xgb,xdcc")
    ap.add_argument("--datasets",
                    default="emotions,yeast,scene,flags,birds,genbase,medical,enron")
    args = ap.parse_args()
    print("| dataset, learner | tied thresholds | kept: t, SA / F1 | middle: t, SA / F1 | CPU s |")
    print("|---|---|---|---|---|")
    for ds in args.datasets.split(","):
        data = load(ds)
        for learner in args.learners.split(","):
            t0 = time.process_time()
            r = tie_row(learner, data)
            cells = [f"t {t:g}: {sa:.3f} / {f1:.3f}" for t, sa, f1 in (r["kept"], r["middle"])]
            tied = f"{r['tied'][0]}-{r['tied'][-1]}" if len(r["tied"]) > 1 else "none"
            print(f"| {ds}, {learner} | {tied} | {cells[0]} | {cells[1]} | "
                  f"{time.process_time() - t0:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
