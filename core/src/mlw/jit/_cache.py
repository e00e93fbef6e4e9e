"""The on-disk cache of compiled kernels: numba's cache machinery, with the parts that
can crash a program or load the wrong machine code replaced.

What numba's own ``cache=True`` does not guarantee, and what this module does about it:

- A cached kernel that calls a ``parallel=True`` kernel can be saved without the hook
  that starts numba's threading layer; reloaded in a fresh process, its calls into the
  threading layer are unresolved and jump to address 0 (numba/numba#8578). Before
  linking cached machine code, :meth:`KernelCacheImpl.rebuild` looks for references to
  the threading layer's symbols in it and starts the layer first.
- Two processes saving the same function at once can give two signatures the same data
  file, or let one process read an index whose data file is not yet (or no longer) the
  one it names: the other process then runs machine code compiled for other argument
  types (numba/numba#4807 and #10128). Here a file lock serialises compile-and-save per
  function across processes, and every data file carries the index key and source
  stamp it was compiled for, checked on load.
- A truncated or corrupted file, or one written by another numba, llvmlite, numpy or
  Python, is detected (a SHA-256 digest and the versions sealed into every file) and
  costs one line on stderr and a recompile.
- A cache folder that cannot be written costs one line on stderr; the kernels are then
  compiled in memory for the run.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import pickle
import platform
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llvmlite
import numba
import numpy as np
from numba.core import caching
from numba.core.serialize import dumps

from mlw.jit._location import KERNELS, cache_root, notice

#: The first bytes of every file the layer writes; the format version is part of it.
MAGIC = b"MLWJIT1\n"
_DIGEST = 32
#: Seconds a process waits for another one compiling the same kernel before it
#: compiles on its own (the result is the same; only CPU is wasted).
LOCK_TIMEOUT = 900.0

# Symbols numba's threading layer registers with LLVM when it starts
# (numba/np/ufunc/parallel.py); machine code that references one of them crashes if it
# is linked before the layer has started.
_THREADING_SYMBOLS = (b"numba_parallel_for", b"do_scheduling_signed",
                      b"do_scheduling_unsigned", b"allocate_sched", b"deallocate_sched",
                      b"get_num_threads", b"set_num_threads", b"get_thread_id",
                      b"set_parallel_chunksize", b"get_parallel_chunksize",
                      b"get_sched_size")


class CorruptCacheFile(Exception):
    """A cache file that cannot be trusted: truncated, altered or foreign."""


def versions() -> dict[str, str]:
    """The versions that make machine code incompatible when they change."""
    return {"python": f"{platform.python_implementation()}-{sys.version_info[0]}."
                      f"{sys.version_info[1]}{getattr(sys, 'abiflags', '')}",
            "numba": numba.__version__, "llvmlite": llvmlite.__version__,
            "numpy": np.__version__, "format": MAGIC.decode().strip()}


def _machine() -> tuple[str, str, str]:
    """numba's description of the target: ``(triple, cpu name, cpu features)``."""
    from numba.core.registry import cpu_target

    return tuple(cpu_target.target_context.codegen().magic_tuple())  # type: ignore[return-value]


def abi_key() -> str:
    """The folder name under ``kernels/``: one per Python, numba, llvmlite, numpy and
    CPU (name and features), so machine code is only found where it can run."""
    v = versions()
    triple, cpu, features = _machine()
    digest = hashlib.sha256(f"{triple}|{features}".encode()).hexdigest()[:10]
    safe_cpu = "".join(c if c.isalnum() or c in "-_" else "_" for c in cpu) or "cpu"
    return (f"py{v['python'].split('-')[1]}-numba{v['numba']}-llvmlite{v['llvmlite']}"
            f"-numpy{v['numpy']}-{safe_cpu}-{digest}")


_folder: list[Path] = []


def kernels_dir() -> Path:
    """The folder this process keeps its machine code in (see :func:`abi_key`), fixed
    when the process first asks (a later change of ``MLW_CACHE_DIR`` does not move
    kernels already decorated)."""
    if not _folder:
        _folder.append(cache_root() / KERNELS / abi_key())
    return _folder[0]


def seal(obj: Any) -> bytes:
    """``MAGIC``, the SHA-256 of the pickled ``obj``, then the pickle."""
    body = dumps(obj)
    return MAGIC + hashlib.sha256(body).digest() + body


