"""Help and shell completion of the ``mlw`` command.

Start-up matters (``mlw --help`` under 0.3 s CPU, ``benchmarks/bench_cli_startup.py``):
rich's help formatter imports rich's console and markdown (about 0.15 s), so the
top-level ``mlw --help``, a list of commands, is formatted plainly, while a command's
own help (``mlw fit --help``) is rich, with every option's default and allowed values.
The registered names an option accepts (learners, thresholds, metrics, generators) are
read from the plugin manager only when that help is shown, or when the shell asks for
completions, never at start-up.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from typer.core import TyperCommand

from mlw_cli.output import OneLineErrorsGroup

#: The most names listed in an option's help (the rest are counted).
MAX_LISTED = 40


def _registered(kind: str) -> list[str]:
    """The registered names of ``kind`` (``learner``, ``threshold``, ``metric``,
    ``generator``); an empty list if the plugin manager cannot answer."""
    try:
        import mlw

        pm = mlw.plugins.get_plugin_manager()
        table = {"learner": pm.learners, "threshold": pm.thresholds,
                 "decoder": pm.decoders, "metric": pm.metrics,
                 "generator": pm.generators}[kind]()
    except Exception:  # help and completion must never fail
        return []
    return sorted(table) if kind != "metric" else list(table)


def names_text(kind: str) -> str:
    names = _registered(kind)
    if not names:
        return ""
    shown = ", ".join(names[:MAX_LISTED])
    more = f", ... ({len(names) - MAX_LISTED} more)" if len(names) > MAX_LISTED else ""
    return f"{shown}{more}"


def complete(kind: str, *, comma_separated: bool = False) -> Callable[[str], list[str]]:
    """A typer ``autocompletion`` callback giving the registered names of ``kind`` that
    start with what is typed (for a comma-separated list, the last item)."""

    def callback(incomplete: str) -> list[str]:
        head, sep, last = incomplete.rpartition(",") if comma_separated else ("", "",
                                                                               incomplete)
        done = set(head.split(",")) if sep else set()
        prefix = head + sep
        return [prefix + n for n in _registered(kind) if n.startswith(last)
                and n not in done]

    return callback


def close_names(kind: str, name: str) -> list[str]:
    return difflib.get_close_matches(name, _registered(kind), n=3, cutoff=0.6)


class FastHelpGroup(OneLineErrorsGroup):
    """The top-level group (one-line usage errors, :class:`OneLineErrorsGroup`):
    ``mlw --help`` is formatted plainly (no rich import), the commands' own help stays
    rich."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        mode = self.rich_markup_mode
        self.rich_markup_mode = None
        try:
            super().format_help(ctx, formatter)
        finally:
            self.rich_markup_mode = mode


def registry_help(**options: str) -> type[TyperCommand]:
    """A command class whose options' help ends with the registered names they accept,
    read when the help is shown: ``registry_help(learner="learner")`` appends
    ``Choices: br, cc, ...`` to the help of the ``learner`` parameter."""

    class RegistryHelpCommand(TyperCommand):
        def format_help(self, ctx: Any, formatter: Any) -> None:
            for param in self.params:
                kind = options.get(param.name or "")
                if kind is None or getattr(param, "_mlw_listed", False):
                    continue
                text = names_text(kind)
                if text:
                    help_text = getattr(param, "help", None) or ""
                    param.help = f"{help_text.rstrip('.')}. Choices: {text}."  # type: ignore[attr-defined]
                    param._mlw_listed = True  # type: ignore[attr-defined]
            super().format_help(ctx, formatter)

    return RegistryHelpCommand
