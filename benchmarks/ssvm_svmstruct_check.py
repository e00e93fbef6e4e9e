"""Our 1-slack cutting plane against SVM-struct's, as the paper ran it: does any
difference change the learners' order (Díez et al., findings 1 and 3)?

    nice -n 5 python benchmarks/ssvm_svmstruct_check.py variants [--labels 10]
        [--noise none,swap:0.4] [--datasets 16] [--variants ours,cold,...] [--out F.jsonl]
    nice -n 5 python benchmarks/ssvm_svmstruct_check.py own [--labels 10] [--datasets 16]
    python benchmarks/ssvm_svmstruct_check.py selfcheck [--trials 200] [--real 40]
    python benchmarks/ssvm_svmstruct_check.py table --out F.jsonl

The paper (Section 6) ran SVM-struct through svm-struct-matlab "with parameters
epsilon = 0.1, margin rescaling, and 1-slack formulation with constraint cache", i.e.
``svm_learn_struct_joint`` (svm_struct/svm_struct_learn.c) with ``-w 4`` and the
defaults of svm_struct_learn_mex.c's ``read_input_parameters`` (``-f 5``, ``-b 100``),
its working-set QP solved by SVM-light's ``svm_learn_optimization`` (svm_light/
svm_learn.c, ``optimize_to_convergence_sharedslack``). plugins/ssvm/README.md lists
every difference from ``mlw_ssvm._cutting_plane``; ``variants`` switches ours to
SVM-struct's behaviour one difference at a time (``--variants``, comma separated; a
``+`` joins several in one run):

- ``ours``: the plugin as it is (Table 2's protocol: a warm-started C path, no cache,
  exact QP);
- ``cold``: every C of the grid fitted from an empty working set (SVM-struct has no
  warm start: each ``svm_struct_learn`` call starts from w = 0);
- ``cache5``: SVM-struct's constraint cache of 5 label vectors per example (``-w 4 -f
  5``; the plugin's ``cache_size=5``, which uses SVM-struct's rule for when a cached
  joint constraint is taken);
- ``qp``: the working-set QP solved only to SVM-light's tolerance: SVM-struct sets
  ``epsilon_crit`` to half the smallest violation ``ceps`` of an added constraint so
  far (starting at 100), and SVM-light stops when every constraint with a positive dual
  variable is within ``epsilon_crit`` of the most violated one (and the slack is at most
  ``epsilon_crit`` when the dual variables sum to less than C:
  ``check_optimality_sharedslack``). Our stand-in is SMO from the previous dual
  solution (pair steps, the slack C - sum(alpha) as an extra variable, second-order
  pair choice, incremental gradient; working sets of at most 10 constraints, one
  SVM-light subproblem at its default ``-q 10``, solved exactly), stopped by that same
  test: the tolerance is SVM-light's, the path is not. ``selfcheck`` tests it against
  the exact QP. (Round 1 of session 10 used block coordinate ascent over 10 variables;
  it stalled at L = 10 Swap 0.4, dataset 4, C = 1e5; results_ssvm7/svmstruct_s10.*.)
- ``slack``: the working-set slack taken as SVM-struct does, from the first constraint
  whose dual variable exceeds the mean (``svm_learn_struct_joint``), not the largest
  violation over the working set (equal at an exact QP optimum, not at an inexact one);
- ``inactive49``: constraints leave the working set after 50 solves with a zero dual
  variable counted as SVM-struct's ``remove_inactive_constraints`` does (one solve
  earlier than ours).

``own`` checks whether Struct(F1) solves its own problem at the C validation chose:
the final violation against epsilon, the primal objective 1/2 |w|^2 + C xi (xi the
true most violated joint constraint's, not the working set's) against a tight
(epsilon = 1e-4) solve's dual objective, a lower bound of the optimum, and the test
losses of the tight solve; and on which grid C validation lands per learner.

Datasets: the plugin's generator, dataset j of L labels with seed 1000 L + j and target
cardinality 2 + 2j/15 (Table 2's), j in the bit-reversed order 0, 8, 4, 12, ...
Test percent, 0/1 · Hamming · 1-F1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import warnings

import numba
import numpy as np
from quality_ssvm import SPREAD  # benchmarks/ is the script's directory
from ssvm_generator_difficulty import GRID, LEARNERS, losses, plugin_sets, select_c
from threadpoolctl import threadpool_limits

import mlw
from mlw_ssvm import _cutting_plane as CP

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "plugins", "ssvm", "tests"))
import naive_ssvm as naive  # noqa: E402  (the random working sets, shared with the tests)

_exact_dual = CP.solve_dual
_exact_slack = CP.working_set_slack
_solve = CP._solve
#: SVM-light's svm_maxqpsize default in svm_struct_learn_mex.c (``-q``)
QP_SIZE = 10
#: SVM-light's epsilon_a (svm_struct_learn_mex.c): a dual variable above it is positive
EPS_A = 1e-10


def svmstruct_slack(H: np.ndarray, delta: np.ndarray, alpha: np.ndarray) -> float:
    """svm_learn_struct_joint's slack: rhs - <w, lhs> of the first working-set
    constraint whose dual variable exceeds the mean, at least 0 (0 when none does)."""
    if delta.size == 0:
        return 0.0
    above = np.flatnonzero(alpha > alpha.sum() / alpha.size)
    if above.size == 0:
        return 0.0
    j = above[0]
    return max(0.0, float(delta[j] - H[j] @ alpha))


def kkt_gap(H, delta, alpha, C) -> float:
    """check_optimality_sharedslack's maxdiff: how far a positive dual variable's
    constraint is from the most violated one, or the slack if the sum is below C."""
    d = delta - H @ alpha
    xi = max(0.0, float(d.max()))
    pos = alpha > EPS_A
    gap = float(np.max(xi - d[pos], initial=0.0))
    if alpha.sum() < C - EPS_A:
        gap = max(gap, xi)
    return gap


@numba.njit(cache=False)
def _smo(H, delta, C, alpha, tol, max_iter):
    """SMO on the dual with the slack as an extra variable a0 = C - sum(alpha) (gradient
    0, no curvature): each step moves mass from the positive variable j to i, i of
    largest gradient, j chosen by the second-order gain (Fan, Chen & Lin 2005), exact
    along the pair and clipped at alpha_j = 0; the gradient g = delta - H alpha is kept
    incrementally. Stops when kkt_gap <= tol, which over the extended variables is
    max g - min over positive g. Returns the number of steps (-1: max_iter reached)."""
    K = delta.size
    g = delta - H @ alpha
    a0 = C - alpha.sum()
    for it in range(max_iter):
        i, gi = -1, 0.0  # -1 is the slack variable, gradient 0
        for k in range(K):
            if g[k] > gi:
                i, gi = k, g[k]
        gmin = gi
        j, best = -2, 0.0
        if a0 > EPS_A:
            gmin = 0.0
            if i >= 0 and gi > 0.0:
                eta = max(H[i, i], 1e-12)
                j, best = -1, gi * gi / eta
        for k in range(K):
            if alpha[k] > EPS_A and k != i:
                if g[k] < gmin:
                    gmin = g[k]
                diff = gi - g[k]
                if diff > 0.0:
                    eta = (H[k, k] if i < 0 else H[i, i] + H[k, k] - 2.0 * H[i, k])
                    eta = max(eta, 1e-12)
                    if diff * diff / eta > best:
                        j, best = k, diff * diff / eta
        if gi - gmin <= tol or j == -2:
            return it
        gj = 0.0 if j < 0 else g[j]
        if i < 0:
            eta = H[j, j]
        elif j < 0:
            eta = H[i, i]
        else:
            eta = H[i, i] + H[j, j] - 2.0 * H[i, j]
        avail = a0 if j < 0 else alpha[j]
        t = min(avail, (gi - gj) / max(eta, 1e-12))
        if i >= 0:
            alpha[i] += t
            for k in range(K):
                g[k] -= t * H[k, i]
        else:
            a0 += t
        if j >= 0:
            alpha[j] -= t
            if alpha[j] < EPS_A:
                alpha[j] = 0.0
            for k in range(K):
                g[k] += t * H[k, j]
        else:
            a0 -= t
    return -1


def smo_dual(H, delta, C, alpha, tol, max_iter=10_000_000) -> np.ndarray:
    """The dual from ``alpha`` by SMO pair steps until kkt_gap <= tol (SVM-light's
    stopping test; SVM-light's own path, decomposition over -q 10 variables with its
    inner QP solver, is not emulated)."""
    alpha = np.ascontiguousarray(alpha, dtype=np.float64).copy()
    if alpha.sum() > C:  # a start from a larger C: scale onto the feasible set
        alpha *= C / alpha.sum()
    H = np.ascontiguousarray(H, dtype=np.float64)
    delta = np.ascontiguousarray(delta, dtype=np.float64)
    if _smo(H, delta, float(C), alpha, float(tol), max_iter) < 0:
        raise RuntimeError(f"smo_dual did not reach kkt_gap <= {tol:g} in {max_iter} steps")
    return alpha


#: the self-check's tolerance on kkt_gap (loss units)
TIGHT = 1e-6


def _check_smo(H, delta, C, start) -> float:
    """SMO from ``start`` to kkt_gap <= TIGHT against the exact QP: SMO meets the test,
    its point is feasible, and the two dual objectives differ by at most C * TIGHT
    (weak duality: at any alpha the primal at w(alpha) with the slack max(0, max_k
    delta_k - (H alpha)_k) exceeds the dual by at most C * kkt_gap, so each point is
    within C * TIGHT of the optimum), and the exact QP meets the KKT conditions to
    its stated tolerance (tests/test_ssvm_qp.py; it did not before session 11 on
    near-duplicate constraints with the sum below C). Returns their relative
    difference."""
    ex = _exact_dual(H, delta, C)
    assert naive.qp_kkt_residual(H, delta, ex, C) <= 2e-9 * max(1.0, float(delta.max()))
    sm = smo_dual(H, delta, C, start, TIGHT)
    obj = lambda a: float(a @ delta - 0.5 * a @ H @ a)  # noqa: E731
    o_ex, o_sm = obj(ex), obj(sm)
    scale = max(1.0, abs(o_ex))
    assert abs(o_ex - o_sm) <= C * TIGHT * 1.01 + 1e-9 * scale, (o_ex, o_sm, C)
    assert kkt_gap(H, delta, sm, C) <= TIGHT * 1.01
    assert sm.min() >= 0.0 and sm.sum() <= C * (1 + 1e-12)
    return (o_ex - o_sm) / scale


def selfcheck(args) -> None:
    """SMO at a tight tolerance against the plugin's exact QP: on random working sets
    (full rank, half of them with near-duplicate constraints, C from 1e-2 to 1e5, cold
    or from a feasible start) and on working sets of a real fit (Struct(F1), L = 10
    Swap 0.4 dataset j = 4 at C = 1e5, where round 1's block-coordinate stand-in
    stalled), each taken as SvmLightQP meets it."""
    worst, t = 0.0, time.process_time()
    for H, delta, C, start in naive.random_working_sets(args.trials):
        worst = max(worst, abs(_check_smo(H, delta, C, start)))
    seen = []

    def record(H, delta, C, start=None):
        if start is not None and delta.size > QP_SIZE and len(seen) < args.real:
            seen.append((H.copy(), delta.copy(), C, start.copy()))
        return _exact_dual(H, delta, C, start=start)
    tr = plugin_sets(10, 4, "swap:0.4")[0]
    CP.solve_dual = record
    try:
        mlw.get_learner("struct_f1", C=1e5, top_label=False).fit(*tr)
    finally:
        CP.solve_dual = _exact_dual
    for H, delta, C, start in seen:
        x = np.zeros(delta.size)
        x[: start.size] = start
        worst = max(worst, abs(_check_smo(H, delta, C, x)))
    print(f"selfcheck: SMO to kkt_gap <= {TIGHT:g} meets the exact QP's optimum on "
          f"{args.trials} random and {len(seen)} real working sets (K = "
          f"{min(len(d) for _, d, _, _ in seen)}-{max(len(d) for _, d, _, _ in seen)}); "
          f"worst relative dual-objective difference {worst:.1e} "
          f"({time.process_time() - t:.1f} CPU s)")


class SvmLightQP:
    """solve_dual stand-in: the tolerance SVM-struct gives SVM-light, epsilon_crit =
    (smallest ceps of an added constraint so far, from 100) / 2."""

    def __init__(self):
        self.eps = 100.0

    def reset(self):
        self.eps = 100.0

    def __call__(self, H, delta, C, start=None):
        K = delta.size
        alpha = np.zeros(K)
        if start is not None:
            alpha[: start.size] = start
            k = start.size
            slack = CP.working_set_slack(H[:k, :k], delta[:k], start)
            d_new = float(delta[-1] - H[-1] @ alpha)
            self.eps = min(self.eps, max(0.0, d_new - slack))
        if K <= QP_SIZE:  # one SVM-light subproblem: its inner solver, to its precision
            return _exact_dual(H, delta, C)
        return smo_dual(H, delta, C, alpha, self.eps / 2)


@contextlib.contextmanager
def variant(names: set[str]):
    """Patch mlw_ssvm._cutting_plane for the SVM-struct behaviours in ``names``."""
    saved = (CP.solve_dual, CP.working_set_slack, CP.INACTIVE_LIMIT, CP._solve)
    try:
        if "qp" in names:
            qp = SvmLightQP()
            CP.solve_dual = qp

            def _solve_reset(*a, **k):
                qp.reset()
                return _solve(*a, **k)
            CP._solve = _solve_reset
        if "slack" in names:
            CP.working_set_slack = svmstruct_slack
        if "inactive49" in names:
            CP.INACTIVE_LIMIT = 49
        yield
    finally:
        CP.solve_dual, CP.working_set_slack, CP.INACTIVE_LIMIT, CP._solve = saved


def protocol(sets, noisy: bool, names: set[str], learners=LEARNERS) -> dict:
    """Table 2's protocol (as ssvm_generator_difficulty.protocol) under a variant:
    per learner, test (0/1, Hl, 1-F1) of the model validation chose, that C, and the
    fits' iterations."""
    params = {"warm_start": "cold" not in names, "top_label": False,
              "cache_size": 5 if "cache5" in names else 0}
    out = {}
    for name in learners:
        test, _, C, iters = select_c(name, *sets, noisy, **params)
        out[name] = {"test": [float(x) for x in test], "C": C, "iters": iters}
    return out


