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
import typer.core

import mlw
from mlw.files import sigterm_as_interrupt


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


#: The real stdout of each running command (:func:`handle_errors` points ``sys.stdout``
#: at stderr meanwhile).
_results: list[Any] = []


def results() -> Any:
    """The stream a command writes its results to: stdout, even while ``sys.stdout`` is
    pointed at stderr so that nothing a plugin prints can corrupt them."""
    return _results[-1] if _results else sys.stdout


def eprint(text: str) -> None:
    """One plain line on stderr (never wrapped, so a reason stays on one line)."""
    sys.stderr.write(text.rstrip("\n") + "\n")
    sys.stderr.flush()


def stdout_console() -> Any:
    """The console of tables on stdout: the terminal's width, or 120 columns (or
    ``COLUMNS``) when stdout is a file or a pipe."""
    from rich.console import Console

    console = Console(file=results(), highlight=False, soft_wrap=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(file=results(), highlight=False, soft_wrap=False, width=120)
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


def error_location(exc: BaseException) -> tuple[str | None, int | None]:
    """The file and line an error is about, when it says (data and model files,
    missing files)."""
    path = getattr(exc, "path", None) or getattr(exc, "filename", None)
    line = getattr(exc, "line", None)
    return (str(path) if path else None), (line if isinstance(line, int) else None)


def report_error(kind: str, message: str, *, as_json: bool, exc: BaseException | None = None,
                 prefix: str = "error") -> None:
    """One line on stderr; with ``--json`` also the one JSON object on stdout:
    ``{"error": {"kind", "message", "file", "line"}}``."""
    message = " ".join(message.split())
    eprint(f"{prefix}: {message}")
    if as_json:
        file, line = error_location(exc) if exc is not None else (None, None)
        print_json({"error": {"kind": kind, "message": message, "file": file, "line": line}})


@contextlib.contextmanager
def handle_errors(as_json: bool = False) -> Iterator[None]:
    """Map exceptions to the exit-code contract: 2 bad input, 1 a plugin's own bug or an
    internal failure, 130 interrupted (143 on ``SIGTERM``). With ``as_json`` the error
    is also printed as one JSON object on stdout, so ``--json > out.json`` stays valid.

    While the command runs, ``sys.stdout`` points at stderr, and so does file descriptor
    1 when ``sys.stdout`` is it: whatever a plugin, a library or native code prints
    cannot corrupt the results, which the command writes to :func:`results` (the real
    stdout).

    Set ``MLW_DEBUG=1`` to see the traceback of an internal failure.
    """
    from mlw.files import Terminated

    with contextlib.ExitStack() as outer:
        # results go to the real stdout (nested: the same one); the rest to stderr
        _results.append(results() if _results else outer.enter_context(_fd_1_to_stderr()))
        try:
            try:
                with warnings.catch_warnings(record=True) as caught, \
                        contextlib.redirect_stdout(sys.stderr):
                    warnings.simplefilter("default")
                    try:
                        yield
                    finally:
                        _report_warnings(caught)
            except (typer.Exit, typer.Abort):
                raise
            except Terminated as exc:
                report_error("interrupted", "terminated (SIGTERM)", as_json=as_json, exc=exc)
                raise typer.Exit(143) from None
            except KeyboardInterrupt as exc:
                report_error("interrupted", "interrupted", as_json=as_json, exc=exc)
                raise typer.Exit(130) from None
            except _bad_input() as exc:
                if os.environ.get("MLW_DEBUG"):
                    traceback.print_exc()
                report_error("bad_input", str(exc).strip() or type(exc).__name__,
                             as_json=as_json, exc=exc)
                raise typer.Exit(2) from None
            except mlw.PluginError as exc:
                if os.environ.get("MLW_DEBUG"):
                    traceback.print_exc()
                report_error("plugin", str(exc), as_json=as_json, exc=exc,
                             prefix="plugin error")
                raise typer.Exit(1) from None
            except (Exception, SystemExit) as exc:
                if os.environ.get("MLW_DEBUG"):
                    traceback.print_exc()
                what = (f"SystemExit({exc.code!r}): something called sys.exit"
                        if isinstance(exc, SystemExit) else f"{type(exc).__name__}: {exc}")
                report_error("internal", f"{what} (set MLW_DEBUG=1 for the traceback)",
                             as_json=as_json, exc=exc, prefix="internal error")
                raise typer.Exit(1) from None
        finally:
            _results.pop()


@contextlib.contextmanager
def _fd_1_to_stderr() -> Iterator[Any]:
    """Yield the stream results go to: ``sys.stdout``; when that is the process's file
    descriptor 1, a duplicate of it, while fd 1 itself points at fd 2, so what native
    code (a C or Rust library, a child process) writes to fd 1 reaches stderr too."""
    out = sys.stdout
    try:
        on_fd_1 = out.fileno() == 1
    except (AttributeError, ValueError, OSError):  # io.UnsupportedOperation: CliRunner
        on_fd_1 = False
    if not on_fd_1:
        yield out
        return
    out.flush()
    real = open(os.dup(1), "w", buffering=1 if out.line_buffering else -1,  # noqa: SIM115
                encoding=out.encoding, errors=out.errors)
    os.dup2(2, 1)
    try:
        yield real
    finally:
        for stream in (real, out):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os.dup2(real.fileno(), 1)
        real.close()


class OneLineErrorsGroup(typer.core.TyperGroup):
    """The ``mlw`` command group: a usage error (``--cv abc``, a missing option) is one
    line on stderr and exit 2 (with ``--json``, also the JSON error object on stdout),
    and ``SIGTERM`` is handled like Ctrl-C for the whole command."""

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        with sigterm_as_interrupt(replace=True):
            try:
                rv = super().main(args=argv, prog_name=prog_name, complete_var=complete_var,
                                  standalone_mode=False, **extra)
                code = rv if isinstance(rv, int) else 0
            except Exception as exc:  # click's errors (typer vendors click): duck-typed
                code = _usage_error(exc, as_json="--json" in argv)
        if standalone_mode:
            sys.exit(code)
        return code


def _usage_error(exc: Exception, *, as_json: bool) -> int:
    if type(exc).__name__ == "Abort":
        report_error("interrupted", "interrupted", as_json=as_json)
        return 130
    code = getattr(exc, "exit_code", None)
    fmt = getattr(exc, "format_message", None)
    if not isinstance(code, int) or fmt is None:
        raise exc
    if type(exc).__name__ == "NoArgsIsHelpError":  # `mlw` alone: the help, as click does
        exc.show()
        return code
    ctx = getattr(exc, "ctx", None)
    where = f"{ctx.command_path}: " if ctx is not None else ""
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    report_error("usage", f"{where}{fmt()}{hint}", as_json=as_json)
    return code


def print_json(obj: Any) -> None:
    from mlw.jsonsafe import dumps

    out = results()
    out.write(dumps(obj) + "\n")
    out.flush()


def escape_markup(text: str) -> str:
    from rich.markup import escape

    return escape(text)
