"""Start-up cost of mlw, measured in fresh processes (the goals: `import mlw`
under 0.5 s, `mlw --help` under 0.3 s), and of `mlw list-plugins`, which runs every
installed plugin's registration hooks (cheap registration).

    python benchmarks/bench_cli_startup.py [--runs 7]

Each command runs --runs times in a new interpreter; the table gives the median wall
time and the median CPU time of the child process (user + sys, from os.wait4), with the
load average, since the machine may be shared. The baseline row is a bare interpreter
(`python -c pass`), so the difference is what mlw adds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

GOALS = {"import mlw": 0.5, "mlw --help": 0.3}


def measure(argv: list[str], runs: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        cpus.append(usage.ru_utime + usage.ru_stime)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(argv)} failed")
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    mlw_cmd = shutil.which("mlw") or "mlw"
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import mlw": [sys.executable, "-c", "import mlw"],
        "mlw --help": [mlw_cmd, "--help"],
        "mlw list-plugins": [mlw_cmd, "list-plugins"],
    }
    print(f"load average before: {os.getloadavg()[0]:.2f}; {args.runs} runs each (medians)")
    print(f"{'command':<20} {'wall s':>8} {'cpu s':>8} {'goal s':>8}")
    for name, argv in commands.items():
        wall, cpu = measure(argv, args.runs)
        goal = GOALS.get(name)
        print(f"{name:<20} {wall:8.3f} {cpu:8.3f} {goal if goal else '':>8}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
