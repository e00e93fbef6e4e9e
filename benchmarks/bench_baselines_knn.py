"""mlw's ML-kNN and BRkNN side by side with scikit-multilearn's and with a plain
scikit-learn ``KNeighborsClassifier``, on the same splits, in one run.

    python benchmarks/bench_baselines_knn.py [--datasets emotions,scene,yeast,enron,bibtex]
        [--imdb] [--imdb-skml] [--no-skml] [--metric euclidean] [--k 10] [--repeat 1]
        [--skml-cap SECONDS]

Every side uses k = 10 and the same metric (Euclidean by default: ML-kNN's paper,
scikit-multilearn and scikit-learn's default). Timings are fit + predict +
predict_proba (BRkNN: + predict only where the peer has no scores) on the Mulan
train/test split, in process CPU seconds (``time.process_time``, all threads) and wall
seconds, with the 1-minute load average before and after; the first mlw call is
preceded by a tiny warm-up fit so numba's compilation is not timed (the kernels are
cached on disk anyway). The ratio printed is peer / mlw (above 1: mlw is faster),
for CPU time and for wall time.

scikit-learn's side makes ONE neighbour query: ``predict_proba``, and the 0/1 decision
taken from it exactly as ``KNeighborsClassifier.predict`` takes it (the most frequent
class, ties to the smaller); on every set but IMDB the script checks, untimed, that this
equals ``predict``. (Calling ``predict`` and ``predict_proba`` would query twice and
double scikit-learn's time; mlw computes both in one pass.)

scikit-multilearn 0.2.0 calls ``NearestNeighbors(self.k)`` positionally, which
scikit-learn >= 1.0 refuses; the script patches that one call (keyword argument, and
``--metric`` passed on: scikit-multilearn has no metric parameter) and changes nothing
else. It runs in the same environment as the other sides, in a forked child process so
that ``--skml-cap`` (wall seconds) can stop it: a side stopped at the cap is printed as
``> cap`` with its CPU seconds so far, the fraction of its work done (neighbour-query rows
and per-instance loop iterations, logged as it goes) and a linear extrapolation of its
total CPU time, labelled as an estimate.

scikit-multilearn's ML-kNN counts every training instance as its own nearest neighbour
when estimating the likelihoods (``ignore_first_neighbours=0`` by default;
mlw leaves it out, as the paper does), so its predictions differ: the script also runs
a loop-free reference of the paper's ML-kNN built on scikit-learn's
``NearestNeighbors`` (leave-one-out) and prints the agreement of mlw with it.

IMDB (``--imdb``): MEKA's Imdb.arff.bz2, first 72,551 rows train, the other 48,368 test
(the LCIF paper's split). scikit-multilearn is left out there unless ``--imdb-skml``
(its per-instance, per-label Python loops take very long). With ``--skml-cap``,
scikit-multilearn's MLkNN (not its BRkNN) runs in its child process concurrently with
the other sides (CPU times are per process; the wall times then share the machine).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp
from _shared import SHARED_DATASETS

import mlw

SHARED = SHARED_DATASETS
METRICS = ["hamming_loss", "f1_micro", "f1_macro", "f1_example", "subset_accuracy"]
N_TRAIN_IMDB = 72551


def load(name: str):
    if name == "imdb":
        d = mlw.load_dataset(str(SHARED / "meka" / "Imdb.arff.bz2"))
        return d.X[:N_TRAIN_IMDB], d.Y[:N_TRAIN_IMDB], d.X[N_TRAIN_IMDB:], d.Y[N_TRAIN_IMDB:]
    tr = mlw.load_dataset(SHARED / "mulan" / f"{name}-train.arff")
    te = mlw.load_dataset(SHARED / "mulan" / f"{name}-test.arff")
    return tr.X, tr.Y, te.X, te.Y


def dense01(M) -> np.ndarray:
    return np.asarray(M.toarray() if sp.issparse(M) else M, dtype=np.uint8)


def timed(fn):
    load0 = os.getloadavg()[0]
    t, w = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - t, time.perf_counter() - w, load0, os.getloadavg()[0], out


def patch_skml(metric: str = "euclidean") -> None:
    import sklearn.neighbors
    import skmultilearn.adapt.brknn as brknn
    import skmultilearn.adapt.mlknn as mlknn

    class KeywordNearestNeighbors(sklearn.neighbors.NearestNeighbors):
        def __init__(self, n_neighbors=5, *, metric=metric, **kwargs):
            super().__init__(n_neighbors=n_neighbors, metric=metric, **kwargs)

    mlknn.NearestNeighbors = KeywordNearestNeighbors
    brknn.NearestNeighbors = KeywordNearestNeighbors


_PROGRESS: str | None = None  # the skml child's progress log (see instrument_skml)


def _log(event: str, value: int) -> None:
    with open(_PROGRESS, "a") as f:  # type: ignore[arg-type]
        f.write(f"{event} {value} {time.process_time():.3f}\n")


def instrument_skml(path: str) -> None:
    """In the child: log scikit-multilearn's progress, changing none of its results.

    ``query N``: a neighbour query of N rows starts; ``rows R``: R rows of it answered
    (one line per chunk of scikit-learn's chunked brute force, the path sparse input
    takes); ``loop I``: I iterations of its per-instance Python loops done (fit: one
    per training row; predict and predict_proba: one per test row each), counted on
    the label matrices it indexes once per instance, logged every 100.
    """
    global _PROGRESS
    _PROGRESS = path
    import sklearn.neighbors._base as nb
    import skmultilearn.adapt.mlknn as mlknn

    chunked = nb.pairwise_distances_chunked

    def logged_chunks(X, *args, **kwargs):
        _log("query", X.shape[0])
        done = 0
        for chunk in chunked(X, *args, **kwargs):
            done += len(chunk[1] if isinstance(chunk, tuple) else chunk)
            _log("rows", done)
            yield chunk

    nb.pairwise_distances_chunked = logged_chunks
    count = [0]

    def counting(cls):
        class Counting(cls):
            def __getitem__(self, key):
                if isinstance(key, tuple) and isinstance(key[0], (np.ndarray, list)):
                    count[0] += 1  # one per instance: the neighbours' label rows
                    if count[0] % 100 == 0:
                        _log("loop", count[0])
                return super().__getitem__(key)

        return Counting

    kinds = {"dok": counting(sp.dok_matrix), "lil": counting(sp.lil_matrix)}
    convert = mlknn.get_matrix_in_format
    mlknn.get_matrix_in_format = lambda m, fmt: kinds[fmt](convert(m, fmt))


def skml_estimate(path: str, cpu: float, n_train: int, n_test: int) -> tuple[str, float, bool]:
    """Fraction of scikit-multilearn's work done at the cap, and its extrapolated CPU."""
    q_rows = q_cpu = loops = 0.0
    total_q, total_loops = n_train + 2 * n_test, n_train + 2 * n_test
    start = last = None
    done_before = 0
    with open(path) as f:
        for line in f:
            event, value, t = line.split()
            if event == "query":
                if start is not None:
                    q_cpu += last - start
                    done_before = q_rows
                start = last = float(t)
            elif event == "rows":
                q_rows = done_before + int(value)
                last = float(t)
            elif event == "loop":
                loops = int(value)
    if start is not None:
        q_cpu += last - start
    loop_cpu = max(cpu - q_cpu, 0.0)
    frac_q, frac_l = q_rows / total_q, loops / total_loops
    est = cpu
    known = True
    if q_rows:
        est += (total_q - q_rows) * q_cpu / q_rows
    else:
        known = False
    if loops:
        est += (total_loops - loops) * loop_cpu / loops
    else:
        known = False
    return (f"done at the cap: {q_rows:.0f}/{total_q} query rows ({frac_q:.1%}, "
            f"{q_cpu:.0f} CPU s), {loops:.0f}/{total_loops} loop iterations "
            f"({frac_l:.1%}) | extrapolated total CPU "
            f"{'~' if known else '>= '}{est:.0f} s (estimate, linear in rows and "
            f"iterations{'' if known else '; a phase not yet started is left out'})"), est, known


