"""The numba dispatcher behind :func:`mlw.jit.kernel`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
from numba.core import sigutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher

from mlw.jit._cache import KernelCache
from mlw.jit._location import notice


def prefer_fork_safe_threads() -> None:
    """Have numba pick a threading layer that survives ``fork``, unless the user chose
    one (``NUMBA_THREADING_LAYER``).

    mlw runs learners in forked worker processes (:mod:`mlw.isolation`: ``mlw bench``
    cells, ``mlw fit --cv`` folds). Numba's default prefers GNU OpenMP on Linux, which is
    not fork-safe: once a ``parallel=True`` kernel has run in a process, the same kernel
    in a forked child hangs inside libgomp or is terminated. ``forksafe`` selects TBB
    where it is installed and numba's own work queue otherwise. It must be set before
    the first parallel kernel starts the layer, which importing a kernel module does
    not do; a layer started before mlw was imported stays as it is.
    """
    import os

    if "NUMBA_THREADING_LAYER" not in os.environ and numba.config.THREADING_LAYER == "default":
        numba.config.THREADING_LAYER = "forksafe"


prefer_fork_safe_threads()


class KernelDispatcher(CPUDispatcher):
    """numba's CPU dispatcher, compiling each new signature under the function's
    cross-process cache lock (taken inside numba's own compiler lock, so threads of one
    process cannot deadlock on it)."""

    def compile(self, sig: Any) -> Any:
        cache = self._cache
        if not isinstance(cache, KernelCache):
            return super().compile(sig)
        with global_compiler_lock:
            args, _ = sigutils.normalize_signature(sig)
            if tuple(args) in self.overloads:
                return super().compile(sig)
            with cache.compile_lock():
                return super().compile(sig)


def _has_source_file(func: Callable[..., Any]) -> bool:
    """Whether ``func`` was defined in a file (a kernel typed at a prompt or in a doctest
    is compiled in memory: there is no source to date its cache entries by)."""
    import inspect
    import os

    try:
        return os.path.isfile(inspect.getfile(func))
    except TypeError:
        return False


def make_kernel(func: Callable[..., Any], signatures: list[Any] | None, cache: bool,
                options: dict[str, Any]) -> Any:
    """Wrap ``func`` as a :class:`KernelDispatcher` with the layer's cache."""
    disp = numba.njit(**options)(func)
    if numba.config.DISABLE_JIT:
        return disp  # the plain Python function
    disp.__class__ = KernelDispatcher
    if cache and _has_source_file(func):
        try:
            disp._cache = KernelCache(func)
        except Exception as exc:  # no cache location at all: compile in memory
            notice("nocache", f"kernels are not cached ({type(exc).__name__}: {exc})")
    if signatures:
        from numba.core import typeinfer

        with typeinfer.register_dispatcher(disp):
            for sig in signatures:
                disp.compile(sig)
        disp.disable_compile()
    return disp
