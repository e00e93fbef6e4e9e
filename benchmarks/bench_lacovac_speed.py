"""LaCovaC fit and predict time vs scikit-learn's multi-output DecisionTreeClassifier,
side by side in one run, with a profile of the fit and the forest's threads.

    python benchmarks/bench_lacovac_speed.py [--repeats 3] [--datasets yeast,scene,enron,bibtex]
                                       [--no-reference] [--forest-trees 10]

Both learners fit the same training split of each dataset (mlw.load_dataset; sparse
files stay CSR for both: scikit-learn's tree takes CSR X, and LaCovaC never densifies
it). scikit-learn's tree gets min_samples_leaf=5 (LaCovaC's m = 5, the peer the issue
names; LaCovaC's own children may be smaller on 0/1 features, see ``min_child``) and a
dense Y (it does not accept a sparse target). Prediction: LaCovaC's ``predict_proba``
against scikit-learn's ``predict_proba`` on the test split (each through its public
method, its own input checks included), and LaCovaC's one-pass ``predict_with_scores``
(joint decision and marginals) beside it. A second table splits each side's
``predict_proba``: LaCovaC's plugin (``_predict_proba`` on X validated once) against the
core's wrapper around it, scikit-learn's ``tree_.predict`` (on X already in float32)
against the rest of its ``predict_proba``.

Times are CPU seconds of the calling thread (time.thread_time, so other jobs on the
machine distort them less than wall time; see ``cpu_time``), the best of ``--repeats``
runs (predictions, about a millisecond each: of 10x as many, each timing 10 calls),
after one warm-up fit that also loads the compiled numba kernels. The sides are called
in turn (scikit-learn, LaCovaC, ML-C4.5, then again), so a change of the machine's load
during the run reaches both sides of a ratio alike. The ratios are LaCovaC /
scikit-learn; the issue's targets: fit <= 1.5 on yeast and scene, <= 1 on enron and
bibtex, predict <= 1.

``c45`` is ML-C4.5 from the same builder (one tree for all labels, no vertical splits,
the same stopping rule): the tree whose shape is closest to scikit-learn's, so its ratio
says what the builder costs per tree, apart from LaCovaC growing one subtree per label
cluster below every vertical split (4-10x the nodes of scikit-learn's tree).

The profile splits one fit into its phases: validation and the child-size table,
preparation (transposing X, the quantile bins, once per tree), the numba builder
(one call, no Python per node) and the leaf models. ``ref`` is the same tree grown by
the Python node-by-node reference builder (``_reference.ReferenceTreeBuilder``, what
mlw used before), checked equal node for node.

The forest (``--forest-trees``, yeast) is fitted with n_jobs=1 and n_jobs=2: its trees
grow in threads, so the speed-up is in wall time (process CPU time counts both
threads; a fit takes about a second, so the process clock's tick does not matter); the
load average printed beside it says how much of 2 cores there was.
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial

import numpy as np
import scipy.sparse as sp
from _shared import MULAN
from sklearn.tree import DecisionTreeClassifier

import mlw
from mlw_lacovac import MLC45, LaCovaC, LaCovaCForest
from mlw_lacovac._leaves import leaf_models
from mlw_lacovac._reference import ReferenceTreeBuilder
from mlw_lacovac._tree import TreeBuilder, child_sizes
from mlw_lacovac.model import check_training_data

DATA = MULAN
TARGET = {"yeast": 1.5, "scene": 1.5, "enron": 1.0, "bibtex": 1.0}


# The CPU time of the calling thread: every timed call but the forest's runs in it
# (scikit-learn's tree and LaCovaC's numba kernels are single-threaded). Not the
# process's clock: under a CPU limit (`ulimit -t`, as long runs here are started) Linux
# samples the process clock at the scheduler tick, and a sub-millisecond prediction
# reads 0 s (seen: ZeroDivisionError in the ratio), where the thread clock stays exact.
cpu_time = time.thread_time


def cpu_best_alternating(fns, repeats: int, calls: int = 1) -> list[float]:
    """Best CPU time (:data:`cpu_time`) per call of each of ``fns``, timed ``calls`` calls at a time
    and called in turn ``repeats`` times (a, b, a, b, ...), so a change in the machine's
    load during the run reaches every side alike and the ratios stay same-run ratios."""
    best = [np.inf] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t = cpu_time()
            for _ in range(calls):
                fn()
            best[i] = min(best[i], (cpu_time() - t) / calls)
    return best


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def profile(X, Y, repeats: int) -> dict[str, float]:
    """CPU seconds of the phases of one LaCovaC fit (best of ``repeats``)."""
    out: dict[str, float] = {}
    model = LaCovaC()

    def phases():
        t0 = cpu_time()
        Yc = check_training_data(X, Y, 5)
        sizes = child_sizes(X, model.min_child, model.min_child_numeric, 5)
        t1 = cpu_time()
        b = TreeBuilder("lacovac", 5, sizes, max_bins=model.max_bins)
        p = b._prepare(X, Yc, None)
        t2 = cpu_time()
        tree = b._grow(p, None, 0)
        t3 = cpu_time()
        leaf_models(tree, model.alpha, model.marginals)
        t4 = cpu_time()
        return {"check": t1 - t0, "prepare": t2 - t1, "grow": t3 - t2, "leaves": t4 - t3}

    for _ in range(repeats):
        for k, v in phases().items():
            out[k] = min(out.get(k, np.inf), v)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--datasets", default="yeast,scene,enron,bibtex")
    ap.add_argument("--no-reference", action="store_true",
                    help="skip the Python reference builder (slow on bibtex)")
    ap.add_argument("--forest-trees", type=int, default=10)
    args = ap.parse_args()
    print(f"load at start {load()}, {os.cpu_count()} CPUs")
    print(f"{'dataset':8} {'n x d, L':>17} {'X':6} {'fit':>7} {'sk fit':>7} {'ratio':>6} "
          f"{'target':>6} {'proba ms':>8} {'+mode ms':>8} {'sk ms':>7} {'ratio':>6} "
          f"{'nodes':>6} {'sk nodes':>8} {'c45 fit':>7} {'ratio':>6} {'c45 nodes':>9} "
          f"{'load':>5}")
    profiles = {}
    split = {}
    for name in args.datasets.split(","):
        tr = mlw.load_dataset(DATA / f"{name}-train.arff")
        te = mlw.load_dataset(DATA / f"{name}-test.arff")
        X, Y, Xt = tr.X, tr.Y, te.X
        Yd = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
        shape = f"{X.shape[0]}x{X.shape[1]}, {Y.shape[1]}"
        kind = "CSR" if sp.issparse(X) else "dense"
        sk = DecisionTreeClassifier(min_samples_leaf=5, random_state=0).fit(X, Yd)
        LaCovaC().fit(X, Y)  # warm-up (numba cache load)
        model = LaCovaC()
        c45 = MLC45().fit(X, Y)
        t_sk, t, t_c45 = cpu_best_alternating(
            [partial(sk.fit, X, Yd), partial(model.fit, X, Y), partial(c45.fit, X, Y)],
            args.repeats)
        model.predict_proba(Xt)
        # predictions take milliseconds: best of 10x the repeats of 10 calls each, both
        # sides, alternated
        # and each side's own part: LaCovaC's _predict_proba on X validated once (the
        # core's predict_proba wrapper is the rest: X's checks and the score contract),
        # scikit-learn's tree_.predict on X already in its float32 (the rest of its
        # predict_proba: its checks, the float32 copy, a normalised array per label)
        Xv = model._validate_X(Xt, reset=False)
        X32 = Xt.astype(np.float32) if sp.issparse(Xt) else np.ascontiguousarray(Xt, np.float32)
        p_sk, p, pw, p_in, p_skt = cpu_best_alternating(
            [partial(sk.predict_proba, Xt), partial(model.predict_proba, Xt),
             partial(model.predict_with_scores, Xt), partial(model._predict_proba, Xv),
             partial(sk.tree_.predict, X32)], 10 * args.repeats, calls=10)
        split[name] = (p, p_in, p_sk, p_skt)
        print(f"{name:8} {shape:>17} {kind:6} {t:7.3f} {t_sk:7.3f} {t / t_sk:6.2f} "
              f"{TARGET.get(name, np.nan):6.1f} {1e3 * p:8.3f} {1e3 * pw:8.3f} "
              f"{1e3 * p_sk:7.3f} "
              f"{p / p_sk:6.2f} {model.tree_.n_nodes:6d} {sk.tree_.node_count:8d} "
              f"{t_c45:7.3f} {t_c45 / t_sk:6.2f} {c45.tree_.n_nodes:9d} {load():>5}", flush=True)
        prof = profile(X, Y, args.repeats)
        if not args.no_reference:
            Yc = check_training_data(X, Y, 5)
            sizes = child_sizes(X, 1, None, 5)
            ref = ReferenceTreeBuilder("lacovac", 5, sizes, max_bins=64)
            t0 = cpu_time()
            rtree = ref.fit(X, Yc)
            prof["ref"] = cpu_time() - t0
            prof["same"] = float(rtree.same_as(model.tree_))
        profiles[name] = prof

    print("\npredict_proba, CPU ms per call, each side's own work apart (same timings as "
          "above): LaCovaC's = its plugin's _predict_proba + the core's wrapper (X's checks, "
          "the score contract); scikit-learn's = its tree_.predict on float32 X + its checks, "
          "float32 copy and per-label arrays")
    print(f"{'dataset':8} {'proba':>7} {'plugin':>7} {'wrapper':>7} {'share':>6} {'sk':>7} "
          f"{'sk tree':>7} {'sk rest':>7} {'share':>6} {'ratio':>6} {'plugin/sk':>9}")
    for name, (p, p_in, p_sk, p_skt) in split.items():
        print(f"{name:8} {1e3 * p:7.3f} {1e3 * p_in:7.3f} {1e3 * (p - p_in):7.3f} "
              f"{(p - p_in) / p:6.0%} {1e3 * p_sk:7.3f} {1e3 * p_skt:7.3f} "
              f"{1e3 * (p_sk - p_skt):7.3f} {(p_sk - p_skt) / p_sk:6.0%} {p / p_sk:6.2f} "
              f"{p_in / p_sk:9.2f}")

    print("\nprofile of one LaCovaC fit, CPU s (best of repeats); ref = the Python reference "
          "builder's fit, same = its tree equals the numba builder's node for node")
    print(f"{'dataset':8} {'check':>7} {'prepare':>8} {'grow':>7} {'leaves':>7} {'ref':>7} "
          f"{'ref/fit':>7} {'same':>5}")
    for name, pr in profiles.items():
        fit = pr["check"] + pr["prepare"] + pr["grow"] + pr["leaves"]
        ref = pr.get("ref", np.nan)
        same = {1.0: "yes", 0.0: "NO"}.get(pr.get("same", -1), "-")
        print(f"{name:8} {pr['check']:7.3f} {pr['prepare']:8.3f} {pr['grow']:7.3f} "
              f"{pr['leaves']:7.3f} {ref:7.3f} {ref / fit:7.1f} {same:>5}")

    if args.forest_trees > 0:
        tr = mlw.load_dataset(DATA / "yeast-train.arff")
        print(f"\nforest of {args.forest_trees} trees on yeast, n_jobs 1 vs 2 "
              "(wall and process CPU s, best of repeats)")
        LaCovaCForest(n_estimators=2).fit(tr.X, tr.Y)
        res = {}
        for jobs in (1, 2):
            best_w, best_c = np.inf, np.inf
            for _ in range(args.repeats):
                f = LaCovaCForest(n_estimators=args.forest_trees, n_jobs=jobs)
                w, c = time.perf_counter(), time.process_time()
                f.fit(tr.X, tr.Y)
                best_w = min(best_w, time.perf_counter() - w)
                best_c = min(best_c, time.process_time() - c)
            res[jobs] = (best_w, best_c)
            print(f"n_jobs={jobs}: wall {best_w:.3f} s, cpu {best_c:.3f} s, load {load()}",
                  flush=True)
        print(f"speed-up (wall) {res[1][0] / res[2][0]:.2f}x")


if __name__ == "__main__":
    main()
