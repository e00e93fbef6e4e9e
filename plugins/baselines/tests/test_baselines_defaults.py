"""The baselines' default decisions on sparse, low-density text: BR, CC and
PCC take the core's default (cardinality matching, top-label rule 'auto'), which leaves
no row empty on medical, where no row is truly empty and the 0.5 cut (BR), the greedy
chain (CC) and the mode (PCC) leave about one in ten. ``threshold=None`` is the
chain's own decision, ``"fixed"`` the 0.5 cut."""

from __future__ import annotations

import numpy as np
import pytest

import mlw
from mlw.metrics import empty_prediction_rate, empty_rate, f1_example
from mlw.model_selection import iterative_stratification, prepare_evaluation
from mlw.thresholds import DEFAULT_THRESHOLD, FixedThreshold


@pytest.fixture(scope="module")
def medical(mulan_dir):
    d = mlw.load_dataset(mulan_dir / "medical.arff")
    fold = iterative_stratification(d.Y, 3, seed=0)
    return d.X[fold != 0], d.Y[fold != 0], d.X[fold == 0], d.Y[fold == 0]


def test_br_default_decision_on_medical(medical):
    Xtr, Ytr, Xte, Yte = medical
    br = mlw.get_learner("br").fit(Xtr, Ytr)
    assert br.threshold == DEFAULT_THRESHOLD and br.threshold_.top_label_
    P = br.predict(Xte)
    cut = FixedThreshold(0.5).fit(None, Ytr).predict(br.predict_proba(Xte))
    assert empty_rate(Yte) == 0.0
    assert empty_prediction_rate(Yte, P) == 0.0
    assert empty_prediction_rate(Yte, cut) > 0.05          # what the old default did
    assert f1_example(Yte, P) > f1_example(Yte, cut) + 0.03


def test_cc_default_decision_on_medical_and_its_own_one_parameter_away(medical):
    Xtr, Ytr, Xte, Yte = medical
    cc = mlw.get_learner("cc").fit(Xtr, Ytr)
    own = mlw.get_learner("cc", threshold=None).fit(Xtr, Ytr)
    assert prepare_evaluation(cc).decision == f"threshold {DEFAULT_THRESHOLD}"
    assert prepare_evaluation(own).decision == "joint"
    P, S = cc.predict_with_scores(Xte)
    np.testing.assert_array_equal(S, own.predict_proba(Xte))  # the same chain
    assert empty_prediction_rate(Yte, P) == 0.0
    assert empty_prediction_rate(Yte, own.predict(Xte)) > 0.05
    # the 0.5 cut on the greedy path's link probabilities is the chain's own decision
    fixed = mlw.get_learner("cc", threshold="fixed").fit(Xtr, Ytr)
    np.testing.assert_array_equal(fixed.predict(Xte), own.predict(Xte))


def test_pcc_default_thresholds_its_marginals(medical):
    Xtr, Ytr, Xte, Yte = medical
    pcc = mlw.get_learner("pcc", beam_width=4).fit(Xtr[:, :300], Ytr)
    assert empty_prediction_rate(Yte, pcc.predict(Xte[:, :300])) == 0.0


def test_mlknn_keeps_its_map_cut_and_gains_the_top_label_rule(medical):
    """ML-kNN's (and IBLR's) default is the paper's 0.5 cut plus the adaptive top-label
    rule: the same labels where the cut gives any, the top label where it gives none
    (about one row in six of medical's test part at the cut alone)."""
    Xtr, Ytr, Xte, Yte = medical
    model = mlw.get_learner("mlknn").fit(Xtr, Ytr)
    assert model.threshold == "fixed:top_label=auto" and model.threshold_.top_label_
    P, S = model.predict_with_scores(Xte)
    cut = FixedThreshold(0.5).fit(None, Ytr).predict(S)
    some = cut.any(axis=1)
    assert empty_prediction_rate(Yte, cut) > 0.05 and empty_prediction_rate(Yte, P) == 0.0
    np.testing.assert_array_equal(P[some], cut[some])
    assert mlw.get_learner("iblr").threshold == model.threshold
