"""Where LaCovaC's numba builder spends a fit, phase by phase (issue 18).

    python benchmarks/profile_lacovac_phases.py [--datasets yeast,scene,enron,bibtex]
                                               [--repeats 3]

The builder is one numba call per tree, so no Python profiler sees inside it. This
script takes the source of ``grow_tree`` (``mlw_lacovac._kernels.build``), wraps each
phase's statement in reads of the CPU's cycle counter and compiles that instrumented
copy here, at run time (nothing of it is stored or imported by the library). The phases:

- ``stats``: the node's label counts and co-occurrences (``node_stats``), and the
  restriction to the labels that vary in the node;
- ``cluster``: LaCovaC's label clustering (phi matrix, connected components) or LaCova's
  covariance test;
- ``vsplit``: the vertical split's bookkeeping (label sets, child nodes, row copies);
- ``labels``: the node's rows as a CSR of local labels (``local_labels_into``);
- ``context``: the criterion's per-node context (label pairs, ``node_context``);
- ``search``: the split search over all features (``search_dense`` / ``search_sparse``);
- ``partition``: the rows partitioned between a horizontal split's children;
- ``leaves``: the leaves' observed subsets (``_add_leaf``);
- ``other``: the rest (stack, node records, the final flattening).

Shares are of the instrumented call's cycles (wall cycles: preemption by other jobs
lands in whatever phase runs, so under load the shares, not the absolute cycles, are the
reading); ``cpu`` beside them is the library's own (not instrumented) ``grow`` in thread
CPU seconds, best of ``--repeats``, and ``est s`` its share times that. The counters are
work, not time: nodes of each kind, the rows the search scanned (summed over searched
nodes) and the feature-row pairs (rows x features searched). On dense ``X`` the search
is split further (its copy of ``search_dense`` is instrumented too): ordering the node's
rows by bin per feature, the candidates' criterion, and the rest of the row scan (moving
each row's labels and pairs to one side); the timer reads inside the row scan add to it.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import time
from pathlib import Path

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

import mlw
from mlw_lacovac import LaCovaC
from mlw_lacovac._kernels import build, criterion, split_dense
from mlw_lacovac._tree import TreeBuilder, child_sizes
from mlw_lacovac.model import check_training_data

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "mulan"
PHASES = ["stats", "cluster", "vsplit", "labels", "context", "search", "partition",
          "leaves", "other"]
COUNTERS = ["leaf", "hsplit", "vsplit", "searched", "search_rows", "feature_rows"]
#: inside search_dense (dense X only): gathering the node's bins and ordering the rows
#: by bin, per feature; the candidates' criterion (``evaluate``); the rest of the row
#: scan (moving each row's labels and pairs to one side, the bin tests)
SEARCH = ["s.order", "s.evaluate", "s.scan", "s.calls", "s.exact", "s.exact_cycles"]


@intrinsic
def _cycles(typingctx):
    sig = types.uint64()

    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                            "llvm.readcyclecounter")
        return builder.call(fn, [])

    return sig, codegen


def _statement_end(lines: list[str], i: int) -> int:
    """The last line of the statement starting at line ``i`` (balanced parentheses)."""
    depth = 0
    for j in range(i, len(lines)):
        depth += lines[j].count("(") - lines[j].count(")")
        if depth <= 0:
            return j
    raise AssertionError("unbalanced statement")


def instrumented_evaluate(base: int):
    """``evaluate`` with ``ph`` as its first parameter, counting its calls into
    ``ph[base + 3]``, those that need the exact pair sums (``lacova_exact``) into
    ``ph[base + 4]`` and timing those into ``ph[base + 5]``."""
    src = inspect.getsource(criterion.evaluate)
    src = src.replace("@njit_noref\n", "")
    src = src.replace("def evaluate(nm,", "def evaluate_i(ph, nm,", 1)
    src = src.replace("    if crit != CRIT_LACOVA:\n",
                      f"    ph[{base + 3}] += 1\n    if crit != CRIT_LACOVA:\n", 1)
    src = src.replace("    return lacova_exact(",
                      f"    ph[{base + 4}] += 1\n    _tx = _cycles()\n    _q = lacova_exact(", 1)
    src = src.replace("best_q)\n", f"best_q)\n    ph[{base + 5}] += _cycles() - _tx\n"
                      "    return _q\n", 1)
    assert src.count("_cycles()") == 2 and "return _q" in src, \
        "evaluate changed: update the marks"
    ns = dict(vars(criterion))
    ns["_cycles"] = _cycles
    exec(compile(src, "<instrumented evaluate>", "exec"), ns)  # noqa: S102
    # as the library's evaluate: compiled without reference counting (njit_noref)
    return njit(_nrt=False)(ns["evaluate_i"])


def instrumented_search_dense(base: int):
    """``search_dense`` with ``ph`` as its first parameter and its pieces timed into
    ``ph[base:base + 3]`` (order, evaluate, the whole feature loop); its ``evaluate``
    counts (:func:`instrumented_evaluate`)."""
    src = inspect.getsource(split_dense.search_dense)
    src = src.replace("@kernel\n", "")
    src = src.replace("def search_dense(XT,", "def search_dense_i(ph, XT,", 1)
    head = "        if use_bins:\n            for t in range(n):"
    src = src.replace(head, "        _ts = _cycles()\n" + head, 1)
    src = src.replace("        for i in range(n - 1):\n",
                      f"        ph[{base}] += _cycles() - _ts\n        for i in range(n - 1):\n", 1)
    src = src.replace("            q = evaluate(",
                      "            _te = _cycles()\n            q = evaluate_i(ph, ", 1)
    src = src.replace("            if q < best_q - 1e-12:\n",
                      f"            ph[{base + 1}] += _cycles() - _te\n"
                      "            if q < best_q - 1e-12:\n", 1)
    src = src.replace("    for fi in range(features.size):\n",
                      "    _tf = _cycles()\n    for fi in range(features.size):\n", 1)
    src = src.replace("    if best_f >= 0 and use_bins:\n",
                      f"    ph[{base + 2}] += _cycles() - _tf\n    if best_f >= 0 and use_bins:\n",
                      1)
    assert src.count("_cycles()") == 6, "search_dense changed: update the marks"
    ns = dict(vars(split_dense))
    ns["_cycles"] = _cycles
    ns["evaluate_i"] = instrumented_evaluate(base)
    exec(compile(src, "<instrumented search_dense>", "exec"), ns)  # noqa: S102
    return njit(ns["search_dense_i"])


def instrumented_grow_tree():
    """``grow_tree`` with its phases timed: returns the builder's tuple plus ``ph``
    (cycles per phase, then the counters)."""
    src = inspect.getsource(build.grow_tree)
    lines = src.split("\n")
    # statements that are one phase each: (regex of their first line, phase)
    marks = [(r"^\s+node_stats\(", "stats"), (r"^\s+R = phi_matrix\(", "cluster"),
             (r"^\s+comp = threshold_components\(", "cluster"),
             (r"^\s+elif sum_abs_covariance\(", None),
             (r"^\s+local_labels_into\(", "labels"), (r"^\s+node_context\(", "context"),
             (r"^\s+f_best, t_best, q_best = search_", "search"),
             (r"^\s+nleft = partition_", "partition"),
             (r"^\s+\(leaf_node, leaf_sub_ptr", "leaves")]
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        hit = next((ph for rx, ph in marks if re.match(rx, line)), "none")
        if hit in ("none", None):
            out.append(line)
            i += 1
            continue
        ind = line[:len(line) - len(line.lstrip())]
        j = _statement_end(lines, i)
        k = PHASES.index(hit)
        out.append(f"{ind}_t0 = _cycles()")
        out.extend(lines[i:j + 1])
        out.append(f"{ind}ph[{k}] += _cycles() - _t0")
        if hit == "search":
            out.append(f"{ind}ph[{len(PHASES) + 3}] += 1")
            out.append(f"{ind}ph[{len(PHASES) + 4}] += n")
            out.append(f"{ind}ph[{len(PHASES) + 5}] += n * feats.size")
        i = j + 1
    src = "\n".join(out)
    # whole-block phases: the vertical split (from its test to its `continue`) and the
    # variance restriction; the node kinds as counters
    src = src.replace("            if ngroups + has_const > 1:\n",
                      "            _tv = _cycles()\n            if ngroups + has_const > 1:\n"
                      f"                ph[{len(PHASES) + 2}] += 1\n", 1)
    src = src.replace("                    sp += 1\n                continue\n",
                      "                    sp += 1\n"
                      f"                ph[{PHASES.index('vsplit')}] += _cycles() - _tv\n"
                      "                continue\n", 1)
    src = src.replace("        kind[v] = HSPLIT\n",
                      f"        kind[v] = HSPLIT\n        ph[{len(PHASES) + 1}] += 1\n", 1)
    src = src.replace("            leaf_id[v] = n_leaves\n",
                      f"            leaf_id[v] = n_leaves\n            ph[{len(PHASES)}] += 1\n",
                      1)
    src = src.replace("    d = min_child.size\n",
                      f"    ph = np.zeros({len(PHASES) + len(COUNTERS) + len(SEARCH)}, "
                      "np.int64)\n"
                      "    _t_all = _cycles()\n    d = min_child.size\n", 1)
    src = src.replace("sub_bits[:nb].copy(), reach[0])",
                      "sub_bits[:nb].copy(), reach[0], ph, _cycles() - _t_all)")
    src = src.replace("@kernel(nogil=True)", "")
    base = len(PHASES) + len(COUNTERS)
    src = src.replace("= search_dense(\n", "= search_dense_i(\n                        ph, ", 1)
    assert src.count("_cycles()") >= 20, "grow_tree changed: update the phase marks"
    ns = dict(vars(build))
    ns["_cycles"] = _cycles
    ns["search_dense_i"] = instrumented_search_dense(base)
    exec(compile(src, "<instrumented grow_tree>", "exec"), ns)  # noqa: S102
    return njit(ns["grow_tree"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="yeast,scene,enron,bibtex")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    grow = instrumented_grow_tree()
    print(f"load at start {os.getloadavg()[0]:.1f}")
    print(f"{'dataset':8} {'cpu':>6} " + " ".join(f"{p:>9}" for p in PHASES) + "  "
          + " ".join(f"{c:>12}" for c in COUNTERS) + "   load")
    for name in args.datasets.split(","):
        tr = mlw.load_dataset(DATA / f"{name}-train.arff")
        model = LaCovaC()
        Yc = check_training_data(tr.X, tr.Y, model.min_samples)
        sizes = child_sizes(tr.X, model.min_child, model.min_child_numeric, model.min_samples)
        b = TreeBuilder("lacovac", model.min_samples, sizes, z=model.z,
                        max_bins=model.max_bins)
        p = b._prepare(tr.X, Yc, None)
        call = (0, b.min_samples, p["min_child"], b.z, p["split_floor"], p["sparse"], p["XT"],
                p["xbin"], p["x_indptr"], p["x_indices"], p["x_data"], p["xone"],
                p["y_indptr"], p["y_indices"], p["w"], p["n_labels"], p["rows"],
                p["max_features"])
        cpu = np.inf
        for _ in range(args.repeats):
            t = time.thread_time()  # the builder runs in this thread; exact under ulimit -t
            ref = build.grow_tree(*call, np.array([0], np.uint64))
            cpu = min(cpu, time.thread_time() - t)
        best = None
        for _ in range(args.repeats):
            out = grow(*call, np.array([0], np.uint64))
            if best is None or out[-1] < best[-1]:
                best = out
        assert all(np.array_equal(a, b, equal_nan=np.asarray(a).dtype.kind == "f")
                   for a, b in zip(ref, best[:-2], strict=True)), \
            "the instrumented builder grew another tree"
        ph, total = best[-2], best[-1]
        cyc = ph[:len(PHASES)].astype(float)
        cyc[-1] = total - cyc[:-1].sum()
        share = cyc / total
        print(f"{name:8} {cpu:6.3f} " + " ".join(f"{100 * s:8.1f}%" for s in share) + "  "
              + " ".join(f"{int(c):12d}" for c in ph[len(PHASES):])
              + f"  {os.getloadavg()[0]:5.1f}", flush=True)
        print(f"{'  est s':8} {'':6} " + " ".join(f"{s * cpu:9.3f}" for s in share), flush=True)
        base = len(PHASES) + len(COUNTERS)
        order, ev, loop, calls, exact, exact_cyc = (float(x) for x in
                                                    ph[base:base + len(SEARCH)])
        if loop > 0:  # dense X: the search's own pieces, as shares of its feature loop
            print(f"{'  search':8} order {100 * order / loop:.1f}%, evaluate "
                  f"{100 * ev / loop:.1f}%, the rest of the scan "
                  f"{100 * (loop - order - ev) / loop:.1f}% (of the search's feature loop, "
                  f"{100 * loop / cyc[PHASES.index('search')]:.1f}% of the search phase)",
                  flush=True)
            print(f"{'':8} {int(calls)} candidates evaluated, {int(exact)} "
                  f"({100 * exact / max(calls, 1):.1f}%) needed the exact pair sums, which "
                  f"took {100 * exact_cyc / loop:.1f}% of the feature loop", flush=True)


if __name__ == "__main__":
    main()
