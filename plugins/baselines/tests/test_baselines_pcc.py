"""PCC inference: the numba kernels and the batched generic path against brute force
over all 2**L label vectors; beam search against exact inference."""

from __future__ import annotations

import numpy as np
import pytest
from baselines_testdata import correlated
from naive_baselines import (
    brute_force_marginals_and_mode,
    chain_link_proba,
    hand_rolled_chain,
    linear_link,
)
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from mlw_baselines import ClassifierChain, ProbabilisticClassifierChain, _inference, _kernels


def _random_chain(n=7, L=5, seed=0, scale=2.0):
    rng = np.random.default_rng(seed)
    A = rng.normal(scale=scale, size=(n, L))
    W = np.tril(rng.normal(scale=scale, size=(L, L)), -1)
    return A, W


def _linear_oracle(A, W):
    def oracle(d, rows, prefix):
        z = A[rows, d] + prefix.astype(np.float64) @ W[d, :d]
        return 1.0 / (1.0 + np.exp(-z))
    return oracle


@pytest.mark.parametrize("L", [1, 2, 5, 7])
def test_exact_kernel_equals_brute_force(L):
    A, W = _random_chain(n=6, L=L, seed=L)
    for chunks in (1, 4):
        marg, mode, lp = _kernels.pcc_exact_linear(A, W, chunks)
        for i in range(A.shape[0]):
            m, y, l_best = brute_force_marginals_and_mode(linear_link(A[i], W), L)
            np.testing.assert_allclose(marg[i], m, rtol=1e-10, atol=1e-13)
            np.testing.assert_array_equal(mode[i], y)
            assert lp[i] == pytest.approx(l_best, rel=1e-10)


def test_generic_exact_equals_kernel_and_chunks_do_not_matter():
    A, W = _random_chain(n=9, L=6, seed=11)
    ref = _kernels.pcc_exact_linear(A, W, 1)
    for max_rows in (1, 40, 1 << 16):
        got = _inference.exact(_linear_oracle(A, W), 9, 6, max_rows=max_rows)
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(got[1], ref[1])
        np.testing.assert_allclose(got[2], ref[2], rtol=1e-9)


@pytest.mark.parametrize("L", [3, 6])
def test_beam_at_least_2_to_the_L_equals_exact(L):
    A, W = _random_chain(n=8, L=L, seed=20 + L)
    exact = _kernels.pcc_exact_linear(A, W, 1)
    for width in (2 ** L, 2 ** L + 3):
        for got in (_kernels.pcc_beam_linear(A, W, width),
                    _inference.beam(_linear_oracle(A, W), 8, L, width)):
            np.testing.assert_allclose(got[0], exact[0], rtol=1e-9, atol=1e-12)
            np.testing.assert_array_equal(got[1], exact[1])
            np.testing.assert_allclose(got[2], exact[2], rtol=1e-9)


