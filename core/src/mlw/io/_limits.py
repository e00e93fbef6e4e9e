"""Resource limits of the dataset loaders.

A data file is input from anyone: a 3 MB ``.gz`` can unpack to gigabytes, a header can
declare four billion labels, a nominal attribute can declare 20,000 values that a dense
file would expand into 20,000 columns per row. Every loader of the core checks what a
file asks for against these limits *before* allocating it, and refuses with a one-line
:class:`LimitError` (a :class:`~mlw.io.DataFormatError`, so the CLI exits 2) that names
the file, the limit and how to raise it. A ``MemoryError`` that still happens while
loading becomes the same error.

======================  ==========================================  =====================
limit                   what it bounds                              default
======================  ==========================================  =====================
``max_memory``          bytes one load may hold: the decompressed   75% of the physical
                        text, the parser's arrays and a dense         memory (8 GiB when
                        ``X``/``Y``, estimated before allocating      unknown), or of the
                                                                    address space left
                                                                    under ``ulimit -v``
``max_ratio``           decompressed / compressed size of a         200
                        ``.gz``/``.bz2``/``.xz`` file, once more
                        than 64 MiB came out (real datasets: 3-150)
``max_columns``         features or labels a file may declare       10,000,000
                        (XC header, ARFF attributes, columns after
                        one-hot expansion)
``max_onehot``          values of one nominal attribute expanded    10,000
                        into one-hot columns
======================  ==========================================  =====================

Set them for a process with the environment variables ``MLW_MAX_MEMORY`` (bytes, or
with a ``K``/``M``/``G``/``T`` suffix: ``16G``), ``MLW_MAX_RATIO``, ``MLW_MAX_COLUMNS``
and ``MLW_MAX_ONEHOT``; in Python with :func:`set_limits` or, for a block, the
context manager :func:`limits`::

    with mlw.io.limits(max_memory="32G", max_onehot=50_000):
        ds = mlw.load_dataset("big.arff")
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from mlw.io._errors import DataFormatError

__all__ = ["LimitError", "LoadLimits", "get_limits", "limits", "memory_guard", "set_limits"]

#: Decompressed bytes a compressed file may produce before ``max_ratio`` applies.
RATIO_FLOOR = 64 << 20

ENV = {
    "max_memory": "MLW_MAX_MEMORY",
    "max_ratio": "MLW_MAX_RATIO",
    "max_columns": "MLW_MAX_COLUMNS",
    "max_onehot": "MLW_MAX_ONEHOT",
}

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20,
          "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
          "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}


class LimitError(DataFormatError):
    """A data file asks for more than a loader limit allows (see :mod:`mlw.io._limits`)."""


def parse_size(value: str | int | float, what: str = "size") -> int:
    """``"16G"`` -> 17179869184; ints pass through. Raises ``ValueError`` naming ``what``."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: expected a number of bytes, got {value!r}")
    if isinstance(value, (int, float)):
        n = int(value)
    else:
        text = str(value).strip().upper().replace("_", "")
        num = text.rstrip("KMGTIB")
        unit = text[len(num):]
        try:
            n = int(float(num) * _UNITS[unit])
        except (ValueError, KeyError):
            raise ValueError(f"{what}: expected a number of bytes such as 8G or 500M, "
                             f"got {value!r}") from None
    if n <= 0:
        raise ValueError(f"{what}: must be positive, got {value!r}")
    return n


def _physical_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 0


@dataclass(frozen=True)
class LoadLimits:
    """The limits every core loader checks (see the module documentation)."""

    max_memory: int
    max_ratio: float
    max_columns: int
    max_onehot: int

    def describe(self, name: str) -> str:
        """``max_ratio=200 (MLW_MAX_RATIO)`` for messages."""
        value = getattr(self, name)
        shown = _human(value) if name == "max_memory" else f"{value:g}"
        return f"{name}={shown}"

    def advice(self, name: str) -> str:
        return (f"limit {self.describe(name)}; raise it with {ENV[name]}=... or "
                f"mlw.io.set_limits({name}=...)")


def _human(n: float) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} bytes"


human_bytes = _human