def run_variants(args) -> None:
    noises = args.noise.split(",")
    for L in map(int, args.labels.split(",")):
        for noise in noises:
            js = [int(j) for j in args.js.split(",")] if args.js else SPREAD[: args.datasets]
            data = {j: plugin_sets(L, j, noise) for j in js}
            for v in args.variants.split(","):
                names = set(v.split("+")) - {"ours"}
                t, res = time.process_time(), []
                for j, sets in data.items():
                    with variant(names):
                        r = protocol(sets, noise != "none", names)
                    res.append(r)
                    if args.out:
                        with open(args.out, "a") as f:
                            f.write(json.dumps({"L": L, "noise": noise, "j": j,
                                                "variant": v, **r}) + "\n")
                cpu = time.process_time() - t
                summary(L, noise, v, res, cpu)


def summary(L, noise, v, res, cpu) -> None:
    T = {k: np.array([r[k]["test"] for r in res]) for k in LEARNERS}
    hl, f1, zo = T["Struct(Hl)"], T["Struct(F1)"], T["Struct(01)"]
    fmt = lambda a: " · ".join(f"{x:.2f}" if i == 1 else f"{x:.1f}"  # noqa: E731
                               for i, x in enumerate(a.mean(0)))
    grid = GRID["noisy" if noise != "none" else "none"]
    edge = {k: "/".join(str(sum(r[k]["C"] == c for r in res)) for c in grid) for k in LEARNERS}
    it = {k: np.mean([np.mean(r[k]["iters"]) for r in res]) for k in LEARNERS}
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"L={L} {noise} [{v}] n={len(res)}: Hl {fmt(hl)} | F1 {fmt(f1)} | 01 {fmt(zo)} | "
          f"F1-Hl {fmt(f1 - hl)} | 01-Hl {fmt(zo - hl)} | 01<Hl on 0/1 "
          f"{(zo[:, 0] < hl[:, 0]).sum()}, F1<Hl on 1-F1 {(f1[:, 2] < hl[:, 2]).sum()} | "
          f"C chosen per grid value (Hl; F1; 01) {edge['Struct(Hl)']}; {edge['Struct(F1)']}; "
          f"{edge['Struct(01)']} | mean iterations per fit {it['Struct(Hl)']:.0f} / "
          f"{it['Struct(F1)']:.0f} / {it['Struct(01)']:.0f} | {cpu:.0f} CPU s, load {load}, "
          f"{time.strftime('%H:%M', time.gmtime())} UTC", flush=True)


