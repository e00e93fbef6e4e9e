"""Where compiled kernels are kept, and the one-line notices the JIT layer prints.

No numba import here: the command line asks where the cache is (``mlw warmup``) and
empties it (``mlw warmup --clear``) without loading the compiler.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

__all__ = ["cache_root", "clear_cache", "notice"]

#: The folder below the cache root that the JIT layer owns (and ``clear_cache`` empties).
KERNELS = "kernels"


def _user_cache_home() -> Path:
    """The per-user cache folder of the platform, as pip and numba-based libraries use:
    ``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS,
    ``%LOCALAPPDATA%`` on Windows."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "mlw" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "mlw"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "mlw"


def cache_root() -> Path:
    """The folder compiled kernels are kept in.

    ``MLW_CACHE_DIR`` when set; otherwise ``NUMBA_CACHE_DIR/mlw`` when numba's own
    cache has been moved (as containers with a read-only home do); otherwise the
    per-user cache folder of the platform (``~/.cache/mlw`` on Linux). Machine code
    lives below it in ``kernels/<key>``, one folder per combination of Python, numba,
    llvmlite, numpy and CPU, so code compiled for another one is never loaded.

    Examples
    --------
    >>> cache_root().is_absolute()
    True
    """
    own = os.environ.get("MLW_CACHE_DIR", "").strip()
    if own:
        return Path(own).expanduser().absolute()
    numba_dir = os.environ.get("NUMBA_CACHE_DIR", "").strip()
    if numba_dir:
        return Path(numba_dir).expanduser().absolute() / "mlw"
    return _user_cache_home()


def clear_cache() -> tuple[Path, int]:
    """Delete every compiled kernel kept under :func:`cache_root` (its ``kernels``
    folder, nothing else). Returns the folder and the number of files removed; a
    missing folder removes nothing."""
    folder = cache_root() / KERNELS
    if not folder.is_dir():
        return folder, 0
    count = sum(1 for p in folder.rglob("*") if p.is_file())
    shutil.rmtree(folder)
    return folder, count


_said: set[str] = set()


def notice(key: str, message: str) -> None:
    """Print ``mlw: message`` on stderr once per process for each ``key``: a problem
    with the cache costs one line, never an exception."""
    if key in _said:
        return
    _said.add(key)
    try:
        print(f"mlw: {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # a closed stderr: nothing to say it on
        pass
