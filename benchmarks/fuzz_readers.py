"""The long run of the readers' fuzz suite: the targets of
``core/tests/fuzz_io.py`` (mutations of real files fed to the ARFF, Mulan XML, XC, CSV,
Parquet, compressed and model-file readers) for many more cases than CI runs, in
rounds of random examples; a failing round is shrunk by hypothesis, recorded, and the
run goes on. Prints the cases tried per target and what each got, and the failures.

    nice -n 10 python benchmarks/fuzz_readers.py --examples 2000 [--json out.json]

``--cli N`` runs the command-level suite instead (``tests/test_cli_fuzz.py``: generated
ARFF, Mulan XML, CSV, Parquet, XC, svmlight and model files, valid, truncated and
mutated, through ``mlw fit`` / ``mlw predict``, each valid file compared with a
reference reader) with N random examples per property instead of CI's 25 fixed ones:

    nice -n 10 python benchmarks/fuzz_readers.py --cli 500

``--examples`` is per target and per seed file. The address space is capped (``--max-gb``,
default 6) so a blow-up past the loader limits ends as a failure instead of swapping.

Each plan runs in a child process (this script with ``--plan NAME``), which writes every
case to a file before trying it: a reader that kills the process (polars aborts on a
failed allocation: SIGABRT, nothing Python can catch) is reported as a finding of that
plan, with the case that did it saved beside the results, and the run goes on.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "core" / "tests"))

from hypothesis import HealthCheck, given, settings  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=2000,
                        help="cases per target and seed file (default 2000)")
    parser.add_argument("--round", type=int, default=250, help="cases per hypothesis round")
    parser.add_argument("--max-gb", type=float, default=6.0, help="address-space cap (GiB)")
    parser.add_argument("--targets", default="arff,meka,xml,xc,csv,parquet,compressed,model")
    parser.add_argument("--json", type=Path, help="write the tally and failures here")
    parser.add_argument("--cli", type=int, metavar="N",
                        help="run the command-level suite with N examples per property")
    parser.add_argument("--plan", help=argparse.SUPPRESS)    # child: run this plan only
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.plan:
        return _child(args)
    if args.cli:
        return _cli_run(args)

    import fuzz_io as F

    tally = F.Tally()
    failures: list[dict[str, str]] = []
    wanted = set(args.targets.split(","))
    names = [n for n in _plan_names() if n.split("/")[0] in wanted]
    crashes = (args.json.parent if args.json else ROOT / "benchmarks" / "results")
    start_cpu, start_wall = _cpu(), time.time()
    per_plan: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="mlw-fuzz-long-") as tmp:
        for name in names:
            t0 = _cpu()
            result, last = Path(tmp) / "result.json", Path(tmp) / "result.json.last"
            result.unlink(missing_ok=True)
            last.unlink(missing_ok=True)
            proc = subprocess.run([sys.executable, __file__, "--plan", name, "--result",
                                   str(result), "--examples", str(args.examples), "--round",
                                   str(args.round), "--max-gb", str(args.max_gb)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if result.exists():
                done = json.loads(result.read_text())
                for row in done["tally"]:
                    tally.counts[(row["target"], row["outcome"])] += row["cases"]
                    tally.examples.setdefault((row["target"], row["outcome"]), row["example"])
                failures.extend(done["failures"])
            if proc.returncode < 0 or not result.exists():
                how = (f"killed by {signal.Signals(-proc.returncode).name}"
                       if proc.returncode < 0 else f"exit {proc.returncode}")
                tail = [ln for ln in proc.stderr.decode(errors="replace").splitlines()
                        if ln.strip() and not ln.startswith(" ")][:3]
                data = last.read_bytes() if last.exists() else b""
                saved = crashes / f"fuzz-crash-{name.replace('/', '-')}.bin"
                if data:
                    crashes.mkdir(parents=True, exist_ok=True)
                    saved.write_bytes(data)
                failures.append({"plan": name, "error": f"the process was {how}: "
                                 + " | ".join(tail), "input": repr(data),
                                 "saved": str(saved) if data else ""})
            per_plan[name] = _cpu() - t0
            print(f"{name}: {per_plan[name]:.1f} s CPU"
                  + ("" if proc.returncode >= 0 else f" ({failures[-1]['error'][:120]})"),
                  file=sys.stderr, flush=True)
    cpu, wall = _cpu() - start_cpu, time.time() - start_wall
    _report(tally, failures, cpu, wall, per_plan, args.json)
    return 1 if failures else 0


def _cli_run(args) -> int:
    """The command-level properties with ``--cli`` random examples each, in a pytest
    child under the address-space cap."""
    cap = int(args.max_gb * (1 << 30))
    env = {**os.environ, "MLW_FUZZ_EXAMPLES": str(args.cli)}
    start_cpu, start_wall = _cpu(), time.time()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(ROOT / "tests" / "test_cli_fuzz.py")], env=env, cwd=ROOT,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS,
                                                                (cap, cap)))
    cpu, wall = _cpu() - start_cpu, time.time() - start_wall
    print(f"command-level fuzz suite, {args.cli} examples per property: exit "
          f"{proc.returncode}, {cpu:.0f} s CPU ({wall:.0f} s wall, load "
          f"{os.getloadavg()[0]:.1f})")
    return proc.returncode


def _cpu() -> float:
    """CPU time of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _plan_names() -> list[str]:
    import fuzz_io as F

    names = [f"arff/{n}" for n in sorted(F.ARFF_SEED_NAMES)] + ["meka/emotions"]
    names += [f"xml/{n}" for n in sorted(F.XML_SEED_NAMES)]
    return names + ["xc/flags", "csv/flags", "parquet/flags", "parquet/uncompressed",
                    "compressed/gz", "compressed/bz2", "model/damaged",
                    "model/forged-checksum"]


