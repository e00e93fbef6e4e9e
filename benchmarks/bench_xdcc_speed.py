"""Speed of the xdcc plugin's booster, side by side with XGBoost, in one run.

    python benchmarks/bench_xdcc_speed.py [--datasets yeast,scene] [--sparse enron,bibtex]
                                    [--xgb-threads 1] [--repeat 5]

1. ``ml_xgb`` (100 rounds, depth 6, eta 0.3, 256 bins) against
   ``xgboost.XGBClassifier(tree_method="hist", multi_strategy="multi_output_tree")``
   with the same settings on the Mulan train split; fit and predict times (wall clock
   and process CPU time; the machine may be shared, CPU time is the steadier figure)
   with their ratios, and subset accuracy / Hamming loss on the test split.  numba's
   compile (or cache load) time is excluded by a warm-up and printed separately.
2. ``xdcc`` with its default chain length c: its fit time against c times one
   ``ml_xgb`` fit (target: at most 1.3).
3. The sparse text sets (``--sparse``): ``ml_xgb`` and ``xdcc`` fit on CSR X (never
   densified) with their times and quality.
4. High label cardinality (``--generated``): a generated CAL500-sized set,
   500 x 70 with 174 labels and cardinality 26 (:func:`generate_high_cardinality`),
   ``xdcc`` at its defaults against one ``ml_xgb`` fit at its defaults (target: under
   3x, CPU time), with both learners' test quality and empty-prediction rates on 500
   more rows of the same generator.

Peak resident memory of the process is printed at the end.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
from _shared import MULAN

import mlw

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = dict(n_estimators=100, max_depth=6, learning_rate=0.3)


def timed(fn, *args):
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - w, time.process_time() - c


def quality(Y, P):
    r = mlw.evaluate(Y, P, metrics=["subset_accuracy", "hamming_loss", "f1_example"])
    return r


def load(name):
    tr = mlw.load_dataset(MULAN / f"{name}-train.arff")
    te = mlw.load_dataset(MULAN / f"{name}-test.arff")
    return tr, te


def dense_Y(Y):
    return np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.uint8)


def generate_high_cardinality(n: int = 500, d: int = 70, L: int = 174,
                              cardinality: float = 26.0, rank: int = 6, seed: int = 0):
    """Correlated labels from a low-rank linear score (CAL500-sized stand-in): ``X`` is
    standard normal (n, d); label ``j`` is on where ``x U V_j * 3 + noise`` exceeds a
    cut chosen so its frequency follows ``j^-0.7`` (clipped to [0.01, 0.9]), scaled to
    the mean ``cardinality``.  Returns dense ``X`` (float64) and ``Y`` (uint8)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    U = rng.normal(size=(d, rank)) / np.sqrt(d)
    V = rng.normal(size=(rank, L))
    S = X @ U @ V * 3.0 + rng.normal(size=(n, L))
    base = 1.0 / np.arange(1, L + 1) ** 0.7
    lo, hi = 0.0, 100.0
    for _ in range(60):                       # bisection for the frequency scale
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.clip(mid * base, 0.01, 0.9).sum() < cardinality else (lo, mid)
    freq = np.clip(lo * base, 0.01, 0.9)
    cuts = np.array([np.quantile(S[:, j], 1 - freq[j]) for j in range(L)])
    return X, (S > cuts).astype(np.uint8)


