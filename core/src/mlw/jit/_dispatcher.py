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


def compare_flags_faster() -> None:
    """Make numba's comparison of compiler flags cheap, with the same answers.

    numba types every ``a[i]``, ``a[i] = x``, ``if x:`` of a kernel by looking the
    operator's overloads up in caches keyed by the compiler flags, and its flags hash
    and compare by building a dict of all forty options each time: the lookups were a
    seventh of compiling LaCovaC's tree builder (51,710 of them). Here the hash, which
    numba computes from the option names only, is kept per class, and two flags of one
    class compare their explicitly set options, the defaults standing in for the
    others, which is the dict comparison numba makes. Left alone when numba's flags
    are not the class this was written for.
    """
    from numba.core.targetconfig import TargetConfig

    if getattr(TargetConfig, "_mlw_fast_compare", False) or not (
            TargetConfig.__hash__.__qualname__ == "TargetConfig.__hash__"
            and TargetConfig.__eq__.__qualname__ == "TargetConfig.__eq__"
            and "_values" in getattr(TargetConfig, "__slots__", ())):
        return
    numba_hash, numba_eq = TargetConfig.__hash__, TargetConfig.__eq__
    hashes: dict[type, int] = {}

    def __hash__(self: Any) -> int:  # noqa: N807 - numba's own method, replaced
        cls = type(self)
        if cls not in hashes:
            hashes[cls] = numba_hash(self)  # hash(tuple(sorted(option names)))
        return hashes[cls]

    def __eq__(self: Any, other: Any) -> Any:  # noqa: N807
        if self is other:
            return True
        if type(other) is not type(self):
            return numba_eq(self, other)
        a, b = self._values, other._values
        if a == b:
            return True
        options = type(self).options
        for name in a.keys() | b.keys():
            default = options[name].default
            x, y = a.get(name, default), b.get(name, default)
            if not (x is y or x == y):
                return False
        return True

    TargetConfig.__hash__ = __hash__  # type: ignore[method-assign]
    TargetConfig.__eq__ = __eq__  # type: ignore[method-assign]
    TargetConfig._mlw_fast_compare = True  # type: ignore[attr-defined]


compare_flags_faster()


class KernelDispatcher(CPUDispatcher):
    """numba's CPU dispatcher, compiling each new signature under the function's
    cross-process cache lock (taken inside numba's own compiler lock, so threads of one
    process cannot deadlock on it).

    A kernel called from another kernel is compiled by its twin (``_callee``), the same
    function without the wrappers that let Python call it: numba links every callee's
    whole module, wrappers included, into each caller and optimises it again there, so
    for a builder whose kernels nest four deep the wrappers of its callees were a sixth
    of the first fit's compiling. Called from Python, a kernel compiles with its
    wrappers, as numba does."""

    _callee: KernelDispatcher | None = None

    @property
    def _numba_type_(self) -> Any:
        # what a calling kernel sees when it types and links a call to this one
        from numba.core import types

        return types.Dispatcher(self if self._callee is None else self._callee)

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


def _dispatcher(func: Callable[..., Any], cache: bool, options: dict[str, Any],
                variant: str = "") -> Any:
    """``func`` as a :class:`KernelDispatcher` with the layer's cache (files of their
    own for a ``variant``)."""
    disp = numba.njit(**options)(func)
    disp.__class__ = KernelDispatcher
    if cache and _has_source_file(func):
        try:
            disp._cache = KernelCache(func, variant)
        except Exception as exc:  # no cache location at all: compile in memory
            notice("nocache", f"kernels are not cached ({type(exc).__name__}: {exc})")
    return disp


def make_kernel(func: Callable[..., Any], signatures: list[Any] | None, cache: bool,
                options: dict[str, Any]) -> Any:
    """Wrap ``func`` as a :class:`KernelDispatcher` with the layer's cache, and its twin
    for kernel callers (see :class:`KernelDispatcher`; not for an eagerly compiled
    kernel, whose callers use the signatures compiled at import)."""
    if numba.config.DISABLE_JIT:
        return numba.njit(**options)(func)  # the plain Python function
    disp = _dispatcher(func, cache, options)
    if not signatures and not options.get("no_cpython_wrapper"):
        disp._callee = _dispatcher(
            func, cache, dict(options, no_cpython_wrapper=True, no_cfunc_wrapper=True),
            "callee")
    if signatures:
        from numba.core import typeinfer

        with typeinfer.register_dispatcher(disp):
            for sig in signatures:
                disp.compile(sig)
        disp.disable_compile()
    return disp
