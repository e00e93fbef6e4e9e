"""Registration: the three learners and the generator, and a cheap plugin import."""

from __future__ import annotations

import subprocess
import sys

import mlw


def test_learners_and_generator_are_registered():
    learners = mlw.list_learners()
    for name in ("struct_hamming", "struct_f1", "struct_subset"):
        spec = learners[name]
        assert spec.tags.joint and spec.tags.predicts_scores and spec.tags.sparse_input
    assert mlw.get_learner("struct_f1", beta=2.0, C=10.0).beta == 2.0
    assert "synthetic" in mlw.list_generators()
    info = {p.name: p for p in mlw.list_plugins()}
    assert info["ssvm"].status == "ok"


def test_importing_the_plugin_loads_no_estimator_numba_or_sklearn():
    # measured against what ``import mlw`` itself loads (the core's own imports are
    # the core's business)
    code = ("import sys, mlw; before = set(sys.modules); import mlw_ssvm.plugin, mlw_ssvm; "
            "new = set(sys.modules) - before; "
            "print(sorted(m for m in new if m.split('.')[0] in ('numba', 'sklearn', "
            "'quadprog', 'scipy') or m in ('mlw_ssvm.model', 'mlw_ssvm._kernels', "
            "'mlw_ssvm.synthetic')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
