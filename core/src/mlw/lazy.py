"""Lazy public names for a package (PEP 562), the one mechanism every mlw package and
plugin uses so that importing it (or its ``plugin`` module) stays cheap.

>>> import types
>>> pkg = types.ModuleType("demo")
>>> pkg.__getattr__, pkg.__dir__ = attach("demo", {"sqrt": "math"}, namespace=vars(pkg))
>>> pkg.sqrt(9.0), "sqrt" in dir(pkg)
(3.0, True)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any

__all__ = ["attach"]


def attach(package: str, exports: Mapping[str, str], *,
           submodules: Iterable[str] = (),
           namespace: MutableMapping[str, Any] | None = None
           ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: the public name ``NAME`` is
    ``getattr(import_module(exports[NAME]), NAME)``, imported on first access and then
    cached in the package's namespace (``namespace``, default: the package module's
    globals, found through ``sys.modules``). Use it at the end of a package's
    ``__init__.py``::

        __getattr__, __dir__ = attach(__name__, _LAZY)

    A name in ``submodules`` is the submodule ``package.NAME``, imported on first access
    (the import itself binds it in the package). An unknown name raises
    ``AttributeError`` as a module would.
    """
    import sys

    exports = dict(exports)
    submodules = frozenset(submodules)

    def _namespace() -> MutableMapping[str, Any]:
        return namespace if namespace is not None else vars(sys.modules[package])

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            if name in submodules:
                return importlib.import_module(f"{package}.{name}")
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        _namespace()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(_namespace()) | set(exports) | submodules)

    return __getattr__, __dir__
