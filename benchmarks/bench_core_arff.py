"""ARFF parsing speed: mlw's loader against liac-arff on the same decompressed text.

Decompresses the file once (default: MEKA's Imdb.arff.bz2, 120,919 sparse rows), then
times, in the same process and run:

* mlw: ``mlw.io.arff.loads_arff(raw_bytes)`` -> a Dataset with CSR X and CSR Y
  (header, tokenising, label split, CSR building and validation all included);
* liac-arff: ``arff.loads(text, return_type=arff.COO)`` for sparse files (its fastest
  mode: triplets only, no matrix built, text already decoded) or ``arff.DENSE``.

Each side runs ``--repeat`` times after one untimed warm-up of mlw (numba compilation
is cached on disk; the warm-up only loads it); the best time counts. Prints wall-clock
and CPU (process) times and both ratios: on a shared machine the CPU ratio is the
steadier one. Usage::

    python benchmarks/bench_core_arff.py [--file PATH] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import resource
import sys
import time
from pathlib import Path

from _shared import SHARED_DATASETS

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = SHARED_DATASETS / "meka" / "Imdb.arff.bz2"


def _decompress(path: Path) -> bytes:
    if path.suffix == ".bz2":
        return bz2.open(path, "rb").read()
    if path.suffix == ".gz":
        return gzip.open(path, "rb").read()
    return path.read_bytes()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", type=Path, default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--peer-repeat", type=int, default=1,
                    help="liac-arff repetitions (it is slow)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    import arff  # liac-arff

    from mlw.io.arff import loads_arff

    raw = _decompress(args.file)
    text = raw.decode("utf-8")
    sparse = "\n{" in text
    name = args.file.name

    loads_arff(raw, path=args.file)  # warm-up: load the cached numba kernels
    ours, ours_cpu = [], []
    for _ in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        ds = loads_arff(raw, path=args.file)
        ours.append(time.perf_counter() - t)
        ours_cpu.append(time.process_time() - c)
    rss_ours = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    peer, peer_cpu = [], []
    mode = arff.COO if sparse else arff.DENSE
    for _ in range(args.peer_repeat):
        t, c = time.perf_counter(), time.process_time()
        d = arff.loads(text, return_type=mode)
        peer.append(time.perf_counter() - t)
        peer_cpu.append(time.process_time() - c)
    n_peer = (max(d["data"][1]) + 1) if sparse else len(d["data"])
    result = {
        "file": name,
        "bytes": len(raw),
        "sparse": sparse,
        "instances": ds.n_instances,
        "peer_instances": int(n_peer),
        "features": ds.n_features,
        "labels": ds.n_labels,
        "mlw_seconds": min(ours),
        "liac_arff_seconds": min(peer),
        "liac_arff_mode": "COO" if sparse else "DENSE",
        "speedup": min(peer) / min(ours),
        "mlw_cpu_seconds": min(ours_cpu),
        "liac_arff_cpu_seconds": min(peer_cpu),
        "speedup_cpu": min(peer_cpu) / min(ours_cpu),
        "max_rss_mb_after_mlw": round(rss_ours, 1),
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"{name}: {len(raw) / 1e6:.1f} MB decompressed, {ds.n_instances} rows "
          f"({'sparse' if sparse else 'dense'}), {ds.n_features} features, "
          f"{ds.n_labels} labels", file=sys.stderr)
    print(f"{'':21}   {'wall':>8}   {'CPU':>8}")
    print(f"mlw loads_arff       : {min(ours):8.3f} s {min(ours_cpu):8.3f} s "
          f"(best of {args.repeat})")
    print(f"liac-arff {result['liac_arff_mode']:<5}      : {min(peer):8.3f} s "
          f"{min(peer_cpu):8.3f} s (best of {args.peer_repeat})")
    print(f"speed-up             : {result['speedup']:8.1f}x {result['speedup_cpu']:8.1f}x")


if __name__ == "__main__":
    main()
