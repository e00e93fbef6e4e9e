"""LCIF's ranking against the extreme-classification peers omikuji (Parabel-style label
trees) and napkinXC (probabilistic label trees), side by side on the same data.

Data: bibtex (Mulan's train/test split) and IMDB (MEKA's Imdb.arff.bz2, the first 80 %
of rows train, the last 20 % test), both from the shared datasets folder. Each set is
written once as an XC-format file (``mlw.io.write_xc``) that omikuji trains on; napkinXC
and LCIF take the same matrices in memory. Every side runs at its defaults, one thread
(omikuji ``n_threads=1``, napkinXC ``threads=1``, ``NUMBA_NUM_THREADS=1`` for LCIF):

* ``lcif`` at its defaults (the paper's k_ins = k_feat = 15, lam = 0.5);
* ``lcif cv`` choosing its parameters by 3-fold CV of the training data for the
  measure reported (``cv=3, cv_metric="precision_at_1"``: feature weighting, k_ins,
  sim_power, k_feat, lam; the fit CPU includes the search);
* ``lcif chosen``: a plain fit at the CV's choice (what a user deploys after the search).

Reports P@1, P@3, P@5 and PSP@1, PSP@3 (propensities of the training labels, A = 0.55,
B = 1.5), process CPU seconds (user + sys) of fit and predict, the load average, each
LCIF row's gap to the better peer and its fit CPU as a fraction of each peer's. Usage::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_lcif_xc_peers.py \\
        [--datasets bibtex,imdb] [--cv 3]

Needs ``pip install omikuji napkinxc`` (benchmark-only; requirements-bench.txt).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _shared import SHARED_DATASETS

ROOT = Path(__file__).resolve().parents[1]
DATA = SHARED_DATASETS
KS = (1, 3, 5)


def load(name: str):
    import mlw

    if name == "bibtex":
        tr = mlw.load_dataset(DATA / "mulan" / "bibtex-train.arff")
        te = mlw.load_dataset(DATA / "mulan" / "bibtex-test.arff")
        return (sp.csr_matrix(tr.X), sp.csr_matrix(tr.Y), sp.csr_matrix(te.X),
                sp.csr_matrix(te.Y))
    if name == "imdb":
        ds = mlw.load_dataset(DATA / "meka" / "Imdb.arff.bz2")
        X, Y = sp.csr_matrix(ds.X), sp.csr_matrix(ds.Y)
        c = int(0.8 * X.shape[0])
        return X[:c], Y[:c], X[c:], Y[c:]
    raise SystemExit(f"unknown dataset {name!r} (bibtex, imdb)")


def cpu() -> float:
    t = os.times()
    return t.user + t.system


def quality(Y, ranking, inv) -> dict[str, float]:
    from mlw import metrics as M

    out = {f"P@{k}": M.precision_at_k(Y, ranking, k=k) for k in KS}
    out.update({f"PSP@{k}": M.psprecision_at_k(Y, ranking, k=k, inv_propensity=inv)
                for k in (1, 3)})
    return out


def run_lcif(Xtr, Ytr, Xte, **params):
    import mlw

    c = cpu()
    model = mlw.get_learner("lcif", **params).fit(Xtr, Ytr)
    fit = cpu() - c
    c = cpu()
    ranking = model.predict_topk(Xte, max(KS))
    return model, ranking.indices, fit, cpu() - c


def run_omikuji(train_file: Path, Xte):
    import omikuji

    saved = os.dup(2)  # omikuji's Rust side draws progress bars on fd 2: silenced
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            c = cpu()
            model = omikuji.Model.train_on_data(str(train_file), n_threads=1)
            fit = cpu() - c
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    c = cpu()
    out = np.full((Xte.shape[0], max(KS)), -1, dtype=np.int64)
    for i in range(Xte.shape[0]):
        a, b = Xte.indptr[i], Xte.indptr[i + 1]
        pairs = list(zip(Xte.indices[a:b].tolist(), Xte.data[a:b].tolist(), strict=True))
        top = model.predict(pairs, top_k=max(KS))
        out[i, :len(top)] = [j for j, _ in top]
    return out, fit, cpu() - c


def run_napkinxc(Xtr, Ytr, Xte):
    from napkinxc.models import PLT

    labels = [Ytr.indices[Ytr.indptr[i]:Ytr.indptr[i + 1]].tolist()
              for i in range(Ytr.shape[0])]
    with tempfile.TemporaryDirectory() as tmp:
        c = cpu()
        model = PLT(str(Path(tmp) / "plt"), threads=1, seed=0)
        model.fit(Xtr, labels)
        fit = cpu() - c
        c = cpu()
        pred = model.predict(Xte, top_k=max(KS))
        pc = cpu() - c
    out = np.full((Xte.shape[0], max(KS)), -1, dtype=np.int64)
    for i, row in enumerate(pred):
        out[i, :len(row)] = row
    return out, fit, pc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="bibtex,imdb")
    ap.add_argument("--cv", type=int, default=3)
    args = ap.parse_args()

    import mlw
    from mlw.io import write_xc
    from mlw.metrics import inverse_propensity

    for name in args.datasets.split(","):
        Xtr, Ytr, Xte, Yte = load(name)
        inv = inverse_propensity(Ytr)
        rows = []
        with tempfile.TemporaryDirectory() as tmp:
            train_file = Path(tmp) / f"{name}-train.txt"
            write_xc(mlw.Dataset(Xtr, Ytr, [f"f{j}" for j in range(Xtr.shape[1])],
                                 [f"l{j}" for j in range(Ytr.shape[1])]), train_file)
            R, fit, pred = run_omikuji(train_file, Xte)
            rows.append(("omikuji", quality(Yte, R, inv), fit, pred, ""))
        R, fit, pred = run_napkinxc(Xtr, Ytr, Xte)
        rows.append(("napkinXC PLT", quality(Yte, R, inv), fit, pred, ""))
        _, R, fit, pred = run_lcif(Xtr, Ytr, Xte)
        rows.append(("lcif", quality(Yte, R, inv), fit, pred, "defaults"))
        model, R, fit, pred = run_lcif(Xtr, Ytr, Xte, cv=args.cv, cv_metric="precision_at_1")
        res = model.cv_results_
        chosen = {k: res[k] for k in ("feature_norm", "k_ins", "sim_power", "k_feat", "lam")}
        rows.append((f"lcif cv={args.cv}", quality(Yte, R, inv), fit, pred,
                     "search included"))
        _, R, fit, pred = run_lcif(Xtr, Ytr, Xte, **chosen)
        rows.append(("lcif chosen", quality(Yte, R, inv), fit, pred,
                     " ".join(f"{k}={v}" for k, v in chosen.items())))
        peers = rows[:2]
        best = {m: max(p[1][m] for p in peers) for m in ("P@1", "P@3")}
        print(f"\n{name}: {Xtr.shape[0]:,} train / {Xte.shape[0]:,} test, "
              f"{Xtr.shape[1]:,} features, {Ytr.shape[1]} labels "
              f"(load average {os.getloadavg()[0]:.1f})")
        cols = [f"P@{k}" for k in KS] + ["PSP@1", "PSP@3"]
        print(f"{'learner':<14}" + "".join(f"{c:>7}" for c in cols)
              + f"{'fit CPU s':>11}{'pred CPU s':>11}  note")
        for label, q, fit, pred, note in rows:
            print(f"{label:<14}" + "".join(f"{q[c]:>7.3f}" for c in cols)
                  + f"{fit:>11.2f}{pred:>11.2f}  {note}")
        for label, q, fit, _, _ in rows[2:]:
            gaps = ", ".join(f"{m} {q[m] - best[m]:+.3f}" for m in best)
            ratios = ", ".join(f"{fit / p[2]:.2f} of {p[0]}'s" for p in peers)
            print(f"  {label}: vs the better peer {gaps}; fit CPU {ratios}")


if __name__ == "__main__":
    main()