def bench_generated() -> None:
    """The fair test: xdcc at its defaults under 3x one ml_xgb fit."""
    from mlw_xdcc import MLXGB, XDCC

    X, Y = generate_high_cardinality(n=1000)
    Xtr, Ytr, Xte, Yte = X[:500], Y[:500], X[500:], Y[500:]
    print(f"== generated: train {Xtr.shape}, L={Y.shape[1]}, cardinality "
          f"{Ytr.sum(1).mean():.2f} (test: 500 more rows)")
    out = {}
    rounds: list[float] = []
    for label, model in (("ml_xgb", MLXGB()), ("xdcc", XDCC())):
        _, fw, fc = timed(model.fit, Xtr, Ytr)
        P = model.predict(Xte)
        q = quality(Yte, P)
        out[label] = fc
        extra = (f" c={model.chain_length_} (rounds end at "
                 f"{', '.join(f'{t:.1f}' for t in model.round_seconds_)} s CPU)"
                 if label == "xdcc" else "")
        print(f"  {label}{extra}: fit {fw:.2f}s wall {fc:.2f}s cpu; test subset "
              f"{q['subset_accuracy']:.4f} hamming {q['hamming_loss']:.4f} f1_example "
              f"{q['f1_example']:.4f} empty {(P.sum(1) == 0).mean():.3f}; load average "
              f"{os.getloadavg()[0]:.1f}")
        if label == "xdcc":   # chain prefixes = shorter chains (the chain's own decision)
            rounds = list(np.diff([0.0, *model.round_seconds_]))
            f1 = [quality(Yte, D["cum"])["f1_example"] for D in model.staged_predict_all(Xte)]
            print(f"  xdcc-cum own decision (threshold=None), test example F1 after rounds "
                  f"1..{len(f1)}: {', '.join(f'{v:.4f}' for v in f1)}")
    r = out["xdcc"] / out["ml_xgb"]
    per_round = ", ".join(f"{t / out['ml_xgb']:.2f}" for t in rounds)
    print(f"  each xdcc round / one ml_xgb fit (cpu): {per_round}")
    print(f"  xdcc / ml_xgb fit (cpu): {r:.2f} [target < 3: {'ok' if r < 3 else 'ABOVE'}]\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="yeast,scene")
    ap.add_argument("--sparse", default="enron,bibtex", help="'' to skip")
    ap.add_argument("--xgb-threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5, help="predict repetitions (median)")
    ap.add_argument("--skip-xdcc", action="store_true")
    ap.add_argument("--generated", action="store_true",
                    help="also run the high-cardinality generated set")
    args = ap.parse_args()
    datasets = [d for d in args.datasets.split(",") if d]
    if datasets:   # the XGBoost comparison only (--generated runs without it)
        import xgboost as xgb

    from mlw_xdcc import MLXGB, XDCC

    # warm-up: numba compile / cache load, excluded from the timings below
    rng = np.random.default_rng(0)
    Xw = rng.normal(size=(64, 4))
    Yw = (Xw[:, :2] > 0).astype(np.uint8)
    _, w, _ = timed(lambda: MLXGB(n_estimators=2, max_depth=2).fit(Xw, Yw).predict_proba(Xw))
    import scipy.sparse as sp
    _, w2, _ = timed(lambda: XDCC(n_estimators=2, max_depth=2).fit(
        sp.csr_matrix(np.abs(Xw)), Yw).predict(sp.csr_matrix(np.abs(Xw))))
    print(f"numba warm-up (compile or cache load): dense {w:.2f}s, sparse+xdcc {w2:.2f}s")
    if datasets:
        print(f"xgboost {xgb.__version__}, nthread={args.xgb_threads}; ours single-threaded\n")

    rows = []
    for name in datasets:
        tr, te = load(name)
        Ytr, Yte = dense_Y(tr.Y), dense_Y(te.Y)
        ours = MLXGB(**SETTINGS, max_bin=256)
        peer = xgb.XGBClassifier(tree_method="hist", multi_strategy="multi_output_tree",
                                 max_bin=256, n_jobs=args.xgb_threads, **SETTINGS)
        _, fw_o, fc_o = timed(ours.fit, tr.X, Ytr)
        _, fw_p, fc_p = timed(peer.fit, tr.X, Ytr)
        pw_o, pc_o, pw_p, pc_p = [], [], [], []
        for _ in range(args.repeat):
            P_o, w_, c_ = timed(ours.predict_proba, te.X)
            pw_o.append(w_)
            pc_o.append(c_)
            P_p, w_, c_ = timed(peer.predict_proba, te.X)
            pw_p.append(w_)
            pc_p.append(c_)
        q_o = quality(Yte, (P_o >= 0.5).astype(np.uint8))
        q_p = quality(Yte, (np.asarray(P_p) >= 0.5).astype(np.uint8))
        med = np.median
        print(f"== {name}: train {tr.X.shape}, test {te.X.shape[0]}, L={Ytr.shape[1]}")
        print(f"  fit      ml_xgb {fw_o:7.2f}s wall {fc_o:7.2f}s cpu | xgboost {fw_p:7.2f}s wall "
              f"{fc_p:7.2f}s cpu | ratio ours/xgb wall {fw_o / fw_p:.2f} cpu {fc_o / fc_p:.2f}")
        print(f"  predict  ml_xgb {med(pw_o) * 1e3:7.2f}ms wall {med(pc_o) * 1e3:6.2f}ms cpu | "
              f"xgboost {med(pw_p) * 1e3:7.2f}ms wall {med(pc_p) * 1e3:6.2f}ms cpu | ratio "
              f"wall {med(pw_o) / med(pw_p):.2f} cpu {med(pc_o) / max(med(pc_p), 1e-9):.2f}")
        for k in ("subset_accuracy", "hamming_loss", "f1_example"):
            print(f"  {k:16s} ml_xgb {q_o[k]:.4f}  xgboost {q_p[k]:.4f}  "
                  f"diff {q_o[k] - q_p[k]:+.4f}")
        rows.append((name, fc_o / fc_p, med(pc_o) / max(med(pc_p), 1e-9)))
        if not args.skip_xdcc:
            x = XDCC(**SETTINGS)
            _, xw, xc = timed(x.fit, tr.X, Ytr)
            c = x.chain_length_
            qx = quality(Yte, x.predict(te.X))
            print(f"  xdcc c={c}: fit {xw:.2f}s wall {xc:.2f}s cpu; c x ml_xgb fit = "
                  f"{c * fc_o:.2f}s cpu; ratio {xc / (c * fc_o):.2f} (target <= 1.3); "
                  f"subset {qx['subset_accuracy']:.4f} hamming {qx['hamming_loss']:.4f} "
                  f"f1_example {qx['f1_example']:.4f}")
        print()

    for name in [d for d in args.sparse.split(",") if d]:
        tr, te = load(name)
        Ytr, Yte = dense_Y(tr.Y), dense_Y(te.Y)
        print(f"== {name} (sparse: {type(tr.X).__name__}, nnz {tr.X.nnz}, shape {tr.X.shape},"
              f" L={Ytr.shape[1]})")
        for label, model in (("ml_xgb", MLXGB(**SETTINGS)), ("xdcc", XDCC(**SETTINGS))):
            _, fw, fc = timed(model.fit, tr.X, Ytr)
            P, pw, _ = timed(model.predict, te.X)
            q = quality(Yte, P)
            extra = f" c={model.chain_length_}" if label == "xdcc" else ""
            print(f"  {label}{extra}: fit {fw:.2f}s wall {fc:.2f}s cpu, predict {pw:.3f}s; "
                  f"subset {q['subset_accuracy']:.4f} hamming {q['hamming_loss']:.4f} "
                  f"f1_example {q['f1_example']:.4f}")
        print()

    if args.generated:
        bench_generated()

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of this process: {peak:.0f} MB")
    for name, fr, pr in rows:
        verdict = "ok" if fr <= 2 and pr <= 2 else "ABOVE TARGET"
        print(f"summary {name}: fit ratio (cpu) {fr:.2f}, predict ratio (cpu) {pr:.2f} "
              f"[target <= 2: {verdict}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
