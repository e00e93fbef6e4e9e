"""Where one ``ctbn`` fit at C = 1 spends its time (session 11, issue 10's speed goal).

Wraps the plugin's kernels (``fit_logistic``, ``log_lik_rows``, ``max_branching``) with
per-phase counters: the structure search's self-loop fits, its edge fits (for
``switching``, the parent-0 and parent-1 halves apart), the hold-out scoring, the
maximum branching and the final refit of the chosen tree; per phase the calls, the
L-BFGS iterations, the rows touched and the thread CPU time inside the kernel. What
is left of the fit's CPU time is Python (the wrappers, slicing, allocation). One BLAS
thread; numba compiled by a warm-up fit first.

    python benchmarks/profile_ctbn_mctbn.py [--datasets yeast,enron] [--factor switching]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

from bench_mctbn import load_train  # benchmarks/ is the script's directory
from threadpoolctl import threadpool_limits

import mlw
from mlw_mctbn import _kernels, _learning

stats: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0.0])  # calls, its, rows, s
phase = ["other"]


def counted(name, kernel, iters=False):
    def wrapper(*args):
        t0 = time.thread_time()
        out = kernel(*args)
        dt = time.thread_time() - t0
        key = phase[0] + ":" + name
        st = stats[key]
        st[0] += 1
        st[3] += dt
        if iters:
            st[1] += int(out[1])
            rows = args[11]
            st[2] += rows.shape[0]
        elif name == "score":
            st[2] += args[-1].shape[0]
        return out
    return wrapper


def in_phase(name, fn):
    def wrapper(*args, **kw):
        old = phase[0]
        phase[0] = name
        try:
            return fn(*args, **kw)
        finally:
            phase[0] = old
    return wrapper


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="yeast,enron")
    ap.add_argument("--factor", default="switching")
    ap.add_argument("--C", type=float, default=1.0)
    args = ap.parse_args()
    _kernels.fit_logistic = counted("fit", _kernels.fit_logistic, iters=True)
    _kernels.log_lik_rows = counted("score", _kernels.log_lik_rows)
    _kernels.max_branching = counted("branching", _kernels.max_branching)
    _learning.edge_weights = in_phase("edges", _learning.edge_weights)
    _learning.fit_tree = in_phase("refit", _learning.fit_tree)
    with threadpool_limits(limits=1, user_api="blas"):
        for name in args.datasets.split(","):
            X, Y, _ = load_train(name)  # the data bench_mctbn.py times
            mlw.get_learner("ctbn", C=1.0, factor=args.factor).fit(X[:60], Y[:60])
            stats.clear()
            c0 = time.process_time()
            model = mlw.get_learner("ctbn", C=args.C, factor=args.factor).fit(X, Y)
            total = time.process_time() - c0
            print(f"\n{name} ({X.shape[0]} x {X.shape[1]}, {Y.shape[1]} labels), "
                  f"ctbn C={args.C} {args.factor}: fit {total:.2f} CPU s; "
                  f"edges {int((model.parents_ >= 0).sum())}")
            print(f"{'phase:kernel':22s} {'calls':>7s} {'iters':>8s} {'it/call':>8s} "
                  f"{'rows/call':>9s} {'CPU s':>7s} {'share':>6s}")
            inside = 0.0
            for key, (calls, its, rows, sec) in sorted(stats.items()):
                inside += sec
                print(f"{key:22s} {calls:7d} {its:8d} {its / max(calls, 1):8.1f} "
                      f"{rows / max(calls, 1):9.0f} {sec:7.3f} {sec / total:6.1%}")
            print(f"{'outside the kernels':22s} {'':7s} {'':8s} {'':8s} {'':9s} "
                  f"{total - inside:7.3f} {(total - inside) / total:6.1%}")


if __name__ == "__main__":
    main()
