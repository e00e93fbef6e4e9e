"""The LCIF hyper-parameter search: its folds (multi-label iterative stratification, the
paper's 10-fold CV on the training part) and the per-metric selection."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw_lcif import LCIF, search_hyperparameters
from mlw_lcif import _prep as P
from mlw_lcif.search import METRICS, _folds


def _data(seed: int = 0, n: int = 120, d: int = 20, L: int = 6) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.3).astype(float)
    Y = ((X @ (rng.random((d, L)) < 0.2)) + rng.random((n, L)) > 1.5).astype(np.uint8)
    return X, Y


def test_folds_are_the_cores_iterative_stratification() -> None:
    _, Y = _data(1)
    Ycsr = sp.csr_matrix(Y)
    want = mlw.IterativeStratifiedKFold(5, seed=7).folds(Ycsr)
    np.testing.assert_array_equal(_folds(Ycsr, 5, 7), want)
    # and they are what the search uses: same seed, same folds, same scores
    Xs = P.FeatureScaler().fit(_data(1)[0]).transform(_data(1)[0])
    a = search_hyperparameters(Xs, Ycsr, n_folds=5, seed=7, k_grid=(1, 3), lam_grid=(0.0, 1.0))
    b = search_hyperparameters(Xs, Ycsr, n_folds=5, seed=7, k_grid=(1, 3), lam_grid=(0.0, 1.0))
    np.testing.assert_array_equal(a["all_scores"], b["all_scores"])


def test_a_rare_label_is_in_every_folds_training_part() -> None:
    """A random partition can put all positives of a rare label into one held-out fold
    (its training part then never sees the label); stratification spreads them."""
    n = 200
    Y = np.zeros((n, 3), dtype=np.uint8)
    Y[:, 0] = 1
    Y[::2, 1] = 1
    Y[[3, 50, 97, 140, 188], 2] = 1  # 5 positives, 5 folds: one per fold
    fold = _folds(sp.csr_matrix(Y), 5, 0)
    for f in range(5):
        assert Y[fold == f, 2].sum() == 1
        assert abs(int(Y[fold == f, 1].sum()) - 20) <= 1


@pytest.mark.parametrize("metric", sorted(METRICS))
def test_each_metric_selects_its_own_best_configuration(metric: str) -> None:
    X, Y = _data(2, n=150)
    m = LCIF(cv=3, cv_metric=metric, random_state=4).fit(X, Y)
    res = m.cv_results_
    best = res["best_by_metric"][metric]
    assert (m.k_ins_, m.k_feat_, m.lam_) == (best["k_ins"], best["k_feat"], best["lam"])
    sc = res["all_scores"][..., METRICS[metric]]
    assert best["score"] == sc.max()  # hamming_loss is stored negated: max = lowest loss
    assert res["score"] == best["score"] and res["metric"] == metric


def test_per_metric_selections_differ_from_the_accuracy_selection_when_they_should() -> None:
    """best_by_metric holds an argmax per metric, not one configuration for all."""
    X, Y = _data(3, n=150)
    Xs = P.FeatureScaler().fit(X).transform(X)
    res = search_hyperparameters(Xs, sp.csr_matrix(Y), n_folds=3, seed=0)
    for name, code in METRICS.items():
        sc = res["all_scores"][..., code]
        ia, ib, iq = np.unravel_index(int(np.argmax(sc)), sc.shape)
        b = res["best_by_metric"][name]
        assert (b["k_ins"], b["k_feat"], b["lam"]) == (
            res["k_ins_grid"][ia], res["k_feat_grid"][ib], res["lam_grid"][iq])
