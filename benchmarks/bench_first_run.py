"""First-use cost of every learner: `mlw fit --learner L` on the bundled emotions with an
empty kernel cache (a fresh install), then again with the cache filled.

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python benchmarks/bench_first_run.py [--learners xdcc,lacovac] [--profile L]

Each learner runs in new interpreters with MLW_CACHE_DIR pointing at a new empty folder,
so it compiles every kernel it reaches (the loaders' and metrics' too), as the first run
after `pip install` does. Columns, all CPU seconds (user + sys of the child, os.wait4):

- `first run`: the whole first `mlw fit` process, interpreter start and compiling
  included (the figure a new user waits for; the target is under 30 s);
- `compile`: the part of it numba spent compiling (the listener of mlw.jit.compile_timer);
- `fit`: the learner's fit (`fit_cpu_seconds` of the second run: every thread, nothing
  compiled);
- `second run`: the same command on the filled cache.

The load average is printed beside the table, since the machine may be shared.

--profile L re-runs L's first fit with a listener on numba's compile events and prints,
for every (kernel, signature) compiled, its own compile CPU (excluding the kernels it
compiled inside it) and its total, largest first: what to cut.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

FIT = r"""
import json, sys
from mlw.jit import compile_timer
from mlw_cli.main import app

with compile_timer() as spent:
    try:
        app(["fit", "--learner", sys.argv[1], "--json"], standalone_mode=False)
    except SystemExit as exc:
        if exc.code:
            raise
print(json.dumps({"compile_cpu": spent.cpu_seconds}), file=sys.stderr)
"""

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
    app(["fit", "--learner", sys.argv[1]], standalone_mode=False)
except SystemExit:
    pass
print("\nnumba compile CPU seconds per specialisation (own = excluding nested kernels)")
print(f"{'own s':>7} {'total s':>7}  kernel (<- first caller)  signature")
for key, s in own.most_common():
    via = f" <- {parent[key]}" if key in parent else ""
    print(f"{s:7.2f} {total[key]:7.2f}  {key[0]}{via}  {key[1][:140]}")
print("\ncompile CPU seconds per kernel called from Python (its nested kernels included)")
for name, s in roots.most_common():
    print(f"{s:7.2f}  {name}")
print(f"{sum(own.values()):7.2f}  all ({sum(count.values())} specialisations of "
      f"{len(count)} kernels)")
"""


def run(code: str, learner: str, cache: str) -> tuple[float, str, str]:
    """Run ``code`` for ``learner`` in a new interpreter on the kernel cache ``cache``:
    (CPU seconds of the child, its stdout, its stderr)."""
    env = dict(os.environ, MLW_CACHE_DIR=cache)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-c", code, learner], env=env,
                                stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{learner} failed (exit {os.waitstatus_to_exitcode(status)}):\n"
                         f"{stderr[-2000:]}")
    return usage.ru_utime + usage.ru_stime, stdout, stderr


def first_use(learner: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as cache:
        cpu, _, err = run(FIT, learner, cache)
        compile_cpu = json.loads(err.strip().splitlines()[-1])["compile_cpu"]
        again, out, _ = run(FIT, learner, cache)
        # the fit's CPU from the cached run: in the first one, threads of a parallel fit
        # running while a kernel compiles would be counted as compiling
        fit_cpu = json.loads(out)["fit_cpu_seconds"]
    return {"first": cpu, "compile": compile_cpu, "fit": fit_cpu, "second": again}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", default="",
                        help="names separated by commas (default: every registered one)")
    parser.add_argument("--profile", metavar="LEARNER",
                        help="print the compile CPU of every kernel specialisation of "
                             "this learner's first fit instead of the table")
    args = parser.parse_args()
    if args.profile:
        with tempfile.TemporaryDirectory() as cache:
            cpu, out, _ = run(PROFILE, args.profile, cache)
        print(out)
        print(f"first fit of {args.profile}, profiled: {cpu:.1f} s CPU")
        return
    import mlw

    names = [n for n in args.learners.split(",") if n] or sorted(mlw.list_learners())
    print(f"mlw fit --learner L on emotions (391 train / 202 test rows), empty kernel "
          f"cache; CPU seconds; load average before {os.getloadavg()[0]:.1f}")
    print(f"| {'learner':<18} | {'first run':>9} | {'compile':>7} | {'fit':>6} | "
          f"{'cached run':>10} |")
    print(f"|{'-' * 20}|{'-' * 11}:|{'-' * 8}:|{'-' * 7}:|{'-' * 11}:|")
    over = []
    start = time.perf_counter()
    for name in names:
        row = first_use(name)
        if row["first"] >= 30:
            over.append(name)
        print(f"| {name:<18} | {row['first']:9.1f} | {row['compile']:7.1f} | "
              f"{row['fit']:6.1f} | {row['second']:10.1f} |", flush=True)
    print(f"load average after {os.getloadavg()[0]:.1f}; "
          f"{time.perf_counter() - start:.0f} s wall in all")
    print("every first run under 30 s CPU" if not over
          else f"first run at or over 30 s CPU: {', '.join(over)}")


if __name__ == "__main__":
    main()
