"""``mlw.get_learner`` is typed: a type checker knows it returns a
:class:`mlw.MultiLabelLearner` and refuses a misspelt method such as ``fitt``. The
base classes come from scikit-learn, which has no type information; type checkers see
typed stand-ins (``mlw/learner.py``), without which any attribute would pass."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing
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
    assert typing.get_type_hints(mlw.get_learner)["return"] is mlw.MultiLabelLearner
    # no catch-all attribute hook that would make every attribute "exist"
    assert not hasattr(mlw.MultiLabelLearner, "__getattr__")


def _annotated(obj: object) -> list[object]:
    """``obj`` and, for a class, its own functions and properties; for an instance
    (``mlw.hookimpl``), its class."""
    if not (inspect.isclass(obj) or inspect.isroutine(obj)):
        obj = type(obj)
    out = [obj]
    if inspect.isclass(obj):
        for value in vars(obj).values():
            value = getattr(value, "__func__", value)
            if isinstance(value, property):
                value = value.fget
            if inspect.isfunction(value):
                out.append(value)
    return out


def test_every_public_name_has_annotations_that_resolve_at_run_time() -> None:
    """``typing.get_type_hints`` (what documentation generators and runtime type
    checkers call) works on every name of ``mlw.__all__`` and on its methods: no
    annotation names a class imported for type checkers only. A fresh interpreter, so
    no module another test imported hides a missing import."""
    code = ("import typing, mlw, sys\n"
            "sys.path.insert(0, sys.argv[1])\n"
            "from test_core_typing import _annotated\n"
            "bad = []\n"
            "for name in mlw.__all__:\n"
            "    for obj in _annotated(getattr(mlw, name)):\n"
            "        try:\n"
            "            typing.get_type_hints(obj)\n"
            "        except Exception as exc:\n"
            "            bad.append(f'{name}: {getattr(obj, \"__qualname__\", obj)}: {exc}')\n"
            "print('\\n'.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_mypy_strict_catches_a_misspelt_method(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (the test above still runs)")
    (tmp_path / "user.py").write_text(USER_CODE)
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
                          "--cache-dir", str(tmp_path / "cache"), "user.py"],
                         cwd=tmp_path, capture_output=True, text=True)
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1, run.stdout + run.stderr
    assert 'user.py:6: error: "MultiLabelLearner" has no attribute "fitt"' in errors[0]
