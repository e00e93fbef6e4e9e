"""Session 11: why the switching tree is below the feature tree in micro/macro F1 on enron
(the quality table, p = 0.03 / 0.045). ctbn at its default C on the shared enron train
split, both factor forms, with the paper's MAP alone (top_label=False, as the quality
protocol): predicted cardinality, empty predictions, the labels with most children,
what turning such a label on costs its children's factors, the size of the parent's
effect on a child's logit, and the F1 with the top-label rule.

    python benchmarks/results_mctbn7/s11_f1_enron.py
"""
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import f1_score

import mlw

MULAN = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "mulan"
tr = mlw.load_dataset(MULAN / "enron-train.arff")
te = mlw.load_dataset(MULAN / "enron-test.arff")
Y, Yte = tr.Y.toarray(), te.Y.toarray()
d = Y.shape[1]


def f1(P: np.ndarray, average: str) -> float:
    return float(f1_score(Yte, P, average=average, zero_division=0))


res = {}
for form in ("switching", "feature"):
    c0 = time.process_time()
    m = mlw.get_learner("ctbn", factor=form, top_label=False).fit(tr.X, Y)
    cpu = time.process_time() - c0
    P, Q = m.predict(te.X), m.predict_proba(te.X)
    res[form] = (m, P, Q)
    print(f"{form}: C {m.C_}, fit {cpu:.1f} CPU s, EMA {(P == Yte).all(1).mean():.3f}, "
          f"CLL-loss {-m.log_proba_of(te.X, Yte).sum():.1f}, micro F1 {f1(P, 'micro'):.3f}, "
          f"macro F1 {f1(P, 'macro'):.3f}, predicted cardinality {P.sum(1).mean():.2f} "
          f"(true {Yte.sum(1).mean():.2f}), empty predictions {(P.sum(1) == 0).mean():.3f} "
          f"(true empty sets: test {(Yte.sum(1) == 0).mean():.3f}, "
          f"train {(Y.sum(1) == 0).mean():.3f})")
empty = {form: res[form][1].sum(1) == 0 for form in res}
print(f"rows predicted empty: switching only {int((empty['switching'] & ~empty['feature']).sum())}"
      f", feature only {int((~empty['switching'] & empty['feature']).sum())}, both "
      f"{int((empty['switching'] & empty['feature']).sum())}")
for form, (m, P, Q) in res.items():
    par = m.parents_[0]
    kids_of = np.bincount(par[par >= 0], minlength=d)
    A, V = (a[:, 0, :] for a in m._logits(te.X))
    print(f"{form}: median |change of a child's logit at parent 1| over the children "
          f"{np.median(np.abs(V.mean(0)[par >= 0])):.2f}")
    for t in np.argsort(-kids_of)[:2]:
        kids = np.flatnonzero(par == t)
        # log P(children all 0 | parent 1) - log P(children all 0 | parent 0)
        cost = (np.logaddexp(0, A[:, kids]) - np.logaddexp(0, A[:, kids] + V[:, kids])).sum(1)
        print(f"  label {t} (train rate {Y[:, t].mean():.2f}): {len(kids)} children; turning it "
              f"on with its children off changes log P by {cost.mean():.2f} on average "
              f"({cost[empty['switching']].mean():.2f} on the rows switching predicts empty)")
    P2 = P.copy()
    e = P2.sum(1) == 0
    P2[np.flatnonzero(e), Q[e].argmax(1)] = 1
    print(f"  with the top-label rule: micro F1 {f1(P2, 'micro'):.3f}, macro F1 "
          f"{f1(P2, 'macro'):.3f}, EMA {(P2 == Yte).all(1).mean():.3f}")
