"""Conformal recall control, simulated: over 100 random calibration/test halvings of the
shared test split of yeast and scene, the recall achieved on the test half at targets
0.8, 0.9 and 0.95, for mlw's ``ConformalRecall`` (conformal risk control, and
Learn-then-Test at delta = 0.1) beside MAPIE's ``MultiLabelClassificationController``
(its CRC, and RCPS with the Hoeffding bound at the same delta), on the same
splits and the same base model's scores, with the mean predicted set size.

The base model is ``br`` (logistic regression per label) fitted on the shared train
split; its scores on the test split are computed once (``scores``) and saved, so the
MAPIE step runs in its own environment (MAPIE is a benchmark-only dependency) and reads
them. Split ``s`` halves the test rows by ``numpy.random.default_rng(s).permutation``.

    python benchmarks/bench_decoders_conformal.py scores --work DIR
    python benchmarks/bench_decoders_conformal.py ours --work DIR
    /path/to/mapie-venv/bin/python benchmarks/bench_decoders_conformal.py mapie --work DIR

Each of ``ours`` and ``mapie`` prints markdown rows: mean achieved recall (and its
standard deviation over splits), the fraction of splits whose test recall reaches the
target, the mean set size, and process CPU seconds for all the splits.
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
DELTA = 0.1
N_SPLITS = 100


def recall_of(Y: np.ndarray, P: np.ndarray) -> float:
    """1 - mean FNR (a row without true labels has FNR 0)."""
    size = Y.sum(axis=1)
    hit = (Y & P).sum(axis=1)
    return float(1.0 - np.mean(np.where(size > 0, 1.0 - hit / np.maximum(size, 1), 0.0)))


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


def ours(work: Path) -> None:
    from mlw.conformal import conformal_cutoff

    for name in DATASETS:
        data = np.load(work / f"{name}.npz")
        S, Y = data["S"], data["Y"]
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


def mapie(work: Path) -> None:
    import warnings

    from mapie.risk_control import MultiLabelClassificationController

    warnings.filterwarnings("ignore")
    for name in DATASETS:
        data = np.load(work / f"{name}.npz")
        S, Y = data["S"], data["Y"]

        def predict(idx: np.ndarray, S: np.ndarray = S) -> np.ndarray:
            return S[np.asarray(idx, dtype=np.int64).ravel()]

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
    args = ap.parse_args()
    if args.step in ("ours", "mapie"):
        print("| dataset | target recall | method | mean recall ± sd | splits at target | "
              "mean set size | CPU s (100 splits) |")
        print("|---|---|---|---|---|---|---|")
    {"scores": scores, "ours": ours, "mapie": mapie}[args.step](args.work)


if __name__ == "__main__":
    main()
