"""First-run cost of `mlw fit` on a fresh install (the goal: `mlw fit --learner
xdcc` under 15 s), measured as CPU time with an empty numba cache.

    python benchmarks/bench_first_run.py [--learner xdcc] [--profile] [--warmup]

A fresh install has no compiled kernels: numba compiles each kernel the first time it
runs with a new combination of argument types and keeps the machine code in its on-disk
cache. Each measurement here therefore runs in a new interpreter with NUMBA_CACHE_DIR
pointing at a new empty folder, and reports the child's CPU time (user + sys, from
os.wait4) beside its wall time and the load average, since the machine may be shared.

Rows:
- `first fit`: `mlw fit --learner L` with the empty cache (what a new user waits for);
- `second fit`: the same command again, the cache now filled;
- with --warmup: `mlw warmup` with another empty cache, then `mlw fit` on top of it.

--profile re-runs the first fit in-process with a listener on numba's compile events
and prints, for every (kernel, signature) compiled, its own compile time (excluding the
kernels it compiled inside it) and its total, largest first: what to cut.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

PROFILE = r"""
import collections, sys, time
from numba.core import event

stack, own, total, count = [], collections.Counter(), collections.Counter(), collections.Counter()
roots, parent = collections.Counter(), {}

class Listener(event.Listener):
    def on_start(self, ev):
        d = ev.data
        key = (d["dispatcher"].py_func.__module__ + "." + d["dispatcher"].py_func.__qualname__,
               "(" + ", ".join(str(a) for a in d["args"]) + ")")
        if stack:
            parent.setdefault(key, stack[-1][0][0].rsplit(".", 1)[-1])
        stack.append([key, time.process_time(), 0.0])
    def on_end(self, ev):
        key, t0, inner = stack.pop()
        spent = time.process_time() - t0
        own[key] += spent - inner
        total[key] += spent
        count[key[0]] += 1
        if stack:
            stack[-1][2] += spent
        else:
            roots[key[0]] += spent

event.register("numba:compile", Listener())
from mlw_cli.main import app
try:
    app(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
print("\nnumba compile CPU seconds per specialisation (own = excluding nested kernels)",
      file=sys.stderr)
print(f"{'own s':>7} {'total s':>7}  kernel (<- first caller)  signature", file=sys.stderr)
for key, s in own.most_common():
    via = f" <- {parent[key]}" if key in parent else ""
    print(f"{s:7.2f} {total[key]:7.2f}  {key[0]}{via}  {key[1][:140]}", file=sys.stderr)
print("\ncompile CPU seconds per kernel called from Python (its nested kernels included)",
      file=sys.stderr)
for name, s in roots.most_common():
    print(f"{s:7.2f}  {name}", file=sys.stderr)
print(f"{sum(own.values()):7.2f}  all ({sum(count.values())} specialisations of "
      f"{len(count)} kernels)", file=sys.stderr)
"""


def run(argv: list[str], cache: str, quiet: bool = True) -> tuple[float, float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    start = time.perf_counter()
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen(argv, env=env, stdout=out, stderr=out)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learner", default="xdcc")
    parser.add_argument("--profile", action="store_true",
                        help="print the compile time of every kernel specialisation")
    parser.add_argument("--profile-only", action="store_true",
                        help="only the profiled first fit (its CPU and wall are printed; "
                             "the listener adds a little)")
    parser.add_argument("--warmup", action="store_true",
                        help="also measure `mlw warmup --learner L` followed by a fit")
    args = parser.parse_args()
    mlw_cmd = shutil.which("mlw") or "mlw"
    fit = [mlw_cmd, "fit", "--learner", args.learner]
    print(f"load average before: {os.getloadavg()[0]:.2f}; command: mlw fit --learner "
          f"{args.learner} (bundled emotions), empty NUMBA_CACHE_DIR")
    print(f"{'run':<28} {'wall s':>8} {'cpu s':>8}")
    if args.profile_only:
        with tempfile.TemporaryDirectory() as cache:
            wall, cpu = run([sys.executable, "-c", PROFILE, "fit", "--learner", args.learner],
                            cache, quiet=False)
        print(f"{'first fit, profiled':<28} {wall:8.2f} {cpu:8.2f}")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        return
    with tempfile.TemporaryDirectory() as cache:
        for name in ("first fit", "second fit"):
            wall, cpu = run(fit, cache)
            print(f"{name:<28} {wall:8.2f} {cpu:8.2f}", flush=True)
    if args.warmup:
        with tempfile.TemporaryDirectory() as cache:
            wall, cpu = run([mlw_cmd, "warmup", "--learner", args.learner], cache)
            print(f"{'mlw warmup --learner ' + args.learner:<28} {wall:8.2f} {cpu:8.2f}",
                  flush=True)
            wall, cpu = run(fit, cache)
            print(f"{'fit after warmup':<28} {wall:8.2f} {cpu:8.2f}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if args.profile:
        with tempfile.TemporaryDirectory() as cache:
            run([sys.executable, "-c", PROFILE, "fit", "--learner", args.learner], cache,
                quiet=False)


if __name__ == "__main__":
    main()