def _child(fn, args, queue, progress) -> None:
    if progress:
        instrument_skml(progress)
    try:
        queue.put(("ok", timed(lambda: fn(*args))))
    except Exception as exc:
        queue.put(("error", f"{type(exc).__name__}: {exc}"))


def _proc_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CappedSide:
    """A side run in a forked child, stopped after ``cap`` wall seconds."""

    def __init__(self, fn, args, cap: float | None, n_train: int, n_test: int):
        self.cap, self.n_train, self.n_test = cap, n_train, n_test
        self.progress = tempfile.mktemp(prefix="skml-progress-") if cap else None
        ctx = mp.get_context("fork")
        self.queue = ctx.Queue()
        self.proc = ctx.Process(target=_child, args=(fn, args, self.queue, self.progress))
        self.t0 = time.perf_counter()
        self.proc.start()

    def result(self):
        import queue as q

        timeout = None if self.cap is None else max(self.cap - (time.perf_counter() - self.t0), 1)
        try:
            kind, out = self.queue.get(timeout=timeout)
        except q.Empty:
            cpu = _proc_cpu(self.proc.pid)
            self.proc.terminate()
            self.proc.join()
            est = skml_estimate(self.progress, cpu, self.n_train, self.n_test)
            os.unlink(self.progress)
            return "capped", (cpu, time.perf_counter() - self.t0, est)
        self.proc.join()
        if self.progress and os.path.exists(self.progress):
            os.unlink(self.progress)
        if kind == "error":
            raise RuntimeError(out)
        return "ok", out


