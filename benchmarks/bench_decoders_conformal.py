"""Conformal recall and precision control, simulated: over 100 random calibration/test
halvings of the shared test split of yeast and scene, the recall (or precision) achieved
on the test half at targets 0.8, 0.9 and 0.95 (precision: also 0.5, 0.6 and 0.7), for
mlw's ``ConformalLabelSets`` beside MAPIE's ``MultiLabelClassificationController`` (MAPIE's
``PrecisionRecallController`` under its current name), on the same splits and the same
base model's scores, with the mean predicted set size.

- ``--control recall`` (the default): mlw's conformal risk control and Learn-then-Test
  at delta = 0.1; MAPIE's CRC and RCPS with the Hoeffding bound at the same delta.
- ``--control precision``: mlw's Learn-then-Test (Holm over the cut-offs 0, 0.01, ...,
  1) and MAPIE's (``risk="precision"``, ``method="ltt"``), both at delta = 0.1. A split
  where no cut-off is certified (the target is beyond what the scores and 50% of the
  test rows can certify) predicts empty sets; the table counts those splits apart and
  gives the precision, recall and set size over the certified ones.

The base model is ``br`` (logistic regression per label) fitted on the shared train
split; its scores on the test split are computed once (``scores``) and saved, so the
MAPIE step runs in its own environment (MAPIE is a benchmark-only dependency) and reads
them. Split ``s`` halves the test rows by ``numpy.random.default_rng(s).permutation``.

    python benchmarks/bench_decoders_conformal.py scores --work DIR
    python benchmarks/bench_decoders_conformal.py ours --work DIR [--control precision]
    /path/to/mapie-venv/bin/python benchmarks/bench_decoders_conformal.py mapie --work DIR \
        [--control precision]

Each of ``ours`` and ``mapie`` prints markdown rows: mean achieved recall or precision
(and its standard deviation over splits), the fraction of splits whose test value
reaches the target, the mean set size, and process CPU seconds for all the splits.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _shared import MULAN

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ("yeast", "scene")
TARGETS = (0.8, 0.9, 0.95)
#: Precision targets: the lower ones show the guarantee where ``br``'s scores can reach it.
PRECISION_TARGETS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
DELTA = 0.1
N_SPLITS = 100


def recall_of(Y: np.ndarray, P: np.ndarray) -> float:
    """1 - mean FNR (a row without true labels has FNR 0)."""
    size = Y.sum(axis=1)
    hit = (Y & P).sum(axis=1)
    return float(1.0 - np.mean(np.where(size > 0, 1.0 - hit / np.maximum(size, 1), 0.0)))


def precision_of(Y: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Each row's precision, as the metric ``precision_example`` and the loss of
    ``ConformalLabelSets(control="precision")`` define it (an empty set: 0 for a row
    with true labels, 1 for a row without); MAPIE's environment has no mlw, so both
    sides are scored by this one function (checked against mlw's in ``ours``)."""
    size = P.sum(axis=1)
    hit = (Y & P).sum(axis=1)
    return np.where(size > 0, hit / np.maximum(size, 1), np.where(Y.any(axis=1), 0.0, 1.0))


