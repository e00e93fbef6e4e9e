"""Why our synthetic data are harder than the paper's (Díez et al., Table 2): a diagnostic.

    nice -n 10 python benchmarks/ssvm_generator_difficulty.py [--datasets 4] [--struct]

Noise free, the labels are a deterministic function of x (the true hyperplanes label
the test set without error), so the Bayes-optimal loss is 0 on every measure and all
test loss is estimation error of 400 training points in 26 dimensions. Three checks,
with BR over LinearSVC(C = 100) as a cheap stand-in for Struct(Hl) (their Table 2
losses are within 1-2 points on our data):

1. per-label test error by the label's training frequency, on the plugin's generator
   (L = 10, 25, 50; dataset j has seed 1000 L + j and cardinality 2 + 2j/15 with j
   spread over 0..15), and the 0/1 loss that independent errors would give,
   1 - prod_l (1 - e_l), beside the observed one and beside what the paper's own
   Hamming loss would give under independence;
2. the generator's recipe (random Gaussian normals, label counts from shares, offsets
   at the training quantile; floating point here, not the plugin's exact integers)
   with other label-share profiles (equal shares, Dirichlet(1), Dirichlet(10) against
   our Dirichlet(2)) and with normals sharing a common direction (w_l = rho g +
   sqrt(1 - rho^2) z_l, so the labels depend on each other) at L = 50;
3. ``--struct``: Struct(Hl), Struct(F1), Struct(01) with the paper's protocol (C in
   {1e4, 1e5, 1e6} on the validation set by the learner's own loss) at L = 25 for
   rho = 0 and rho = 0.7: does Struct(01) lead once the labels depend on each other?
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

import mlw

#: the paper's Table 2, noise free, Struct(Hl): (0/1, Hamming, 1 - F1) in percent
PAPER_HL = {10: (21.57, 2.62, 5.18), 25: (36.55, 2.52, 9.71), 50: (49.39, 2.07, 14.24)}
SPREAD = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15]


def losses(Y: np.ndarray, P: np.ndarray) -> np.ndarray:
    """(0/1, Hamming, 1 - F1) in percent (F1 = 1 when both sets are empty)."""
    Y, P = Y.astype(bool), P.astype(bool)
    a, d = (Y & P).sum(1), Y.sum(1) + P.sum(1)
    f1 = np.where(d == 0, 1.0, 2 * a / np.maximum(d, 1))
    return 100 * np.array([np.any(Y != P, 1).mean(), (Y != P).mean(), 1 - f1.mean()])


def br_svm(Xtr, Ytr, Xte) -> np.ndarray:
    return np.column_stack([LinearSVC(C=100, max_iter=20000).fit(Xtr, Ytr[:, l]).predict(Xte)
                            for l in range(Ytr.shape[1])])


def recipe(L: int, card: float, seed: int, profile: str, rho: float):
    """The generator's recipe in floating point: (X, Y) of train, validation, test."""
    rng = np.random.default_rng(seed)
    X = [rng.random((m, 25)) for m in (400, 400, 600)]
    A = rho * rng.standard_normal(25)[:, None] + np.sqrt(1 - rho ** 2) * \
        rng.standard_normal((25, L))
    total = round(card * 400)
    w = np.full(L, 1.0 / L) if profile == "equal" else \
        rng.dirichlet([float(profile[3:])] * L)
    counts = np.clip(np.round(w * total).astype(int), 4, 300)
    top = -np.sort(-(X[0] @ A), axis=0)
    th = (top[counts - 1, np.arange(L)] + top[counts, np.arange(L)]) / 2
    return [(x, (x @ A > th).astype(np.uint8)) for x in X]


