"""The long run of the readers' fuzz suite (issue 17): the targets of
``core/tests/fuzz_io.py`` (mutations of real files fed to the ARFF, Mulan XML, XC, CSV,
Parquet, compressed and model-file readers) for many more cases than CI runs, in
rounds of random examples; a failing round is shrunk by hypothesis, recorded, and the
run goes on. Prints the cases tried per target and what each got, and the failures.

    nice -n 10 python benchmarks/fuzz_readers.py --examples 2000 [--json out.json]

``--examples`` is per target and per seed file. The address space is capped (``--max-gb``,
default 6) so a blow-up past the loader limits ends as a failure instead of swapping.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import resource
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
    args = parser.parse_args()

    cap = int(args.max_gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    import fuzz_io as F

    folder = Path(tempfile.mkdtemp(prefix="mlw-fuzz-long-"))
    seeds = F.make_seeds(folder)
    tally = F.Tally()
    targets = F.Targets(seeds, tally)
    failures: list[dict[str, str]] = []
    wanted = set(args.targets.split(","))

    plans: list[tuple[str, object, object]] = []  # (name, strategy, runner)
    for name, seed in sorted(seeds.arff.items()):
        plans.append((f"arff/{name}", F.mutations(seed), targets.arff))
    meka = seeds.arff["emotions"].replace(b"@relation emotions", b"@relation 'emotions: -C -6'")
    plans.append(("meka/emotions", F.mutations(meka), targets.arff_meka))
    for name, (arff, xml) in sorted(seeds.xml.items()):
        plans.append((f"xml/{name}", F.mutations(xml), lambda d, a=arff: targets.xml(d, a)))
    plans.append(("xc/flags", F.mutations(seeds.xc), targets.xc))
    plans.append(("csv/flags", F.mutations(seeds.csv), targets.csv))
    plans.append(("parquet/flags", F.mutations(seeds.parquet, max_ops=2), targets.parquet))
    plans.append(("compressed/gz", F.mutations(seeds.gz, max_ops=2),
                  lambda d: targets.compressed(d, ".gz")))
    plans.append(("compressed/bz2", F.mutations(seeds.bz2, max_ops=2),
                  lambda d: targets.compressed(d, ".bz2")))

    start_cpu, start_wall = time.process_time(), time.time()
    per_plan: dict[str, float] = {}
    for name, strategy, runner in plans:
        if name.split("/")[0] not in wanted:
            continue
        t0 = time.process_time()
        _run(name, strategy, runner, args, failures)
        per_plan[name] = time.process_time() - t0
        print(f"{name}: {time.process_time() - t0:.1f} s CPU", file=sys.stderr, flush=True)
    if "model" in wanted:
        t0 = time.process_time()
        with F.fuzz_plugin():
            header, payload = F.model_seed(folder)
            for forge in (False, True):
                label = "model/" + ("forged-checksum" if forge else "damaged")
                _run(label, F.mutations(payload),
                     lambda d, f=forge: F.check_model("model", folder,
                                                      F.model_file(header, d, forge=f), tally),
                     args, failures)
        per_plan["model"] = time.process_time() - t0
    cpu, wall = time.process_time() - start_cpu, time.time() - start_wall

    print(f"\n{tally.total()} cases in {cpu:.0f} s CPU ({wall:.0f} s wall, load "
          f"{os.getloadavg()[0]:.1f}); peak RSS {F.rss_mb():.0f} MB; "
          f"{len(failures)} failure(s)")
    for target in sorted({t for t, _ in tally.counts}):
        print(f"\n{target}: {tally.total(target)} cases")
        rows = sorted(((c, o) for (t, o), c in tally.counts.items() if t == target),
                      reverse=True)
        for count, outcome in rows:
            print(f"  {count:7d}  {outcome}")
    for f in failures:
        print(f"\nFAILURE {f['plan']}: {f['error']}\n  input: {f['input'][:300]}")
    if args.json:
        args.json.write_text(json.dumps({"cases": tally.total(), "cpu_seconds": cpu,
                                         "wall_seconds": wall, "per_plan_cpu": per_plan,
                                         "tally": tally.as_rows(), "failures": failures},
                                        indent=1))
    return 1 if failures else 0


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
