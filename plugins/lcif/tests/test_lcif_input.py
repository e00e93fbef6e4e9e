"""Bad and unusual input, plugin registration, scikit-learn conventions."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import mlw
from mlw_lcif import LCIF, FeatureKNN, InstanceKNN

X = np.array([[1, 0, 1, 0], [1, 1, 0, 0], [0, 1, 1, 0], [1, 0, 0, 0], [0, 0, 1, 0],
              [0, 0, 0, 0]], dtype=float)
Y = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1], [1, 0, 0], [0, 0, 1], [0, 0, 1]])


def test_registered_learners() -> None:
    names = mlw.list_learners()
    for name in ("lcif", "lcif2", "instance_knn", "feature_knn"):
        assert name in names
        assert names[name].tags.sparse_output and names[name].tags.sparse_input
    assert isinstance(mlw.get_learner("lcif", k_ins=3), LCIF)


def test_k_larger_than_training_set_is_a_clear_error() -> None:
    # one message style for every scalar parameter (mlw.validation.check_param)
    with pytest.raises(ValueError, match=r"parameter 'k_ins' must be an integer >= 1 and "
                                         r"<= 6, got 7"):
        LCIF(k_ins=7).fit(X, Y)
    with pytest.raises(ValueError, match="parameter 'k_ins' must be an integer >= 1"):
        InstanceKNN(k_ins=0).fit(X, Y)
    with pytest.raises(ValueError, match="parameter 'k_feat' must be an integer >= 1"):
        FeatureKNN(k_feat=1.5).fit(X, Y)
    with pytest.raises(ValueError, match=r"parameter 'lam' must be a number >= 0 and <= 1"):
        LCIF(k_ins=2, lam=1.5).fit(X, Y)
    with pytest.raises(ValueError, match="parameter 'random_state' must be an integer"):
        LCIF(k_ins=2, random_state="x").fit(X, Y)


def test_k_feat_is_capped_at_the_label_count() -> None:
    m = FeatureKNN(k_feat=10).fit(X, Y)
    assert m.k_feat_ == 3
    np.testing.assert_allclose(m.predict_proba(X), FeatureKNN(k_feat=3).fit(X, Y).predict_proba(X))


def test_feature_count_mismatch_is_a_clear_error() -> None:
    m = LCIF(k_ins=2).fit(X, Y)
    with pytest.raises(ValueError, match="has 5 features, but the model was fitted with 4"):
        m.predict(np.zeros((2, 5)))


def test_all_zero_rows_score_zero_and_predict_nothing() -> None:
    m = LCIF(k_ins=3, k_feat=2).fit(X, Y)  # training row 5 is all zero
    S = m.predict_proba(np.zeros((2, 4)))
    assert np.all(S == 0)
    assert np.all(m.predict(np.zeros((2, 4))) == 0)
    idx, _ = m.kneighbors(X[:5])
    assert not (idx == 5).any()  # an all-zero training row is nobody's neighbour


def test_features_never_seen_in_training_are_ignored() -> None:
    # feature 3 is zero in every training row
    m = LCIF(k_ins=3, k_feat=2).fit(X, Y)
    q = np.array([[1.0, 0.0, 1.0, 0.0]])
    q_unseen = np.array([[1.0, 0.0, 1.0, 5.0]])
    np.testing.assert_array_equal(m.predict_proba(q_unseen), m.predict_proba(q))
    only_unseen = m.predict_proba(np.array([[0.0, 0.0, 0.0, 1.0]]))
    assert np.all(only_unseen == 0)


def test_real_valued_and_negative_dense_features_are_scaled() -> None:
    rng = np.random.default_rng(0)
    Xr = rng.normal(size=(30, 5)) * 10
    Yr = (rng.random((30, 3)) < 0.4).astype(np.uint8)
    S = LCIF(k_ins=5, k_feat=2).fit(Xr, Yr).predict_proba(Xr * 3)  # out of range: clipped
    assert S.shape == (30, 3) and np.all((S >= 0) & (S <= 1 + 1e-12))


def test_clone_and_params() -> None:
    m = LCIF(k_ins=3, k_feat=2, lam=0.2)
    c = clone(m)
    assert c.get_params() == m.get_params()
    assert set(InstanceKNN().get_params()) == {"k_ins", "threshold", "cv", "cv_metric",
                                               "random_state", "feature_norm",
                                               "threshold_sample", "sim_power"}


def test_unknown_cv_metric_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="parameter 'cv_metric' must be a string one of"):
        LCIF(cv=2, cv_metric="nope").fit(X, Y)
    with pytest.raises(ValueError, match="parameter 'cv' must be an integer >= 2 and <= 6"):
        LCIF(cv=1).fit(X, Y)
    with pytest.raises(ValueError, match="parameter 'feature_votes' must be a string one of"):
        LCIF(feature_votes="some").fit(X, Y)


def test_sparse_input_stays_sparse() -> None:
    m = LCIF(k_ins=2, k_feat=2).fit(sp.csr_matrix(X), sp.csr_matrix(Y))
    assert sp.issparse(m.predict_proba(sp.csr_matrix(X)))
