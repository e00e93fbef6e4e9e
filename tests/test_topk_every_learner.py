"""Every registered learner with scores ranks labels through ``predict_topk``: its
ranking is the top k of its own ``predict_proba`` (ties by label index, zero scores
unranked), at any k, and a learner without scores says so in one line."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw.metrics import top_k

LEARNERS = sorted(mlw.list_learners())
FAST = {"n_estimators": 3, "n_rounds": 3, "max_components": 2, "n_components": 2}


@pytest.fixture(scope="module")
def data():
    train = mlw.load_dataset("emotions")
    return train.X[:80], train.Y[:80], train.X[80:110]


@pytest.mark.parametrize("name", LEARNERS)
def test_predict_topk_ranks_the_learners_scores(name, data) -> None:
    X, Y, Xq = data
    sig = mlw.list_learners()[name].signature_params()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mlw.get_learner(name, **{k: v for k, v in FAST.items() if k in sig})
        model.fit(X, Y)
    if not mlw.list_learners()[name].tags.predicts_scores:
        with pytest.raises(ValueError, match="cannot rank labels"):
            model.predict_topk(Xq, 3)
        return
    S = model.predict_proba(Xq)
    for k in (1, 3, 8):  # 8 > the 6 labels: empty positions are -1
        got = model.predict_topk(Xq, k)
        want = top_k(S, k)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_allclose(got.scores, want.scores)


def test_lcif_ranks_sparse_scores_without_densifying(data) -> None:
    X, Y, Xq = data
    model = mlw.get_learner("lcif").fit(sp.csr_matrix(X), sp.csr_matrix(Y))
    S = model.predict_proba(sp.csr_matrix(Xq))
    assert sp.issparse(S)
    got = model.predict_topk(sp.csr_matrix(Xq), 4)
    np.testing.assert_array_equal(got.indices, top_k(S, 4).indices)


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_bad_k(k, data) -> None:
    X, Y, Xq = data
    model = mlw.get_learner("br").fit(X, Y)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        model.predict_topk(Xq, k)