def _child(args) -> int:
    """Run one plan in this process; write its tally and failures to ``--result``."""
    cap = int(args.max_gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    import fuzz_io as F

    folder = Path(tempfile.mkdtemp(prefix="mlw-fuzz-plan-"))
    seeds = F.make_seeds(folder)
    tally = F.Tally()
    targets = F.Targets(seeds, tally)
    failures: list[dict[str, str]] = []
    last = args.result.with_name(args.result.name + ".last")

    plans: dict[str, tuple[object, object]] = {}  # name -> (strategy, runner)
    for name, seed in sorted(seeds.arff.items()):
        plans[f"arff/{name}"] = (F.mutations(seed), targets.arff)
    meka = seeds.arff["emotions"].replace(b"@relation emotions", b"@relation 'emotions: -C -6'")
    plans["meka/emotions"] = (F.mutations(meka), targets.arff_meka)
    for name, (arff, xml) in sorted(seeds.xml.items()):
        plans[f"xml/{name}"] = (F.mutations(xml), lambda d, a=arff: targets.xml(d, a))
    plans["xc/flags"] = (F.mutations(seeds.xc), targets.xc)
    plans["csv/flags"] = (F.mutations(seeds.csv), targets.csv)
    plans["parquet/flags"] = (F.mutations(seeds.parquet, max_ops=2), targets.parquet)
    # uncompressed: the page headers and levels are bytes a mutation reaches directly
    plans["parquet/uncompressed"] = (F.mutations(seeds.parquet_plain, max_ops=2),
                                     targets.parquet)
    plans["compressed/gz"] = (F.mutations(seeds.gz, max_ops=2),
                              lambda d: targets.compressed(d, ".gz"))
    plans["compressed/bz2"] = (F.mutations(seeds.bz2, max_ops=2),
                               lambda d: targets.compressed(d, ".bz2"))

    def record(runner):
        def run(data: bytes) -> None:
            last.write_bytes(data)  # left behind if the reader kills the process
            runner(data)
        return run

    if args.plan.startswith("model/"):
        forge = args.plan == "model/forged-checksum"
        with F.fuzz_plugin():
            header, payload = F.model_seed(folder)
            _run(args.plan, F.mutations(payload), record(
                lambda d: F.check_model("model", folder, F.model_file(header, d, forge=forge),
                                        tally)), args, failures)
    else:
        strategy, runner = plans[args.plan]
        _run(args.plan, strategy, record(runner), args, failures)
    args.result.write_text(json.dumps({"tally": tally.as_rows(), "failures": failures}))
    return 0


def _report(tally, failures, cpu, wall, per_plan, out) -> None:
    import fuzz_io as F

    print(f"\n{tally.total()} cases in {cpu:.0f} s CPU ({wall:.0f} s wall, load "
          f"{os.getloadavg()[0]:.1f}); peak RSS of a plan {F.rss_mb(children=True):.0f} MB; "
          f"{len(failures)} failure(s)")
    for target in sorted({t for t, _ in tally.counts}):
        print(f"\n{target}: {tally.total(target)} cases")
        rows = sorted(((c, o) for (t, o), c in tally.counts.items() if t == target),
                      reverse=True)
        for count, outcome in rows:
            print(f"  {count:7d}  {outcome}")
    for f in failures:
        print(f"\nFAILURE {f['plan']}: {f['error']}\n  input: {f['input'][:300]}"
              + (f"\n  saved: {f['saved']}" if f.get("saved") else ""))
    if out:
        out.write_text(json.dumps({"cases": tally.total(), "cpu_seconds": cpu,
                                   "wall_seconds": wall, "per_plan_cpu": per_plan,
                                   "tally": tally.as_rows(), "failures": failures},
                                  indent=1))


def _run(name, strategy, runner, args, failures) -> None:
    import fuzz_io as F

    rounds = max(1, args.examples // args.round)
    last: dict[str, bytes] = {}

    def body(data: bytes) -> None:
        last["data"] = data
        runner(data)

    for _ in range(rounds):
        test = settings(max_examples=args.round, deadline=None, database=None,
                        suppress_health_check=list(HealthCheck))(given(strategy)(body))
        faulthandler.dump_traceback_later(600, exit=True)
        try:
            test()
        except F.FuzzFailure as exc:
            failures.append({"plan": name, "error": str(exc).splitlines()[0],
                             "input": repr(last.get("data", b""))})
        finally:
            faulthandler.cancel_dump_traceback_later()


if __name__ == "__main__":
    sys.exit(main())