def unseal(blob: bytes) -> Any:
    """The object :func:`seal` wrote; :class:`CorruptCacheFile` when the bytes are not
    exactly what it wrote."""
    head = len(MAGIC)
    if len(blob) < head + _DIGEST or blob[:head] != MAGIC:
        raise CorruptCacheFile("not a cache file of this format")
    body = blob[head + _DIGEST:]
    if hashlib.sha256(body).digest() != blob[head:head + _DIGEST]:
        raise CorruptCacheFile("truncated or corrupted (checksum mismatch)")
    try:
        return pickle.loads(body)
    except Exception as exc:  # a valid digest over bytes another program wrote
        raise CorruptCacheFile(f"unreadable ({type(exc).__name__})") from exc


_stamps: dict[Path, str] = {}


def _package_top(path: Path) -> Path:
    """The top-level package folder holding the module at ``path``."""
    top = path.parent
    while (top.parent / "__init__.py").is_file():
        top = top.parent
    return top


def _kernel_files_stamp(top: Path) -> str:
    """A digest of the size and modification time of every kernel module of a package
    (files or folders whose name contains ``kernels``): a kernel compiled into its
    caller goes stale with its own file, which numba's per-file stamp misses."""
    if top not in _stamps:
        h = hashlib.sha256()
        try:
            files = sorted(p for p in top.rglob("*.py")
                           if "kernels" in str(p.relative_to(top)))
            for p in files:
                st = p.stat()
                h.update(f"{p.relative_to(top)}|{st.st_mtime_ns}|{st.st_size}\n".encode())
        except OSError:
            pass
        _stamps[top] = h.hexdigest()[:16]
    return _stamps[top]


class KernelLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Places a module's kernels in ``kernels/<abi key>/<package>_<path digest>`` under
    :func:`~mlw.jit.cache_root`, whatever folder the module was installed in."""

    def __init__(self, py_func: Any, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = str(kernels_dir() / self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self) -> str:
        return self._cache_path

    def get_source_stamp(self) -> Any:
        st = os.stat(self._py_file)
        own = (st.st_mtime, st.st_size)
        path = Path(self._py_file).absolute()
        mlw_top = Path(__file__).absolute().parent.parent
        return (own, _kernel_files_stamp(_package_top(path)), _kernel_files_stamp(mlw_top))

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> KernelLocator | None:
        if not os.path.isfile(py_file):
            return None
        return cls(py_func, py_file)


class KernelCacheImpl(caching.CompileResultCacheImpl):
    _locator_classes = [KernelLocator]

    def rebuild(self, target_context: Any, payload: Any) -> Any:
        """Start numba's threading layer before linking machine code that calls into
        it, whatever hooks the cached entry recorded (numba/numba#8578)."""
        if _uses_threading_layer(payload[0]):
            from numba.np.ufunc.parallel import _launch_threads

            _launch_threads()
        return super().rebuild(target_context, payload)


def _uses_threading_layer(libdata: Any) -> bool:
    try:
        _name, kind, data = libdata
        code = data[0] if kind == "object" else data
        return any(sym in code for sym in _THREADING_SYMBOLS)
    except (TypeError, ValueError):
        return True  # unknown layout: starting the layer is harmless


class KernelCacheFile(caching.IndexDataCacheFile):
    """Index and data files as numba lays them out, each sealed (:func:`seal`) with the
    versions it was written under; a data file also holds the key and source stamp it
    was compiled for."""

    def __init__(self, cache_path: str, filename_base: str, source_stamp: Any) -> None:
        super().__init__(cache_path, filename_base, source_stamp)
        self._version = versions()

    def _describe(self, path: str) -> str:
        return os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))

    def _load_index(self, quiet: bool = False) -> dict[Any, str]:
        try:
            with open(self._index_path, "rb") as f:
                blob = f.read()
        except OSError:  # none yet, or a folder that cannot be read: a plain miss
            return {}
        try:
            version, stamp, overloads = unseal(blob)
            if not isinstance(overloads, dict):
                raise CorruptCacheFile("unreadable index")
        except (CorruptCacheFile, TypeError, ValueError) as exc:
            if not quiet:
                notice(f"corrupt:{self._index_path}",
                       f"ignoring the kernel cache index {self._describe(self._index_path)}"
                       f": {exc}; recompiling")
            return {}
        if version != self._version:
            if not quiet:
                diff = ", ".join(f"{k} {version.get(k, '?')} (this is {v})"
                                 for k, v in self._version.items()
                                 if not isinstance(version, dict) or version.get(k) != v)
                notice(f"foreign:{self._index_path}",
                       f"ignoring the kernel cache index {self._describe(self._index_path)}"
                       f" written by {diff}; recompiling")
            return {}
        if stamp != self._source_stamp:
            return {}  # the kernels changed since: a plain cache miss
        return overloads

    def _save_index(self, overloads: dict[Any, str]) -> None:
        with self._open_for_write(self._index_path) as f:
            f.write(seal((self._version, self._source_stamp, overloads)))

    def save(self, key: Any, data: Any) -> None:
        overloads = self._load_index(quiet=True)
        data_name = overloads.get(key)
        if data_name is None:
            existing = set(overloads.values())
            data_name = next(n for n in (self._data_name(i) for i in itertools.count(1))
                             if n not in existing)
            overloads[key] = data_name
        # data first, then the index that names it: a reader never finds an index
        # entry whose data file is still missing
        self._save_data(data_name, (key, self._source_stamp, data))
        self._save_index(overloads)

    def load(self, key: Any) -> Any:
        overloads = self._load_index()
        data_name = overloads.get(key)
        if data_name is None:
            return None
        path = self._data_path(data_name)
        try:
            with open(path, "rb") as f:
                blob = f.read()
        except OSError:
            return None  # removed since the index was read
        try:
            stored_key, stamp, payload = unseal(blob)
        except (CorruptCacheFile, TypeError, ValueError) as exc:
            notice(f"corrupt:{path}", f"ignoring the kernel cache file "
                   f"{self._describe(path)}: {exc}; recompiling")
            return None
        if stored_key != key or stamp != self._source_stamp:
            notice(f"mismatch:{path}", f"ignoring the kernel cache file "
                   f"{self._describe(path)}: it holds another compilation than its index "
                   "names; recompiling")
            return None
        return payload

    def _save_data(self, name: str, data: Any) -> None:
        with self._open_for_write(self._data_path(name)) as f:
            f.write(seal(data))