def part1(n: int) -> None:
    print("1. the plugin's generator, BR(LinearSVC): per-label test error (%) by training "
          "frequency; 0/1 loss observed vs independent errors")
    for L in (10, 25, 50):
        rows, per = [], []
        for j in SPREAD[:n]:
            sets = mlw.generate_dataset("synthetic", seed=1000 * L + j, labels=L,
                                        cardinality=2 + 2 * j / 15)
            tr, te = sets["train"], sets["test"]
            Ytr, Yte = np.asarray(tr.Y), np.asarray(te.Y)
            P = br_svm(tr.X, Ytr, te.X)
            e = (P != Yte).mean(0)
            rows.append([*losses(Yte, P), 100 * (1 - np.prod(1 - e))])
            per += list(zip(Ytr.mean(0), e, strict=True))
        r, pf = np.mean(rows, 0), np.array(per)
        bins = [0, 0.02, 0.05, 0.1, 0.2, 1]
        k = np.digitize(pf[:, 0], bins)
        prof = ", ".join(f"{bins[b - 1]:.0%}-{bins[b]:.0%}: {100 * pf[k == b, 1].mean():.2f} "
                         f"({(k == b).sum()})" for b in range(1, 6) if (k == b).any())
        p01, phl, pf1 = PAPER_HL[L]
        print(f"  L={L}: 0/1 {r[0]:.1f} (independent errors {r[3]:.1f}), Hl {r[1]:.2f}, "
              f"1-F1 {r[2]:.1f} | paper Struct(Hl) 0/1 {p01} (independent errors at its "
              f"Hl {100 * (1 - (1 - phl / 100) ** L):.1f}), Hl {phl}, 1-F1 {pf1}")
        print(f"    error by label frequency (labels): {prof}")


def part2(n: int) -> None:
    print("2. the recipe at L = 50, BR(LinearSVC): 0/1, Hl, 1-F1 (%), mean |label corr.|")
    for profile, rho in [("dir2", 0.0), ("equal", 0.0), ("dir1", 0.0), ("dir10", 0.0),
                         ("dir2", 0.5), ("dir2", 0.7), ("dir2", 0.9)]:
        rows, corr = [], []
        for j in SPREAD[:n]:
            (Xtr, Ytr), _, (Xte, Yte) = recipe(50, 2 + 2 * j / 15, 50000 + j, profile, rho)
            rows.append(losses(Yte, br_svm(Xtr, Ytr, Xte)))
            c = np.corrcoef(Ytr.T.astype(float))
            corr.append(np.nanmean(np.abs(c[~np.eye(50, dtype=bool)])))
        r = np.mean(rows, 0)
        print(f"  shares {profile:5s} rho {rho:.1f}: {r[0]:.1f} · {r[1]:.2f} · {r[2]:.1f}  "
              f"({np.mean(corr):.3f})")


def part3(n: int) -> None:
    print("3. L = 25, paper's protocol: 0/1 · Hl · 1-F1 (%), mean over datasets; "
          "per dataset, how often Struct(01) < Struct(Hl) on 0/1")
    learners = {"Struct(Hl)": ("struct_hamming", "hamming_loss"),
                "Struct(F1)": ("struct_f1", "f1"), "Struct(01)": ("struct_subset", "zero_one")}
    for rho in (0.0, 0.7):
        res = {k: [] for k in learners}
        for j in SPREAD[:n]:
            tr, va, te = recipe(25, 2 + 2 * j / 15, 25000 + j, "dir2", rho)
            for name, (key, own) in learners.items():
                model, best = mlw.get_learner(key, warm_start=True), None
                for C in (1e4, 1e5, 1e6):
                    model.set_params(C=C).fit(*tr)
                    v = losses(va[1], model.predict(va[0]))
                    v = {"zero_one": v[0], "hamming_loss": v[1], "f1": v[2]}[own]
                    if best is None or v < best[0]:
                        best = (v, losses(te[1], model.predict(te[0])))
                res[name].append(best[1])
        wins = sum(a[0] < b[0] for a, b in zip(res["Struct(01)"], res["Struct(Hl)"], strict=True))
        text = "; ".join(f"{k} " + " · ".join(f"{x:.1f}" for x in np.mean(v, 0))
                         for k, v in res.items())
        print(f"  rho {rho:.1f}: {text}; Struct(01) ahead on 0/1 in {wins} of {n}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", type=int, default=4)
    ap.add_argument("--struct", action="store_true")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")  # LinearSVC's convergence notes
    t = time.process_time()
    with threadpool_limits(1):
        part1(args.datasets)
        part2(args.datasets)
        if args.struct:
            part3(args.datasets)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"CPU {time.process_time() - t:.0f} s, load {load}")


if __name__ == "__main__":
    main()