def reference_mlknn(Xtr, Ytr, Xte, k: int, metric: str, s: float = 1.0) -> np.ndarray:
    """The paper's ML-kNN on scikit-learn's exact neighbours, leave-one-out in training."""
    from sklearn.neighbors import NearestNeighbors

    Y = dense01(Ytr).astype(np.int64)
    n, L = Y.shape
    nn = NearestNeighbors(n_neighbors=k + 1, metric=metric, algorithm="brute").fit(Xtr)
    idx = nn.kneighbors(Xtr, return_distance=False)
    # drop each row itself (it may not come first when another row is at distance 0)
    own = idx == np.arange(n)[:, None]
    keep = np.where(own.any(axis=1)[:, None], ~own, np.arange(k + 1)[None, :] < k)
    idx = idx[keep].reshape(n, k)
    C = Y[idx].sum(axis=1)
    prior = (s + Y.sum(axis=0)) / (2 * s + n)
    a = np.stack([np.bincount(C[Y[:, j] == 1, j], minlength=k + 1) for j in range(L)])
    b = np.stack([np.bincount(C[Y[:, j] == 0, j], minlength=k + 1) for j in range(L)])
    e1 = (s + a) / (s * (k + 1) + a.sum(axis=1, keepdims=True))
    e0 = (s + b) / (s * (k + 1) + b.sum(axis=1, keepdims=True))
    Ct = Y[nn.kneighbors(Xte, n_neighbors=k, return_distance=False)].sum(axis=1)
    j = np.arange(L)[None, :]
    on, off = prior * e1[j, Ct], (1 - prior) * e0[j, Ct]
    return on / (on + off)


def sides(k: int, metric: str, skml: bool):
    from sklearn.neighbors import KNeighborsClassifier

    from mlw_baselines import BRkNN, MLkNN

    def mlw_mlknn(Xtr, Ytr, Xte):
        # the paper's MAP rule alone, as scikit-multilearn and the reference apply it (the
        # learner's default adds the adaptive top-label rule)
        m = MLkNN(k=k, metric=metric, threshold="fixed").fit(Xtr, Ytr)
        P, S = m.predict_with_scores(Xte)
        return dense01(P), S

    def mlw_brknn(Xtr, Ytr, Xte):
        P, S = BRkNN(k=k, metric=metric).fit(Xtr, Ytr).predict_with_scores(Xte)
        return dense01(P), S

    def sk_knn(Xtr, Ytr, Xte):
        algorithm = "brute" if sp.issparse(Xtr) else "auto"
        m = KNeighborsClassifier(n_neighbors=k, metric=metric, algorithm=algorithm)
        m.fit(Xtr, dense01(Ytr))
        proba = m.predict_proba(Xte)  # one neighbour query; predict would be another
        # predict's rule (most frequent class, ties to the smaller), from the same counts
        P = np.column_stack([c[np.argmax(p, axis=1)]
                             for c, p in zip(m.classes_, proba, strict=True)])
        S = np.column_stack([p[:, -1] if p.shape[1] == 2
                             else np.full(p.shape[0], float(c[0]))
                             for c, p in zip(m.classes_, proba, strict=True)])
        sk_knn.model = m
        return dense01(P), S

    def skml_mlknn(Xtr, Ytr, Xte):
        from skmultilearn.adapt import MLkNN as SkMLkNN

        m = SkMLkNN(k=k)
        m.fit(Xtr, sp.csr_matrix(dense01(Ytr)))
        return dense01(m.predict(Xte)), np.asarray(m.predict_proba(Xte).todense())

    def skml_brknn(Xtr, Ytr, Xte):
        from skmultilearn.adapt import BRkNNaClassifier

        m = BRkNNaClassifier(k=k)
        m.fit(Xtr, sp.csr_matrix(dense01(Ytr)))
        return dense01(m.predict(Xte)), None

    out = [("mlknn", "mlw", mlw_mlknn), ("mlknn", "scikit-learn KNeighborsClassifier", sk_knn)]
    if skml:
        out.append(("mlknn", "scikit-multilearn MLkNN", skml_mlknn))
    out.append(("brknn-a", "mlw", mlw_brknn))
    if skml:
        out.append(("brknn-a", "scikit-multilearn BRkNNa", skml_brknn))
    return out


