"""Does mc's MAP search (best tree MAP + simulated annealing, Sec. 5.4) find the mixture's
argmax? Per fold of the paper protocol (examples/papers/mctbn.toml's 10 folds by iterative
stratification, seed 0, on each train and test file joined), fit mc (the paper's MAP,
``top_label=False``; ``--params`` as JSON, e.g. '{"factor": "switching"}') on the other
nine folds, then for up to --rows test rows enumerate all 2^d label vectors (d <= 16)
and compare: the rows where annealing's vector has a lower mixture probability than the
enumerated argmax, and the EMA of both decisions and of the annealing's start alone.
With ``--out``, one JSON line per fold (with process CPU s and the load) is appended.

    nice -n 5 python benchmarks/map_check_mctbn.py --dataset yeast --folds 0,1 \
        --params '{"factor": "switching"}' --out benchmarks/results_mctbn7/map_check.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

import mlw
from mlw.metrics import cll_loss, subset_accuracy
from mlw.validation import dense_labels
from mlw_mctbn import MixtureOfCTBNs, _kernels

MULAN = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "mulan"


def load_full(name: str) -> mlw.Dataset:
    """The protocol's data (examples/papers/mctbn.toml): the train and test files joined
    (``mlw.Dataset.concat``), labels as a dense 0/1 matrix."""
    ds = mlw.Dataset.concat([mlw.load_dataset(MULAN / f"{name}-{part}.arff")
                             for part in ("train", "test")], name=name)
    return dataclasses.replace(ds, Y=dense_labels(ds.Y))


def protocol_folds(ds: mlw.Dataset, folds: str,
                   seed: int = 0) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """``(fold, training rows, test rows)`` of the protocol's 10 folds (iterative
    stratification, ``seed`` 0; another seed is another partition by the same splitter)
    named in ``folds`` ("0,1,...")."""
    fold_of = mlw.iterative_stratification(ds.Y, 10, seed=seed)
    for f in (int(x) for x in folds.split(",")):
        yield f, np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f)


def emit(out: Path, rec: dict, cpu0: float, wall0: float) -> None:
    """Append ``rec`` with the process CPU and wall seconds since ``cpu0``/``wall0`` and
    the load average to the JSON-lines file ``out``, and print it."""
    rec = dict(rec, cpu_s=round(time.process_time() - cpu0, 1),
               wall_s=round(time.time() - wall0, 1), load=round(os.getloadavg()[0], 1))
    with open(out, "a") as fh:
        fh.write(json.dumps(rec) + "\n")
    print(json.dumps(rec), flush=True)


def all_vectors(d: int) -> np.ndarray:
    return ((np.arange(2 ** d)[:, None] >> np.arange(d)[None, :]) & 1).astype(np.uint8)


def enumerated_map(model, A: np.ndarray, Vp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact mixture argmax of every row of the logits ``A`` and their parent-1
    changes ``Vp`` (each (n, K, d)), and its log P."""
    d = A.shape[2]
    V = all_vectors(d)
    log_lam = model._log_lam()
    best = np.empty((A.shape[0], d), np.uint8)
    best_lp = np.empty(A.shape[0])
    for r in range(A.shape[0]):
        Ar = np.ascontiguousarray(np.repeat(A[r:r + 1], V.shape[0], axis=0))
        Vr = np.ascontiguousarray(np.repeat(Vp[r:r + 1], V.shape[0], axis=0))
        lp = _kernels.mixture_log_proba(Ar, Vr, model.parents_, log_lam, V)
        j = int(lp.argmax())
        best[r], best_lp[r] = V[j], lp[j]
    return best, best_lp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="emotions")
    ap.add_argument("--folds", default="0")
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--params", default="{}", help="JSON dict of mc parameters")
    ap.add_argument("--out", type=Path, default=None, help="JSON-lines file to append to")
    args = ap.parse_args()
    params = json.loads(args.params)
    ds = load_full(args.dataset)
    if ds.Y.shape[1] > 16:
        raise SystemExit(f"{args.dataset}: {ds.Y.shape[1]} labels, too many to enumerate")
    for f, tr, te in protocol_folds(ds, args.folds):
        c0, w0, load = time.process_time(), time.time(), os.getloadavg()[0]
        model = MixtureOfCTBNs(top_label=False, **params).fit(ds.X[tr], ds.Y[tr])
        fit_cpu = time.process_time() - c0
        te = te[: args.rows]
        Xte, Yte = ds.X[te], np.asarray(ds.Y[te])
        A, Vp = model._logits(Xte)
        log_lam = model._log_lam()
        Y_anneal = model._map_from_logits(A, Vp)
        lp_anneal = _kernels.mixture_log_proba(A, Vp, model.parents_, log_lam,
                                               np.ascontiguousarray(Y_anneal))
        n_iter = model.n_anneal_iter
        model.n_anneal_iter = 0
        Y_start = model._map_from_logits(A, Vp)
        model.n_anneal_iter = n_iter
        Y_exact, lp_exact = enumerated_map(model, A, Vp)
        missed = lp_anneal < lp_exact - 1e-9

        def ema(Y, Yte=Yte):
            return subset_accuracy(Yte, Y)

        rec = dict(dataset=args.dataset, params=params, fold=f, rows=len(te),
                   n_trees=model.n_trees_, em_weights=model.em_weights_, C=model.C_,
                   missed=int(missed.sum()), ema_anneal=ema(Y_anneal),
                   ema_exact=ema(Y_exact), ema_start=ema(Y_start),
                   cll=cll_loss(Yte, model.log_proba_of(Xte, Yte)),
                   gap_mean=float((lp_exact - lp_anneal)[missed].mean()) if missed.any()
                   else 0.0, fit_cpu_s=round(fit_cpu, 1))
        if args.out is not None:
            emit(args.out, rec, c0, w0)
        print(f"{args.dataset} {params} fold {f}: {model.n_trees_} trees, {len(te)} rows; "
              f"annealing below the enumerated argmax on {int(missed.sum())} "
              f"({missed.mean():.3f}); EMA annealing {ema(Y_anneal):.3f}, enumerated "
              f"{ema(Y_exact):.3f}, best tree MAP alone {ema(Y_start):.3f}; fit "
              f"{fit_cpu:.1f} s CPU (load {load:.1f})", flush=True)


if __name__ == "__main__":
    main()
