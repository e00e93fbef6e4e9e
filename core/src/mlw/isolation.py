"""Running code where its death cannot take the caller down.

A learner's native code can kill the process it runs in (a segmentation fault in a
compiled kernel, ``os._exit`` in a plugin, the kernel's out-of-memory killer). The
harness and ``mlw fit --cv`` run such code in a :class:`Worker`: a child process that
runs calls one at a time and sends each result back. When the child dies, the call in
flight raises :class:`ProcessDied`, naming the signal or the exit code, and the next
call runs in a fresh child; the caller carries on.

Each :class:`Worker` is two processes, forked (Linux, macOS) from the caller when it is
made (or, with ``start="exec"``, a new Python process, for callers that hold threads
and connections of their own):

- a *supervisor*, a copy of the caller as it was then, which never runs a call and
  never starts a thread: it forks a *runner* on demand, waits for it and reports how
  it ended;
- the *runner*, forked from the supervisor, which runs the calls.

So a runner always starts with everything the caller had imported and registered
(plugins registered in the caller's process included), and forking it again after a
death is safe even when the caller has started threads since (a process forked while
another of its threads holds a lock can deadlock; the supervisor has no other thread).
Both processes die with their parent (Linux ``PR_SET_PDEATHSIG``) and ignore Ctrl-C,
which is the caller's to handle. An exec'd supervisor imports what the initializer
needs, once, and forks its runners from there.

:func:`contained` wraps a callable for a ``with`` block: its calls run in a
:class:`Worker` forked when the block starts, so the callable (a closure over the data
it works on) is never pickled. ``mlw bench`` runs every cell in a :class:`Worker`
(:mod:`mlw.experiments.executors`); ``mlw fit --cv`` runs its folds through
:func:`contained` (:func:`mlw.cross_validate` with ``isolate=True``).
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import signal
import socket
import struct
import sys
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

__all__ = ["ProcessDied", "Worker", "contained", "describe_exit", "die_with_parent"]

_MESSAGE = struct.Struct("!ci")  # supervisor -> caller: (b"P", runner pid) or (b"X", exit)
#: how long the caller waits for the supervisor to report a runner's end
_REPORT_SECONDS = 60.0


def describe_exit(exitcode: int) -> str:
    """How a process ended, from its exit code (``-N``: killed by signal ``N``):
    ``"was killed by SIGSEGV (signal 11)"``, ``"exited with code 3"``."""
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        else:
            name = f"{name} (signal {-exitcode})"
        hint = {signal.SIGSEGV: ": a crash in native code",
                signal.SIGBUS: ": a crash in native code",
                signal.SIGABRT: ": native code aborted",
                signal.SIGKILL: " (killed, or out of memory?)"}.get(-exitcode, "")
        return f"was killed by {name}{hint}"
    return f"exited with code {exitcode}"


class ProcessDied(RuntimeError):
    """The process running a call died before returning its result: ``exitcode`` is
    the negative signal number (killed by a signal) or the code it exited with."""

    def __init__(self, exitcode: int, what: str = "the worker process") -> None:
        self.exitcode = exitcode
        self.what = what
        super().__init__(f"{what} {describe_exit(exitcode)}")

    @property
    def signal_name(self) -> str | None:
        """``"SIGSEGV"`` when a signal killed the process, else ``None``."""
        if self.exitcode >= 0:
            return None
        try:
            return signal.Signals(-self.exitcode).name
        except ValueError:
            return f"signal {-self.exitcode}"


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (no orphaned workers)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _fork() -> int:
    if not hasattr(os, "fork"):  # pragma: no cover - Windows
        raise OSError("running a learner in a worker process needs os.fork")
    return os.fork()


class Worker:
    """A supervised child process running calls one at a time (see the module
    docstring). ``initializer(*initargs)`` runs in every runner before its first call.

    ``call(fn, *args)`` returns ``fn(*args)`` computed in the runner, re-raises what it
    raised, or raises :class:`ProcessDied` when the runner died; ``fn``, the arguments
    and the result travel by pickle. :meth:`submit` and :meth:`collect` split a call in
    two, so that several workers can run at once (wait on :attr:`connection`)."""

    def __init__(self, initializer: Callable[..., Any] | None = None,
                 initargs: Sequence[Any] = (), *, close_fds: Sequence[int] = (),
                 start: str = "fork") -> None:
        if start not in ("fork", "exec"):
            raise ValueError(f"start must be 'fork' or 'exec', got {start!r}")
        ctrl, theirs = socket.socketpair()
        self._proc: Any = None
        if start == "exec":
            self._proc = _exec_supervisor(theirs, initializer, tuple(initargs))
            pid = self._proc.pid
        else:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = _fork()
            if pid == 0:  # the supervisor
                code = 0
                try:
                    ctrl.close()
                    for fd in close_fds:
                        with contextlib.suppress(OSError):
                            os.close(fd)
                    _supervise(theirs, initializer, tuple(initargs))
                except BaseException:  # noqa: BLE001 - nothing may escape a forked child
                    code = 1
                finally:
                    os._exit(code)
        theirs.close()
        self.supervisor_pid = pid
        self.runner_pid: int | None = None
        self._ctrl = ctrl
        self._conn: Connection | None = None
        self._busy = False

    # -- the runner ----------------------------------------------------------------------
    def _start_runner(self) -> None:
        mine, theirs = socket.socketpair()
        try:
            socket.send_fds(self._ctrl, [b"start"], [theirs.fileno()])
        except OSError:
            mine.close()
            raise RuntimeError(f"the worker's supervisor (pid {self.supervisor_pid}) is "
                               f"gone (killed from outside?)") from None
        finally:
            theirs.close()
        kind, pid = self._report()
        if kind != b"P":  # pragma: no cover - the supervisor answers in order
            raise RuntimeError("the worker's supervisor answered out of order")
        self.runner_pid = pid
        self._conn = Connection(mine.detach())

    def _report(self) -> tuple[bytes, int]:
        if not wait([self._ctrl], timeout=_REPORT_SECONDS):
            raise RuntimeError(f"the worker's supervisor (pid {self.supervisor_pid}) did "
                               f"not answer in {_REPORT_SECONDS:.0f} s")
        data = self._ctrl.recv(_MESSAGE.size, socket.MSG_WAITALL)
        if len(data) != _MESSAGE.size:
            raise RuntimeError(f"the worker's supervisor (pid {self.supervisor_pid}) is "
                               f"gone (killed from outside?)")
        kind, value = _MESSAGE.unpack(data)
        return kind, value

    def _runner_ended(self) -> int:
        """The exit code of the runner that just closed its end (reported by the
        supervisor once it has reaped it)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self.runner_pid = None
        kind, code = self._report()
        return code if kind == b"X" else 1

    @property
    def alive(self) -> bool:
        """Whether the supervisor still answers (an idle worker's supervisor has
        nothing to say but the end of a runner; its end of input means it died)."""
        try:
            data = self._ctrl.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return True
        except OSError:
            return False
        return data != b""

    @property
    def connection(self) -> Connection:
        """Readable when the call in flight has finished (or its runner died)."""
        if self._conn is None:
            self._start_runner()
        assert self._conn is not None
        return self._conn

    # -- calls ---------------------------------------------------------------------------
    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Start ``fn(*args)`` in the runner (a fresh one if the last one died)."""
        if self._busy:
            raise RuntimeError("this worker is already running a call")
        if self._conn is not None and self._conn.poll(0):
            self._runner_ended()  # an idle runner says nothing: it died (killed from outside)
        for attempt in (0, 1):
            conn = self.connection
            try:
                conn.send((fn, args))
            except (BrokenPipeError, ConnectionResetError):
                self._runner_ended()  # it died while idle (killed from outside): again
                if attempt:
                    raise
                continue
            self._busy = True
            return

    def collect(self) -> Any:
        """The result of the call in flight (blocks until it is there)."""
        if not self._busy:
            raise RuntimeError("this worker is not running a call")
        conn = self.connection
        self._busy = False
        try:
            kind, value = conn.recv()
        except (EOFError, ConnectionResetError, OSError):
            raise ProcessDied(self._runner_ended()) from None
        if kind == "raised":
            raise value
        return value

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, computed in the runner."""
        self.submit(fn, *args)
        return self.collect()

    # -- ending --------------------------------------------------------------------------
    def close(self, *, kill: bool = False) -> None:
        """Stop the runner (at once with ``kill``, else once its call is done) and the
        supervisor, and reap them."""
        if kill and self.runner_pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self.runner_pid, signal.SIGKILL)
        if self._conn is not None:
            self._conn.close()  # an idle runner reads EOF and exits
            self._conn = None
        with contextlib.suppress(OSError):
            self._ctrl.shutdown(socket.SHUT_WR)  # the supervisor reads EOF and exits
        if kill:
            with contextlib.suppress(OSError):
                os.kill(self.supervisor_pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError, OSError):
            if self._proc is not None:
                self._proc.wait()
            else:
                os.waitpid(self.supervisor_pid, 0)
        self._ctrl.close()
        self.runner_pid = None

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close(kill=exc[0] is not None)


