"""The plugin's exact working-set QP (mlw_ssvm._qp.solve_dual) on the QPs of real fits.

    python benchmarks/bench_ssvm_qp.py record --out plugins/ssvm/tests/data/qp_real_sets.npz
    nice -n 5 python benchmarks/bench_ssvm_qp.py scan [--labels 10] [--noise none,swap:0.4]
        [--datasets 2] [--every 5]

``record`` fits the RUNS below (Struct(F1), Struct(Hl), Struct(01) on the plugin's
generator, L = 10 noise free and Swap 0.4 at the C validation picks there, and the speed
benchmark's L = 50 fit) and keeps, per fit, the warm-started working set of 12-48
constraints with the largest condition number of H: the real working sets of
plugins/ssvm/tests/test_ssvm_qp.py.

``scan`` runs Table 2's protocol (ssvm_generator_difficulty.select_c: the C grid, warm
started, each learner) and checks every QP the fits solve: the KKT residual of the
whole QP (tests/naive_ssvm.qp_kkt_residual) against the solver's stated tolerance, and
on every ``--every``-th solve with a nonsingular H the dual objective against an
independent solver (NNLS with a bisection on the multiplier, naive_ssvm.qp_reference).

Datasets: the plugin's generator, dataset j of L labels with seed 1000 L + j.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
from bench_ssvm_generator import LEARNERS, plugin_sets, select_c
from bench_ssvm_quality import SPREAD  # benchmarks/ is the script's directory
from threadpoolctl import threadpool_limits

import mlw
from mlw_ssvm import _cutting_plane as CP
from mlw_ssvm import _qp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "plugins", "ssvm", "tests"))
import naive_ssvm as naive  # noqa: E402

_solve_dual = CP.solve_dual

#: (learner, L, dataset j, noise, C) of ``record``
RUNS = [("struct_f1", 10, 4, "swap:0.4", 1e5), ("struct_f1", 10, 0, "none", 1e6),
        ("struct_hamming", 10, 4, "swap:0.4", 1e4), ("struct_subset", 10, 8, "swap:0.4", 1e3),
        ("struct_f1", 10, 8, "none", 1e4), ("struct_f1", 50, -1, "none", 1e4)]


def _recording(store: list):
    def solve(H, delta, C, start=None):
        alpha = _solve_dual(H, delta, C, start=start)
        store.append((H.copy(), delta.copy(), C, start, alpha))
        return alpha
    return solve


def record(args) -> None:
    out = {}
    for i, (name, L, j, noise, C) in enumerate(RUNS):
        if j < 0:  # benchmarks/bench_ssvm_speed.py's data
            tr = mlw.generate_dataset("synthetic", seed=1, labels=L, cardinality=3.0)["train"]
            X, Y = tr.X, tr.Y
        else:
            X, Y = plugin_sets(L, j, noise)[0]
        seen: list = []
        CP.solve_dual = _recording(seen)
        try:
            mlw.get_learner(name, C=C, top_label=False).fit(X, Y)
        finally:
            CP.solve_dual = _solve_dual
        cands = [n for n, s in enumerate(seen) if s[3] is not None and 12 <= s[1].size <= 48]
        conds = [np.linalg.cond(seen[n][0]) for n in cands]
        n = cands[int(np.argmax(conds))]
        H, delta, C, start, alpha = seen[n]
        iu = np.triu_indices(delta.size)
        out |= {f"H{i}": H[iu], f"delta{i}": delta,
                f"C{i}": np.float64(C), f"start{i}": start,
                f"what{i}": np.array(f"{name} L={L} j={j} {noise} C={C:g}, solve "
                                     f"{n + 1} of {len(seen)} of the fit: K={delta.size}, cond(H) "
                                     f"{max(conds):.1e}, sum(alpha)/C {alpha.sum() / C:.3f}")}
        print(out[f"what{i}"], flush=True)
    np.savez_compressed(args.out, **out)


def scan(args) -> None:
    t0 = time.process_time()
    for L in map(int, args.labels.split(",")):
        for noise in args.noise.split(","):
            for j in SPREAD[: args.datasets]:
                sets = plugin_sets(L, j, noise)
                for name in LEARNERS:
                    seen: list = []
                    CP.solve_dual = _recording(seen)
                    t = time.process_time()
                    try:
                        select_c(name, *sets, noise != "none", top_label=False)
                    finally:
                        CP.solve_dual = _solve_dual
                    fit_cpu = time.process_time() - t
                    res, diff, checked = [], [], 0
                    for n, (H, delta, C, _, alpha) in enumerate(seen):
                        tol = 2 * _qp.KKT_TOL * max(1.0, float(np.abs(delta).max()))
                        res.append(naive.qp_kkt_residual(H, delta, alpha, C) / tol)
                        if n % args.every:
                            continue
                        try:
                            ref = naive.qp_reference(H, delta, C)
                        except np.linalg.LinAlgError:  # singular H: no reference
                            continue
                        checked += 1
                        o_ref = _qp.dual_objective(H, delta, ref)
                        diff.append((_qp.dual_objective(H, delta, alpha) - o_ref)
                                    / max(1.0, abs(o_ref)))
                    res, diff = np.array(res), np.array(diff)
                    print(f"L={L} {noise} j={j} {name}: {len(seen)} QPs (K up to "
                          f"{max(s[1].size for s in seen)}), KKT residual / tolerance max "
                          f"{res.max():.2g}, above 1: {(res > 1).sum()}; dual objective "
                          f"against NNLS on {checked}: relative difference "
                          f"{diff.min():+.1e} to {diff.max():+.1e} | fits {fit_cpu:.1f} "
                          f"CPU s", flush=True)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"scan: {time.process_time() - t0:.0f} CPU s, load {load}, "
          f"{time.strftime('%H:%M', time.gmtime())} UTC")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("part", choices=("record", "scan"))
    ap.add_argument("--out", default="plugins/ssvm/tests/data/qp_real_sets.npz")
    ap.add_argument("--labels", default="10")
    ap.add_argument("--noise", default="none,swap:0.4")
    ap.add_argument("--datasets", type=int, default=2)
    ap.add_argument("--every", type=int, default=5, help="scan: NNLS on every n-th QP")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    with threadpool_limits(1):
        {"record": record, "scan": scan}[args.part](args)


if __name__ == "__main__":
    main()
