"""The empty-prediction rate and the true empty rate, against
a brute-force count over the rows, dense and CSR, and through ``mlw.evaluate``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw import metrics as M


def _brute_empty(Y: np.ndarray) -> float:
    rows = [all(v == 0 for v in row) for row in np.asarray(Y).tolist()]
    return sum(rows) / len(rows)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("density", [0.02, 0.2, 0.6])
def test_empty_prediction_rate_matches_a_brute_force_count(seed: int, density: float):
    rng = np.random.default_rng(seed)
    n, L = rng.integers(1, 40), rng.integers(1, 9)
    Y = (rng.random((n, L)) < 0.3).astype(np.uint8)
    P = (rng.random((n, L)) < density).astype(np.uint8)
    expected = _brute_empty(P)
    assert M.empty_prediction_rate(Y, P) == pytest.approx(expected)
    assert M.empty_prediction_rate(sp.csr_matrix(Y), sp.csr_matrix(P)) == pytest.approx(expected)
    assert mlw.evaluate(Y, P, metrics=["empty_prediction_rate"])[
        "empty_prediction_rate"] == pytest.approx(expected)
    assert M.empty_rate(Y) == pytest.approx(_brute_empty(Y))
    assert M.empty_rate(sp.csr_matrix(Y)) == pytest.approx(_brute_empty(Y))


def test_empty_prediction_rate_ignores_the_truth_and_is_registered_as_a_label_metric():
    P = np.array([[0, 0], [1, 0], [0, 0], [0, 1]])
    for Y in (np.zeros((4, 2), int), np.ones((4, 2), int)):
        assert M.empty_prediction_rate(Y, P) == 0.5
    spec = mlw.list_metrics()["empty_prediction_rate"]
    assert spec.needs == "labels" and spec.greater_is_better is False
    # a CSR row with an explicitly stored zero is still empty
    S = sp.csr_matrix((np.array([0, 1], np.uint8), np.array([0, 1]), np.array([0, 1, 2])),
                      shape=(2, 2))
    assert M.empty_rate(S) == pytest.approx(0.5)
