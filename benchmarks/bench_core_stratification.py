"""Iterative stratification (Sechidis et al., 2011): mlw vs scikit-multilearn, side by side.

Same data, same k, one run: prints the Label Distribution measure of the paper (lower is
better), fold sizes, the largest per-label deviation from an even split, the seconds
each took and the speed ratio.

    python benchmarks/bench_core_stratification.py ../shared/datasets/mulan/yeast-train.arff \
        ../shared/datasets/mulan/bibtex-train.arff ../shared/datasets/meka/Imdb.arff.bz2
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
from skmultilearn.model_selection import IterativeStratification

import mlw
from mlw.model_selection import iterative_stratification


def label_distribution(Y: np.ndarray, folds: np.ndarray, k: int) -> float:
    """LD of Sechidis et al.: mean over folds and labels of |pos/neg ratio - whole's|."""
    n = Y.shape[0]
    whole = Y.sum(0)
    ratio = whole / np.maximum(n - whole, 1)
    per_fold = []
    for j in range(k):
        part = Y[folds == j]
        pos = part.sum(0)
        per_fold.append(np.abs(pos / np.maximum(part.shape[0] - pos, 1) - ratio))
    return float(np.mean(per_fold))


def skml_folds(Y: object, k: int) -> np.ndarray:
    splitter = IterativeStratification(n_splits=k, order=1)
    folds = np.empty(Y.shape[0], dtype=np.int64)
    for j, (_, test) in enumerate(splitter.split(np.zeros((Y.shape[0], 1)), Y)):
        folds[test] = j
    return folds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("-k", type=int, default=10)
    args = ap.parse_args()
    k = args.k
    for path in args.paths:
        ds = mlw.load_dataset(path)
        Yd = ds.Y.toarray() if sp.issparse(ds.Y) else ds.Y
        iterative_stratification(ds.Y[:50], 2, seed=0)  # warm-up (numba, imports)
        t0 = time.perf_counter()
        ours = iterative_stratification(ds.Y, k, seed=0)
        t_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        theirs = skml_folds(sp.csr_matrix(Yd) if Yd.shape[0] > 5000 else Yd, k)
        t_theirs = time.perf_counter() - t0
        for name, folds in (("mlw", ours), ("skmultilearn", theirs)):
            sizes = np.bincount(folds, minlength=k)
            dev = np.abs(np.array([Yd[folds == j].sum(0) for j in range(k)])
                         - Yd.sum(0) / k).max()
            print(f"{ds.name:16s} {name:13s} LD={label_distribution(Yd, folds, k):.4f} "
                  f"fold sizes {sizes.min()}-{sizes.max()} max label deviation {dev:.1f}")
        print(f"{ds.name:16s} seconds: mlw {t_ours:.3f}, skmultilearn {t_theirs:.3f}, "
              f"mlw is {t_theirs / t_ours:.1f}x faster")


if __name__ == "__main__":
    main()
