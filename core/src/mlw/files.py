"""Files mlw writes: atomic writes (the one mechanism every writer in mlw uses: model
files, ARFF/XC/XML dataset files, prediction files, experiment results), the refusal to
overwrite an input, and ``SIGTERM`` handled like Ctrl-C. Public: the ``mlw`` command
and plugins writing files use these too.

A write goes to a temporary file beside the destination, named
``.<name>.mlw-<pid>-<random>.tmp``, which is flushed, ``fsync``-ed and renamed over the
destination with ``os.replace``. So:

- an exception, Ctrl-C (``SIGINT``) or ``SIGTERM`` during the write removes the
  temporary file and leaves the destination as it was: while a write runs in the main
  thread, ``SIGTERM`` (whose default action would kill the process on the spot) raises
  :class:`Terminated`, a ``KeyboardInterrupt``, and is handled like Ctrl-C;
- a process killed outright (``SIGKILL``, a power cut) can leave its temporary file
  behind: the next write to the same destination removes such files whose process is
  gone (or that are more than a day old);
- the new file gets the permissions of the file it replaces, or for a new file
  ``0o666`` minus the umask, as ``open()`` would give it (``mkstemp`` alone gives 0600).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import IO, Any

__all__ = [
    "Terminated",
    "atomic_write",
    "check_output_path",
    "not_a_file",
    "sigterm_as_interrupt",
    "sweep_stale_temporaries",
]

#: Temporary files older than this are removed whatever their process (PID reuse).
STALE_SECONDS = 24 * 3600


def not_a_file(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it exists but is no regular file, said for a user
    (``"is a character device"``, ``"is a named pipe (FIFO)"``, ``"is a folder"``,
    ``"is a symbolic link loop"``, ``"is a symbolic link to /x, which does not exist"``,
    with ``" (a symbolic link to /dev/zero)"`` when a link leads there); ``None`` for a
    regular file or nothing at all. Reading a device or a FIFO would never end (or
    read nothing), so readers refuse them by what they are, before opening them.

    Examples
    --------
    >>> not_a_file("/dev/null")
    'is a character device'
    >>> not_a_file(".")
    'is a folder'
    >>> not_a_file("/no/such/file") is None
    True
    """
    import errno
    import stat

    p = os.fspath(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop"
        if os.path.islink(p):
            return f"is a symbolic link to {os.readlink(p)}, which does not exist"
        return None
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return None
    what = ("is a folder" if stat.S_ISDIR(mode) else
            "is a character device" if stat.S_ISCHR(mode) else
            "is a block device" if stat.S_ISBLK(mode) else
            "is a named pipe (FIFO)" if stat.S_ISFIFO(mode) else
            "is a socket" if stat.S_ISSOCK(mode) else "is not a regular file")
    if os.path.islink(p):
        what += f" (a symbolic link to {os.path.realpath(p)})"
    return what


class Terminated(KeyboardInterrupt):
    """The process received ``SIGTERM`` (raised instead of dying mid-write)."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(f"terminated by signal {signum}")


@contextlib.contextmanager
def sigterm_as_interrupt(*, replace: bool = False) -> Iterator[None]:
    """While the block runs, ``SIGTERM`` raises :class:`Terminated` (a
    ``KeyboardInterrupt``) instead of killing the process, so ``finally`` blocks and
    :func:`atomic_write` clean up as on Ctrl-C. Only in the main thread; only when no
    other handler is installed, unless ``replace=True`` (a program's entry point, such
    as the ``mlw`` command, owns the signal). The previous handler is restored after.

    Examples
    --------
    >>> import signal
    >>> before = signal.getsignal(signal.SIGTERM)
    >>> with sigterm_as_interrupt(replace=True):
    ...     signal.getsignal(signal.SIGTERM) is before
    False
    >>> signal.getsignal(signal.SIGTERM) is before
    True
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.getsignal(signal.SIGTERM)
    except (ValueError, OSError):  # pragma: no cover - no signals here
        yield
        return
    if previous is not signal.SIG_DFL and not replace:
        yield
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # pragma: no cover - not Linux: read it by setting it
    os.umask(mask)  # pragma: no cover
    return mask  # pragma: no cover


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _prefix(name: str) -> str:
    return f".{name}.mlw-"


def sweep_stale_temporaries(target: str | os.PathLike[str]) -> list[Path]:
    """Remove temporary files an earlier, killed write to ``target`` left behind: ours
    (``.<name>.mlw-<pid>-*.tmp``) whose process no longer exists or that are older than a
    day, and the older pattern ``.<name>.<8 chars>.tmp`` when older than a day. Returns
    the files removed."""
    target = Path(target)
    folder = target.parent if str(target.parent) else Path(".")
    ours = re.compile(re.escape(_prefix(target.name)) + r"(\d+)-[A-Za-z0-9_]+\.tmp$")
    legacy = re.compile(re.escape(f".{target.name}.") + r"[A-Za-z0-9_]{8}\.tmp$")
    removed: list[Path] = []
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(f".{target.name}."):
            continue
        m = ours.match(entry.name)
        if m is None and legacy.match(entry.name) is None:
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            age = now - entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        if m is not None:
            pid = int(m.group(1))
            stale = age > STALE_SECONDS or (pid != os.getpid() and not _alive(pid))
        else:
            stale = age > STALE_SECONDS
        if stale:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check_output_path(output: str | os.PathLike[str], inputs: Any = (), *,
                      option: str = "output", suffixes: Sequence[str] = ()) -> Path:
    """The one check of a file about to be written, before any work: refuse a path
    that is empty, not named with one of ``suffixes`` (when given, e.g.
    ``(".parquet", ".csv")``), a folder, in a folder that does not exist, or the same
    file as one of ``inputs`` (paths, or a mapping ``{description: path}``): writing it
    would destroy an input; or a device, FIFO or socket (renaming a file over
    ``/dev/null`` would replace it). Returns the path. Raises ``ValueError``
    (``IsADirectoryError`` for a folder, ``FileNotFoundError`` for a missing folder)
    naming ``option`` and the input."""
    if output is None or str(output).strip() == "":
        raise ValueError(f"{option}: the path is empty")
    target = Path(output)
    if suffixes and target.suffix.lower() not in suffixes:
        names = " or ".join(suffixes)
        raise ValueError(f"{option} {target}: give a {names} file name")
    if target.is_dir():
        raise IsADirectoryError(f"{option} {target}: it is a folder; give a file name")
    what = not_a_file(target)
    if what is not None:  # a device or a FIFO: writing would replace it with a file
        raise ValueError(f"{option} {target} {what}; give a file name")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(f"{option} {target}: folder {folder} does not exist")
    items = inputs.items() if hasattr(inputs, "items") else ((None, p) for p in inputs)
    for what, source in items:
        if source is None or str(source) == "":
            continue
        if _same_file(target, Path(source)):
            name = what or f"the input {source}"
            raise ValueError(f"{option} {target} is {name}: refusing to overwrite an input "
                             f"(choose another output path)")
    return target


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "wb",
                 encoding: str | None = None) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; on success it replaces
    ``path`` atomically, on any error (including ``KeyboardInterrupt`` and ``SIGTERM``)
    it is removed and ``path`` is left as it was. See the module documentation.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_write(target, "w") as fh:
    ...     _ = fh.write("done\\n")
    >>> target.read_text()
    'done\\n'
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write supports modes 'w' and 'wb', got {mode!r}")
    target = Path(path)
    if not target.name or str(path) == "":
        raise ValueError("cannot write to an empty path")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(f"cannot write {target}: folder {folder} does not exist")
    if target.is_dir():
        raise IsADirectoryError(f"cannot write {target}: it is a folder")
    what = not_a_file(target)
    if what is not None:  # renaming over a device node (as root) would replace it
        raise ValueError(f"cannot write {target}: it {what}")
    sweep_stale_temporaries(target)
    with sigterm_as_interrupt():
        fd, tmp_name = tempfile.mkstemp(prefix=f"{_prefix(target.name)}{os.getpid()}-",
                                        suffix=".tmp", dir=folder)
        try:
            with contextlib.suppress(OSError):
                os.fchmod(fd, _mode_for(target))
            with os.fdopen(fd, mode, encoding=encoding if "b" not in mode else None,
                           newline="" if "b" not in mode else None) as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp_name, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise
    with contextlib.suppress(OSError):  # make the rename itself durable where possible
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
