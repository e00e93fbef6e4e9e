"""ECC and EPCC: the members are chains on bootstrap samples with random orders, ECC
averages them, and EPCC's mixture inference (numba kernels and the generic path)
equals brute-force enumeration of the averaged joint distribution."""

from __future__ import annotations

import numpy as np
import pytest
from baselines_testdata import correlated
from joblib import parallel_config
from naive_baselines import (
    chain_link_proba,
    greedy_chain,
    hand_rolled_chain,
    linear_link,
    mixture_brute_force,
)
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from mlw_baselines import (
    EnsembleOfClassifierChains,
    EnsembleOfProbabilisticClassifierChains,
    _inference,
    _kernels,
)


def _random_mixture(n=5, L=4, m=3, seed=0, scale=2.0):
    rng = np.random.default_rng(seed)
    A = rng.normal(scale=scale, size=(n, m * L))
    W = np.tril(rng.normal(scale=scale, size=(m, L, L)), -1)
    orders = np.stack([rng.permutation(L) for _ in range(m)]).astype(np.int64)
    return A, W, orders


def _links(A, W, i, L):
    m = W.shape[0]
    return [linear_link(A[i, k * L:(k + 1) * L], W[k]) for k in range(m)]


def _linear_oracle(A, W):
    def oracle(d, rows, prefix):
        z = A[rows, d] + prefix.astype(np.float64) @ W[d, :d]
        return 1.0 / (1.0 + np.exp(-z))
    return oracle


def _oracles(A, W, L):
    return [_linear_oracle(np.ascontiguousarray(A[:, k * L:(k + 1) * L]), W[k])
            for k in range(W.shape[0])]


@pytest.mark.parametrize("L,m", [(1, 2), (3, 1), (4, 3), (6, 4)])
def test_mixture_kernel_and_generic_path_equal_brute_force(L, m):
    A, W, orders = _random_mixture(n=5, L=L, m=m, seed=10 * L + m)
    kernel = _kernels.epcc_exact_linear(A, W, orders, 2)
    generic = _inference.mixture_exact(_oracles(A, W, L), orders, 5, L, max_rows=7)
    for i in range(5):
        _, _, marg, mode, lp = mixture_brute_force(_links(A, W, i, L), orders, L)
        for got in (kernel, generic):
            np.testing.assert_allclose(got[0][i], marg, rtol=1e-10, atol=1e-13)
            np.testing.assert_array_equal(got[1][i], mode)
            assert got[2][i] == pytest.approx(lp, rel=1e-10)


def test_mixture_log_proba_of_candidates_equals_brute_force():
    L = 5
    A, W, orders = _random_mixture(n=4, L=L, m=3, seed=7)
    rng = np.random.default_rng(1)
    cand = rng.integers(0, 2, size=(4, 6, L)).astype(np.uint8)
    kernel = _kernels.mixture_log_proba_linear(A, W, orders, cand)
    generic = _inference.mixture_log_proba(_oracles(A, W, L), orders, cand)
    for i in range(4):
        vectors, probs, _, _, _ = mixture_brute_force(_links(A, W, i, L), orders, L)
        codes = cand[i] @ (1 << np.arange(L - 1, -1, -1))
        expected = np.log(probs[codes])
        np.testing.assert_allclose(kernel[i], expected, rtol=1e-10)
        np.testing.assert_allclose(generic[i], expected, rtol=1e-10)


def test_final_beams_agree_between_kernel_generic_and_pcc_beam():
    A, W, _ = _random_mixture(n=12, L=7, m=1, seed=3, scale=1.0)
    for width in (1, 3, 200):
        vk, lk = _kernels.pcc_beam_final_linear(A, W[0], width)
        vg, lg = _inference.beam_search(_linear_oracle(A, W[0]), 12, 7, width)
        assert vk.shape == (12, min(width, 128), 7)
        np.testing.assert_array_equal(vk, vg)
        np.testing.assert_allclose(lk, lg, rtol=1e-10)
        mode, top = _inference.best_vectors(vk, lk)
        _, pmode, plp = _kernels.pcc_beam_linear(A, W[0], width)
        np.testing.assert_array_equal(mode, pmode)
        np.testing.assert_allclose(top, plp, rtol=1e-12)


@pytest.fixture(scope="module")
def data():
    X, Y = correlated(n=150, d=4, L=4, seed=6)
    return X[:100], Y[:100], X[100:], Y[100:]


