"""LCIF at extreme scale beside omikuji and napkinXC: a generated sparse problem of
500,000 training instances, 200,000 features and 100,000 labels (about 40 non-zero
features and 3 labels per instance, power-law frequencies), written ONCE as a
multi-label svmlight file with the XC header line (``n d L``, zero-based: the format
omikuji trains from and mlw's loader reads by content), then on 10,000 held-out queries:

* ``lcif`` at its defaults, loaded from the file through the core loader (streamed):
  fit, ``predict`` (label sets: f1_example) and ``predict_topk`` (rankings);
* omikuji (``train_on_data`` on the same file, ``n_threads=1``: its fit CPU includes
  reading the file) and napkinXC's PLT (``threads=1``, on the same matrices in memory).

Reports P@1/3/5 and PSP@1/3/5 (propensities of the training labels, A = 0.55,
B = 1.5) for each, LCIF's label-set quality, process CPU seconds (user + sys) of fit
and predict, the peak memory of the process (ru_maxrss, cumulative) and the load
average. Heavy: run it once, one thread::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_lcif_extreme.py \
        [--n 510000] [--threshold-sample N] [--no-peers] [--keep]

``lcif`` runs with its defaults, so the cardinality threshold is fitted on the
leave-one-out scores of a seeded subsample of 20,000 training rows (each scored against
all 500,000); ``--threshold-sample 0`` uses all training rows (the paper's procedure).
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from bench_lcif_xc_peers import cpu, run_napkinxc, run_omikuji
from numba import njit


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def generate(n: int, d: int, L: int, seed: int = 0) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Topic-style data: each label owns 30 features drawn from a power law over the
    features; an instance takes 1-5 labels (mean about 3) drawn from a power law over
    the labels, 8 features from each of its labels' topics and background features
    (power law) up to about 40, with tf-idf-like values in (0, 1]."""
    rng = np.random.default_rng(seed)

    def powerlaw(size: int, m: int, shift: float) -> np.ndarray:
        w = 1.0 / (np.arange(m) + shift)
        cdf = np.cumsum(w)
        cdf /= cdf[-1]
        return np.minimum(np.searchsorted(cdf, rng.random(size)), m - 1)

    perm_f = rng.permutation(d)
    topics = perm_f[powerlaw(L * 30, d, 2000.0)].reshape(L, 30)
    n_lab = np.clip(rng.poisson(2.0, n) + 1, 1, 5)
    lab_ptr = np.concatenate([[0], np.cumsum(n_lab)])
    labels = rng.permutation(L)[powerlaw(int(lab_ptr[-1]), L, 50.0)]
    rows_l = np.repeat(np.arange(n), n_lab)
    Y = sp.csr_matrix((np.ones(labels.size, dtype=np.uint8), (rows_l, labels)), shape=(n, L))
    Y.sum_duplicates()
    Y.data[:] = 1
    # topic features: 8 per label of the instance
    tf_rows = np.repeat(rows_l, 8)
    tf_cols = topics[np.repeat(labels, 8), rng.integers(0, 30, labels.size * 8)]
    n_bg = np.maximum(40 - 8 * n_lab, 5)
    bg_rows = np.repeat(np.arange(n), n_bg)
    bg_cols = perm_f[powerlaw(int(n_bg.sum()), d, 2000.0)]
    r = np.concatenate([tf_rows, bg_rows])
    c = np.concatenate([tf_cols, bg_cols])
    X = sp.csr_matrix((rng.random(r.size) * 0.9 + 0.1, (r, c)), shape=(n, d))
    X.sum_duplicates()
    X.data = np.minimum(X.data, 1.0)
    return X, Y


@njit(cache=True)
def _write_int(buf, pos, v):
    if v == 0:
        buf[pos] = 48
        return pos + 1
    start = pos
    while v > 0:
        buf[pos] = 48 + v % 10
        v //= 10
        pos += 1
    i, j = start, pos - 1
    while i < j:
        buf[i], buf[j] = buf[j], buf[i]
        i += 1
        j -= 1
    return pos


