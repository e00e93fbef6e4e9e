"""``mlw.get_learner`` is typed (issue 16): a type checker knows it returns a
:class:`mlw.MultiLabelLearner` and refuses a misspelt method such as ``fitt``. The
base classes come from scikit-learn, which has no type information; type checkers see
typed stand-ins (``mlw/learner.py``), without which any attribute would pass."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import mlw

USER_CODE = '''\
import mlw

learner = mlw.get_learner("br")
model = learner.fit([[0.0, 1.0]], [[1, 0]])
params: dict[str, object] = model.get_params()
learner.fitt([[0.0, 1.0]], [[1, 0]])
'''


def test_get_learner_is_annotated_with_the_learner_class() -> None:
    from mlw import api

    # annotations are strings (postponed evaluation); api imports the class for type
    # checkers only, so resolve the name in the module that defines it
    annotation = inspect.signature(api.get_learner).return_annotation
    assert annotation == "MultiLabelLearner"
    assert getattr(importlib.import_module("mlw.learner"), annotation) is mlw.MultiLabelLearner
    # no catch-all attribute hook that would make every attribute "exist"
    assert not hasattr(mlw.MultiLabelLearner, "__getattr__")


def test_mypy_strict_catches_a_misspelt_method(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (the test above still runs)")
    (tmp_path / "user.py").write_text(USER_CODE)
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
                          "--cache-dir", str(tmp_path / "cache"), "user.py"],
                         cwd=tmp_path, capture_output=True, text=True)
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1, run.stdout + run.stderr
    assert 'user.py:6: error: "MultiLabelLearner" has no attribute "fitt"' in errors[0]
