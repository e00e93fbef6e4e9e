"""The JIT layer: the one way kernels of mlw and of its plugins are compiled.

Decorate a kernel with :func:`kernel` instead of numba's ``@njit(cache=True)``::

    from mlw.jit import kernel

    @kernel
    def total(x):
        ...

    @kernel(parallel=True)
    def rows(A):
        ...

The layer keeps compiled machine code in a per-user cache (:func:`cache_root`,
``MLW_CACHE_DIR`` to move it, ``mlw warmup --clear`` to empty it), one folder per
Python, numba, llvmlite, numpy and CPU, and guarantees that no order of runs, in one
process or in many at once, crashes or changes a result through that cache:

- machine code that calls into numba's threading layer starts the layer before it is
  linked, so a cached kernel calling a ``parallel=True`` kernel is safe to reload;
- compile-and-save of a kernel is serialised across processes by a file lock, and each
  cached file carries the key it was compiled for, checked on load;
- a truncated, corrupted or foreign cache file, or a folder that cannot be written,
  costs one line on stderr and a recompile (or an in-memory compile), never a crash.

Importing this module does not import numba; decorating a kernel does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, overload

from mlw.jit._location import cache_root, clear_cache
from mlw.jit._timer import CompileTime, announce_compilation, compile_notice, compile_timer

__all__ = ["CompileTime", "announce_compilation", "cache_root", "clear_cache",
           "compile_notice", "compile_timer", "kernel", "kernel_seed", "kernels_dir"]

F = TypeVar("F", bound=Callable[..., Any])


@overload
def kernel(func: F, /) -> F: ...
@overload
def kernel(signature: str | list[str] | None = None, /, *, cache: bool = True,
           **options: Any) -> Callable[[F], F]: ...


def kernel(func_or_signature: Any = None, /, *, cache: bool = True,
           **options: Any) -> Any:
    """Compile a function with numba in nopython mode, cached by the JIT layer.

    Parameters
    ----------
    func_or_signature
        The function (``@kernel``), or one numba signature string or a list of them to
        compile eagerly at import (``@kernel("void(int64[::1])")``), or nothing
        (``@kernel(parallel=True)``).
    cache
        Keep the machine code in the layer's cache (see :func:`cache_root`); ``False``
        compiles in memory in every process.
    **options
        numba's ``njit`` options (``parallel``, ``fastmath``, ``inline``, ``nogil``,
        ``boundscheck``, ``error_model``, ...); not ``cache``, which the layer owns.

    Examples
    --------
    >>> import numpy as np
    >>> @kernel
    ... def twice(x):
    ...     return 2.0 * x
    >>> float(twice(np.float64(1.5)))
    3.0
    """
    if "cache" in options:  # pragma: no cover - keyword-only above
        raise TypeError("the JIT layer owns the cache")
    if callable(func_or_signature):
        from mlw.jit._dispatcher import make_kernel

        return make_kernel(func_or_signature, None, cache, options)
    if func_or_signature is None:
        signatures = None
    elif isinstance(func_or_signature, list):
        signatures = func_or_signature
    else:
        signatures = [func_or_signature]

    def decorate(func: F) -> F:
        from mlw.jit._dispatcher import make_kernel

        return make_kernel(func, signatures, cache, options)  # type: ignore[no-any-return]

    return decorate


def kernels_dir() -> Path:
    """The folder this process keeps compiled kernels in: ``kernels/<key>`` under
    :func:`cache_root`, the key naming the Python, numba, llvmlite and numpy versions
    and the CPU (imports numba)."""
    from mlw.jit._cache import kernels_dir as folder

    return folder()


def kernel_seed(entropy: Any = None) -> int:
    """A seed for ``np.random.seed`` inside a kernel, drawn from ``entropy`` (anything
    ``numpy.random.default_rng`` takes: ``None``, an int, a sequence of ints).

    Compiled, numba's ``np.random.seed`` keeps the low 32 bits of its argument; run as
    plain Python (``NUMBA_DISABLE_JIT=1``) numpy refuses a seed of 2**32 or more. The
    seed is a 62-bit draw reduced to those 32 bits, so both paths seed alike.

    Examples
    --------
    >>> 0 <= kernel_seed(0) < 2**32
    True
    """
    import numpy as np

    return int(np.random.default_rng(entropy).integers(2**62)) % 2**32
