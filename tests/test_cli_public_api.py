"""The command is a thin layer over the core's PUBLIC API: no module of the
CLI imports a private ``mlw._*`` module or a private name of the core; what it needs
(atomic writes, refusing to overwrite an input, SIGTERM as Ctrl-C, the files a dataset
was read from) has a public home (``mlw.files``, ``mlw.io``). The plugins are held to the
same rule: what a plugin's kernels share with the core is public kernel API (LCIF calls
``mlw.neighbors.scatter_touched``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "cli" / "src"
SOURCES = sorted(CLI.rglob("*.py"))
PLUGIN_SOURCES = sorted(ROOT.glob("plugins/*/src/**/*.py"))


def _private_imports(path: Path) -> list[str]:
    """``line: module`` or ``line: module.name`` of every import (at module level or in
    a function) of a private part of ``mlw``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules = [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [(node.module, a.name) for a in node.names]
        else:
            continue
        for module, name in modules:
            if module != "mlw" and not module.startswith("mlw."):
                continue
            parts = module.split(".") + ([name] if name else [])
            if any(p.startswith("_") and p != "__version__" for p in parts):
                found.append(f"{node.lineno}: {module}{'.' + name if name else ''}")
    return found


def test_the_sources_are_found() -> None:
    assert any(p.name == "main.py" for p in SOURCES)
    assert any(p.parts[-2:] == ("mlw_lcif", "_kernels.py") for p in PLUGIN_SOURCES)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(CLI)))
def test_the_cli_imports_no_private_part_of_mlw(path) -> None:
    assert _private_imports(path) == []


@pytest.mark.parametrize("path", PLUGIN_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_plugin_imports_a_private_part_of_mlw(path) -> None:
    assert _private_imports(path) == []


def test_the_check_catches_private_imports(tmp_path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import mlw._atomic\nfrom mlw._atomic import x\nfrom mlw.io._common import y\n"
                   "from mlw.io import _private\nfrom mlw import files, io, __version__\n"
                   "import mlwx._y\ndef f():\n    from mlw._guard import z\n")
    assert _private_imports(bad) == ["1: mlw._atomic", "2: mlw._atomic.x",
                                     "3: mlw.io._common.y", "4: mlw.io._private",
                                     "8: mlw._guard.z"]
