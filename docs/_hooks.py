"""MkDocs hook: a method page's ``<!-- parameters: NAME -->`` line becomes the table of
learner NAME's parameters, read through the registry from the learner's docstrings,
exactly what ``mlw learners NAME`` prints; a ``<!-- decoding: learners -->`` line the
table of what each learner gives the decoders, read from its tags and the docstrings of
the methods behind them (one source per fact)."""

from __future__ import annotations

import re
from typing import Any

_MARK = re.compile(r"^<!-- parameters: ([a-z0-9_]+) -->$", re.MULTILINE)
_DECODING = re.compile(r"^<!-- decoding: learners -->$", re.MULTILINE)
#: (tag, the method behind it, the column's title) of the decoding table
_DECODING_COLUMNS = (("joint_mode", "joint_mode", "joint mode (`joint_mode`)"),
                     ("size_marginals", "size_marginals", "size marginals (`size_marginals`)"),
                     ("samples", "sample_labels", "samples (`sample_labels`)"))
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


def _decoding_table() -> str:
    """One row per group of learners whose decoding methods are the same functions."""
    import inspect

    import mlw

    rows: dict[tuple, list[str]] = {}
    for name, spec in mlw.list_learners().items():
        if not any(getattr(spec.tags, tag) for tag, _, _ in _DECODING_COLUMNS):
            continue
        cls = spec.learner_class()
        key = tuple(getattr(cls, meth) if getattr(spec.tags, tag) else None
                    for tag, meth, _ in _DECODING_COLUMNS)
        rows.setdefault(key, []).append(name)
    out = ["| learner | " + " | ".join(t for _, _, t in _DECODING_COLUMNS) + " |",
           "|---|---|---|---|"]
    for key, names in rows.items():
        cells = ["–" if f is None else _markdown(" ".join((inspect.getdoc(f) or "").split()))
                 for f in key]
        out.append(f"| {', '.join(f'`{n}`' for n in names)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def on_page_markdown(markdown: str, **_: Any) -> str:
    markdown = _DECODING.sub(lambda m: _decoding_table(), markdown)
    return _MARK.sub(lambda m: _table(m.group(1)), markdown)
