"""Registered learners, each fitted in a process of its own, in several orders on fresh
kernel caches: no run may die of a signal, and a run on a filled cache predicts exactly
what the first run did.

The order in which processes fill the cache decides what each one compiles and what it
loads (a kernel compiled in a process that loaded its callee from the cache is the case
numba saves wrongly, numba/numba#8578). The full matrix compiles every kernel three
times, so a CI run takes a seed-chosen subset of the learners: ``MLW_JIT_ORDER_SEED``
replays a run (the seed is in every failure message) and ``MLW_JIT_ORDER_LEARNERS`` picks
the learners (``all``, or names separated by commas).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import mlw

pytestmark = [
    pytest.mark.pipeline,
    pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"),
                       reason="nothing is compiled or cached without the JIT"),
]

#: Learners fitted per CI run (besides the fixed epcc -> pcc case below).
SUBSET = 3

FIT = r"""
import hashlib, json, sys, warnings

import numpy as np

import mlw

warnings.simplefilter("ignore")
name = sys.argv[1]
train = mlw.load_dataset("emotions", split="train")
test = mlw.load_dataset("emotions", split="test")
model = mlw.get_learner(name, seed=0).fit(train.X[:120], train.Y[:120])
X = test.X[:40]
pred = np.asarray(model.predict(X), dtype=np.uint8)
digest = {"predict": hashlib.sha256(pred.tobytes()).hexdigest()}
if hasattr(model, "predict_proba"):
    proba = np.ascontiguousarray(model.predict_proba(X), dtype=np.float64)
    digest["proba"] = hashlib.sha256(proba.tobytes()).hexdigest()
print(json.dumps(digest))
"""


def fit(name: str, cache: Path, context: str) -> dict[str, str]:
    """Fit ``name`` in a new process on the kernel cache ``cache``; its digests."""
    env = dict(os.environ, MLW_CACHE_DIR=str(cache), NUMBA_NUM_THREADS="2")
    proc = subprocess.run([sys.executable, "-c", FIT, name], env=env, capture_output=True,
                          text=True, timeout=1800)
    if proc.returncode < 0:
        pytest.fail(f"{name} killed by {signal.Signals(-proc.returncode).name} ({context})\n"
                    f"{proc.stderr[-2000:]}")
    assert proc.returncode == 0, f"{name} failed ({context})\n{proc.stderr[-2000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def chosen() -> tuple[int, list[str]]:
    names = sorted(mlw.list_learners())
    seed = int(os.environ.get("MLW_JIT_ORDER_SEED") or random.SystemRandom().randrange(10**6))
    wanted = os.environ.get("MLW_JIT_ORDER_LEARNERS", "").strip()
    if wanted == "all":
        return seed, names
    if wanted:
        return seed, [n.strip() for n in wanted.split(",") if n.strip()]
    return seed, sorted(random.Random(seed).sample(names, SUBSET))


def test_a_cached_pcc_after_epcc_never_crashes(tmp_path: Path) -> None:
    """The sequence that used to end in a segmentation fault on every later run:
    epcc fills the cache with its parallel kernel, pcc compiles the cached caller, and
    the next pcc loads that caller."""
    cache = tmp_path / "cache"
    fit("epcc", cache, "epcc first")
    first = fit("pcc", cache, "pcc compiling its caller of the cached epcc kernel")
    for attempt in range(2):
        assert fit("pcc", cache, f"pcc from the cache, run {attempt + 2}") == first


def test_every_order_of_learners_gives_the_same_predictions(tmp_path: Path) -> None:
    seed, names = chosen()
    shuffled = names[:]
    random.Random(seed).shuffle(shuffled)
    orders = {"listed": names, "reversed": names[::-1], "shuffled": shuffled}
    context = f"MLW_JIT_ORDER_SEED={seed}, learners {','.join(names)}"
    first: dict[str, dict[str, str]] = {}
    for label, order in orders.items():
        cache = tmp_path / label
        for name in order:
            got = fit(name, cache, f"{label} order {order}, {context}")
            assert first.setdefault(name, got) == got, f"{name}: {label} order, {context}"
        if label == "shuffled":  # then every learner twice more on the filled cache
            for name in order * 2:
                got = fit(name, cache, f"again on the filled cache, {context}")
                assert got == first[name], f"{name} changed on a filled cache, {context}"


def test_fit_and_warmup_say_where_kernels_are_kept_and_clear_empties_it(
        tmp_path: Path) -> None:
    """A first ``mlw fit`` says it compiles and where the result is kept; ``mlw
    warmup --clear`` empties that folder, after which the next fit compiles again."""
    mlw_cmd = Path(sys.executable).with_name("mlw")
    env = dict(os.environ, MLW_CACHE_DIR=str(tmp_path / "cache"), NUMBA_NUM_THREADS="1")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([str(mlw_cmd), *args], env=env, capture_output=True,
                              text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr
        return proc

    kept = str(tmp_path / "cache" / "kernels")
    first = cli("fit", "--learner", "br", "--json")
    assert "compiling numba kernels" in first.stderr and kept in first.stderr
    assert json.loads(first.stdout)["compile_seconds"] > 0
    second = cli("fit", "--learner", "br", "--json")
    assert "compiling" not in second.stderr
    assert json.loads(second.stdout)["metrics"] == json.loads(first.stdout)["metrics"]
    cleared = cli("warmup", "--clear", "--json")
    report = json.loads(cleared.stdout)
    assert report["cleared"] == kept and report["files"] > 0
    assert not (tmp_path / "cache" / "kernels").exists()
    assert "compiling numba kernels" in cli("fit", "--learner", "br").stderr
