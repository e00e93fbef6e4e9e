"""LCIF vs scikit-learn brute-force cosine kNN on IMDB, side by side in one run.

The paper's split of MEKA's Imdb.arff.bz2: the first 72,551 rows train, the other
48,368 test. Each side runs in its own child process so that its peak memory
(ru_maxrss, including the loaded data) is its own. Prints the times, the ratio, the
quality of both, the numba threading layer and thread count of the LCIF side and the
machine's load average before and after each side (run it at normal priority, with
``NUMBA_NUM_THREADS`` = the number of cores; scikit-learn uses ``n_jobs=-1``).

IMDB's features are 0/1 word indicators, so ``lcif`` takes the binary kNN kernel of the
core's shared kNN (``mlw.neighbors._kernels.knn_search_binary``). The timed ``lcif``
uses its defaults, so its cardinality threshold is fitted on the leave-one-out scores of
a seeded subsample of 20,000 training rows (``threshold_sample=20000``); the same child
then also fits with ``threshold_sample=None`` (all 72,551 rows, the paper's exact
procedure) and that figure, its ratio and its quality are printed too. Besides
wall-clock times, each side's process CPU time for fit + predict (all its threads) is
printed with its ratio: on a shared machine the wall-clock ratio moves with the other jobs'
load, the CPU ratio less.

A second peer, ``sdtn``, is the instance part done with ``sparse_dot_topn`` (optional
dependency, ``pip install sparse-dot-topn``; skipped with a note when absent): rows
L2-normalised, ``sp_matmul_topn`` gives each test row its k most cosine-similar training
rows and each of the same 20,000 sampled training rows its k + 1 (itself dropped),
the similarity-weighted vote (conf_INS) scores the labels, and the core's cardinality
matching fitted on the sampled rows' leave-one-out scores decides: the same work as
``instance_knn`` at its defaults, on a general sparse-product library. The LCIF child
also times ``feature_votes="neighbours"`` (the first reading of conf_FL, the cheapest),
so the same run shows what the default reading (``neighbour_mean``) costs against it.

    python benchmarks/bench_lcif_imdb.py [--k 15] [--cv 10] [--peers sklearn,sdtn]

``--cv N`` also selects LCIF's (k_ins, k_feat, lambda) by N-fold CV on the training
part (the paper's grid, cached neighbour lists) and reports the test quality with
them; the speed comparison always uses k_ins = k_feat = k.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from _shared import SHARED_DATASETS

ROOT = Path(__file__).resolve().parents[1]
IMDB = SHARED_DATASETS / "meka" / "Imdb.arff.bz2"
N_TRAIN = 72551
METRICS = ["accuracy", "f1_example", "f1_micro", "f1_macro", "hamming_loss",
           "subset_accuracy"]


def _load():
    import mlw

    t = time.perf_counter()
    d = mlw.load_dataset(str(IMDB))
    load_s = time.perf_counter() - t
    return d.X[:N_TRAIN], d.Y[:N_TRAIN], d.X[N_TRAIN:], d.Y[N_TRAIN:], load_s


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def part_lcif(k: int, lam: float, cv: int | None) -> dict:
    import numba

    import mlw
    from mlw_lcif import LCIF

    Xtr, Ytr, Xte, Yte, load_s = _load()
    LCIF(k_ins=3, k_feat=3).fit(Xtr[:200], Ytr[:200]).predict(Xte[:10])  # JIT warm-up
    mem_before = _peak_mb()
    load_before = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    m = LCIF(k_ins=k, k_feat=k, lam=lam).fit(Xtr, Ytr)
    fit_s = time.perf_counter() - t
    t = time.perf_counter()
    P = m.predict(Xte)
    pred_s = time.perf_counter() - t
    cpu_s = time.process_time() - c
    t = time.perf_counter()
    m_all = LCIF(k_ins=k, k_feat=k, lam=lam, threshold_sample=None).fit(Xtr, Ytr)
    fit_all_s = time.perf_counter() - t
    t = time.perf_counter()
    P_all = m_all.predict(Xte)
    pred_all_s = time.perf_counter() - t
    t, c = time.perf_counter(), time.process_time()
    m_nb = LCIF(k_ins=k, k_feat=k, lam=lam, feature_votes="neighbours").fit(Xtr, Ytr)
    P_nb = m_nb.predict(Xte)
    neighbours = {"total_s": time.perf_counter() - t, "cpu_s": time.process_time() - c,
                  "threshold": m_nb.threshold_.threshold_,
                  "metrics": mlw.evaluate(Yte, P_nb, metrics=METRICS)}
    all_rows = {"fit_s": fit_all_s, "predict_s": pred_all_s,
                "threshold": m_all.threshold_.threshold_,
                "metrics": mlw.evaluate(Yte, P_all, metrics=METRICS)}
    out = {"side": "lcif", "k": k, "lam": lam, "load_s": load_s, "fit_s": fit_s, "cpu_s": cpu_s,
           "predict_s": pred_s, "peak_mb": _peak_mb(), "peak_mb_after_load": mem_before,
           "threshold": m.threshold_.threshold_, "threshold_rows": m.threshold_rows_,
           "all_rows": all_rows, "neighbours": neighbours,
           "binary_index": bool(m.index_.binary),
           "threading_layer": numba.threading_layer(), "threads": numba.get_num_threads(),
           "load_before": load_before, "load_after": os.getloadavg()[0],
           "metrics": mlw.evaluate(Yte, P, metrics=METRICS)}
    if cv:
        t = time.perf_counter()
        best = LCIF(cv=cv, cv_metric="accuracy").fit(Xtr, Ytr)
        out["cv_s"] = time.perf_counter() - t
        out["cv_params"] = {"k_ins": best.k_ins_, "k_feat": best.k_feat_, "lam": best.lam_,
                            "cv_accuracy": best.cv_results_["score"]}
        out["cv_metrics"] = mlw.evaluate(Yte, best.predict(Xte), metrics=METRICS)
        out["peak_mb_with_cv"] = _peak_mb()
    return out


def part_sklearn(k: int) -> dict:
    from sklearn.neighbors import KNeighborsClassifier

    import mlw

    Xtr, Ytr, Xte, Yte, load_s = _load()
    Ytr_d = Ytr.toarray()
    load_before = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    m = KNeighborsClassifier(n_neighbors=k, metric="cosine", algorithm="brute", n_jobs=-1)
    m.fit(Xtr, Ytr_d)
    fit_s = time.perf_counter() - t
    t = time.perf_counter()
    P = m.predict(Xte)
    pred_s = time.perf_counter() - t
    cpu_s = time.process_time() - c
    return {"side": "sklearn", "k": k, "load_s": load_s, "fit_s": fit_s, "predict_s": pred_s,
            "cpu_s": cpu_s,
            "peak_mb": _peak_mb(), "load_before": load_before,
            "load_after": os.getloadavg()[0], "metrics": mlw.evaluate(Yte, P, metrics=METRICS)}


def part_sdtn(k: int, sample: int = 20000, seed: int = 0) -> dict:
    import numpy as np
    import scipy.sparse as sp
    from sklearn.preprocessing import normalize
    from sparse_dot_topn import sp_matmul_topn

    import mlw
    from mlw.thresholds import CardinalityMatching

    Xtr, Ytr, Xte, Yte, load_s = _load()
    threads = os.cpu_count() or 1
    sp_matmul_topn(sp.csr_matrix(Xte[:50], dtype=np.float64),
                   sp.csr_matrix(Xtr[:200], dtype=np.float64).T.tocsr(), top_n=3)  # warm-up
    load_before = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    A = normalize(sp.csr_matrix(Xtr, dtype=np.float64))
    Bt = A.T.tocsr()
    Yf = sp.csr_matrix(Ytr, dtype=np.float64)

    def vote(C: sp.csr_matrix) -> sp.csr_matrix:
        s = np.asarray(C.sum(axis=1)).ravel()
        s[s == 0] = 1.0
        return sp.diags(1.0 / s) @ (C @ Yf)

    rows = np.sort(np.random.default_rng(seed).choice(Xtr.shape[0], size=sample,
                                                      replace=False))
    C = sp_matmul_topn(A[rows], Bt, top_n=k + 1, sort=True, n_threads=threads)
    row_of = np.repeat(np.arange(C.shape[0]), np.diff(C.indptr))
    own = C.indices != rows[row_of]  # leave-one-out: drop the row itself, keep the order
    ptr = np.concatenate([[0], np.cumsum(np.bincount(row_of[own], minlength=C.shape[0]))])
    C = _first_k(sp.csr_matrix((C.data[own], C.indices[own], ptr), shape=C.shape), k)
    th = CardinalityMatching().fit(vote(C), sp.csr_matrix(Ytr[rows]))
    fit_s = time.perf_counter() - t
    t = time.perf_counter()
    Q = normalize(sp.csr_matrix(Xte, dtype=np.float64))
    Cte = sp_matmul_topn(Q, Bt, top_n=k, sort=True, n_threads=threads)
    P = th.predict(vote(Cte))
    pred_s = time.perf_counter() - t
    cpu_s = time.process_time() - c
    return {"side": "sdtn", "k": k, "load_s": load_s, "fit_s": fit_s, "predict_s": pred_s,
            "cpu_s": cpu_s, "threads": threads, "threshold": th.threshold_,
            "peak_mb": _peak_mb(), "load_before": load_before,
            "load_after": os.getloadavg()[0], "metrics": mlw.evaluate(Yte, P, metrics=METRICS)}


def _first_k(C, k: int):
    """The first k entries of each row of a row-sorted CSR (``sort=True``: best first),
    i.e. the k + 1 search minus the row itself (a row whose own entry was not among its
    k + 1 keeps its best k)."""
    import numpy as np
    import scipy.sparse as sp

    counts = np.diff(C.indptr)
    rank = np.arange(C.nnz) - np.repeat(C.indptr[:-1], counts)
    keep = rank < k
    rows = np.repeat(np.arange(C.shape[0]), counts)[keep]
    return sp.csr_matrix((C.data[keep], (rows, C.indices[keep])), shape=C.shape)


def _child(args: list[str]) -> dict:
    res = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        raise SystemExit(f"child {args} failed")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=15)
    ap.add_argument("--lam", type=float, default=0.5)
    ap.add_argument("--cv", type=int, default=0)
    ap.add_argument("--skip-peer", action="store_true", help="no peer at all")
    ap.add_argument("--peers", default="sklearn,sdtn",
                    help="peers to run: sklearn (brute-force KNeighborsClassifier), sdtn "
                         "(sparse_dot_topn instance kNN)")
    ap.add_argument("--part", choices=["lcif", "sklearn", "sdtn"])
    a = ap.parse_args()
    if a.part == "lcif":
        print(json.dumps(part_lcif(a.k, a.lam, a.cv or None)))
        return
    if a.part == "sklearn":
        print(json.dumps(part_sklearn(a.k)))
        return
    if a.part == "sdtn":
        print(json.dumps(part_sdtn(a.k)))
        return
    ours = _child(["--part", "lcif", "--k", str(a.k), "--lam", str(a.lam), "--cv", str(a.cv)])
    rows = [ours]
    peers = [] if a.skip_peer else [p for p in a.peers.split(",") if p]
    if "sdtn" in peers and importlib.util.find_spec("sparse_dot_topn") is None:
        print("sparse_dot_topn is not installed: the sdtn peer is skipped")
        peers.remove("sdtn")
    for peer in peers:
        rows.append(_child(["--part", peer, "--k", str(a.k)]))
    print(f"IMDB: {N_TRAIN} train / {120919 - N_TRAIN} test, k={a.k}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; lcif: numba "
          f"{ours['threading_layer']} layer, {ours['threads']} threads, binary kernel "
          f"{'on' if ours['binary_index'] else 'off'}, threshold from "
          f"{ours['threshold_rows']} training rows (threshold_sample default)")
    print(f"{'side':8} {'fit s':>8} {'predict s':>10} {'total s':>8} {'CPU s':>7} "
          f"{'peak MB':>8} {'load':>9}  " + " ".join(f"{m:>10.10}" for m in METRICS))
    for r in rows:
        tot = r["fit_s"] + r["predict_s"]
        load = f"{r['load_before']:.1f}-{r['load_after']:.1f}"
        print(f"{r['side']:8} {r['fit_s']:8.2f} {r['predict_s']:10.2f} {tot:8.2f} "
              f"{r['cpu_s']:7.1f} {r['peak_mb']:8.0f} {load:>9}  "
              + " ".join(f"{r['metrics'][m]:10.4f}" for m in METRICS))
    al = ours["all_rows"]
    print(f"lcif, threshold from all {N_TRAIN} rows (threshold_sample=None): fit "
          f"{al['fit_s']:.2f} s, predict {al['predict_s']:.2f} s, total "
          f"{al['fit_s'] + al['predict_s']:.2f} s, threshold {al['threshold']} (sampled: "
          f"{ours['threshold']}); " + ", ".join(f"{m}={al['metrics'][m]:.4f}" for m in METRICS))
    nb = ours["neighbours"]
    print(f"lcif, feature_votes='neighbours' (the first conf_FL): fit + predict "
          f"{nb['total_s']:.2f} s, CPU {nb['cpu_s']:.2f} s (default conf_FL: "
          f"{ours['cpu_s']:.2f} s), threshold {nb['threshold']}; "
          + ", ".join(f"{m}={nb['metrics'][m]:.4f}" for m in METRICS))
    for r in rows[1:]:
        peer = r["fit_s"] + r["predict_s"]
        ratio = peer / (ours["fit_s"] + ours["predict_s"])
        ratio_all = peer / (al["fit_s"] + al["predict_s"])
        print(f"speed ratio {r['side']} / lcif (fit + predict): {ratio:.1f}x "
              f"(threshold from all rows: {ratio_all:.1f}x); CPU-time ratio "
              f"{r['cpu_s'] / ours['cpu_s']:.2f}x (with the earlier conf_FL: "
              f"{r['cpu_s'] / nb['cpu_s']:.2f}x; all threads of each process, "
              f"less sensitive to the other jobs on the machine)")
    if a.cv:
        print(f"CV ({a.cv} folds, accuracy) took {ours['cv_s']:.0f} s, selected "
              f"{ours['cv_params']}; test: "
              + ", ".join(f"{m}={v:.4f}" for m, v in ours["cv_metrics"].items()))
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
