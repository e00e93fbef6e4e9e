"""The JIT layer's cache (mlw.jit): no order of runs, in one process or several at once,
and no damaged, foreign or unwritable cache may crash a program or change a result.

Every run that touches the on-disk cache is a separate Python process (numba keeps
compiled code in memory for the life of a process), on a module of small kernels
written to a temporary folder and a cache folder of its own (``MLW_CACHE_DIR``).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"),
    reason="nothing is compiled or cached without the JIT")

KERNELS = '''
import numpy as np
from numba import prange

from mlw.jit import kernel


@kernel(parallel=True)
def scaled(a, s):
    out = np.zeros_like(a)
    for i in prange(a.shape[0]):
        out[i] = a[i] * s
    return out


@kernel
def shifted(a):
    """A cached kernel calling a parallel one: numba/numba#8578's shape."""
    return scaled(a, 2.0) + 1.0


@kernel
def total(a):
    t = a.dtype.type(0)
    for x in a:
        t += x
    return t
'''

RUNNER = '''
import json, os, sys, time
from pathlib import Path

sys.path.insert(0, sys.argv[1])
barrier = sys.argv[3] if len(sys.argv) > 3 else ""
if barrier:  # every process waits here until all have arrived, then all compile at once
    folder, n = barrier.split(":")
    Path(folder, str(os.getpid())).touch()
    deadline = time.time() + 120
    while len(os.listdir(folder)) < int(n) and time.time() < deadline:
        time.sleep(0.01)
import numpy as np
import kmod

