"""Where `mlw fit --learner xdcc` on the bundled emotions spends its CPU time, phase by
phase, in one interpreter. Run it twice with the same empty folder: the first
run is a fresh install's first fit, the second the warm one.

    export NUMBA_CACHE_DIR=$(mktemp -d)
    python benchmarks/bench_cli_first_run_phases.py; python benchmarks/bench_cli_first_run_phases.py

The phases follow `mlw fit`: import the CLI and numba, load the two splits, fit, predict
(decision and scores), evaluate every metric. Each phase's CPU seconds
(time.process_time) include the kernels it compiles on first use.
"""

from __future__ import annotations

import os
import time

marks = [("start", time.process_time())]
import numba  # noqa: E402, F401

import mlw  # noqa: E402
import mlw_cli.main  # noqa: E402, F401

marks.append(("import mlw, the CLI, numba", time.process_time()))
train = mlw.load_dataset("emotions", split="train")
test = mlw.load_dataset("emotions", split="test")
marks.append(("load emotions train + test", time.process_time()))
learner = mlw.get_learner("xdcc").fit(train.X, train.Y)
marks.append(("fit xdcc", time.process_time()))
Y_pred, scores = learner.predict_with_scores(test.X)
marks.append(("predict (decision + scores)", time.process_time()))
mlw.evaluate(test.Y, Y_pred, scores=scores)
marks.append(("evaluate all metrics", time.process_time()))
cache = os.environ.get("NUMBA_CACHE_DIR", "(default numba cache)")
print(f"CPU seconds per phase; NUMBA_CACHE_DIR={cache}; load {os.getloadavg()[0]:.1f}")
for (_, a), (name, b) in zip(marks[:-1], marks[1:], strict=True):
    print(f"{b - a:7.2f}  {name}")
print(f"{marks[-1][1] - marks[0][1]:7.2f}  total (interpreter start-up not included)")
