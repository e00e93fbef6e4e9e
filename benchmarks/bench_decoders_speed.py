"""Speed of the ``f1`` decoder (GFM) with ``pcc`` on bibtex's shared test split
(2,515 rows, 159 labels: above PCC's exact size, so the decoder draws ``n_samples``
label vectors per row from the chain and runs GFM on their size marginals), beside the
learner's own ``predict`` (beam search) on the same rows in the same run.

Prints process CPU seconds (user + sys of this process), wall seconds and the load
average for the fit, ``predict`` and each decoder, and the ratio of each decoder's
CPU time to ``predict``'s. Numba's first compilation is excluded (a warm-up on a few
rows first). One BLAS thread.

    NUMBA_NUM_THREADS=1 python benchmarks/bench_decoders_speed.py [--dataset bibtex]
        [--learner pcc] [--n-samples 1000]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from _shared import MULAN
from threadpoolctl import threadpool_limits

import mlw

ROOT = Path(__file__).resolve().parents[1]


def timed(fn):
    load = os.getloadavg()[0]
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0, load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="bibtex")
    ap.add_argument("--learner", default="pcc")
    ap.add_argument("--n-samples", type=int, default=1000)
    ap.add_argument("--decoders", default="f1,hamming,subset,jaccard")
    args = ap.parse_args()
    with threadpool_limits(limits=1, user_api="blas"):
        tr = mlw.load_dataset(MULAN / f"{args.dataset}-train.arff")
        te = mlw.load_dataset(MULAN / f"{args.dataset}-test.arff")
        learner, cpu, wall, load = timed(lambda: mlw.get_learner(args.learner).fit(tr.X, tr.Y))
        print(f"{args.learner} fit on {args.dataset} train {tr.X.shape[0]} x {tr.Y.shape[1]}: "
              f"{cpu:.2f} CPU s, {wall:.2f} wall s, load {load:.1f}")
        for name in args.decoders.split(","):  # warm-up: compile the kernels
            mlw.get_decoder(name, **_opts(name, args)).decode(learner, te.X[:3])
        _, base, wall, load = timed(lambda: learner.predict(te.X))
        print(f"predict (own decision) on test {te.X.shape[0]} rows: {base:.2f} CPU s, "
              f"{wall:.2f} wall s, load {load:.1f}")
        for name in args.decoders.split(","):
            dec = mlw.get_decoder(name, **_opts(name, args))
            res, cpu, wall, load = timed(lambda dec=dec: dec.decode_detailed(learner, te.X))
            print(f"decode {name:8s} ({res.route}): {cpu:.2f} CPU s, {wall:.2f} wall s, "
                  f"load {load:.1f}, {cpu / base:.2f}x predict")


def _opts(name: str, args: argparse.Namespace) -> dict:
    return {"n_samples": args.n_samples} if name in ("f1", "jaccard") else {}


if __name__ == "__main__":
    main()