def splits(n: int):
    for s in range(N_SPLITS):
        perm = np.random.default_rng(s).permutation(n)
        yield perm[: n // 2], perm[n // 2:]


def scores(work: Path) -> None:
    import mlw

    work.mkdir(parents=True, exist_ok=True)
    for name in DATASETS:
        tr = mlw.load_dataset(MULAN / f"{name}-train.arff")
        te = mlw.load_dataset(MULAN / f"{name}-test.arff")
        model = mlw.get_learner("br").fit(tr.X, tr.Y)
        S = np.asarray(model.predict_proba(te.X), dtype=np.float64)
        Y = np.asarray(te.Y.toarray() if hasattr(te.Y, "toarray") else te.Y, dtype=np.uint8)
        np.savez(work / f"{name}.npz", S=S, Y=Y)
        print(f"{name}: {S.shape[0]} test rows, {S.shape[1]} labels")


def _row(who: str, name: str, target: float, rec: list, size: list, cpu: float) -> None:
    r = np.array(rec)
    print(f"| {name} | {target} | {who} | {r.mean():.4f} ± {r.std(ddof=1):.4f} | "
          f"{np.mean(r >= target):.2f} | {np.mean(size):.2f} | {cpu:.2f} |")


def _datasets(work: Path):
    """``(name, scores, labels, predict)`` of each dataset: ``predict`` gives MAPIE the
    saved scores of the rows it is handed (as indices)."""
    for name in DATASETS:
        data = np.load(work / f"{name}.npz")
        S, Y = data["S"], data["Y"]

        def predict(idx: np.ndarray, S: np.ndarray = S) -> np.ndarray:
            return S[np.asarray(idx, dtype=np.int64).ravel()]

        yield name, S, Y, predict


def _precision_row(who: str, name: str, target: float, runs: list, cpu: float) -> None:
    """``runs``: one ``(certified, precision, recall, set size)`` per split."""
    ok = [r for r in runs if r[0]]
    head = f"| {name} | {target} | {who} | {len(ok)} |"
    if not ok:
        print(f"{head} — | — | — | — | {cpu:.2f} |")
        return
    prec, rec, size = (np.array([r[i] for r in ok]) for i in (1, 2, 3))
    sd = prec.std(ddof=1) if prec.size > 1 else 0.0
    print(f"{head} {np.mean(prec >= target):.2f} | {prec.mean():.4f} ± {sd:.4f} | "
          f"{rec.mean():.4f} | {size.mean():.2f} | {cpu:.2f} |")


def _precision_run(Y: np.ndarray, P: np.ndarray, certified: bool) -> tuple:
    return (certified, float(precision_of(Y, P).mean()), recall_of(Y, P),
            float(P.sum(axis=1).mean()))


def ours_precision(work: Path) -> None:
    from mlw.conformal import PRECISION_GRID, conformal_cutoff, precision_loss, precision_risks

    best = []
    for name, S, Y, _ in _datasets(work):
        risks = precision_risks(S, Y)
        k = int(np.argmin(risks))
        best.append(f"{name}: {1 - risks[k]:.4f} (cut-off {PRECISION_GRID[k]:.2f})")
        for target in PRECISION_TARGETS:
            runs = []
            c0 = time.process_time()
            for cal, test in splits(S.shape[0]):
                lam, _ = conformal_cutoff(S[cal], Y[cal], control="precision",
                                          alpha=round(1 - target, 10), delta=DELTA)
                P = (S[test] >= lam).astype(np.uint8)
                runs.append(_precision_run(Y[test], P, bool(np.isfinite(lam))))
            cpu = time.process_time() - c0
            check = precision_of(Y[test], P).mean() - (1 - precision_loss(Y[test], P).mean())
            assert abs(check) < 1e-12, "the script's precision differs from mlw's"
            _precision_row(f"mlw LTT-Holm (delta {DELTA})", name, target, runs, cpu)
    print("\nthe highest precision of any cut-off 0, 0.01, ..., 1 on the whole test split: "
          + "; ".join(best))


def ours(work: Path) -> None:
    from mlw.conformal import conformal_cutoff

    for name, S, Y, _ in _datasets(work):
        for target in TARGETS:
            for method in ("crc", "ltt"):
                rec, size = [], []
                c0 = time.process_time()
                for cal, test in splits(S.shape[0]):
                    lam, _ = conformal_cutoff(S[cal], Y[cal], alpha=round(1 - target, 10),
                                           method=method, delta=DELTA)
                    P = (S[test] >= lam).astype(np.uint8)
                    rec.append(recall_of(Y[test], P))
                    size.append(P.sum(axis=1).mean())
                who = "mlw CRC" if method == "crc" else f"mlw LTT (delta {DELTA})"
                _row(who, name, target, rec, size, time.process_time() - c0)


def mapie_precision(work: Path) -> None:
    import warnings

    from mapie.risk_control import MultiLabelClassificationController

    warnings.filterwarnings("ignore")
    for name, S, Y, predict in _datasets(work):
        for target in PRECISION_TARGETS:
            runs = []
            c0 = time.process_time()
            for cal, test in splits(S.shape[0]):
                ctl = MultiLabelClassificationController(
                    predict_function=predict, risk="precision", method="ltt",
                    target_level=target, confidence_level=1 - DELTA)
                ctl.calibrate(cal.reshape(-1, 1), Y[cal])
                P = ctl.predict(test.reshape(-1, 1))[:, :, 0].astype(np.uint8)
                certified = bool(np.isfinite(ctl.best_predict_param[0]))
                runs.append(_precision_run(Y[test], P, certified))
            _precision_row(f"MAPIE LTT (delta {DELTA})", name, target, runs,
                           time.process_time() - c0)


def mapie(work: Path) -> None:
    import warnings

    from mapie.risk_control import MultiLabelClassificationController

    warnings.filterwarnings("ignore")
    for name, S, Y, predict in _datasets(work):
        for target in TARGETS:
            for method in ("crc", "rcps"):
                rec, size = [], []
                c0 = time.process_time()
                for cal, test in splits(S.shape[0]):
                    kw = {} if method == "crc" else {"confidence_level": 1 - DELTA,
                                                     "rcps_bound": "hoeffding"}
                    ctl = MultiLabelClassificationController(
                        predict_function=predict, risk="recall", method=method,
                        target_level=target, **kw)
                    ctl.calibrate(cal.reshape(-1, 1), Y[cal])
                    P = ctl.predict(test.reshape(-1, 1))[:, :, 0].astype(np.uint8)
                    rec.append(recall_of(Y[test], P))
                    size.append(P.sum(axis=1).mean())
                who = "MAPIE CRC" if method == "crc" else f"MAPIE RCPS-Hoeffding (delta {DELTA})"
                _row(who, name, target, rec, size, time.process_time() - c0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=("scores", "ours", "mapie"))
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--control", choices=("recall", "precision"), default="recall")
    args = ap.parse_args()
    if args.step in ("ours", "mapie") and args.control == "recall":
        print("| dataset | target recall | method | mean recall ± sd | splits at target | "
              "mean set size | CPU s (100 splits) |")
        print("|---|---|---|---|---|---|---|")
    elif args.step in ("ours", "mapie"):
        print("| dataset | target precision | method | splits certified | splits at target "
              "(of certified) | mean precision ± sd | mean recall | mean set size | "
              "CPU s (100 splits) |")
        print("|---|---|---|---|---|---|---|---|---|")
    steps = {"scores": scores, "ours": ours, "mapie": mapie}
    if args.control == "precision":
        steps.update(ours=ours_precision, mapie=mapie_precision)
    steps[args.step](args.work)


if __name__ == "__main__":
    main()