def test_ecc_is_the_average_of_chains_on_bootstrap_samples(data):
    Xtr, Ytr, Xte, _ = data
    lr = LogisticRegression(C=1.0, max_iter=1000)
    ecc = EnsembleOfClassifierChains(base_estimator=lr, n_estimators=3,
                                     random_state=8).fit(Xtr, Ytr)
    hard = EnsembleOfClassifierChains(base_estimator=lr, n_estimators=3, random_state=8,
                                      voting="hard").fit(Xtr, Ytr)
    assert ecc.orders_.shape == (3, 4) and len({tuple(o) for o in ecc.orders_}) > 1
    soft_sum = np.zeros((50, 4))
    hard_sum = np.zeros((50, 4))
    for order, rows in zip(ecc.orders_, ecc.estimators_samples_, strict=False):
        assert rows.size == 100 and np.unique(rows).size < 100  # a bootstrap sample
        models = hand_rolled_chain(lr, Xtr[rows], Ytr[rows], list(order))
        Yhat, P = greedy_chain(models, Xte, list(order))
        soft_sum += P
        hard_sum += Yhat
    np.testing.assert_allclose(ecc.predict_proba(Xte), soft_sum / 3, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(ecc.predict(Xte), (soft_sum / 3 >= 0.5).astype(np.uint8))
    np.testing.assert_allclose(hard.predict_proba(Xte), hard_sum / 3)


def test_subsampling_without_replacement(data):
    Xtr, Ytr, _, _ = data
    ecc = EnsembleOfClassifierChains(n_estimators=2, bootstrap=False,
                                     max_samples=0.67).fit(Xtr, Ytr)
    for rows in ecc.estimators_samples_:
        assert rows.size == 67 and np.unique(rows).size == 67


@pytest.mark.parametrize("base", [LogisticRegression(C=1.0, max_iter=1000),
                                  DecisionTreeClassifier(max_depth=3, random_state=0)],
                         ids=["linear", "tree"])
def test_epcc_is_the_mode_of_the_averaged_joint(data, base):
    Xtr, Ytr, Xte, Yte = data
    epcc = EnsembleOfProbabilisticClassifierChains(base_estimator=base, n_estimators=3,
                                                   random_state=4).fit(Xtr, Ytr)
    assert epcc.inference_ == "exact"
    assert epcc.linear_ == isinstance(base, LogisticRegression)
    chains = [hand_rolled_chain(base, Xtr[rows], Ytr[rows], list(order))
              for order, rows in zip(epcc.orders_, epcc.estimators_samples_, strict=False)]
    marg, mode, mode_lp = epcc.predict_joint(Xte[:15])
    for i in range(15):
        links = [lambda d, prefix, i=i, models=models: chain_link_proba(
            models, Xte[i:i + 1], prefix, d) for models in chains]
        _, probs, m_ref, y_ref, lp_ref = mixture_brute_force(links, epcc.orders_, 4)
        np.testing.assert_allclose(marg[i], m_ref, rtol=1e-6, atol=1e-9)
        if np.sort(probs)[-2] < probs.max() - 1e-9:  # trees can tie
            np.testing.assert_array_equal(mode[i], y_ref)
            assert mode_lp[i] == pytest.approx(lp_ref, rel=1e-6)
    P, S = epcc.predict_with_scores(Xte)
    np.testing.assert_array_equal(P, epcc.predict(Xte))
    np.testing.assert_allclose(S, epcc.predict_proba(Xte))
    # the mixture's log-probability: log of the mean of the members' probabilities
    members = np.stack([m.log_proba_of(Xte, Yte) for m in epcc.estimators_])
    np.testing.assert_allclose(epcc.log_proba_of(Xte, Yte),
                               np.log(np.exp(members).mean(axis=0)), rtol=1e-9)


def test_epcc_beam_with_full_beams_equals_exact(data):
    Xtr, Ytr, Xte, Yte = data
    exact = EnsembleOfProbabilisticClassifierChains(n_estimators=3).fit(Xtr, Ytr)
    beam = EnsembleOfProbabilisticClassifierChains(n_estimators=3, max_exact_labels=2,
                                                   beam_width=16).fit(Xtr, Ytr)
    assert beam.inference_ == "beam"
    np.testing.assert_allclose(beam.predict_proba(Xte), exact.predict_proba(Xte), rtol=1e-9)
    np.testing.assert_array_equal(beam.predict(Xte), exact.predict(Xte))
    np.testing.assert_allclose(beam.predict_joint(Xte)[2], exact.predict_joint(Xte)[2],
                               rtol=1e-9)


def test_epcc_narrow_beam_generic_equals_linear_kernels(data):
    """The same fitted members through the kernels and through the batched oracles."""
    Xtr, Ytr, Xte, _ = data
    epcc = EnsembleOfProbabilisticClassifierChains(n_estimators=3, max_exact_labels=1,
                                                   beam_width=3).fit(Xtr, Ytr)
    fast = epcc.predict_joint(Xte)
    epcc.linear_ = False
    slow = epcc.predict_joint(Xte)
    for a, b in zip(fast, slow, strict=False):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    # the mode is the best candidate under the mixture: at least as probable as every
    # member's own beam mode
    epcc.linear_ = True
    best = epcc.log_proba_of(Xte, fast[1])
    for member in epcc.estimators_:
        assert np.all(best >= epcc.log_proba_of(Xte, member.predict(Xte)) - 1e-9)


def test_ensembles_fit_in_parallel_like_serially(data):
    Xtr, Ytr, Xte, _ = data
    for cls in (EnsembleOfClassifierChains, EnsembleOfProbabilisticClassifierChains):
        serial = cls(n_estimators=4, random_state=2).fit(Xtr, Ytr)
        with parallel_config(backend="threading"):
            parallel = cls(n_estimators=4, random_state=2, n_jobs=2).fit(Xtr, Ytr)
        np.testing.assert_array_equal(serial.orders_, parallel.orders_)
        np.testing.assert_allclose(serial.predict_proba(Xte), parallel.predict_proba(Xte))


@pytest.mark.parametrize("cls,params,message", [
    (EnsembleOfClassifierChains, {"n_estimators": 0}, "'n_estimators' must be"),
    (EnsembleOfClassifierChains, {"voting": "mean"}, "'voting' must be"),
    (EnsembleOfClassifierChains, {"max_samples": 0.0}, "'max_samples' must be"),
    (EnsembleOfClassifierChains, {"bootstrap": False, "max_samples": 1.5},
     "'max_samples' must be"),
    (EnsembleOfProbabilisticClassifierChains, {"max_exact_labels": 21},
     "'max_exact_labels' must be"),
    (EnsembleOfProbabilisticClassifierChains, {"beam_width": 0}, "'beam_width' must be"),
])
def test_bad_parameters(data, cls, params, message):
    Xtr, Ytr, _, _ = data
    with pytest.raises(ValueError, match=message):
        cls(**params).fit(Xtr, Ytr)