calls = {
    "scaled": lambda: kmod.scaled(np.arange(7.0), 3.0).tolist(),
    "shifted": lambda: kmod.shifted(np.arange(7.0)).tolist(),
    "total": lambda: float(kmod.total(np.arange(7.0))),
    "total_int": lambda: int(kmod.total(np.arange(7, dtype=np.int64))),
    "total_f32": lambda: float(kmod.total(np.arange(7, dtype=np.float32))),
}
print(json.dumps({name: calls[name]() for name in sys.argv[2].split(",")}))
'''

EXPECTED = {"scaled": [0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0],
            "shifted": [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0],
            "total": 21.0, "total_int": 21, "total_f32": 21.0}


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    """``(module folder, cache folder)``: the kernels module and a fresh cache."""
    mod = tmp_path / "pkg"
    mod.mkdir()
    (mod / "kmod.py").write_text(KERNELS)
    (tmp_path / "runner.py").write_text(RUNNER)
    return mod, tmp_path / "cache"


def start(project: tuple[Path, Path], calls: str, barrier: str = "",
          **env: str) -> subprocess.Popen[str]:
    mod, cache = project
    environ = dict(os.environ, MLW_CACHE_DIR=str(cache), NUMBA_NUM_THREADS="2",
                   PYTHONDONTWRITEBYTECODE="1", **env)
    args = [sys.executable, str(mod.parent / "runner.py"), str(mod), calls]
    if barrier:
        args.append(barrier)
    return subprocess.Popen(args, env=environ, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str]) -> tuple[dict, list[str]]:
    """The run's results and its ``mlw:`` stderr lines; a signal or an error fails."""
    out, err = proc.communicate(timeout=300)
    if proc.returncode < 0:
        pytest.fail(f"killed by {signal.Signals(-proc.returncode).name}\n{err}")
    assert proc.returncode == 0, err
    return json.loads(out), [line for line in err.splitlines() if line.startswith("mlw:")]


def run(project: tuple[Path, Path], calls: str, **env: str) -> tuple[dict, list[str]]:
    return finish(start(project, calls, **env))


def cache_files(cache: Path, suffix: str) -> list[Path]:
    return sorted(p for p in cache.rglob(f"*{suffix}") if p.is_file())


def test_cached_caller_of_a_parallel_kernel_reloads_in_a_new_process(project) -> None:
    """numba/numba#8578: the callee cached first, then the caller compiled (in a process
    that loaded the callee) and reloaded; with numba's own cache the third run jumps to
    address 0. Every run here gives the same numbers and exits normally."""
    first, _ = run(project, "scaled")
    assert first == {"scaled": EXPECTED["scaled"]}
    for _ in range(3):
        again, notes = run(project, "shifted")
        assert again == {"shifted": EXPECTED["shifted"]} and notes == []
    both, _ = run(project, "shifted,scaled")
    assert both == {k: EXPECTED[k] for k in ("shifted", "scaled")}


def test_processes_compiling_the_same_kernels_at_once_then_one_loading(
        project, tmp_path: Path) -> None:
    """Two processes meet at a barrier on a cold cache and compile the same kernels
    (several signatures of one function, so both write its index at once); a third
    loads what they left. No crash, the same results, and every entry is a hit."""
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    calls = "total,total_int,total_f32,shifted,scaled"
    procs = [start(project, calls, barrier=f"{barrier}:2") for _ in range(2)]
    results = [finish(p)[0] for p in procs]
    assert results[0] == results[1] == {k: EXPECTED[k] for k in calls.split(",")}
    third, notes = run(project, calls)
    assert third == results[0] and notes == []
    # one data file per signature: nothing was written twice under two names (scaled
    # twice: called from Python, and by shifted in its form for kernel callers)
    assert len(cache_files(project[1], ".nbc")) == 6


@pytest.mark.parametrize("damage", ["truncated", "bit-flipped"])
def test_a_damaged_cache_file_costs_one_line_and_a_recompile(project, damage) -> None:
    run(project, "total")
    (data,) = cache_files(project[1], ".nbc")
    blob = bytearray(data.read_bytes())
    if damage == "truncated":
        blob = blob[: len(blob) // 2]
    else:
        for i in range(len(blob) // 3, len(blob) // 3 + 16):
            blob[i] ^= 0xFF
    data.write_bytes(bytes(blob))
    again, notes = run(project, "total")
    assert again == {"total": EXPECTED["total"]}
    assert len(notes) == 1 and "kernel cache file" in notes[0] and "recompiling" in notes[0]
    # the recompiled kernel was saved again: the next run loads it silently
    assert run(project, "total") == ({"total": EXPECTED["total"]}, [])


def test_a_truncated_index_costs_one_line_and_a_recompile(project) -> None:
    run(project, "total")
    (index,) = cache_files(project[1], ".nbi")
    index.write_bytes(index.read_bytes()[:20])
    again, notes = run(project, "total")
    assert again == {"total": EXPECTED["total"]}
    assert len(notes) == 1 and "index" in notes[0]


def test_a_cache_written_by_another_numpy_is_recompiled(project) -> None:
    """The index records the versions it was written under; one another numpy wrote
    (simulated by editing what the index records) is not trusted."""
    from mlw.jit._cache import seal, unseal

    run(project, "total")
    (index,) = cache_files(project[1], ".nbi")
    version, stamp, overloads = unseal(index.read_bytes())
    index.write_bytes(seal(({**version, "numpy": "1.0.0"}, stamp, overloads)))
    again, notes = run(project, "total")
    assert again == {"total": EXPECTED["total"]}
    assert len(notes) == 1 and "numpy 1.0.0" in notes[0]


def test_a_data_file_holding_another_signature_is_refused(project) -> None:
    """An index naming the data file of another signature (what two unsynchronised
    writers can leave, numba/numba#4807 and #10128) is never linked and run."""
    run(project, "total,total_int")
    first, second = cache_files(project[1], ".nbc")
    first.write_bytes(second.read_bytes())
    again, notes = run(project, "total,total_int")
    assert again == {k: EXPECTED[k] for k in ("total", "total_int")}
    assert len(notes) == 1 and "another compilation" in notes[0]


def test_an_unwritable_cache_folder_runs_and_says_where(project, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    cache = blocker / "cache"  # below a file: no user, root included, can create it
    results, notes = run((project[0], cache), "shifted,total")
    assert results == {k: EXPECTED[k] for k in ("shifted", "total")}
    assert len(notes) == 1 and str(cache) in notes[0] and "in memory" in notes[0]


def test_a_read_only_package_folder_runs_and_caches_elsewhere(project) -> None:
    mod, cache = project
    before = sorted(p.name for p in mod.iterdir())
    mod.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        assert run(project, "shifted") == ({"shifted": EXPECTED["shifted"]}, [])
        assert run(project, "shifted") == ({"shifted": EXPECTED["shifted"]}, [])
    finally:
        mod.chmod(stat.S_IRWXU)
    assert sorted(p.name for p in mod.iterdir()) == before
    assert cache_files(cache, ".nbc")


def test_cache_root_follows_the_environment(monkeypatch, tmp_path: Path) -> None:
    from mlw.jit import cache_root

    monkeypatch.delenv("MLW_CACHE_DIR", raising=False)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert cache_root() == tmp_path / "numba" / "mlw"
    monkeypatch.setenv("MLW_CACHE_DIR", str(tmp_path / "own"))
    assert cache_root() == tmp_path / "own"
    monkeypatch.delenv("MLW_CACHE_DIR")
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert cache_root() == tmp_path / "xdg" / "mlw"


def test_clear_cache_empties_only_the_kernels_folder(project, monkeypatch) -> None:
    from mlw.jit import clear_cache

    run(project, "total")
    cache = project[1]
    (cache / "keep.txt").write_text("not ours")
    monkeypatch.setenv("MLW_CACHE_DIR", str(cache))
    folder, removed = clear_cache()
    assert folder == cache / "kernels" and removed >= 2 and not folder.exists()
    assert (cache / "keep.txt").read_text() == "not ours"
    assert clear_cache() == (folder, 0)


def test_sealed_files_refuse_any_change() -> None:
    from mlw.jit._cache import CorruptCacheFile, seal, unseal

    blob = seal({"a": [1, 2, 3]})
    assert unseal(blob) == {"a": [1, 2, 3]}
    for bad in (blob[:-1], blob[:10], b"", blob[:-1] + bytes([blob[-1] ^ 1]),
                b"numba" + blob[5:]):
        with pytest.raises(CorruptCacheFile):
            unseal(bad)


def test_kernel_accepts_numba_options_and_signatures() -> None:
    import numpy as np

    from mlw.jit import kernel

    @kernel("float64(float64[::1])", cache=False)
    def first(a):
        return a[0]

    @kernel(fastmath=True, cache=False)
    def add(a, b):
        return a + b

    assert first(np.array([2.5, 1.0])) == 2.5
    assert add(1.0, 2.0) == 3.0
    assert len(first.signatures) == 1
    with pytest.raises(TypeError):
        first(np.array([1, 2]))  # compilation disabled after the given signature
    assert textwrap.dedent(KERNELS).count("@kernel") == 3


def test_every_kernel_of_the_repository_goes_through_the_layer() -> None:
    """A bare ``@njit``/``@jit`` in a package of this repository would bypass the cache's
    safety (and its location): kernels use :func:`mlw.jit.kernel`."""
    import re

    root = Path(__file__).resolve().parents[2]
    bare = re.compile(r"^\s*(@|\w+\s*=\s*)(numba\.)?n?jit\b|from numba import[^\n]*\bn?jit\b",
                      re.MULTILINE)
    sources = [*root.glob("core/src/**/*.py"), *root.glob("plugins/*/src/**/*.py"),
               *root.glob("cli/src/**/*.py")]
    offenders = [str(p.relative_to(root)) for p in sources
                 if "mlw/jit/" not in p.as_posix() and bare.search(p.read_text())]
    assert sources and offenders == []


def test_compiler_flags_compare_and_hash_as_numba_does() -> None:
    """The layer's faster comparison of numba's compiler flags (the keys of numba's
    overload caches) gives numba's own answers: equal exactly when every option's
    value is, an option set to its default included, and one hash per class."""
    import itertools

    from numba.core.compiler import Flags

    import mlw.jit._dispatcher  # noqa: F401 - installs the comparison

    assert Flags.__eq__.__module__ == "mlw.jit._dispatcher"  # installed on this numba
    def numba_equal(a: Flags, b: Flags) -> bool:
        return {k: getattr(a, k) for k in a.options} == {k: getattr(b, k) for k in b.options}

    settings = [{}, {"nrt": True}, {"nrt": False}, {"no_cpython_wrapper": True},
                {"nrt": True, "no_cpython_wrapper": True}, {"boundscheck": True},
                {"fastmath": True}, {"nrt": True, "error_model": "numpy"}]
    flags = []
    for s in settings:
        f = Flags()
        for k, v in s.items():
            setattr(f, k, v)
        flags.append(f)
    for a, b in itertools.product(flags, repeat=2):
        assert (a == b) == numba_equal(a, b)
        assert hash(a) == hash(tuple(sorted(a.options)))
    assert Flags() == flags[2]  # nrt=False is numba's default: equal to nothing set
    assert Flags() != flags[1]