def _address_space_left() -> int | None:
    """Bytes of address space this process may still map under ``ulimit -v``
    (``RLIMIT_AS``), or ``None`` without such a limit."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, ValueError, OSError):  # pragma: no cover - not POSIX
        return None
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return None
    used = 0
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    used = int(line.split()[1]) * 1024
                    break
    return max(soft - used, 0)


def _defaults() -> LoadLimits:
    phys = _physical_memory()
    memory = int(phys * 0.75) if phys > 0 else 8 << 30
    left = _address_space_left()
    if left is not None:  # a process under `ulimit -v`: what it can still map
        memory = max(min(memory, int(left * 0.75)), 1 << 20)
    values: dict[str, Any] = {"max_memory": memory, "max_ratio": 200.0,
                              "max_columns": 10_000_000, "max_onehot": 10_000}
    for field, var in ENV.items():
        raw = os.environ.get(var)
        if raw is None or not raw.strip():
            continue
        values[field] = _coerce(field, raw, f"${var}")
    return LoadLimits(**values)


def _coerce(field: str, value: Any, what: str) -> Any:
    if field == "max_memory":
        return parse_size(value, what)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected a number, got {value!r}") from None
    if not number > 0 or number != number or number == float("inf"):
        raise ValueError(f"{what}: must be a positive number, got {value!r}")
    return number if field == "max_ratio" else int(number)


_override: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "mlw_io_limits", default=None)
_process: dict[str, Any] = {}


def get_limits() -> LoadLimits:
    """The limits in force: defaults, then the environment, then :func:`set_limits`, then
    the innermost :func:`limits` block."""
    base = _defaults()
    changes = {**_process, **(_override.get() or {})}
    return dataclasses.replace(base, **changes) if changes else base


def _checked(changes: dict[str, Any]) -> dict[str, Any]:
    fields = {f.name for f in dataclasses.fields(LoadLimits)}
    unknown = sorted(set(changes) - fields)
    if unknown:
        raise ValueError(f"unknown loader limit {', '.join(map(repr, unknown))} "
                         f"(limits: {', '.join(sorted(fields))})")
    return {k: _coerce(k, v, k) for k, v in changes.items() if v is not None}


def set_limits(**changes: Any) -> LoadLimits:
    """Change limits for the whole process (``None`` restores a default); returns the
    limits now in force."""
    for key, value in _checked({k: v for k, v in changes.items()}).items():
        _process[key] = value
    for key, value in changes.items():
        if value is None:
            _process.pop(key, None)
    return get_limits()


@contextlib.contextmanager
def limits(**changes: Any) -> Iterator[LoadLimits]:
    """Change limits inside a ``with`` block (this thread / task only)."""
    token = _override.set({**(_override.get() or {}), **_checked(changes)})
    try:
        yield get_limits()
    finally:
        _override.reset(token)


def check_memory(path: str | Path, nbytes: float, what: str) -> None:
    """Refuse to allocate ``nbytes`` for ``what`` above ``max_memory``."""
    lim = get_limits()
    if nbytes > lim.max_memory:
        raise LimitError(path, None, f"{what} would need about {_human(nbytes)} of memory "
                                     f"({lim.advice('max_memory')})")


def check_columns(path: str | Path, n: int, what: str, line: int | None = None) -> None:
    lim = get_limits()
    if n > lim.max_columns:
        raise LimitError(path, line, f"{what}: {n:,} is more than the {lim.max_columns:,} "
                                     f"columns a file may declare ({lim.advice('max_columns')})")


F = TypeVar("F", bound=Callable[..., Any])


@contextlib.contextmanager
def memory_guard(path: str | Path) -> Iterator[None]:
    """Turn a ``MemoryError`` while loading ``path`` into a :class:`LimitError`."""
    try:
        yield
    except MemoryError:
        lim = get_limits()
        raise LimitError(path, None, f"ran out of memory while loading the file; lower the "
                                     f"other loads on the machine or the "
                                     f"{lim.advice('max_memory')} so that oversized files are "
                                     f"refused up front") from None


def guarded(func: F) -> F:
    """Decorate a loader ``func(path, ...)``: :func:`memory_guard` around it."""

    @functools.wraps(func)
    def wrapper(path: Any, *args: Any, **kwargs: Any) -> Any:
        with memory_guard(path):
            return func(path, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
