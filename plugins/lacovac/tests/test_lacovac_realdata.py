"""LaCovaC on real data loaded through mlw: the bundled emotions set and sparse medical."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw.thresholds import PCut
from mlw_lacovac import MLC45, LaCovaC


@pytest.fixture(scope="module")
def emotions():
    train = mlw.load_dataset("emotions")
    return train


def test_emotions_beats_the_prior_and_its_probabilities_are_calibrated_enough(emotions):
    X, Y = emotions.X, np.asarray(emotions.Y.toarray() if sp.issparse(emotions.Y)
                                  else emotions.Y)
    rng = np.random.default_rng(0)
    test = rng.random(len(X)) < 0.3
    model = LaCovaC().fit(X[~test], Y[~test])
    S = model.predict_proba(X[test])
    prior = np.tile(Y[~test].mean(axis=0), (test.sum(), 1))
    ours = mlw.evaluate(Y[test], PCut().fit(None, Y[~test]).predict(S), scores=S,
                        metrics=["log_loss", "hamming_loss"])
    base = mlw.evaluate(Y[test], PCut().fit(None, Y[~test]).predict(prior), scores=prior,
                        metrics=["log_loss", "hamming_loss"])
    # the tree must carry information beyond the label frequencies
    assert ours["log_loss"] < base["log_loss"]
    assert ours["hamming_loss"] < base["hamming_loss"]
    # log P(y|x) is finite
    lp = model.log_proba_of(X[test], Y[test])
    assert np.all(np.isfinite(lp)) and np.all(lp < 0)
    # the default decision: the paper's Pcut, and the top label for a row it
    # leaves empty, since no training row of emotions is empty
    plain = PCut().fit(None, Y[~test]).predict(S)
    pred = model.predict(X[test])
    assert model.threshold_.top_label_ and not np.all(plain.any(axis=1))
    assert np.all(pred.any(axis=1)) and np.all(pred >= plain)
    assert np.array_equal(pred[plain.any(axis=1)], plain[plain.any(axis=1)])


def test_sparse_text_data_is_never_densified(mulan_dir, monkeypatch):
    ds = mlw.load_dataset(mulan_dir / "medical.arff")
    X, Y = ds.X[:400], ds.Y[:400]
    assert sp.issparse(X)

    def refuse(*args, **kwargs):
        raise AssertionError("sparse X was densified")

    for cls in (sp.csr_matrix, sp.csc_matrix):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
    for learner in (LaCovaC(threshold=None), MLC45()):  # predict: the leaf modes
        learner.fit(X, Y)
        P = learner.predict_proba(X)
        assert P.shape == (400, Y.shape[1])
        # training rows are routed to the leaves they were grown in: the training exact
        # match of the joint decision is far above chance
        pred = learner.predict(X)
        monkeypatch.undo()
        exact = float(np.mean(np.all(pred == Y.toarray(), axis=1)))
        assert exact > 0.5
        for cls in (sp.csr_matrix, sp.csc_matrix):
            monkeypatch.setattr(cls, "toarray", refuse)
            monkeypatch.setattr(cls, "todense", refuse)
