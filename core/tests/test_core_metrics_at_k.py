"""The metrics at k against their pure-Python reference, hand-computed examples and
napkinXC's implementation (a test-only reference), from scores and from rankings."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_metrics_at_k import inverse_propensity as naive_inv
from naive_metrics_at_k import metric as naive_metric
from naive_metrics_at_k import rank as naive_rank

import mlw
from mlw import metrics
from mlw.metrics.at_k import top_k

KINDS = ("precision", "recall", "ndcg", "psprecision", "psndcg")


def _fn(kind):
    return getattr(metrics, f"{kind}_at_k")


def test_hand_computed_example():
    # row 0: true {0, 2}, ranking 2, 1, 0; row 1: true {1}, ranking 0, 1, -
    Y = [[1, 0, 1], [0, 1, 0]]
    R = np.array([[2, 1, 0], [0, 1, -1]])
    assert metrics.precision_at_k(Y, R, k=1) == 0.5
    assert metrics.precision_at_k(Y, R, k=3) == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert metrics.recall_at_k(Y, R, k=1) == 0.25
    d = 1 / math.log2(3)
    # row 0: dcg@3 = 1 + 1/2, ideal 1 + d; row 1: dcg = d, ideal 1
    assert metrics.ndcg_at_k(Y, R, k=3) == pytest.approx(((1 + 0.5) / (1 + d) + d) / 2)
    inv = np.array([1.0, 4.0, 2.0])
    # PSP@1: gains 2 (row 0) + 0, best 2 + 4
    assert metrics.psprecision_at_k(Y, R, k=1, inv_propensity=inv) == pytest.approx(2 / 6)


def test_inverse_propensity_formula():
    Y = [[1, 0], [1, 0], [1, 1], [0, 0]]
    C = (math.log(4) - 1) * 2.5 ** 0.55
    assert metrics.inverse_propensity(Y) == pytest.approx(
        [1 + C * 4.5 ** -0.55, 1 + C * 2.5 ** -0.55])
    got = metrics.inverse_propensity(Y, A=0.6, B=2.6)
    assert got == pytest.approx(naive_inv(Y, A=0.6, B=2.6))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 9), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_against_brute_force(n, L, k, seed):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, L)) < 0.3).astype(np.uint8)
    # rounded scores make ties; some zeros stay unranked
    S = np.round(rng.random((n, L)) * 3) / 3
    R = [naive_rank(list(row), k) for row in S]
    assert top_k(S, k).indices.tolist() == R
    assert top_k(sp.csr_matrix(S), k).indices.tolist() == R
    inv = naive_inv(Y.tolist()) if n > 1 else [1.0] * L
    for kind in KINDS:
        want = naive_metric(kind, Y.tolist(), R, k, inv)
        kw = {"inv_propensity": inv} if kind.startswith("ps") else {}
        assert _fn(kind)(Y, S, k=k, **kw) == pytest.approx(want, abs=1e-12)
        assert _fn(kind)(sp.csr_matrix(Y), np.array(R), k=k, **kw) == pytest.approx(
            want, abs=1e-12)


def test_registered_metrics_read_a_ranking_or_scores():
    rng = np.random.default_rng(0)
    Y = (rng.random((30, 8)) < 0.3).astype(np.uint8)
    S = rng.random((30, 8))
    ranking = top_k(S, 5)
    a = mlw.evaluate(Y, scores=S, metrics=["precision_at_3", "psndcg_at_5"])
    b = mlw.evaluate(Y, topk=ranking, metrics=["precision_at_3", "psndcg_at_5"])
    assert a == b
    # with a ranking, the metrics at k come by default, up to its depth
    got = mlw.evaluate(Y, topk=top_k(S, 3))
    assert "precision_at_3" in got and "precision_at_5" not in got
    assert "auc_micro" not in got
    # without one, the defaults stay as before
    assert not any("_at_" in name for name in mlw.evaluate(Y, scores=S))
    with pytest.raises(ValueError, match="top-k ranking of at least 5"):
        mlw.evaluate(Y, topk=top_k(S, 3), metrics=["precision_at_5"])


def test_training_propensities_change_psp():
    Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    R = np.array([[2], [1], [0]])
    train = np.array([[1, 0, 0]] * 9 + [[0, 1, 1]])
    inv = metrics.inverse_propensity(train)
    got = mlw.evaluate(Y, topk=R, inv_propensity=inv, metrics=["psprecision_at_1"])
    assert got["psprecision_at_1"] == pytest.approx(
        naive_metric("psprecision", Y.tolist(), R.tolist(), 1, list(inv)))


@pytest.mark.parametrize("bad, match", [
    (np.array([[0, 0]]), "same label twice"),
    (np.array([[5]]), r"\[-1, 3\)"),
    (np.array([0, 1]), "2-D integer"),
])
def test_bad_rankings(bad, match):
    with pytest.raises(ValueError, match=match):
        mlw.evaluate([[1, 0, 0]], topk=bad, metrics=["precision_at_1"])


def test_k_larger_than_the_ranking_is_refused():
    with pytest.raises(ValueError, match="at least 3"):
        metrics.precision_at_k([[1, 0]], np.array([[0]]), k=3)


napkinxc = pytest.importorskip("napkinxc.metrics")


def _napkin(kind, Y, R, k, inv):
    fn = {"precision": napkinxc.precision_at_k, "recall": napkinxc.recall_at_k,
          "ndcg": napkinxc.ndcg_at_k, "psprecision": napkinxc.psprecision_at_k,
          "psndcg": napkinxc.psndcg_at_k}[kind]
    rows = [[j for j in r if j >= 0] for r in R.tolist()]
    args = (inv,) if kind.startswith("ps") else ()
    return fn(sp.csr_matrix(Y), rows, *args, k=k)[k - 1]


@pytest.mark.parametrize("kind", KINDS)
def test_against_napkinxc_random(kind):
    rng = np.random.default_rng(1)
    Y = sp.csr_matrix((rng.random((200, 40)) < 0.08).astype(np.float64))
    R = top_k(rng.random((200, 40)) * (rng.random((200, 40)) < 0.2), 5).indices
    inv = napkinxc.Jain_et_al_inverse_propensity(Y)
    assert metrics.inverse_propensity(Y) == pytest.approx(inv)
    for k in (1, 3, 5):
        kw = {"inv_propensity": inv} if kind.startswith("ps") else {}
        assert _fn(kind)(Y, R, k=k, **kw) == pytest.approx(_napkin(kind, Y, R, k, inv))


@pytest.mark.parametrize("kind", KINDS)
def test_against_napkinxc_real_ranking(kind, mulan_dir):
    """A similarity-weighted label vote on enron's test set (a real text ranking),
    propensities from its training labels."""
    tr = mlw.load_dataset(mulan_dir / "enron-train.arff")
    te = mlw.load_dataset(mulan_dir / "enron-test.arff")
    sim = (sp.csr_matrix(te.X) @ sp.csr_matrix(tr.X).T).toarray()
    R = top_k(sim @ sp.csr_matrix(tr.Y).toarray(), 5).indices
    inv = napkinxc.Jain_et_al_inverse_propensity(sp.csr_matrix(tr.Y))
    Y = sp.csr_matrix(te.Y)
    for k in (1, 3, 5):
        kw = {"inv_propensity": inv} if kind.startswith("ps") else {}
        assert _fn(kind)(te.Y, R, k=k, **kw) == pytest.approx(_napkin(kind, Y, R, k, inv))
