"""Output and error handling of the ``mlw`` command: the exit-code contract, one-line
messages on stderr, JSON on stdout, rich consoles."""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import traceback
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import typer
from rich.console import Console

import mlw

err = Console(stderr=True, highlight=False)

#: Exceptions that mean "bad input": exit code 2 with a one-line reason.
#: (``KeyError``/``IndexError`` are not among them: inside mlw or a plugin they are bugs.)
BAD_INPUT: tuple[type[BaseException], ...] = (
    ValueError, mlw.UnknownNameError, FileNotFoundError, IsADirectoryError,
    NotADirectoryError, PermissionError,
)


def eprint(text: str) -> None:
    """One plain line on stderr (never wrapped, so a reason stays on one line)."""
    sys.stderr.write(text.rstrip("\n") + "\n")
    sys.stderr.flush()


def stdout_console() -> Console:
    """The console of tables on stdout: the terminal's width, or 120 columns (or
    ``COLUMNS``) when stdout is a file or a pipe."""
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
    except BAD_INPUT as exc:
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


def jsonable(value: Any) -> Any:
    """JSON-safe copy: NaN/inf become null, numpy scalars Python numbers, objects repr."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return repr(value)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(jsonable(obj), allow_nan=False) + "\n")
    sys.stdout.flush()


def escape_markup(text: str) -> str:
    from rich.markup import escape

    return escape(text)
