"""svmlight reading speed: mlw's streamed reader against scikit-learn's
``load_svmlight_file(multilabel=True)`` (Cython) on the same file.

Writes one multi-label svmlight file (default: 200,000 rows, 50,000 features, 30
non-zeros a row with 6-digit values, 1 to 5 of 5,000 labels; or ``--file PATH``), then
times in one process, best of ``--repeat`` after one untimed warm-up of each (numba's
kernels come from its on-disk cache):

* mlw: ``mlw.io.load_svmlight(path)`` -> CSR ``X`` and ``Y`` (both passes, validation,
  duplicate checks included);
* mlw's XC reader on the same rows written with the XC header (the same tokenizer);
* scikit-learn: ``load_svmlight_file(path, multilabel=True)`` -> CSR ``X`` and a list of
  label tuples (no label matrix built).

Prints wall and process CPU time (user + sys) of each, the load average beside them,
and the ratios (scikit-learn / mlw; above 1 means mlw is faster). Usage::

    NUMBA_NUM_THREADS=1 python benchmarks/bench_core_svmlight.py [--rows N] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np


def write_file(path: Path, rows: int, features: int, labels: int, nnz: int,
               seed: int) -> None:
    """A random multi-label svmlight file, one-based, written in blocks of rows."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as fh:
        for a in range(0, rows, 10_000):
            m = min(10_000, rows - a)
            cols = np.sort(rng.choice(features, size=(m, nnz), replace=True), axis=1)
            vals = np.round(rng.random((m, nnz)), 6)
            n_lab = rng.integers(1, 6, size=m)
            out = []
            for i in range(m):
                c = np.unique(cols[i])
                labs = ",".join(map(str, np.sort(rng.choice(labels, n_lab[i], replace=False))))
                feats = " ".join(f"{j + 1}:{v:.6g}" for j, v in zip(c.tolist(),
                                                                   vals[i, :c.size].tolist(),
                                                                   strict=True))
                out.append(f"{labs} {feats}\n")
            fh.write("".join(out))


def _time(fn, repeat: int) -> tuple[float, float]:
    fn()  # warm-up
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        best_wall = min(best_wall, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
    return best_wall, best_cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", type=Path, help="an existing svmlight file (else generated)")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=50_000)
    ap.add_argument("--labels", type=int, default=5_000)
    ap.add_argument("--nnz", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from sklearn.datasets import load_svmlight_file

    from mlw.io import load_svmlight, load_xc, write_xc

    with tempfile.TemporaryDirectory() as tmp:
        path = args.file
        if path is None:
            path = Path(tmp) / "bench.svm"
            write_file(path, args.rows, args.features, args.labels, args.nnz, args.seed)
        size = path.stat().st_size / 2**20
        ds = load_svmlight(path)
        Xs, ys = load_svmlight_file(str(path), multilabel=True)
        assert ds.X.shape[0] == Xs.shape[0] and abs(ds.X - Xs[:, :ds.X.shape[1]]).max() < 1e-12
        ours = _time(lambda: load_svmlight(path), args.repeat)
        peer = _time(lambda: load_svmlight_file(str(path), multilabel=True), args.repeat)
        xc_path = Path(tmp) / "bench.xc"
        write_xc(ds, xc_path)
        xc = _time(lambda: load_xc(xc_path), args.repeat)
    load = os.getloadavg()[0]
    print(f"file: {path.name}, {size:.1f} MiB, {ds.X.shape[0]:,} rows, "
          f"{ds.X.shape[1]:,} features, {ds.Y.shape[1]:,} labels, {ds.X.nnz:,} non-zeros")
    print(f"{'reader':<34}{'wall s':>9}{'CPU s':>9}")
    print(f"{'mlw load_svmlight':<34}{ours[0]:>9.3f}{ours[1]:>9.3f}")
    print(f"{'mlw load_xc (same rows, XC header)':<34}{xc[0]:>9.3f}{xc[1]:>9.3f}")
    print(f"{'sklearn load_svmlight_file':<34}{peer[0]:>9.3f}{peer[1]:>9.3f}")
    print(f"ratio sklearn / mlw: wall {peer[0] / ours[0]:.2f}x, CPU {peer[1] / ours[1]:.2f}x "
          f"(best of {args.repeat}; load average {load:.1f})")


if __name__ == "__main__":
    main()
