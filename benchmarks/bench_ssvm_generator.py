"""Why our synthetic data are harder than the paper's (Díez et al., Table 2): a diagnostic.

    nice -n 10 python benchmarks/bench_ssvm_generator.py [--datasets 4] [--parts 1,2]
        [--struct]

Noise free, the labels are a deterministic function of x (the true hyperplanes label
the test set without error), so the Bayes-optimal loss is 0 on every measure and all
test loss is estimation error of 400 training points in 26 dimensions. Dataset j of L
labels is the plugin's (or the recipe's) with seed 1000 L + j and target cardinality
2 + 2j/15, j taken in the bit-reversed order 0, 8, 4, 12, ... (``--datasets`` of them).
BR over LinearSVC(C = 100) is a cheap stand-in for Struct(Hl) in parts 1-2 (their
Table 2 losses are within 1-2 points on our data). The parts (``--parts``):

1. per-label test error by the label's training frequency, on the plugin's generator
   (L = 10, 25, 50), and the 0/1 loss that independent errors would give,
   1 - prod_l (1 - e_l), beside the observed one and beside what the paper's own
   Hamming loss would give under independence;
2. the generator's recipe (random Gaussian normals, label counts from shares, offsets
   at the training quantile; floating point here, not the plugin's exact integers)
   with other label-share profiles (equal shares, Dirichlet(1), Dirichlet(10) against
   our Dirichlet(2)) and with normals sharing a common direction (w_l = rho g +
   sqrt(1 - rho^2) z_l, so the labels depend on each other) at L = 50;
3. (``--struct``) the three structured SVMs with Table 2's protocol (``protocol``),
   L = 10 and 25, noise free and Swap 0.4, on data of other difficulty (``--variants``):
   the recipe at rho = 0 and rho = 0.7 (dependent labels, the paper's 0/1 level at
   L = 25 and 50; the plugin's noise procedures) and the plugin's generator with 480
   training instances (``n480``: the paper's Hamming level, labels still independent):
   does the paper's order (findings 1 and 3) follow once the data are as easy as its?
4. Table 1 on the plugin's generator: max / min / mean / std of cardinality and
   density per L, plus label balance, empty label sets and label correlation, and the
   noisy training sets' cardinality (Table 1's caption: "similar figures");
5. separability, noise free: exact linear separability of every label's training set
   (an LP), the hard-margin SVM's training errors and margin, and the test losses of BR
   over the hard-margin SVM (on 400 and on 800 instances) and over LinearSVC(C = 1e4):
   does an exactly solved BR-SVM (Struct(Hl)'s model) do better than our Struct(Hl)?
6. how many labels the three learners predict per test instance at L = 25 under
   Bernoulli 0.09 (which raises the training cardinality) and Swap 0.4 (which keeps it).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from bench_ssvm_quality import SPREAD, measures  # benchmarks/ is the script's directory
from scipy.optimize import linprog
from sklearn.svm import SVC, LinearSVC
from threadpoolctl import threadpool_limits

import mlw
from mlw_ssvm.synthetic import SPLITS, _bernoulli, _Stream, _swap, parse_noise

#: the paper's Table 2, noise free, Struct(Hl): (0/1, Hamming, 1 - F1) in percent
PAPER_HL = {10: (21.57, 2.62, 5.18), 25: (36.55, 2.52, 9.71), 50: (49.39, 2.07, 14.24)}


def losses(Y: np.ndarray, P: np.ndarray) -> np.ndarray:
    """(0/1, Hamming, 1 - F1) in percent, from the core's metrics (``mlw.evaluate``
    through quality_ssvm.measures; F1 = 1 when both sets are empty)."""
    m = measures(Y, P)
    return np.array([m["zero_one"], m["hamming"], m["one_minus_f1"]])


def plugin_sets(L: int, j: int, noise: str = "none", n_train: int = 400) -> list[tuple]:
    """Dataset j of L labels from the plugin's generator (seed 1000 L + j, target
    cardinality 2 + 2j/15, the Table 2 run's) as dense (X, Y) of train, validation,
    test."""
    sets = mlw.generate_dataset("synthetic", seed=1000 * L + j, labels=L,
                                cardinality=2 + 2 * j / 15, noise=noise, n_train=n_train)
    return [(np.asarray(sets[s].X), np.asarray(sets[s].Y)) for s in SPLITS]


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
            (Xtr, Ytr), _, (Xte, Yte) = plugin_sets(L, j)
            P = br_svm(Xtr, Ytr, Xte)
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


LEARNERS = {"Struct(Hl)": ("struct_hamming", 1), "Struct(F1)": ("struct_f1", 2),
            "Struct(01)": ("struct_subset", 0)}  # learner, index of its own loss in losses()
GRID = {"none": (1e4, 1e5, 1e6), "noisy": (1e2, 1e3, 1e4, 1e5)}  # Section 6.2


def select_c(name: str, tr, va, te, noisy: bool, **params) -> tuple:
    """One learner of Table 2's protocol: its C grid fitted in order (a warm-started path
    when ``warm_start``), C chosen on the validation set by the learner's own loss;
    returns the chosen model's test (0/1, Hl, 1 - F1), its test predictions, that C and
    the cutting-plane iterations of every fit."""
    key, own = LEARNERS[name]
    model, best, iters = mlw.get_learner(key, **params), None, []
    for C in GRID["noisy" if noisy else "none"]:
        model.set_params(C=C).fit(*tr)
        iters.append(int(model.n_iter_))
        v = losses(va[1], model.predict(va[0]))[own]
        if best is None or v < best[0]:
            P = np.asarray(model.predict(te[0]))
            best = (v, losses(te[1], P), P, C)
    return best[1], best[2], best[3], iters


def protocol(tr, va, te, noisy: bool) -> dict[str, np.ndarray]:
    """Table 2's protocol (:func:`select_c`, warm-started, the paper's decision: no
    top-label rule): test (0/1, Hl, 1 - F1, predicted labels per instance) of the
    chosen model per learner."""
    out = {}
    for name in LEARNERS:
        test, P, _, _ = select_c(name, tr, va, te, noisy, warm_start=True, top_label=False)
        out[name] = np.append(test, P.sum(1).mean())
    return out


def noisy(sets, noise: str, seed: int):
    """The plugin's Bernoulli / Swap procedures on a recipe's training and validation
    labels (the test set stays noise free, Section 6.1)."""
    kind, pr = parse_noise(noise)
    if kind == "none":
        return sets
    add = _bernoulli if kind == "bernoulli" else _swap
    return [(X, add(_Stream(seed, f"noise_{split}"), Y, pr)) if split != "test" else (X, Y)
            for split, (X, Y) in zip(SPLITS, sets, strict=True)]


def variant(name: str, L: int, j: int, noise: str):
    """Dataset j of L labels as (X, Y) of train, validation, test: ``rho0`` / ``rho0.7``
    the recipe with independent / dependent labels, ``n480`` the plugin's generator
    with 480 training instances instead of 400 (easier by estimation error alone)."""
    if name.startswith("rho"):
        seed = 1000 * L + j
        return noisy(recipe(L, 2 + 2 * j / 15, seed, "dir2", float(name[3:])), noise, seed)
    return plugin_sets(L, j, noise, n_train=int(name[1:]))


def part3(n: int, variants: str = "rho0,rho0.7") -> None:
    print("3. the three learners with Table 2's protocol on data of other difficulty ("
          "--variants): 0/1 · Hl · 1-F1 (%), mean over datasets; per dataset, how often "
          "Struct(01) < Struct(Hl) on 0/1 and Struct(F1) < Struct(Hl) on 1-F1")
    for L in (10, 25):
        for noise in ("none", "swap:0.4"):
            for name in variants.split(","):
                t = time.process_time()
                res = {k: [] for k in LEARNERS}
                for j in SPREAD[:n]:
                    for learner, r in protocol(*variant(name, L, j, noise),
                                               noise != "none").items():
                        res[learner].append(r)
                hl, f1, zo = (np.array(res[k]) for k in LEARNERS)
                text = "; ".join(f"{k} " + " · ".join(f"{x:.2f}" if i == 1 else f"{x:.1f}"
                                                      for i, x in enumerate(np.mean(v, 0)[:3]))
                                 for k, v in res.items())
                print(f"  L={L} {noise} {name}: {text}; Struct(01) ahead on 0/1 in "
                      f"{(zo[:, 0] < hl[:, 0]).sum()}, Struct(F1) ahead on 1-F1 in "
                      f"{(f1[:, 2] < hl[:, 2]).sum()} of {n} "
                      f"({time.process_time() - t:.0f} CPU s)", flush=True)


def part6(n: int) -> None:
    print("6. labels predicted per test instance (Table 2's protocol, the plugin's "
          "generator, L = 25) under Bernoulli 0.09 and Swap 0.4, beside the noisy training "
          "and the clean test cardinality")
    for noise in ("bernoulli:0.09", "swap:0.4"):
        for j in SPREAD[:n]:
            sets = variant("n400", 25, j, noise)
            res = protocol(*sets, True)
            text = ", ".join(f"{k} {r[3]:.1f} (1-F1 {r[2]:.1f})" for k, r in res.items())
            print(f"  {noise} j={j}: training {sets[0][1].sum(1).mean():.2f}, test "
                  f"{sets[2][1].sum(1).mean():.2f}; predicted: {text}", flush=True)


def table1(n: int) -> None:
    print("4. Table 1 on the plugin's generator (training set; test set's cardinality in "
          "brackets): max / min / mean / std of cardinality and density; label balance")
    for L in (10, 25, 50):
        card, test, freq, empty, corr = [], [], [], [], []
        for j in SPREAD[:n]:
            (_, Y), _, (_, Yte) = plugin_sets(L, j)
            card.append(Y.sum(1).mean())
            test.append(Yte.sum(1).mean())
            freq.append(Y.mean(0))
            empty.append((Y.sum(1) == 0).mean())
            c = np.corrcoef(Y.T.astype(float))
            corr.append(np.nanmean(np.abs(c[~np.eye(L, dtype=bool)])))
        card, test, f = np.array(card), np.array(test), np.concatenate(freq)

        def stats(v, scale=1.0, fmt="{:.1f}"):
            return " / ".join(fmt.format(scale * x) for x in
                              (v.max(), v.min(), v.mean(), v.std(ddof=1)))
        print(f"  L={L}: cardinality {stats(card)} ({stats(test)}), density "
              f"{stats(card / L, 100, '{:.0f}%')}; label frequency min {100 * f.min():.1f}%"
              f", median {100 * np.median(f):.1f}%, max {100 * f.max():.1f}%, labels under "
              f"5%: {100 * (f < 0.05).mean():.0f}%; empty label sets {100 * np.mean(empty):.1f}"
              f"%; mean |label corr.| {np.mean(corr):.3f}")
        noisy_card = []  # Table 1's caption: noisy datasets "present similar figures"
        for noise in ("bernoulli:0.01", "bernoulli:0.05", "bernoulli:0.09", "swap:0.4"):
            c = [plugin_sets(L, j, noise)[0][1].sum(1).mean() for j in SPREAD[:n]]
            noisy_card.append(f"{noise} {stats(np.array(c))}")
        print(f"    noisy training cardinality: {'; '.join(noisy_card)}")


def margins(X: np.ndarray, y: np.ndarray) -> tuple[bool, float, int]:
    """Exact linear separability of (X, y) (an LP: y_i (w.x_i + b) >= 1 feasible?), the
    geometric margin 1/||w|| of the hard-margin SVM (libsvm at C = 1e8) and its
    training errors."""
    s = 2.0 * y - 1.0
    A = -s[:, None] * np.column_stack([X, np.ones(len(X))])
    lp = linprog(np.zeros(X.shape[1] + 1), A_ub=A, b_ub=-np.ones(len(X)),
                 bounds=[(None, None)] * (X.shape[1] + 1), method="highs")
    svm = SVC(kernel="linear", C=1e8).fit(X, y)
    return lp.status == 0, 1.0 / np.linalg.norm(svm.coef_), int((svm.predict(X) != y).sum())


def part5(n: int) -> None:
    print("5. separability, noise free: labels linearly separable on the training set (LP), "
          "hard-margin SVM training errors and median margin (input units); test 0/1 · Hl · "
          "1-F1 (%) of BR over the hard-margin SVM trained on 400 (train) and 800 (train + "
          "validation) instances, and of BR over LinearSVC(C = 1e4)")
    for L in (10, 25, 50):
        t = time.process_time()
        sep, margin, errs, hard, hard800, lin = 0, [], 0, [], [], []
        for j in SPREAD[:n]:
            (Xtr, Ytr), (Xva, Yva), (Xte, Yte) = plugin_sets(L, j)
            X8, Y8 = np.vstack([Xtr, Xva]), np.vstack([Ytr, Yva])
            for l in range(L):
                ok, m, e = margins(Xtr, Ytr[:, l])
                sep, errs = sep + ok, errs + e
                margin.append(m)
            br = [np.column_stack([SVC(kernel="linear", C=1e8).fit(X, Y[:, l]).predict(Xte)
                                   for l in range(L)]) for X, Y in ((Xtr, Ytr), (X8, Y8))]
            hard.append(losses(Yte, br[0]))
            hard800.append(losses(Yte, br[1]))
            lin.append(losses(Yte, np.column_stack(
                [LinearSVC(C=1e4, max_iter=100000).fit(Xtr, Ytr[:, l]).predict(Xte)
                 for l in range(L)])))
        fmt = lambda rows: " · ".join(f"{x:.2f}" if i == 1 else f"{x:.1f}"  # noqa: E731
                                      for i, x in enumerate(np.mean(rows, 0)))
        p = PAPER_HL[L]
        print(f"  L={L}: separable {sep} of {n * L} labels, hard-margin training errors "
              f"{errs}, median margin {np.median(margin):.4f}; hard margin (400) "
              f"{fmt(hard)}, (800) {fmt(hard800)}; LinearSVC(1e4) {fmt(lin)}; paper "
              f"Struct(Hl) {p[0]} · {p[1]} · {p[2]} ({time.process_time() - t:.0f} CPU s)",
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", type=int, default=4)
    ap.add_argument("--parts", default="1,2", help="which checks, e.g. 1,2,3,4,5")
    ap.add_argument("--struct", action="store_true", help="also part 3 (as --parts 1,2,3)")
    ap.add_argument("--variants", default="rho0,rho0.7",
                    help="part 3's data: rho0, rho0.7 (the recipe), n480 (the plugin, 480 "
                         "training instances)")
    args = ap.parse_args()
    parts = {int(k) for k in args.parts.split(",")} | ({3} if args.struct else set())
    warnings.filterwarnings("ignore")  # LinearSVC's convergence notes
    t = time.process_time()
    with threadpool_limits(1):
        for k, run in ((4, table1), (5, part5), (1, part1), (2, part2), (6, part6)):
            if k in parts:
                run(args.datasets)
        if 3 in parts:
            part3(args.datasets, args.variants)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"CPU {time.process_time() - t:.0f} s, load {load}")


if __name__ == "__main__":
    main()
