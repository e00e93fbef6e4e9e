"""The core's modules import each other at module level, without cycles: every
``import`` of an mlw module inside a function is one of the documented lazy loads
(numba kernels, the internal plugins' implementations, the report's figures and
statistics), and every module imports on its own in a fresh interpreter."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import mlw

PACKAGE = Path(mlw.__file__).resolve().parent

#: (importing module, imported module) patterns that are lazy on purpose, and why
LAZY = [
    (r".*", r".*\._kernels$",
     "numba kernels: numba is imported by the first call that needs one"),
    (r"^mlw\.jit(\._timer)?$", r"^mlw\.jit\._(dispatcher|cache)$",
     "the JIT layer imports numba when it first compiles"),
    (r"^mlw\._builtin\..*", r".*",
     "internal plugins register their loaders and metrics without importing them"),
    (r"^mlw\.experiments\.report$", r"^mlw\.experiments\.(plots|stats)$",
     "matplotlib and scipy.stats, imported when a report draws or tests"),
    (r"^mlw\.io\.xc$", r"^mlw\.io\.svmlight$",
     "the svmlight writer builds on the XC reader's module"),
]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.AST) -> list[tuple[int, str, bool]]:
    """``(line, module, inside a function)`` of every import of an mlw module that is
    not for type checkers only."""
    out: list[tuple[int, str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                # ``from mlw.metrics import _kernels`` imports the module mlw.metrics._kernels
                names = [f"{child.module}.{a.name}" if a.name == "_kernels" else child.module
                         for a in child.names]
            elif isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            else:
                names = []
            out.extend((child.lineno, n, in_function) for n in names
                       if n == "mlw" or n.startswith("mlw."))
            visit(child, inner)

    visit(tree, False)
    return out


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    graph: dict[str, set[str]] = {}
    lazy: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        graph[module] = set()
        for line, target, in_function in _imports(ast.parse(path.read_text())):
            if not in_function:
                graph[module].add(target)
            elif not any(re.match(a, module) and re.match(b, target) for a, b, _ in LAZY):
                lazy.append(f"{module}:{line} imports {target} inside a function")
    return graph, lazy


def test_no_function_level_imports_of_mlw_modules_but_the_documented_lazy_ones() -> None:
    _, lazy = _graph()
    assert lazy == []


def test_no_import_cycles_between_core_modules() -> None:
    graph, _ = _graph()
    graph = {m: {t for t in deps if t != "mlw"} for m, deps in graph.items()}
    cycles, index, low, stack, on_stack = [], {}, {}, [], set()

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            connect(module)
    assert cycles == []


def test_every_module_imports_alone_in_a_fresh_interpreter() -> None:
    """One interpreter per module would cost seconds each; each module is imported
    first in a subprocess of its own group of modules, with the earlier imports of the
    group removed from ``sys.modules`` first, so a module that only works after another
    one was imported fails."""
    graph, _ = _graph()
    modules = sorted(m for m in graph if not m.startswith("mlw.experiments.plots"))
    code = ("import importlib, sys\n"
            "bad = []\n"
            "for name in sys.argv[1:]:\n"
            "    for m in [m for m in sys.modules if m == 'mlw' or m.startswith('mlw.')]:\n"
            "        del sys.modules[m]\n"
            "    try:\n"
            "        importlib.import_module(name)\n"
            "    except Exception as exc:\n"
            "        bad.append(f'{name}: {type(exc).__name__}: {exc}')\n"
            "print('\\n'.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code, *modules], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
