"""What the paper-reproduction wrappers (bench_lacovac_quality.py, bench_mctbn_quality.py,
bench_xdcc_quality.py) share: the same options over a config of examples/papers/, the same
run through the harness, then the script's own table. Not a script itself."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def config_arguments(description: str | None, default_out: str,
                     folds_help: str = "run only these folds, e.g. 0,1"
                     ) -> argparse.ArgumentParser:
    """The options every wrapper takes; a script adds its own before parsing."""
    ap = argparse.ArgumentParser(description=(description or "").splitlines()[0])
    ap.add_argument("--datasets")
    ap.add_argument("--learners")
    ap.add_argument("--folds", help=folds_help)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path(default_out))
    ap.add_argument("--table", action="store_true")
    return ap


def run_config(exp: Any, args: argparse.Namespace, table: Callable[[Path], str],
               adjust: Callable[[Any], Any] | None = None) -> int:
    """``--table``: print the table of ``args.out``. Otherwise restrict ``exp`` to the
    datasets, learners and folds asked for, ``adjust`` it, run it into ``args.out``
    (resuming what is there) and print the table; exit 1 if a cell failed."""
    if args.table:
        print(table(args.out))
        return 0
    from mlw.experiments import run_experiment

    exp = exp.with_overrides(
        datasets=args.datasets.split(",") if args.datasets else None,
        learners=args.learners.split(",") if args.learners else None,
        only_folds=[int(f) for f in args.folds.split(",")] if args.folds else None)
    if adjust is not None:
        exp = adjust(exp)
    summary = run_experiment(exp, args.out, jobs=args.jobs)
    print(f"{summary.ran} cells run, {summary.skipped} skipped, {len(summary.errors)} failed; "
          f"results in {args.out}", file=sys.stderr)
    print(table(args.out))
    return 1 if summary.errors else 0
