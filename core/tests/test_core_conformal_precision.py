"""Conformal precision control (Learn-then-Test over a grid of cut-offs, Holm's
procedure) against pure-Python references, its guarantee simulated, its errors, and
``--conformal precision:TARGET`` through the evaluation path."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from naive_conformal import (
    hb_pvalue,
    holm,
    mean_precision_loss,
    row_precision,
)
from naive_conformal import (
    ltt_precision_cutoff as naive_cutoff,
)

import mlw
from mlw.conformal import (
    PRECISION_GRID,
    ConformalLabelSets,
    ConformalRecall,
    conformal_cutoff,
    hoeffding_bentkus_pvalue,
    holm_rejections,
    ltt_precision_cutoff,
    parse_target,
    precision_loss,
    precision_risks,
)


def _scored(rng: np.random.Generator, n: int, L: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Labels and noisy scores of them, some rows without labels, some scores exactly on
    grid points (ties with the cut-offs)."""
    Y = (rng.random((n, L)) < 0.3).astype(np.uint8)
    S = np.clip(0.5 * Y + 0.5 * rng.random((n, L)), 0, 1)
    S[rng.random((n, L)) < 0.1] = np.round(rng.random(), 2)  # on the 0.01 grid
    return Y, S


@pytest.mark.parametrize("seed", range(5))
def test_precision_loss_and_risks_match_loops(seed) -> None:
    rng = np.random.default_rng(seed)
    Y, S = _scored(rng, 40)
    Y[:3] = 0  # rows without true labels
    for lam in (0.0, 0.25, 0.5, float(np.round(S[5, 0], 2)), 1.0):
        P = (S >= lam).astype(np.uint8)
        loops = [1 - row_precision([j for j in range(5) if Y[i, j]],
                                   [j for j in range(5) if P[i, j]]) for i in range(40)]
        np.testing.assert_allclose(precision_loss(Y, P), loops, atol=1e-12)
        np.testing.assert_allclose(precision_loss(sp.csr_matrix(Y), sp.csr_matrix(P)),
                                   loops, atol=1e-12)
    risks = precision_risks(S, Y)
    expected = [mean_precision_loss(S, Y, float(lam)) for lam in PRECISION_GRID]
    np.testing.assert_allclose(risks, expected, atol=1e-12)
    np.testing.assert_allclose(precision_risks(sp.csr_matrix(S), sp.csr_matrix(Y)), risks)


def test_precision_conventions_agree_with_precision_example() -> None:
    Y = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 0], [0, 0, 0]], np.uint8)
    P = np.array([[0, 0, 0], [1, 0, 1], [0, 0, 0], [0, 1, 0]], np.uint8)
    assert precision_loss(Y, P).tolist() == [1.0, 0.5, 0.0, 1.0]
    metric = mlw.evaluate(Y, P, metrics=["precision_example"])["precision_example"]
    assert 1 - precision_loss(Y, P).mean() == pytest.approx(metric, abs=1e-12)