class KernelCache(caching.FunctionCache):
    """numba's per-function cache with :class:`KernelCacheFile` files, a cross-process
    lock around compile-and-save, and every failure turned into a cache miss."""

    _impl_class = KernelCacheImpl

    def __init__(self, py_func: Any, variant: str = "") -> None:
        super().__init__(py_func)
        # a variant (the form compiled for kernel callers) keeps files and lock of its own
        self._base = self._impl.filename_base + (f"-{variant}" if variant else "")
        self._cache_file = KernelCacheFile(
            cache_path=self._cache_path, filename_base=self._base,
            source_stamp=self._impl.locator.get_source_stamp())
        self._lock: Any = None

    @contextlib.contextmanager
    def compile_lock(self) -> Iterator[None]:
        """Hold this function's cross-process lock (reentrant): a second process
        compiling the same kernel waits, then loads what the first one saved. A lock
        that cannot be taken (read-only folder, timeout) is skipped with one line."""
        import filelock

        lock = self._lock
        if lock is None:
            try:
                os.makedirs(self._cache_path, exist_ok=True)
                lock = filelock.FileLock(
                    os.path.join(self._cache_path, self._base + ".lock"),
                    timeout=LOCK_TIMEOUT)
            except OSError as exc:
                _unwritable(self._cache_path, exc)
                yield
                return
            self._lock = lock
        try:
            lock.acquire()
        except filelock.Timeout:
            notice(f"timeout:{self._cache_path}",
                   f"another process held the kernel cache lock in {self._cache_path} for "
                   f"{LOCK_TIMEOUT:.0f} s; compiling without it")
            yield
            return
        except OSError as exc:
            _unwritable(self._cache_path, exc)
            yield
            return
        try:
            yield
        finally:
            lock.release()

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        try:
            return super().load_overload(sig, target_context)
        except Exception as exc:  # whatever is on disk, the answer is a cache miss
            notice(f"load:{self._cache_path}:{self._base}",
                   f"could not load {self._base} from the kernel cache "
                   f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
                   "; recompiling")
            return None

    def save_overload(self, sig: Any, data: Any) -> None:
        try:
            with self.compile_lock():
                super().save_overload(sig, data)
        except OSError as exc:
            _unwritable(self._cache_path, exc)
        except Exception as exc:  # never lose a compiled kernel over its cache copy
            notice(f"save:{self._cache_path}:{self._base}",
                   f"could not save {self._base} in the kernel cache "
                   f"({type(exc).__name__}); it stays compiled for this run")


def _unwritable(path: str, exc: OSError) -> None:
    notice("unwritable", f"cannot write the kernel cache in {kernels_dir()} "
           f"({exc.strerror or type(exc).__name__}); kernels are compiled in memory for "
           "this run (set MLW_CACHE_DIR to a writable folder to keep them)")