def own(args) -> None:
    """Does Struct(F1) solve its own problem at the chosen C?"""
    for L in map(int, args.labels.split(",")):
        for noise in args.noise.split(","):
            rows, t = [], time.process_time()
            grid = "noisy" if noise != "none" else "none"
            for j in SPREAD[: args.datasets]:
                tr, va, te = plugin_sets(L, j, noise)
                r = protocol((tr, va, te), noise != "none", set(), ["Struct(F1)"])
                C = r["Struct(F1)"]["C"]
                row = [C]
                for eps in (0.1, 1e-4):
                    m = mlw.get_learner("struct_f1", C=C, epsilon=eps, top_label=False,
                                        max_iter=100000).fit(*tr)
                    primal = 0.5 * float((m.W_ ** 2).sum()) + C * (m.slack_ + m.violation_)
                    row += [m.violation_, primal, m.dual_objective_, m.n_iter_,
                            *losses(te[1], m.predict(te[0]))]
                # the whole grid at epsilon 1e-4 (each C fitted afresh), C chosen on
                # validation
                test, _, C2, _ = select_c("Struct(F1)", tr, va, te, noise != "none",
                                          epsilon=1e-4, top_label=False, max_iter=100000)
                row += [C2, *test]
                rows.append(row)
                print(f"  L={L} {noise} j={j} C={C:g}: eps 0.1: violation {row[1]:.3f}, "
                      f"primal {row[2]:.4g}, {row[4]} iterations, test {row[5]:.1f} · "
                      f"{row[6]:.2f} · {row[7]:.1f}; eps 1e-4: violation {row[8]:.2e}, "
                      f"primal {row[9]:.4g}, dual {row[10]:.4g}, {row[11]} iterations, test "
                      f"{row[12]:.1f} · {row[13]:.2f} · {row[14]:.1f}; primal(0.1) / "
                      f"dual(1e-4) {row[2] / row[10]:.3f}; grid at eps 1e-4: C={row[15]:g}, "
                      f"test {row[16]:.1f} · {row[17]:.2f} · {row[18]:.1f}", flush=True)
            a = np.array(rows)
            load = " ".join(f"{x:.1f}" for x in os.getloadavg())
            ratio = a[:, 2] / a[:, 10]
            print(f"L={L} {noise} n={len(a)}: primal(eps 0.1) / optimum lower bound "
                  f"median {np.median(ratio):.3f} (max {np.max(ratio):.3f})"
                  f"; test eps 0.1 {a[:, 5].mean():.1f} · {a[:, 6].mean():.2f} · "
                  f"{a[:, 7].mean():.1f}, eps 1e-4 {a[:, 12].mean():.1f} · {a[:, 13].mean():.2f}"
                  f" · {a[:, 14].mean():.1f}, grid at eps 1e-4 {a[:, 16].mean():.1f} · "
                  f"{a[:, 17].mean():.2f} · {a[:, 18].mean():.1f} (C chosen per grid value "
                  f"{'/'.join(str(int((a[:, 15] == c).sum())) for c in GRID[grid])}); C chosen "
                  f"at eps 0.1 {'/'.join(str(int((a[:, 0] == c).sum())) for c in GRID[grid])}"
                  f" ({time.process_time() - t:.0f} CPU s, load {load})",
                  flush=True)