def sk_knn_model(fn):
    return fn.model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="emotions,scene,yeast,enron,bibtex")
    ap.add_argument("--imdb", action="store_true")
    ap.add_argument("--imdb-skml", action="store_true")
    ap.add_argument("--no-skml", action="store_true",
                    help="leave scikit-multilearn out (mlw against scikit-learn only)")
    ap.add_argument("--metric", default="euclidean", choices=["euclidean", "cosine"])
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=1,
                    help="time mlw and scikit-learn this many times, keep the least CPU "
                         "(scikit-multilearn: once)")
    ap.add_argument("--skml-cap", type=float, default=None,
                    help="run scikit-multilearn's MLkNN (IMDB too) in a child beside the other "
                         "sides and stop it after this many wall seconds")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if not args.no_skml:  # the patch imports scikit-multilearn, which may not be installed
        patch_skml(args.metric)
    from mlw_baselines import MLkNN

    MLkNN(k=2).fit(sp.random(20, 5, density=0.5, format="csr", random_state=0),
                   np.eye(20, 3, dtype=np.uint8)).predict(np.ones((2, 5)))  # warm-up
    MLkNN(k=2).fit(np.random.default_rng(0).random((20, 5)),
                   np.eye(20, 3, dtype=np.uint8)).predict(np.ones((2, 5)))  # dense kernels too
    names = [d for d in args.datasets.split(",") if d] + (["imdb"] if args.imdb else [])
    print(f"k={args.k} metric={args.metric}; cpu/wall in s; ratio = peer / mlw")
    for name in names:
        Xtr, Ytr, Xte, Yte = load(name)
        skml = not args.no_skml and (name != "imdb" or args.imdb_skml
                                     or args.skml_cap is not None)
        print(f"\n== {name}: {Xtr.shape[0]} train / {Xte.shape[0]} test, "
              f"{Xtr.shape[1]} features ({'CSR' if sp.issparse(Xtr) else 'dense'}), "
              f"{Ytr.shape[1]} labels")
        base: dict[str, tuple[float, float, np.ndarray]] = {}
        all_sides = sides(args.k, args.metric, skml)
        # with a cap, the long peer runs capped in a child beside the others (ML-kNN only)
        concurrent = args.skml_cap is not None
        children = {}
        if concurrent:
            all_sides = [s for s in all_sides if "scikit-multilearn" not in s[1]] + [
                s for s in all_sides if s[1] == "scikit-multilearn MLkNN"]
            for _method, who, fn in all_sides:
                if "scikit-multilearn" in who:
                    children[who] = CappedSide(fn, (Xtr, Ytr, Xte), args.skml_cap,
                                               Xtr.shape[0], Xte.shape[0])
        for method, who, fn in all_sides:
            try:
                if who in children:
                    kind, out = children[who].result()
                    if kind == "capped":
                        cpu, wall, (msg, est, known) = out
                        c0, w0, _ = base[method]
                        print(f"{method:8s} {who:34s} > cap: stopped at {wall:.0f} s wall "
                              f"(load now {os.getloadavg()[0]:.1f}), {cpu:.1f} CPU s so far "
                              f"(ratio cpu > {cpu / max(c0, 1e-9):.1f}x); {msg}; "
                              f"estimated ratio cpu {'~' if known else '>= '}"
                              f"{est / max(c0, 1e-9):.1f}x", flush=True)
                        continue
                    cpu, wall, l0, l1, (P, S) = out
                else:
                    runs = [timed(lambda fn=fn: fn(Xtr, Ytr, Xte))  # noqa: B023
                            for _ in range(1 if "scikit-multilearn" in who else args.repeat)]
                    cpu, wall, l0, l1, (P, S) = min(runs, key=lambda r: r[0])
            except Exception as exc:  # a peer that breaks is reported, not fatal
                print(f"{method:8s} {who:34s} FAILED: {type(exc).__name__}: {exc}")
                continue
            if who.startswith("scikit-learn") and name != "imdb":
                same = np.array_equal(P, dense01(sk_knn_model(fn).predict(Xte)))
                who_checked = f"{who} (=predict: {'yes' if same else 'NO'})"
            else:
                who_checked = who
            res = mlw.evaluate(Yte, P, metrics=METRICS)
            line = " ".join(f"{m}={res[m]:.4f}" for m in METRICS)
            if who == "mlw":
                base[method] = (cpu, wall, P)
                extra = ""
            else:
                c0, w0, P0 = base[method]
                extra = (f" | ratio cpu {cpu / max(c0, 1e-9):6.1f}x wall "
                         f"{wall / max(w0, 1e-9):6.1f}x | same pred {np.mean(P == P0):.4f}")
            print(f"{method:8s} {who_checked:34s} cpu {cpu:8.2f} wall {wall:8.2f} "
                  f"load {l0:4.1f}->{l1:4.1f} | {line}{extra}", flush=True)
        if name != "imdb":
            ref = reference_mlknn(Xtr, Ytr, Xte, args.k, args.metric)
            P0 = base["mlknn"][2]
            print(f"mlknn    agreement with the paper's ML-kNN on scikit-learn neighbours: "
                  f"{np.mean((ref >= 0.5) == P0):.4f} of entries")


if __name__ == "__main__":
    main()
