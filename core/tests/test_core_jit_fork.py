"""A parallel kernel keeps working in a forked child after it ran in the parent.

The learners run in forked worker processes (``mlw bench`` cells, ``mlw fit --cv``
folds). With numba's default threading layer on Linux (GNU OpenMP) a child forked from
a process that already ran a ``parallel=True`` kernel hangs or is terminated when it
runs one again; the JIT layer selects a fork-safe layer. Each case runs in its own
interpreter, bounded by a timeout, so a hang fails the test instead of the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import numpy as np
    from numba import prange
    from mlw.isolation import contained
    from mlw.jit import kernel

    @kernel(parallel=True, cache=False)
    def total(a):
        s = 0.0
        for i in prange(a.shape[0]):
            s += a[i]
        return s

    a = np.ones(200_000)
    parent = total(a)                 # starts the threading layer in this process
    with contained(total) as run:     # a forked, supervised child
        child = run(a)
    import numba
    print(parent, child, numba.threading_layer())
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers need os.fork")
def test_parallel_kernel_runs_in_a_forked_worker_after_the_parent_ran_it(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    env["NUMBA_DISABLE_JIT"] = "0"
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=240, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    parent, child, layer = proc.stdout.split()
    assert float(parent) == float(child) == 200_000.0
    assert layer != "omp"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers need os.fork")
def test_a_threading_layer_the_user_chose_is_kept(tmp_path):
    code = ("import numba, mlw.jit._dispatcher as d; d.prefer_fork_safe_threads(); "
            "print(numba.config.THREADING_LAYER)")
    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "workqueue"