@njit(cache=True)
def _format_rows(x_indptr, x_indices, x_data, y_indptr, y_indices, buf):
    """XC lines ("l1,l2 f:v f:v") of a CSR block into a byte buffer; values in [0, 1]
    with 4 decimals. Returns the number of bytes written."""
    pos = 0
    for i in range(x_indptr.shape[0] - 1):
        for p in range(y_indptr[i], y_indptr[i + 1]):
            if p > y_indptr[i]:
                buf[pos] = 44  # ','
                pos += 1
            pos = _write_int(buf, pos, y_indices[p])
        for p in range(x_indptr[i], x_indptr[i + 1]):
            buf[pos] = 32  # ' '
            pos = _write_int(buf, pos + 1, x_indices[p])
            buf[pos] = 58  # ':'
            q = int(np.rint(x_data[p] * 10000.0))
            pos = _write_int(buf, pos + 1, q // 10000)
            buf[pos] = 46  # '.'
            pos += 1
            r = q % 10000
            for div in (1000, 100, 10, 1):
                buf[pos] = 48 + (r // div) % 10
                pos += 1
        buf[pos] = 10  # newline
        pos += 1
    return pos


def write_xc(X: sp.csr_matrix, Y: sp.csr_matrix, path: str) -> None:
    """The XC text format, written in blocks by a small numba formatter."""
    n, d = X.shape
    with open(path, "wb") as fh:
        fh.write(f"{n} {d} {Y.shape[1]}\n".encode())
        for s in range(0, n, 50000):
            xb, yb = X[s:s + 50000], Y[s:s + 50000]
            buf = np.empty(xb.nnz * 20 + yb.nnz * 8 + xb.shape[0] * 2, dtype=np.uint8)
            m = _format_rows(xb.indptr, xb.indices, xb.data, yb.indptr, yb.indices, buf)
            fh.write(buf[:m].tobytes())


def at_k(Y, ranking, inv) -> dict[str, float]:
    from mlw import metrics as M

    out = {f"P@{k}": M.precision_at_k(Y, ranking, k=k) for k in (1, 3, 5)}
    out.update({f"PSP@{k}": M.psprecision_at_k(Y, ranking, k=k, inv_propensity=inv)
                for k in (1, 3, 5)})
    return out


def omikuji_on_prefix(path: str, ntr: int, Xte) -> tuple[np.ndarray, float, float]:
    """omikuji trained on the first ``ntr`` rows of the file (a copy with its own
    header: omikuji reads whole files), predicting ``Xte``."""
    train = path + ".train"
    with open(path, "rb") as src, open(train, "wb") as dst:
        n, d, L = src.readline().split()
        dst.write(f"{ntr} {int(d)} {int(L)}\n".encode())
        for _ in range(ntr):
            dst.write(src.readline())
    try:
        return run_omikuji(Path(train), Xte)
    finally:
        os.remove(train)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=510_000, help="instances (the last 10,000 query)")
    ap.add_argument("--features", type=int, default=200_000)
    ap.add_argument("--labels", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--k", type=int, default=15)
    ap.add_argument("--lam", type=float, default=0.5)
    ap.add_argument("--path", default="/tmp/mlw_lcif_extreme.svm")
    ap.add_argument("--keep", action="store_true", help="keep the generated file")
    ap.add_argument("--no-peers", action="store_true", help="LCIF only")
    ap.add_argument("--feature-votes", default="neighbour_mean",
                    help="LCIF's feature_votes (its default: neighbour_mean)")
    ap.add_argument("--threshold-sample", type=int, default=20000,
                    help="training rows the threshold is fitted on (0: all rows)")
    a = ap.parse_args()

    import mlw
    from mlw_lcif import LCIF

    t = time.perf_counter()
    X, Y = generate(a.n, a.features, a.labels)
    write_xc(X, Y, a.path)
    del X, Y
    gen_s = time.perf_counter() - t
    print(f"generated + wrote {a.path} ({os.path.getsize(a.path) / 1e6:.0f} MB) in "
          f"{gen_s:.0f} s; peak {peak_mb():.0f} MB", flush=True)

    t = time.perf_counter()
    ds = mlw.load_dataset(a.path)  # .svm with the XC header: read by the XC rules
    load_s = time.perf_counter() - t
    X, Y = ds.X, ds.Y
    print(f"loaded {X.shape[0]} x {X.shape[1]} (nnz/row {X.nnz / X.shape[0]:.1f}), "
          f"{Y.shape[1]} labels (cardinality {Y.sum() / Y.shape[0]:.2f}) in {load_s:.0f} s; "
          f"peak {peak_mb():.0f} MB", flush=True)
    ntr = X.shape[0] - a.queries
    Xtr, Ytr, Xte, Yte = X[:ntr], Y[:ntr], X[ntr:], Y[ntr:]
    del ds, X, Y
    LCIF(k_ins=3, k_feat=3).fit(Xtr[:500], Ytr[:500]).predict(Xte[:10])  # JIT warm-up

    from mlw.metrics import inverse_propensity

    inv = inverse_propensity(Ytr)
    c = cpu()
    m = LCIF(k_ins=a.k, k_feat=a.k, lam=a.lam, feature_votes=a.feature_votes,
             threshold_sample=a.threshold_sample or None).fit(Xtr, Ytr)
    fit_c = cpu() - c
    print(f"lcif fit (k={a.k}, lam={a.lam}, feature_votes={a.feature_votes}, threshold "
          f"from {m.threshold_rows_} training rows): {fit_c:.0f} CPU s; peak {peak_mb():.0f} MB; "
          f"threshold {m.threshold_.threshold_}", flush=True)
    c = cpu()
    P = m.predict(Xte)
    pred_c = cpu() - c
    res = mlw.evaluate(Yte, P, metrics=["accuracy", "f1_example", "f1_micro", "precision_micro",
                                        "recall_micro"])
    print(f"lcif predict ({a.queries} queries, {P.nnz / P.shape[0]:.2f} labels/query): "
          f"{pred_c:.0f} CPU s; " + ", ".join(f"{k}={v:.4f}" for k, v in res.items()),
          flush=True)
    c = cpu()
    R = m.predict_topk(Xte, 5).indices
    rows = [("lcif", at_k(Yte, R, inv), fit_c, cpu() - c)]
    del m
    if not a.no_peers:
        R, f, p = omikuji_on_prefix(a.path, ntr, Xte)
        rows.append(("omikuji", at_k(Yte, R, inv), f, p))
        print(f"omikuji: fit {f:.0f} CPU s, peak {peak_mb():.0f} MB", flush=True)
        R, f, p = run_napkinxc(Xtr, Ytr, Xte)
        rows.append(("napkinXC PLT", at_k(Yte, R, inv), f, p))
        print(f"napkinXC: fit {f:.0f} CPU s, peak {peak_mb():.0f} MB", flush=True)
    cols = [f"P@{k}" for k in (1, 3, 5)] + [f"PSP@{k}" for k in (1, 3, 5)]
    print(f"\n{'learner':<14}" + "".join(f"{c:>7}" for c in cols)
          + f"{'fit CPU s':>11}{'top-5 CPU s':>13}")
    for label, q, f, p in rows:
        print(f"{label:<14}" + "".join(f"{q[c]:>7.3f}" for c in cols) + f"{f:>11.0f}{p:>13.0f}")
    print(f"peak memory {peak_mb() / 1024:.2f} GB; load average {os.getloadavg()[0]:.1f}")
    if not a.keep:
        os.remove(a.path)


if __name__ == "__main__":
    main()
