"""Compilation seen from the outside: how long a block of code spent compiling kernels
(a cache miss: the first run after installation, or after a kernel changed), and a hook
called when compilation starts, so that a front end can say so once.

Loading a kernel from the cache (see :func:`mlw.jit.cache_root`) does not count as
compiling.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass
class CompileTime:
    """Seconds numba spent compiling inside a :func:`compile_timer` block: wall-clock
    (``seconds``) and the process CPU time (``cpu_seconds``)."""

    seconds: float = 0.0
    cpu_seconds: float = 0.0


@contextlib.contextmanager
def compile_timer(on_start: Callable[[], None] | None = None) -> Iterator[CompileTime]:
    """Measure the time numba spends compiling inside the block.

    ``on_start`` is called when the first compilation of the block starts (at most
    once). Nested compilations are counted once. Importing numba is the price of
    using this (any learner with kernels imports it anyway).

    Examples
    --------
    >>> with compile_timer() as spent:
    ...     pass
    >>> spent.seconds
    0.0
    """
    import time

    from numba.core import event

    spent = CompileTime()
    started = [False]

    class _Listener(event.Listener):
        def __init__(self) -> None:
            self.depth = 0
            self.t0 = 0.0
            self.cpu0 = 0.0

        def on_start(self, ev: event.Event) -> None:
            if self.depth == 0:
                self.t0 = event.timer()
                self.cpu0 = time.process_time()
                if on_start is not None and not started[0]:
                    started[0] = True
                    on_start()
            self.depth += 1

        def on_end(self, ev: event.Event) -> None:
            self.depth -= 1
            if self.depth == 0:
                spent.seconds += event.timer() - self.t0
                spent.cpu_seconds += time.process_time() - self.cpu0

    with event.install_listener("numba:compile", _Listener()):
        yield spent


def compile_notice() -> str:
    """The line a front end prints when kernels start compiling: what is happening,
    where the result is kept, and that it happens once."""
    from mlw.jit._cache import kernels_dir

    return (f"note: compiling numba kernels for their first use, kept in {kernels_dir()} "
            "(once after installation; later runs load them from there; the time is "
            "reported as compile_seconds, not in fit_seconds)")


_announcing = [False]


def announce_compilation(prefix: str = "") -> None:
    """From now on, print :func:`compile_notice` (after ``prefix``) on stderr when this
    process first compiles a kernel: once per process, for workers that run cells
    without a front end of their own. Calling it again does nothing."""
    if _announcing[0]:
        return
    _announcing[0] = True
    import sys

    from numba.core import event

    class _Once(event.Listener):
        said = False

        def on_start(self, ev: event.Event) -> None:
            if not self.said:
                self.said = True
                try:
                    print(prefix + compile_notice(), file=sys.stderr, flush=True)
                except (OSError, ValueError):
                    pass

        def on_end(self, ev: event.Event) -> None:
            return None

    event.register("numba:compile", _Once())
