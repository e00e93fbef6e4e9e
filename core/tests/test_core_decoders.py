"""Decoders against brute force: GFM equals the exact maximiser of the expected F-beta
over all 2**L label sets (random joints, label independence, a chain and a tree model),
the Jaccard rule the best top-k set on its samples, the subset decoder the joint mode."""

from __future__ import annotations

import numpy as np
import pytest
from naive_decoders import (
    all_vectors,
    expected_measures,
    f_beta,
    f_beta_matrix,
    independent_table,
    index_of,
    jaccard,
    measure_matrix,
    size_marginals,
    table_of,
)

import mlw
from mlw.decoders import DecoderError, _kernels, split_size_marginals

F1 = {L: f_beta_matrix(L) for L in range(1, 9)}


def _random_table(rng: np.random.Generator, L: int, sparsity: float) -> np.ndarray:
    t = rng.random(2 ** L) ** 3
    t[rng.random(2 ** L) < sparsity] = 0.0
    if t.sum() == 0:
        t[rng.integers(2 ** L)] = 1.0
    return t / t.sum()


@pytest.mark.parametrize("L", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("sparsity", [0.0, 0.8])
def test_gfm_is_the_exact_f1_maximiser_of_random_joints(L, sparsity) -> None:
    rng = np.random.default_rng(L * 7 + int(sparsity * 10))
    for _ in range(15):
        table = _random_table(rng, L, sparsity)
        P = size_marginals(table)[None]
        P, p0 = split_size_marginals(P)
        assert p0[0] == pytest.approx(table[0], abs=1e-12)
        Y, value = _kernels.gfm(P, p0, 1.0)
        exp = expected_measures(table, F1[L])
        assert value[0] == pytest.approx(exp.max(), abs=1e-9)
        assert exp[index_of(Y[0])] == pytest.approx(exp.max(), abs=1e-9)


@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_gfm_maximises_f_beta(beta) -> None:
    rng = np.random.default_rng(3)
    M = f_beta_matrix(5, beta)
    np.testing.assert_allclose(M, measure_matrix(5, f_beta, beta=beta), atol=1e-15)
    for _ in range(10):
        table = _random_table(rng, 5, 0.3)
        Y, value = _kernels.gfm(*split_size_marginals(size_marginals(table)[None]), beta ** 2)
        exp = expected_measures(table, M)
        assert value[0] == pytest.approx(exp.max(), abs=1e-9)
        assert exp[index_of(Y[0])] == pytest.approx(exp.max(), abs=1e-9)


@pytest.mark.parametrize("L", [1, 4, 8])
def test_plug_in_gfm_is_exact_under_label_independence(L) -> None:
    rng = np.random.default_rng(L)
    M = rng.random((12, L)) ** rng.uniform(0.3, 3, size=(12, 1))
    M[0] = 0.0  # nothing can be present: the empty set
    M[1, 0] = 1.0
    Y, value = _kernels.gfm_independent(M, 1.0, 0.0)
    for i in range(M.shape[0]):
        exp = expected_measures(independent_table(M[i]), F1[L])
        assert value[i] == pytest.approx(exp.max(), abs=1e-9)
        assert exp[index_of(Y[i])] == pytest.approx(exp.max(), abs=1e-9)
    assert Y[0].sum() == 0


def test_plug_in_gfm_with_ten_labels_matches_enumeration() -> None:
    L = 10
    M10 = f_beta_matrix(L)
    rng = np.random.default_rng(10)
    marg = rng.random((3, L)) ** 2
    Y, value = _kernels.gfm_independent(marg, 1.0, 0.0)
    for i in range(3):
        exp = expected_measures(independent_table(marg[i]), M10)
        assert value[i] == pytest.approx(exp.max(), abs=1e-9)


def test_sampled_gfm_is_the_exact_maximiser_of_the_empirical_joint() -> None:
    rng = np.random.default_rng(5)
    L, T = 5, 300
    samples = (rng.random((4, T, L)) < rng.random((4, 1, L))).astype(np.uint8)
    samples[0] = 0  # every draw empty
    Y, value = _kernels.gfm_samples(samples, 1.0)
    for i in range(4):
        codes = [index_of(s) for s in samples[i]]
        table = np.bincount(codes, minlength=2 ** L) / T
        exp = expected_measures(table, F1[L])
        assert value[i] == pytest.approx(exp.max(), abs=1e-9)
        assert exp[index_of(Y[i])] == pytest.approx(exp.max(), abs=1e-9)
    assert Y[0].sum() == 0 and value[0] == 1.0


def test_jaccard_rule_is_the_best_top_k_set_on_its_samples() -> None:
    rng = np.random.default_rng(6)
    L, T = 6, 200
    scores = rng.random((5, L))
    samples = (rng.random((5, T, L)) < scores[:, None, :]).astype(np.uint8)
    Y, value = _kernels.jaccard_topk_samples(samples, scores)
    for i in range(5):
        order = np.argsort(-scores[i], kind="stable")
        means = []
        for k in range(L + 1):
            h = np.zeros(L, np.uint8)
            h[order[:k]] = 1
            means.append(np.mean([jaccard(y, h) for y in samples[i]]))
        assert value[i] == pytest.approx(max(means), abs=1e-12)
        assert Y[i].sum() == int(np.argmax(means))


# -- the decoders on learners with a joint model --------------------------------------------


def _data(L: int, n: int = 240, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    W = rng.normal(size=(4, L))
    Z = X @ W + rng.normal(scale=1.5, size=(n, L))
    Y = (Z > 0.8).astype(np.uint8)
    Y[:, 1::2] |= Y[:, 0::2][:, : L // 2]  # correlated labels
    return X, Y


@pytest.fixture(scope="module")
def models_10():
    X, Y = _data(10)
    pcc = mlw.get_learner("pcc").fit(X, Y)
    ctbn = mlw.get_learner("ctbn", C=1.0).fit(X, Y)
    return X, {"pcc": pcc, "ctbn": ctbn}


@pytest.mark.pipeline
@pytest.mark.parametrize("name", ["pcc", "ctbn"])
def test_f1_decoder_is_the_exact_optimum_for_a_chain_and_a_tree_model(models_10, name) -> None:
    X, models = models_10
    learner = models[name]
    L = 10
    M10 = f_beta_matrix(L)
    result = mlw.get_decoder("f1").decode_detailed(learner, X[:6])
    assert result.route == "exact GFM"
    for i in range(6):
        exp = expected_measures(table_of(learner, X[i], L), M10)
        assert result.expected[i] == pytest.approx(exp.max(), abs=1e-9)
        assert exp[index_of(result.labels[i])] == pytest.approx(exp.max(), abs=1e-9)


@pytest.mark.pipeline
@pytest.mark.parametrize("name", ["pcc", "ctbn"])
def test_size_marginals_of_the_models_equal_enumeration(models_10, name) -> None:
    X, models = models_10
    learner = models[name]
    P = learner.size_marginals(X[:4])
    for i in range(4):
        np.testing.assert_allclose(P[i], size_marginals(table_of(learner, X[i], 10)),
                                   atol=1e-10)


@pytest.mark.pipeline
@pytest.mark.parametrize("name", ["pcc", "ctbn"])
def test_subset_decoder_is_the_joint_mode(models_10, name) -> None:
    X, models = models_10
    learner = models[name]
    Y = mlw.get_decoder("subset").decode(learner, X[:6])
    for i in range(6):
        table = table_of(learner, X[i], 10)
        assert table[index_of(Y[i])] == pytest.approx(table.max(), rel=1e-9)


@pytest.mark.pipeline
@pytest.mark.parametrize("name", ["epcc", "mc", "lp"])
def test_f1_decoder_is_exact_for_mixtures(name) -> None:
    X, Y = _data(6, seed=1)
    params = {"epcc": {"n_estimators": 3}, "mc": {"C": 1.0, "n_trees": 2}, "lp": {}}[name]
    learner = mlw.get_learner(name, **params).fit(X, Y)
    result = mlw.get_decoder("f1").decode_detailed(learner, X[:5])
    assert result.route == "exact GFM"
    for i in range(5):
        exp = expected_measures(table_of(learner, X[i], 6), F1[6])
        assert result.expected[i] == pytest.approx(exp.max(), abs=1e-9)


@pytest.mark.parametrize("name", ["pcc", "mc"])
def test_sampling_runs_with_and_without_the_jit(name) -> None:
    """The seed a sampler gives its kernel fits numpy's 32-bit seed, so sampling also
    runs as plain Python (CI's NUMBA_DISABLE_JIT=1 step, where a larger seed raised), and
    one random_state gives the same draws again."""
    X, Y = _data(4, seed=4)
    params = {"pcc": {}, "mc": {"C": 1.0, "n_trees": 2}}[name]
    learner = mlw.get_learner(name, **params).fit(X, Y)
    S = learner.sample_labels(X[:3], n_samples=50, random_state=2**40 + 7)
    assert S.shape == (3, 50, 4) and S.dtype == np.uint8
    again = learner.sample_labels(X[:3], n_samples=50, random_state=2**40 + 7)
    np.testing.assert_array_equal(S, again)


@pytest.mark.pipeline
@pytest.mark.parametrize("name", ["pcc", "ctbn"])
def test_samples_follow_the_joint(models_10, name) -> None:
    X, models = models_10
    learner = models[name]
    S = learner.sample_labels(X[:2], n_samples=4000, random_state=3)
    assert S.shape == (2, 4000, 10) and S.dtype == np.uint8
    np.testing.assert_allclose(S.mean(axis=1), learner.predict_proba(X[:2]), atol=0.04)
    again = learner.sample_labels(X[:2], n_samples=4000, random_state=3)
    np.testing.assert_array_equal(S, again)


@pytest.mark.pipeline
def test_sampled_gfm_is_close_to_the_exact_optimum() -> None:
    X, Y = _data(8, seed=2)
    beam = mlw.get_learner("pcc", max_exact_labels=0).fit(X, Y)  # beam inference
    exact = mlw.get_learner("pcc").fit(X, Y)
    assert beam.size_marginals(X[:2]) is None
    result = mlw.get_decoder("f1", n_samples=3000).decode_detailed(beam, X[:8])
    assert result.route == "sampled GFM"
    for i in range(8):
        exp = expected_measures(table_of(exact, X[i], 8), F1[8])
        assert exp[index_of(result.labels[i])] >= exp.max() - 0.01


@pytest.mark.pipeline
def test_marginal_only_learner_is_decoded_under_label_independence() -> None:
    X, Y = _data(6, seed=4)
    br = mlw.get_learner("br").fit(X, Y)
    M = br.predict_proba(X[:5])
    f1 = mlw.get_decoder("f1").decode_detailed(br, X[:5])
    assert f1.route == "GFM under label independence"
    for i in range(5):
        exp = expected_measures(independent_table(M[i]), F1[6])
        assert f1.expected[i] == pytest.approx(exp.max(), abs=1e-9)
    sub = mlw.get_decoder("subset").decode_detailed(br, X[:5])
    np.testing.assert_array_equal(sub.labels, (M >= 0.5).astype(np.uint8))
    assert "independence" in sub.route
    np.testing.assert_array_equal(mlw.get_decoder("hamming").decode(br, X[:5]),
                                  (M >= 0.5).astype(np.uint8))
    jac = mlw.get_decoder("jaccard", n_samples=200).decode_detailed(br, X[:5])
    assert jac.labels.shape == (5, 6) and np.all((jac.expected >= 0) & (jac.expected <= 1))


@pytest.mark.pipeline
def test_decoded_labels_take_the_learners_label_dtype() -> None:
    X, Y = _data(4, seed=5)
    br = mlw.get_learner("br").fit(X, Y.astype(np.int64))
    assert mlw.get_decoder("f1").decode(br, X[:3]).dtype == np.int64


# -- the registry ---------------------------------------------------------------------------


def test_the_core_registers_four_decoders_through_the_hook() -> None:
    decoders = mlw.list_decoders()
    assert set(decoders) >= {"hamming", "subset", "f1", "jaccard"}
    assert decoders["f1"].measure == "f1_example"
    assert all(spec.measure in mlw.list_metrics() for spec in decoders.values())


def test_decoder_options_by_text_and_keyword() -> None:
    assert mlw.get_decoder("f1:beta=2").beta == 2.0
    assert mlw.get_decoder("f1:0.5").beta == 0.5
    assert mlw.get_decoder("jaccard", n_samples=7).n_samples == 7
    with pytest.raises(ValueError, match="no option 'bta'"):
        mlw.get_decoder("f1", bta=2)
    with pytest.raises(mlw.UnknownNameError, match="did you mean 'jaccard'"):
        mlw.get_decoder("jacard")


def test_a_learner_with_nothing_to_decode_from_is_refused() -> None:
    class NoScores(mlw.MultiLabelLearner):
        _joint_prediction = True

        def _fit(self, X, Y):
            self.Y_ = Y[:1]

        def _predict(self, X):
            return np.repeat(self.Y_, X.shape[0], axis=0)

    X, Y = _data(3, n=20)
    learner = NoScores().fit(X, Y)
    for name in ("hamming", "f1", "jaccard", "subset"):
        with pytest.raises(DecoderError, match="gives no label scores"):
            mlw.get_decoder(name).decode(learner, X)


def test_a_third_party_decoder_registers_through_the_hook(fresh_plugins) -> None:
    class EverythingDecoder:
        def decode(self, learner, X):
            return np.ones((X.shape[0], learner.n_labels_), np.uint8)

        def route(self, learner):
            return "all labels"

    class Plugin:
        @staticmethod
        @mlw.hookimpl
        def mlw_register_decoders(register):
            register(mlw.DecoderSpec("everything", EverythingDecoder, "every label",
                                     measure="recall_example"))

    fresh_plugins.register(Plugin(), name="everything-plugin")
    assert "everything" in mlw.list_decoders()
    X, Y = _data(3, n=20)
    br = mlw.get_learner("br").fit(X, Y)
    assert mlw.get_decoder("everything").decode(br, X).sum() == 60


def test_a_malformed_decoder_registration_breaks_only_its_plugin(fresh_plugins) -> None:
    class Plugin:
        @staticmethod
        @mlw.hookimpl
        def mlw_register_decoders(register):
            register(mlw.DecoderSpec("Bad Name", "x.y:Z", "d"))

    fresh_plugins.register(Plugin(), name="bad-decoder")
    info = next(i for i in mlw.list_plugins() if i.name == "bad-decoder")
    assert info.status == "broken" and "not a lowercase identifier" in info.error
    assert "f1" in mlw.list_decoders()


def test_all_vectors_reference_is_in_lexicographic_order() -> None:
    V = all_vectors(3)
    assert [index_of(v) for v in V] == list(range(8))


# -- which decoder decides which metric -------------------------------------------------------


def test_matched_decoding_gives_each_metric_the_decoder_of_its_measure() -> None:
    from mlw.decoders.routing import describe, resolve_decoders

    routes = resolve_decoders("matched", ["f1_example", "subset_accuracy", "f1_micro",
                                          "auc_micro"])
    assert set(routes) == {"f1_example", "subset_accuracy"}
    assert describe(routes) == "f1 for f1_example; subset for subset_accuracy"
    one = resolve_decoders("f1:beta=2", ["f1_example", "hamming_loss", "log_loss"])
    assert set(one) == {"f1_example", "hamming_loss"}
    assert one["f1_example"] is one["hamming_loss"] and one["f1_example"].beta == 2.0
    pairs = resolve_decoders("f1_example=f1,hamming_loss=hamming", None)
    assert describe(pairs) == "f1 for f1_example; hamming for hamming_loss"


def test_decode_choices_are_checked_before_any_fit() -> None:
    from mlw.decoders.routing import resolve_decoders

    with pytest.raises(ValueError, match="only label-set metrics"):
        resolve_decoders("auc_micro=f1", None)
    with pytest.raises(mlw.UnknownNameError):
        resolve_decoders("f1_example=f9", None)
    with pytest.raises(ValueError, match="metric=decoder pairs"):
        resolve_decoders("f1_example=,x", None)

    class NoScores(mlw.MultiLabelLearner):
        _joint_prediction = True

    with pytest.raises(DecoderError):
        resolve_decoders("f1", None, NoScores())
