"""Output and error handling of the ``mlw`` command: the exit-code contract, one-line
messages on stderr, JSON on stdout, rich consoles."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import traceback
import warnings
from collections.abc import Iterator
from typing import Any

import typer

import mlw


@functools.lru_cache(maxsize=1)
def err() -> Any:
    """The rich console of stderr (status lines, progress bars), made on first use."""
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _bad_input() -> tuple[type[BaseException], ...]:
    """Exceptions that mean "bad input": exit code 2 with a one-line reason.
    (``KeyError``/``IndexError`` are not among them: inside mlw or a plugin they are
    bugs, and so is :class:`mlw.PluginError`: exit 1.)"""
    return (ValueError, mlw.UnknownNameError, FileNotFoundError, IsADirectoryError,
            NotADirectoryError, PermissionError)


def eprint(text: str) -> None:
    """One plain line on stderr (never wrapped, so a reason stays on one line)."""
    sys.stderr.write(text.rstrip("\n") + "\n")
    sys.stderr.flush()


def stdout_console() -> Any:
    """The console of tables on stdout: the terminal's width, or 120 columns (or
    ``COLUMNS``) when stdout is a file or a pipe."""
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(highlight=False, soft_wrap=False, width=120)
    return console


def _report_warnings(caught: list[warnings.WarningMessage]) -> None:
    """One line per distinct warning on stderr, with a count for repeats."""
    counts: dict[str, int] = {}
    for w in caught:
        lines = str(w.message).strip().splitlines()
        first = f"{w.category.__name__}: {lines[0] if lines else ''}"
        counts[first] = counts.get(first, 0) + 1
    for text, count in counts.items():
        times = f" ({count} times)" if count > 1 else ""
        eprint(f"warning{times}: {text}")


@contextlib.contextmanager
def handle_errors() -> Iterator[None]:
    """Map exceptions to the exit-code contract (2 bad input, 1 internal failure).

    Set ``MLW_DEBUG=1`` to see the traceback of an internal failure.
    """
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            try:
                yield
            finally:
                _report_warnings(caught)
    except (typer.Exit, typer.Abort):
        raise
    except KeyboardInterrupt:
        eprint("interrupted")
        raise typer.Exit(130) from None
    except _bad_input() as exc:
        if os.environ.get("MLW_DEBUG"):
            traceback.print_exc()
        msg = str(exc).strip() or type(exc).__name__
        eprint(f"error: {' '.join(msg.split())}")
        raise typer.Exit(2) from None
    except Exception as exc:
        if os.environ.get("MLW_DEBUG"):
            traceback.print_exc()
        msg = " ".join(str(exc).split())
        eprint(f"internal error: {type(exc).__name__}: {msg} (set MLW_DEBUG=1 for the "
               f"traceback)")
        raise typer.Exit(1) from None


def print_json(obj: Any) -> None:
    from mlw.jsonsafe import dumps

    sys.stdout.write(dumps(obj) + "\n")
    sys.stdout.flush()


def escape_markup(text: str) -> str:
    from rich.markup import escape

    return escape(text)
