"""The long version of the kill test (core/tests/test_core_experiments_store.py):
kill -9 a real ``mlw bench`` run at random moments, many times, and check that nothing
finished is ever lost or corrupted.

    nice -n 10 python benchmarks/bench_cli_kill.py [--kills 50] [--jobs 1,2] [--seed 0]

Each round starts ``mlw bench`` on the same results file (40 cells: the template
learner and BR on emotions and flags, 10 folds), then either (one round in five) waits
a random 0-3 s, killing it during start-up, or waits for its next finished cell and
then a random 0-1.5 s (so kills land while a cell runs, while a part file or the
compacted file is being written), sends SIGKILL to the ``mlw`` process only (its
worker processes must die with it), and checks: the results read, every record is
``ok``, the number of records never shrinks, no worker process outlives the kill.
When all cells are done the results file is moved aside and the run starts over,
until ``--kills`` kills. At the end the last complete run is compared with an
uninterrupted one, value for value.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _shared import MULAN

CONFIG = f"""
[experiment]
name = "kill"
metrics = ["f1_micro", "hamming_loss"]
folds = 10
datasets = ["emotions", "{MULAN / 'flags'}"]

[learners.centroid]
learner = "template_centroid"

[learners.br]
learner = "br"
"""


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def main() -> int:
    from mlw.experiments import load_config, read_results, run_experiment

    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    jobs = [int(j) for j in args.jobs.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="mlw-kill-"))
    config = tmp / "kill.toml"
    config.write_text(CONFIG)
    out = tmp / "r.parquet"
    kills = rounds = complete = 0
    seen = 0
    t0 = time.time()
    while kills < args.kills:
        n = rng.choice(jobs)
        proc = subprocess.Popen([sys.executable, "-m", "mlw_cli", "bench", "--config",
                                 str(config), "--out", str(out), "--jobs", str(n)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        parts = Path(f"{out}.parts")
        before = len(list(parts.glob("*.parquet"))) if parts.is_dir() else 0
        if rng.random() < 0.2:  # during start-up (imports, checks, the first cell)
            time.sleep(rng.uniform(0.0, 3.0))
        else:  # while cells finish: after the next record, at a random moment
            deadline = time.time() + 120
            while proc.poll() is None and time.time() < deadline and (
                    len(list(parts.glob("*.parquet"))) if parts.is_dir() else 0) == before:
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 1.5))
        workers = _children(proc.pid)
        finished = proc.poll() is not None
        if not finished:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
        deadline = time.time() + 30
        while any(_alive(w) for w in workers) and time.time() < deadline:
            time.sleep(0.1)
        orphans = [w for w in workers if _alive(w)]
        if orphans:
            print(f"FAIL: worker processes {orphans} outlived the kill")
            return 1
        have = out.exists() or Path(f"{out}.parts").exists()
        df = read_results(out) if have else None
        count = 0 if df is None else df.height
        if df is not None and set(df["status"].to_list()) - {"ok"}:
            print(f"FAIL: records that are not ok: {set(df['status'].to_list())}")
            return 1
        if count < seen:
            print(f"FAIL: the results shrank from {seen} to {count} records")
            return 1
        seen = count
        rounds += 1
        if count == 40:
            complete += 1
            last = df
            # set the finished results aside (the main file, and any parts a kill after
            # the last cell left uncompacted), and start over
            done_dir = tmp / f"complete-{complete}"
            done_dir.mkdir()
            for path in (out, Path(f"{out}.parts")):
                if path.exists():
                    path.rename(done_dir / path.name)
            seen = 0
        print(f"round {rounds}: jobs {n}, {'finished' if finished else 'killed'}, "
              f"{count}/40 records", flush=True)
    reference = run_experiment(load_config(config), tmp / "reference.parquet").results
    if complete:
        key = ["learner", "dataset", "fold"]
        a = last.sort(key)["metric_f1_micro"].to_list()
        b = reference.sort(key)["metric_f1_micro"].to_list()
        if a != b:
            print("FAIL: a killed-and-resumed run differs from an uninterrupted one")
            return 1
    print(f"{kills} kills over {rounds} rounds, {complete} complete runs equal to an "
          f"uninterrupted one, no record lost or damaged, no orphaned worker "
          f"({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