def test_hoeffding_bentkus_pvalue_matches_its_definition() -> None:
    for risk in (0.0, 0.03, 0.11, 0.2, 0.35):
        for n in (20, 150):
            assert hoeffding_bentkus_pvalue(risk, 0.2, n) == pytest.approx(
                hb_pvalue(risk, 0.2, n), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("seed", range(8))
def test_holm_matches_the_step_by_step_procedure(seed) -> None:
    rng = np.random.default_rng(seed)
    p = rng.random(30) ** 4
    p[:3] = p[5]  # ties
    for delta in (0.05, 0.1, 0.3):
        assert set(np.flatnonzero(holm_rejections(p, delta))) == holm(list(p), delta)
    assert not holm_rejections(np.ones(4), 0.1).any()
    assert holm_rejections(np.zeros(4), 0.1).all()


@pytest.mark.parametrize("seed", range(6))
def test_ltt_precision_cutoff_matches_brute_force(seed) -> None:
    rng = np.random.default_rng(100 + seed)
    Y, S = _scored(rng, 60 + 40 * seed)
    Y[0] = 0
    for alpha, delta in ((0.2, 0.1), (0.3, 0.05), (0.45, 0.2)):
        lam = ltt_precision_cutoff(S, Y, alpha, delta)
        assert lam == naive_cutoff(S, Y, alpha, delta, PRECISION_GRID)
        got, loss = conformal_cutoff(S, Y, control="precision", alpha=alpha, delta=delta)
        assert got == lam
        if lam != math.inf:
            assert loss == pytest.approx(mean_precision_loss(S, Y, lam), abs=1e-12)
            assert loss <= alpha


def test_ltt_holds_its_precision_level_over_calibration_draws() -> None:
    """The guarantee, simulated on fixed scores: 300 exchangeable calibration/test
    draws; the test precision at the chosen cut-off reaches the target in at least
    1 - delta of them (with a margin for the finite simulation)."""
    rng = np.random.default_rng(11)
    Y, S = _scored(rng, 4000, L=6)
    alpha, delta, n_cal = 0.25, 0.1, 300
    ok, certified = [], 0
    for _ in range(300):
        perm = rng.permutation(4000)
        cal, test = perm[:n_cal], perm[n_cal:]
        lam, _ = conformal_cutoff(S[cal], Y[cal], control="precision", alpha=alpha,
                                  delta=delta)
        certified += lam != math.inf
        ok.append(precision_loss(Y[test], (S[test] >= lam).astype(np.uint8)).mean() <= alpha)
    assert certified == 300  # the target is feasible for these scores
    assert np.mean(ok) >= 1 - delta - 0.03


def test_precision_wrapper_on_a_learner_and_its_errors() -> None:
    train = mlw.load_dataset("emotions")
    model = ConformalLabelSets("br", control="precision", alpha=0.6).fit(train.X, train.Y)
    assert model.certified_ and model.method is None
    S = model.predict_proba(train.X)
    np.testing.assert_array_equal(model.predict(train.X), S >= model.lambda_)
    with pytest.raises(ValueError, match="cannot control precision"):
        ConformalLabelSets("br", control="precision", method="crc").fit(train.X, train.Y)
    with pytest.raises(ValueError, match="control"):
        ConformalLabelSets("br", control="f1").fit(train.X, train.Y)
    with pytest.warns(UserWarning, match="no cut-off certifies a precision of 0.95"):
        hard = ConformalLabelSets("br", control="precision", alpha=0.05).fit(train.X, train.Y)
    assert not hard.certified_ and hard.lambda_ == math.inf
    assert hard.predict(train.X).sum() == 0


def test_conformal_recall_is_the_recall_case() -> None:
    train = mlw.load_dataset("emotions")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        old = ConformalRecall("br", alpha=0.2, method="ltt").fit(train.X, train.Y)
    new = ConformalLabelSets("br", control="recall", alpha=0.2, method="ltt").fit(
        train.X, train.Y)
    assert old.control == "recall" and "control" not in old.get_params()
    assert old.lambda_ == new.lambda_ and old.calibration_fnr_ == new.calibration_loss_


def test_a_conformal_recall_pickled_before_the_generalisation_still_predicts() -> None:
    """Its state had no ``control``, ``calibration_loss_`` nor ``certified_``."""
    import pickle

    train = mlw.load_dataset("emotions")
    model = ConformalRecall("br", alpha=0.2).fit(train.X, train.Y)
    state = dict(model.__dict__)
    for key in ("control", "calibration_loss_", "certified_"):
        del state[key]
    state["calibration_fnr_"] = model.calibration_loss_
    old = ConformalRecall.__new__(ConformalRecall)
    old.__setstate__(state)
    back = pickle.loads(pickle.dumps(old))
    assert back.control == "recall" and back.calibration_fnr_ == model.calibration_loss_
    np.testing.assert_array_equal(back.predict(train.X), model.predict(train.X))


def test_parse_target() -> None:
    assert parse_target("precision:0.9") == parse_target("precision:0.9:ltt")
    assert parse_target("0.8").control == "recall"
    assert parse_target("recall:0.9:ltt").method == "ltt"
    for bad, match in (("precision:0.9:crc", "cannot control precision"),
                       ("f1:0.9", "only recall or precision"),
                       ("recall:1.2", "must be in"), ("recall:x", "expected MEASURE"),
                       ("recall:0.9:ltt:1", "expected MEASURE"),
                       ("recall:0.9:foo", "unknown method")):
        with pytest.raises(ValueError, match=match):
            parse_target(bad)