def _exec_supervisor(theirs: socket.socket, initializer: Callable[..., Any] | None,
                     initargs: tuple[Any, ...]) -> Any:
    """A supervisor started as a new Python process (no copy of the caller: for a
    caller with threads and connections of its own, such as a Dask worker)."""
    import base64
    import pickle
    import subprocess

    setup = base64.b64encode(pickle.dumps((initializer, initargs))).decode()
    code = "import sys, mlw.isolation as m; m._exec_main(int(sys.argv[1]), sys.argv[2])"
    return subprocess.Popen([sys.executable, "-c", code, str(theirs.fileno()), setup],
                            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)


def _exec_main(fd: int, setup: str) -> None:
    """The entry of an exec'd supervisor: import what the runners need (the
    initializer's module), then supervise."""
    import base64
    import pickle

    initializer, initargs = pickle.loads(base64.b64decode(setup))  # noqa: S301 - ours
    _supervise(socket.socket(fileno=fd), initializer, initargs)


def _supervise(ctrl: socket.socket, initializer: Callable[..., Any] | None,
               initargs: tuple[Any, ...]) -> None:
    """The supervisor's loop: on each ``start`` (with a socket), fork a runner on it,
    report its pid, wait for it, report its exit code; stop on end of input."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(ctrl, 16, 1)
        except OSError:
            return
        if msg != b"start" or not fds:
            for fd in fds:
                os.close(fd)
            return
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                ctrl.close()
                _run(fds[0], initializer, initargs)
            except BaseException:  # noqa: BLE001 - nothing may escape a forked child
                code = 1
            finally:
                os._exit(code)
        os.close(fds[0])
        ctrl.sendall(_MESSAGE.pack(b"P", pid))
        _, status = os.waitpid(pid, 0)
        ctrl.sendall(_MESSAGE.pack(b"X", os.waitstatus_to_exitcode(status)))


def _run(fd: int, initializer: Callable[..., Any] | None, initargs: tuple[Any, ...]) -> None:
    """The runner's loop: receive ``(fn, args)``, send back ``("ok", result)`` or
    ``("raised", exception)``; stop on end of input."""
    die_with_parent()
    conn = Connection(fd)
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            fn, args = conn.recv()
        except EOFError:
            return
        try:
            answer: tuple[str, Any] = ("ok", fn(*args))
        except BaseException as exc:  # noqa: BLE001 - the caller decides
            answer = ("raised", exc)
        try:
            conn.send(answer)
        except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot be pickled
            conn.send(("raised", RuntimeError(f"the worker could not send its result "
                                              f"back: {type(exc).__name__}: {exc}")))


#: the callables of the open :func:`contained` blocks, by key (a forked runner has them)
_CONTAINED: dict[int, Callable[..., Any]] = {}
_KEYS = itertools.count()


def _call_contained(key: int, *args: Any) -> Any:
    return _CONTAINED[key](*args)


@contextlib.contextmanager
def contained(fn: Callable[..., Any]) -> Iterator[Callable[..., Any]]:
    """Yield ``run(*args)``, which returns ``fn(*args)`` computed in a supervised child
    process (a :class:`Worker` forked when the block starts), or raises
    :class:`ProcessDied` when that process dies. ``fn`` itself is never pickled: the
    child is a copy of this process, closures and the data they hold included; only
    the arguments and the results travel.

    Examples
    --------
    >>> import os
    >>> with contained(lambda x: (x * 2, os.getpid())) as run:
    ...     value, pid = run(21)
    >>> value, pid != os.getpid()
    (42, True)
    """
    key = next(_KEYS)
    _CONTAINED[key] = fn
    try:
        with Worker() as worker:
            yield lambda *args: worker.call(_call_contained, key, *args)
    finally:
        _CONTAINED.pop(key, None)
