"""Readings of the growth's stopping rule (Hong et al., CIKM 2014, Sec. 5.3.2) on the
paper's protocol (examples/papers/mctbn.toml: train and test files joined, 10 folds by
iterative stratification, seed 0): `mc` (the paper's MAP, `top_label=False`) fitted on
nine folds with each variant's parameters (e.g. `patience`, `validation_fraction`) and
scored on the tenth (``--partition-seed`` s: the same splitter's partition with seed s):
EMA, CLL-loss (sum over the fold), trees kept, C, the validation log-likelihood of each
C searched and the growth's validation curve. One JSON line per
(dataset, variant, fold), appended as it finishes, with its process CPU seconds.
``--learner ctbn`` runs the single tree (the paper's SC) the same way.

    nice -n 5 python benchmarks/growth_stop_mctbn.py --dataset emotions \
        --variants '[{}, {"patience": 2}, {"validation_fraction": 0.3}]' \
        --out benchmarks/results/growth_stop_mctbn.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from map_check_mctbn import emit, load_full, protocol_folds

from mlw.metrics import cll_loss, subset_accuracy
from mlw_mctbn import CTBN, MixtureOfCTBNs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="emotions")
    ap.add_argument("--folds", default=",".join(str(f) for f in range(10)))
    ap.add_argument("--variants", default="[{}]", help="JSON list of parameter dicts")
    ap.add_argument("--learner", default="mc", choices=("mc", "ctbn"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--partition-seed", type=int, default=0,
                    help="seed of the iterative stratification (0: the protocol's folds; "
                         "others: other partitions by the same splitter)")
    a = ap.parse_args()
    ds = load_full(a.dataset)
    for f, tr, te in protocol_folds(ds, a.folds, a.partition_seed):
        for params in json.loads(a.variants):
            t0, w0 = time.process_time(), time.time()
            cls = MixtureOfCTBNs if a.learner == "mc" else CTBN
            m = cls(top_label=False, **params).fit(ds.X[tr], ds.Y[tr])
            P = m.predict(ds.X[te])
            emit(a.out, dict(dataset=a.dataset, learner=a.learner, params=params,
                             partition_seed=a.partition_seed, fold=f,
                             ema=subset_accuracy(ds.Y[te], P),
                             cll=cll_loss(ds.Y[te], m.log_proba_of(ds.X[te], ds.Y[te])),
                             n_trees=m.n_trees_, em_weights=getattr(m, "em_weights_", None),
                             C=m.C_, C_search=m.C_search_,
                             curve=getattr(m, "validation_curve_", None)), t0, w0)

if __name__ == "__main__":
    main()
