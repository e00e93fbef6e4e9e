"""MkDocs hook: a method page's ``<!-- parameters: NAME -->`` line becomes the table of
learner NAME's parameters, read through the registry from the learner's docstrings,
exactly what ``mlw learners NAME`` prints (one source per fact)."""

from __future__ import annotations

import re
from typing import Any

_MARK = re.compile(r"^<!-- parameters: ([a-z0-9_]+) -->$", re.MULTILINE)
_ROLE = re.compile(r":(?:class|func|meth|data|attr|mod|obj):`~?([^`]+)`")


def _markdown(text: str) -> str:
    """reStructuredText inline markup of a docstring as Markdown, for a table cell."""
    text = _ROLE.sub(lambda m: f"`{m.group(1).split('.')[-1]}`", text)
    return text.replace("``", "`").replace("|", "\\|")


def _table(name: str) -> str:
    import mlw

    learners = mlw.list_learners()
    if name not in learners:
        raise ValueError(f"<!-- parameters: {name} -->: no learner {name!r} is registered")
    spec = learners[name]
    cls = spec.learner_class()
    rows = [f"### `{name}` {{ #{name} }}", "",
            f"`{cls.__module__}.{cls.__qualname__}`: {spec.description}.",
            f"Can: {', '.join(spec.tags.as_list()) or '-'}.", "",
            "| parameter | default | description |", "|---|---|---|"]
    for p in spec.params:
        rows.append(f"| `{p.name}` | `{p.default!r}` | {_markdown(p.doc)} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return _MARK.sub(lambda m: _table(m.group(1)), markdown)
