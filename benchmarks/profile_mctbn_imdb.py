"""Where an ``mc`` fit spends its time on a subsample of MEKA's IMDB (120,919 rows, 1001
binary features, 28 labels; the first 72,551 rows are the training part, as
benchmarks/defaults.py splits it): the default learner fitted on ``--rows`` training
rows (a seeded random subsample) under cProfile; prints the process CPU seconds, the
load average, what the fit chose (C, trees, EM weights) and the cumulative time of the
plugin's functions (the numba kernels are leaves: their time is their callers').

    nice -n 5 python benchmarks/profile_mctbn_imdb.py --rows 10000 [--params '{}']
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import time
from pathlib import Path

import numpy as np

import mlw
from mlw_mctbn import MixtureOfCTBNs

DATA = Path(os.environ.get("MLW_SHARED_DATASETS",
                           Path(__file__).resolve().parents[2] / "shared" / "datasets"))
IMDB_TRAIN = 72551


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--params", default="{}", help="JSON dict of MixtureOfCTBNs parameters")
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    t0 = time.process_time()
    d = mlw.load_dataset(str(DATA / "meka" / "Imdb.arff.bz2"))
    rows = np.sort(np.random.default_rng(0).choice(IMDB_TRAIN, a.rows, replace=False))
    X, Y = d.X[rows], d.Y[rows]
    print(f"loaded in {time.process_time() - t0:.1f} s CPU: X {X.shape}, nnz {X.nnz}, "
          f"{Y.shape[1]} labels", flush=True)
    # compile the kernels outside the profile
    MixtureOfCTBNs(C=1.0, n_trees=2, em_max_iter=2).fit(X[:200], Y[:200])
    model = MixtureOfCTBNs(**json.loads(a.params))
    prof = cProfile.Profile()
    c0, w0, load0 = time.process_time(), time.time(), os.getloadavg()[0]
    prof.enable()
    model.fit(X, Y)
    prof.disable()
    cpu, wall = time.process_time() - c0, time.time() - w0
    print(f"fit: {cpu:.1f} s CPU, {wall:.1f} s wall, load {load0:.1f} -> "
          f"{os.getloadavg()[0]:.1f}; C {model.C_} (search {model.C_search_}), "
          f"{model.n_trees_} trees, em_weights {model.em_weights_} "
          f"(validation {model.em_weights_search_}), curve "
          f"{[round(v, 3) for v in model.validation_curve_]}", flush=True)
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).sort_stats("cumulative")
    stats.print_stats("mlw_mctbn", a.top)
    print(out.getvalue())


if __name__ == "__main__":
    main()
