"""Pinned reference fits of the booster and the chain (a round made cheaper
must grow the very same trees).

``CASES`` are small fits that go through every path a speed change of the booster can
touch: XDCC on the generated high-cardinality set (174 labels; probability
label-features), on emotions (binary label-features, row and column subsampling), on
yeast (``max_gain``: a max-criterion, and ``gamma``), on CSR text (enron; sparse
kernels, out-of-fold propagation); ML-XGB, BR-XGB and CC-XGB on emotions and the
generated set.  :func:`fingerprint` digests every tree's structure (feature, raw
threshold, default side, children: exact) and keeps the test rows' scores, so that
``test_xdcc_reference.py`` can ask for the same trees and scores within 1e-12.

Every XDCC case sets its chain length (3 where it was the default when the pin was
made): the pin is of the trees, not of the default chain length.

Regenerate (only when a change is *meant* to change the trees, and say so in the
commit): ``python plugins/xdcc/tests/reference_fits.py --write``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import mlw
from mlw_xdcc import BRXGB, CCXGB, MLXGB, XDCC

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
REFERENCE = HERE / "data" / "reference_fits.npz"
#: test rows whose scores are kept (all of them when fewer)
N_SCORED = 25


def generated() -> tuple:
    """The set of ``benchmarks/bench_xdcc_speed.py`` (500 train / 500 test rows, 70
    features, 174 labels, cardinality 25.8), loaded from the benchmark itself so that
    the pin and the benchmark measure one generator."""
    bench_dir = str(ROOT / "benchmarks")
    if bench_dir not in sys.path:          # the benchmark imports its helper _shared.py
        sys.path.insert(0, bench_dir)
    spec = importlib.util.spec_from_file_location("_bench_xdcc",
                                                  ROOT / "benchmarks" / "bench_xdcc_speed.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    X, Y = bench.generate_high_cardinality(n=1000)
    return X[:500], Y[:500], X[500:], Y[500:]


def mulan(mulan_dir: Path, name: str, n_train: int | None = None) -> tuple:
    tr = mlw.load_dataset(mulan_dir / f"{name}-train.arff")
    te = mlw.load_dataset(mulan_dir / f"{name}-test.arff")
    dense = lambda Y: np.asarray(Y.toarray() if sp.issparse(Y) else Y, np.uint8)  # noqa: E731
    Xtr, Ytr = tr.X, dense(tr.Y)
    if n_train is not None:
        Xtr, Ytr = Xtr[:n_train], Ytr[:n_train]
    return Xtr, Ytr, te.X, dense(te.Y)


#: name -> (data set, learner); data "generated" or (mulan name, training rows)
CASES = {
    "xdcc_generated": ("generated", lambda: XDCC(n_estimators=6, chain_length=3)),
    "ml_xgb_generated": ("generated", lambda: MLXGB(n_estimators=6)),
    "xdcc_emotions_binary_subsampled": (
        ("emotions", None),
        lambda: XDCC(n_estimators=15, label_features="binary", subsample=0.8,
                     colsample_bytree=0.6, random_state=3, chain_length=3)),
    "xdcc_emotions_open": (("emotions", None),
                           lambda: XDCC(n_estimators=15, chain_length=6,
                                        extremes_over="open")),
    "xdcc_yeast_max_gain": (("yeast", None),
                            lambda: XDCC(n_estimators=10, max_depth=4, split="max_gain",
                                         gamma=0.05, chain_length=4)),
    "xdcc_yeast_sum_weight": (("yeast", 600),
                              lambda: XDCC(n_estimators=6, split="sum_weight",
                                           min_child_weight=3.0, chain_length=3)),
    "xdcc_enron_sparse_oof": (("enron", 400),
                              lambda: XDCC(n_estimators=5, max_depth=4,
                                           propagation="out_of_fold", propagation_folds=3,
                                           chain_length=3)),
    "ml_xgb_emotions": (("emotions", None), lambda: MLXGB(n_estimators=20, max_bin=32)),
    "br_xgb_emotions": (("emotions", None), lambda: BRXGB(n_estimators=10, max_depth=3)),
    "cc_xgb_emotions": (("emotions", None), lambda: CCXGB(n_estimators=10, max_depth=3,
                                                          random_state=1)),
}


def ensembles(model) -> list:
    """The fitted boosters: ``ensembles_`` (XDCC's rounds, BR's and CC's labels) or
    ``ensemble_`` (ML-XGB)."""
    return list(model.ensembles_) if hasattr(model, "ensembles_") else [model.ensemble_]


def fingerprint(model, Xte) -> dict[str, np.ndarray]:
    """Exact digest of every tree's structure and the scores of the first test rows."""
    h = hashlib.sha256()
    for ens in ensembles(model):
        for a in (ens.roots, ens.feature, ens.threshold, ens.default_left, ens.left,
                  ens.right):
            h.update(np.ascontiguousarray(a).tobytes())
    Xs = Xte[:N_SCORED]
    return {"structure": np.frombuffer(h.digest(), dtype=np.uint8).copy(),
            "proba": np.asarray(model.predict_proba(Xs), dtype=np.float64)}


def fit_case(name: str, mulan_dir: Path, cache: dict) -> dict[str, np.ndarray]:
    data, make = CASES[name]
    if data not in cache:
        cache[data] = generated() if data == "generated" else mulan(mulan_dir, *data)
    Xtr, Ytr, Xte, _ = cache[data]
    return fingerprint(make().fit(Xtr, Ytr), Xte)


def write(mulan_dir: Path) -> None:
    cache: dict = {}
    out = {}
    for name in CASES:
        for key, value in fit_case(name, mulan_dir, cache).items():
            out[f"{name}/{key}"] = value
    REFERENCE.parent.mkdir(exist_ok=True)
    np.savez_compressed(REFERENCE, **out)
    print(f"wrote {len(CASES)} cases to {REFERENCE}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python plugins/xdcc/tests/reference_fits.py --write")
    sys.path.insert(0, str(ROOT))
    from conftest import SHARED_DATASETS
    write(SHARED_DATASETS / "mulan")
