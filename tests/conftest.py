"""Fixtures of the cross-package tests: fixture plugins (``tests/plugins/``) installed
through fake entry points, and helpers to run the ``mlw`` command."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

PLUGIN_DIR = Path(__file__).resolve().parent / "plugins"
# The fixture plugins are modules the tests install, some broken on purpose: never
# import them to look for doctests.
collect_ignore = ["plugins"]
if str(PLUGIN_DIR) not in sys.path:
    sys.path.insert(0, str(PLUGIN_DIR))


@dataclass
class FakeDistribution:
    name: str
    version: str

    @property
    def metadata(self) -> dict[str, str]:
        return {"Name": self.name}


@dataclass
class FakeEntryPoint:
    """Quacks like ``importlib.metadata.EntryPoint`` for ``mlw.plugins``."""

    name: str
    value: str
    dist: FakeDistribution | None
    group: str = "mlw"

    def load(self) -> Any:
        return importlib.import_module(self.value)


def _forget_fixture_modules() -> None:
    for mod in [m for m in sys.modules if m.startswith("mlwtest_")]:
        del sys.modules[mod]


@pytest.fixture
def install_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Any]]:
    """``install_plugins(good="mlwtest_good", ...)`` makes these the installed entry
    points (name -> module; distribution ``mlw-<name>`` 1.0.0), replacing the real
    ones unless ``keep_real=True``, and returns a fresh process-wide plugin manager.
    Everything is undone after the test."""
    import mlw.plugins as plugins

    real = plugins._entry_points

    def install(keep_real: bool = False, **modules: str) -> plugins.PluginManager:
        fakes = [FakeEntryPoint(name, module, FakeDistribution(f"mlw-{name}", "1.0.0"))
                 for name, module in modules.items()]
        monkeypatch.setattr(plugins, "_entry_points",
                            lambda: (list(real()) if keep_real else []) + fakes)
        plugins.reset_plugin_manager()
        return plugins.get_plugin_manager()

    yield install
    plugins.reset_plugin_manager()
    _forget_fixture_modules()


#: A folder of distribution metadata (``*.dist-info``) declaring fixture plugins as if
#: they were installed: on ``sys.path`` and ``PYTHONPATH``, they are real entry points
#: for this process and for every child process (local workers, Dask workers, ``mlw``
#: run as a command), with no change to the core.
INSTALLED_DIR = PLUGIN_DIR / "installed"


@pytest.fixture
def dying_plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Installs ``mlwtest_dies`` (learners whose process dies) through
    ``tests/plugins/installed``, visible to child processes; undone after the test."""
    import mlw.plugins as plugins

    paths = [str(INSTALLED_DIR), str(PLUGIN_DIR)]
    old = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths + ([old] if old else [])))
    monkeypatch.syspath_prepend(str(INSTALLED_DIR))
    plugins.reset_plugin_manager()
    yield
    plugins.reset_plugin_manager()
    _forget_fixture_modules()


@pytest.fixture
def run_mlw() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the ``mlw`` command in a subprocess with the real entry points
    (``python -m mlw_cli``, or the installed ``mlw`` script with ``console_script``)."""

    def run(*args: str, env: dict[str, str] | None = None, timeout: float = 300,
            console_script: bool = False) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, "COLUMNS": "200"}
        full_env.pop("MLW_DISABLE_PLUGINS", None)
        full_env.update(env or {})
        command = [sys.executable, "-m", "mlw_cli"]
        if console_script:  # the installed `mlw` script (mlw-cli's [project.scripts])
            script = shutil.which("mlw")
            if script is None:
                pytest.fail("the `mlw` command is not on PATH: pip install -e cli")
            command = [script]
        return subprocess.run([*command, *args], capture_output=True, text=True,
                              env=full_env, timeout=timeout)

    return run