def test_beam_kernel_equals_generic_beam_and_is_a_lower_bound():
    A, W = _random_chain(n=30, L=9, seed=5, scale=1.0)
    exact = _kernels.pcc_exact_linear(A, W, 1)
    for width in (1, 2, 5):
        k = _kernels.pcc_beam_linear(A, W, width)
        g = _inference.beam(_linear_oracle(A, W), 30, 9, width)
        np.testing.assert_allclose(k[0], g[0], rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(k[1], g[1])
        # a beam's best vector is never more probable than the true mode
        assert np.all(k[2] <= exact[2] + 1e-12)
    # width 1 is the greedy chain (no probability is exactly 0.5 here)
    greedy, _ = _kernels.chain_greedy_linear(A, W)
    np.testing.assert_array_equal(_kernels.pcc_beam_linear(A, W, 1)[1], greedy)
    # a wider beam finds the mode more often
    hits = [np.mean(np.all(_kernels.pcc_beam_linear(A, W, w)[1] == exact[1], axis=1))
            for w in (1, 32)]
    assert hits[1] >= hits[0] and hits[1] > 0.9


def test_exact_mode_ties_go_to_the_lexicographically_smallest():
    A = np.zeros((1, 3))
    W = np.zeros((3, 3))  # uniform: every vector has probability 1/8
    for marg, mode, _ in (_kernels.pcc_exact_linear(A, W, 1),
                          _kernels.pcc_beam_linear(A, W, 8),
                          _kernels.pcc_beam_linear(A, W, 3),
                          _inference.exact(_linear_oracle(A, W), 1, 3),
                          _inference.beam(_linear_oracle(A, W), 1, 3, 8)):
        np.testing.assert_array_equal(mode[0], [0, 0, 0])
        assert marg.shape == (1, 3)


@pytest.fixture(scope="module")
def data():
    X, Y = correlated(n=140, d=4, L=5, seed=2)
    return X[:100], Y[:100], X[100:], Y[100:]


@pytest.mark.parametrize("base", [LogisticRegression(C=1.0, max_iter=500),
                                  DecisionTreeClassifier(max_depth=3, random_state=0)],
                         ids=["logistic", "tree"])
def test_pcc_marginals_and_mode_equal_brute_force_on_fitted_chains(data, base):
    Xtr, Ytr, Xte, _ = data
    order = [4, 2, 0, 1, 3]
    pcc = ProbabilisticClassifierChain(base_estimator=base, order=order,
                                       threshold=None).fit(Xtr, Ytr)
    assert pcc.inference_ == "exact"
    models = hand_rolled_chain(base, Xtr, Ytr, order)
    marg, mode = pcc.predict_proba(Xte), pcc.predict(Xte)
    for i in range(Xte.shape[0]):
        m, y, _ = brute_force_marginals_and_mode(
            lambda d, prefix, i=i: chain_link_proba(models, Xte[i:i + 1], prefix, d), 5)
        np.testing.assert_allclose(marg[i, order], m, rtol=1e-7, atol=1e-10)
        if isinstance(base, LogisticRegression):  # trees can tie; checked in kernels
            np.testing.assert_array_equal(mode[i, order], y)


def test_pcc_beam_learner_with_full_beam_equals_exact_learner(data):
    Xtr, Ytr, Xte, Yte = data
    exact = ProbabilisticClassifierChain().fit(Xtr, Ytr)
    beam = ProbabilisticClassifierChain(max_exact_labels=0, beam_width=32).fit(Xtr, Ytr)
    assert (exact.inference_, beam.inference_) == ("exact", "beam")
    np.testing.assert_allclose(beam.predict_proba(Xte), exact.predict_proba(Xte), rtol=1e-9)
    np.testing.assert_array_equal(beam.predict(Xte), exact.predict(Xte))
    np.testing.assert_allclose(beam.log_proba_of(Xte, Yte), exact.log_proba_of(Xte, Yte))


def test_pcc_mode_is_at_least_as_probable_as_the_cc_prediction(data):
    Xtr, Ytr, Xte, _ = data
    pcc = ProbabilisticClassifierChain(threshold=None).fit(Xtr, Ytr)
    cc = ClassifierChain(threshold=None).fit(Xtr, Ytr)
    mode = pcc.predict(Xte)
    lp_mode = pcc.log_proba_of(Xte, mode)
    assert np.all(lp_mode >= pcc.log_proba_of(Xte, cc.predict(Xte)) - 1e-12)
    _, mode2, lp2 = pcc.predict_joint(Xte)
    np.testing.assert_array_equal(mode, mode2)
    np.testing.assert_allclose(lp_mode, lp2, rtol=1e-9)
    # the joint sums to one: marginals are probabilities and exp(log P) of all vectors
    # of one instance add up to 1
    from mlw_baselines._inference import all_label_vectors

    V = all_label_vectors(5)
    total = np.exp(pcc.log_proba_of(np.repeat(Xte[:1], 32, axis=0), V)).sum()
    assert total == pytest.approx(1.0, rel=1e-9)


def test_pcc_generic_beam_on_trees(data):
    Xtr, Ytr, Xte, _ = data
    tree = DecisionTreeClassifier(max_depth=3, random_state=0)
    exact = ProbabilisticClassifierChain(base_estimator=tree).fit(Xtr, Ytr)
    beam = ProbabilisticClassifierChain(base_estimator=tree, max_exact_labels=3,
                                        beam_width=32).fit(Xtr, Ytr)
    assert beam.linear_coef_ is None and beam.inference_ == "beam"
    np.testing.assert_allclose(beam.predict_proba(Xte), exact.predict_proba(Xte),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(beam.predict(Xte), exact.predict(Xte))


@pytest.mark.parametrize("params", [{"beam_width": 0}, {"max_exact_labels": -1},
                                    {"max_exact_labels": 40}, {"beam_width": 2.5}])
def test_pcc_rejects_bad_inference_parameters(data, params):
    Xtr, Ytr, _, _ = data
    with pytest.raises(ValueError, match="beam_width|max_exact_labels"):
        ProbabilisticClassifierChain(**params).fit(Xtr, Ytr)