def table(args) -> None:
    """The README's rows from ``--out``'s JSON lines: per (L, noise, variant), the three
    learners' mean test losses and the paired differences to Struct(Hl)."""
    rows = [json.loads(line) for line in open(args.out)]
    keys = dict.fromkeys((r["L"], r["noise"], r["variant"]) for r in rows)
    fmt = lambda a: " · ".join(f"{x:.2f}" if i == 1 else f"{x:.1f}"  # noqa: E731
                               for i, x in enumerate(a))
    for L, noise, v in keys:
        rs = [r for r in rows if (r["L"], r["noise"], r["variant"]) == (L, noise, v)]
        T = {k: np.array([r[k]["test"] for r in rs]) for k in LEARNERS}
        hl, f1, zo = T["Struct(Hl)"], T["Struct(F1)"], T["Struct(01)"]
        d01, df1 = zo[:, 0] - hl[:, 0], f1[:, 2] - hl[:, 2]
        se = lambda d: d.std(ddof=1) / np.sqrt(d.size)  # noqa: E731
        print(f"| {L} | {noise} | {v} | {len(rs)} | {fmt(hl.mean(0))} | {fmt(f1.mean(0))} | "
              f"{fmt(zo.mean(0))} | {d01.mean():+.1f} ± {se(d01):.1f} ({(d01 < 0).sum()}) | "
              f"{df1.mean():+.1f} ± {se(df1):.1f} ({(df1 < 0).sum()}) |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("part", choices=("variants", "own", "table", "selfcheck"))
    ap.add_argument("--trials", type=int, default=200, help="selfcheck: random sets")
    ap.add_argument("--real", type=int, default=40, help="selfcheck: real sets")
    ap.add_argument("--labels", default="10")
    ap.add_argument("--noise", default="none,swap:0.4")
    ap.add_argument("--datasets", type=int, default=16)
    ap.add_argument("--variants", default="ours,cold,cache5,qp,slack,inactive49,"
                                          "cold+cache5+qp+slack+inactive49")
    ap.add_argument("--js", default="", help="these datasets j (e.g. 12,2) instead of the "
                                             "first --datasets of the bit-reversed order")
    ap.add_argument("--out", default="", help="append per-dataset results (JSON lines)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    t = time.process_time()
    with threadpool_limits(1):
        {"variants": run_variants, "own": own, "table": table,
         "selfcheck": selfcheck}[args.part](args)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"CPU {time.process_time() - t:.0f} s, load {load}")


if __name__ == "__main__":
    main()
