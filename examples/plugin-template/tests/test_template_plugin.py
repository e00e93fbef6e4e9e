"""Tests of the template plugin: registration, behaviour, scikit-learn conventions."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import mlw
from mlw_plugin_template import NearestCentroid, cardinality_error
from mlw_plugin_template import plugin as template_plugin


def _blobs(seed: int = 0, n: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Two labels, each shifting the mean of its own feature by +3."""
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, 2)) < 0.4).astype(np.uint8)
    X = rng.normal(size=(n, 4))
    X[:, :2] += 3.0 * Y
    return X, Y


def test_template_registers_its_learner_and_metric() -> None:
    pm = mlw.plugins.PluginManager(entry_points=False)
    pm.register(template_plugin, name="template_under_test", distribution="mlw-plugin-template")
    info = next(i for i in pm.plugins() if i.name == "template_under_test")
    assert info.status == "ok", info.error
    assert info.registers["learner"] == ["template_centroid"]
    assert info.registers["metric"] == ["cardinality_error"]
    assert pm.learner("template_centroid").load() is NearestCentroid
    assert pm.metric("cardinality_error").greater_is_better is False


def test_centroid_scores_are_one_at_the_positive_centroid() -> None:
    X, Y = _blobs()
    model = NearestCentroid(threshold="fixed").fit(X, Y)
    # centroids live in the scaled space (features divided by their std)
    np.testing.assert_allclose(model.inv_scale_, 1.0 / X.std(axis=0))
    scores = model.predict_proba(model.pos_centroids_[[0]] / model.inv_scale_)
    assert scores[0, 0] == pytest.approx(1.0)
    scores = model.predict_proba(model.neg_centroids_[[1]] / model.inv_scale_)
    assert scores[0, 1] == pytest.approx(0.0)


def test_centroid_beats_the_prior_on_separable_labels() -> None:
    X, Y = _blobs(0)
    Xt, Yt = _blobs(1)
    model = NearestCentroid().fit(X, Y)
    acc = mlw.evaluate(Yt, model.predict(Xt), metrics=["hamming_loss"])["hamming_loss"]
    assert acc < 0.15  # label present in ~40%: predicting the majority gives ~0.4


def test_centroid_sparse_input_gives_the_dense_scores() -> None:
    X, Y = _blobs()
    X[X < 0.5] = 0.0
    dense = NearestCentroid().fit(X, Y).predict_proba(X)
    sparse = NearestCentroid().fit(sp.csr_matrix(X), sp.csr_matrix(Y)).predict_proba(
        sp.csr_matrix(X))
    np.testing.assert_allclose(sparse, dense, atol=1e-10)


def test_centroid_follows_sklearn_conventions() -> None:
    X, Y = _blobs()
    model = NearestCentroid(threshold="cardinality")
    assert clone(model).get_params() == {"threshold": "cardinality"}
    fitted = model.fit(X, Y)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict(X), fitted.predict(X))


def test_cardinality_error_counts_the_mean_difference() -> None:
    Y = np.array([[1, 1, 0], [0, 0, 0]])
    P = np.array([[1, 0, 0], [0, 1, 1]])
    assert cardinality_error(Y, P) == pytest.approx(0.5)  # 3 predicted vs 2 true over 2 rows
    assert mlw.evaluate(Y, P, metrics=["cardinality_error"]) == {"cardinality_error": 0.5}
