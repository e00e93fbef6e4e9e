"""Parameter documentation read from numpydoc docstrings.

A learner's (or generator's) parameters are documented once, in the ``Parameters``
section of its docstring; ``mlw learners NAME``, the command's help and the
documentation site all read them through :func:`parameter_docs`.

>>> class Base:
...     '''A base.
...
...     Parameters
...     ----------
...     k : int
...         Number of neighbours.
...     '''
>>> class Child(Base):
...     '''A child.
...
...     Parameters
...     ----------
...     lam, mu : float
...         Weights of the two parts,
...         each in [0, 1].
...     '''
>>> docs = parameter_docs(Child)
>>> docs["k"], docs["mu"]
('Number of neighbours.', 'Weights of the two parts, each in [0, 1].')
"""

from __future__ import annotations

import inspect
import re
from typing import Any

__all__ = ["parameter_docs", "parse_parameters"]

_SECTIONS = ("Parameters", "Other Parameters")
#: ``name : type``, ``a, b : type`` or a bare ``name`` at the section's indentation
_ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::.*)?$")
_RULE = re.compile(r"^-{3,}$")


def parse_parameters(doc: str | None) -> dict[str, str]:
    """The ``Parameters`` and ``Other Parameters`` entries of one numpydoc docstring.

    Each entry's description becomes one paragraph (lines joined by single spaces);
    an entry naming several parameters (``a, b : float``) documents each of them. An
    entry without a description maps to ``""``.
    """
    if not doc:
        return {}
    lines = inspect.cleandoc(doc).splitlines()
    out: dict[str, str] = {}
    in_section = False
    current: list[str] = []
    for i, line in enumerate(lines):
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if line and not line[0].isspace() and _RULE.match(following):
            in_section = line.strip() in _SECTIONS
            current = []
            continue
        if not in_section or _RULE.match(line.strip()):
            continue
        if line and not line[0].isspace():
            match = _ENTRY.match(line.strip())
            current = ([name.strip().lstrip("*") for name in match.group(1).split(",")]
                       if match else [])
            for name in current:
                out.setdefault(name, "")
        elif line.strip() and current:
            for name in current:
                out[name] = f"{out[name]} {line.strip()}".strip()
    return out


def parameter_docs(obj: Any) -> dict[str, str]:
    """``{parameter: description}`` of a class or function, from its numpydoc docstring.

    For a class, the docstrings along its method resolution order are read from the
    most basic class to the class itself, so a subclass inherits the documentation of
    the parameters it shares with its bases and may override it; the ``__init__``
    docstring is read after the class's own.
    """
    if not inspect.isclass(obj):
        return parse_parameters(inspect.getdoc(obj))
    out: dict[str, str] = {}
    for klass in reversed(obj.__mro__):
        if klass is object:
            continue
        for doc in (klass.__dict__.get("__doc__"),
                    getattr(klass.__dict__.get("__init__"), "__doc__", None)):
            out.update({k: v for k, v in parse_parameters(doc).items() if v or k not in out})
    return out
