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


@pytest.mark.pipeline
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


# -- feature normalisation ------------------------------------------------------------

def _unit_columns(X: np.ndarray) -> np.ndarray:
    """Transcription: every column divided by its L2 norm (features already in [0, 1])."""
    out = np.zeros_like(X, dtype=float)
    for j in range(X.shape[1]):
        s = 0.0
        for v in X[:, j]:
            s += v * v
        if s > 0:
            out[:, j] = X[:, j] / s ** 0.5
    return out


def test_unit_column_scaler_weights_a_binary_word_by_its_document_frequency() -> None:
    from mlw_lcif._scaling import feature_scaler

    X, _ = _data(5, n=60)
    X[:, 3] = 0.0  # never seen: weight 0
    for M in (X, sp.csr_matrix(X)):
        sc = feature_scaler("l2").fit(M)
        T = sc.transform(M).toarray()
        df = X.sum(axis=0)
        np.testing.assert_allclose(T, _unit_columns(X), rtol=1e-12)
        np.testing.assert_allclose(T.max(axis=0)[df > 0], 1 / np.sqrt(df[df > 0]), rtol=1e-12)
        # queries use the training norms
        q = np.ones((1, X.shape[1]))
        np.testing.assert_allclose(sc.transform(q).toarray()[0],
                                   np.where(df > 0, 1 / np.sqrt(np.maximum(df, 1)), 0))
    np.testing.assert_array_equal(feature_scaler("max").fit(X).transform(X).toarray(), X)
    with pytest.raises(ValueError, match="feature_norm must be"):
        feature_scaler("bm25")


def test_l2_learners_are_the_formulas_on_unit_length_feature_columns() -> None:
    import naive_lcif as naive
    from test_lcif_formulas import Q3, X8, Y8

    from mlw_lcif import LCIF2

    n8 = np.sqrt((X8 ** 2).sum(axis=0))
    Xn, Qn = _unit_columns(X8), Q3 / n8
    for k_ins, k_feat, lam in [(1, 1, 0.5), (3, 2, 0.3), (5, 4, 0.8)]:
        m = LCIF(k_ins=k_ins, k_feat=k_feat, lam=lam, feature_norm="l2").fit(X8, Y8)
        assert m.feature_norm_ == "l2"
        want = naive.lcif_scores(Xn, Y8, Qn, k_ins, k_feat, lam)
        np.testing.assert_allclose(m.predict_proba(Q3), want, rtol=1e-12, atol=1e-15)
        m2 = LCIF2(k_ins=k_ins, k_feat=k_feat, lam=lam, feature_norm="l2").fit(X8, Y8)
        want2 = naive.lcif_scores(Xn, Y8, Qn, k_ins, k_feat, lam, second=True)
        np.testing.assert_allclose(m2.predict_proba(Q3), want2, rtol=1e-12, atol=1e-15)
    # without cv, "auto" is the plain [0, 1] scaling
    m = LCIF(k_ins=3, k_feat=2, lam=0.3).fit(X8, Y8)
    assert m.feature_norm_ == "max"
    np.testing.assert_allclose(m.predict_proba(Q3), naive.lcif_scores(X8, Y8, Q3, 3, 2, 0.3),
                               rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="parameter 'feature_norm' must be a string one of"):
        LCIF(feature_norm="tfidf").fit(X8, Y8)


@pytest.mark.pipeline
@pytest.mark.parametrize("votes", ["all", "neighbours", "neighbour_mean"])
def test_search_scores_each_reading_of_conf_fl_as_the_learner(votes: str) -> None:
    """The search's feature-kNN fold scores are those of FeatureKNN fitted on the fold's
    training part with the same reading of conf_FL and scored on its held-out part."""
    from mlw_lcif import FeatureKNN

    X, Y = _data(5, n=90)
    Ycsr = sp.csr_matrix(Y)
    Xs = P.FeatureScaler().fit(X).transform(X)
    res = search_hyperparameters(Xs, Ycsr, kind="feature_knn", n_folds=2, seed=3,
                                 k_grid=(1, 3), feature_votes=votes)
    fold = _folds(Ycsr, 2, 3)
    for b, k in enumerate(res["k_feat_grid"]):
        acc = []
        for f in range(2):
            tr, va = fold != f, fold == f
            # the search scores the scaled features of the whole training data
            m = FeatureKNN(k_feat=k, feature_votes=votes, feature_norm="max")
            m.fit(Xs[tr], Y[tr])
            acc.append(mlw.evaluate(Y[va], m.predict(Xs[va]), metrics=["accuracy"])["accuracy"])
        assert res["all_scores"][0, b, 0, METRICS["accuracy"]] == pytest.approx(np.mean(acc))


@pytest.mark.pipeline
def test_auto_feature_norm_is_chosen_by_the_cross_validation() -> None:
    X, Y = _data(6, n=150)
    m = LCIF(cv=3, random_state=1).fit(X, Y)
    res = m.cv_results_
    by = res["by_feature_norm"]
    assert set(by) == {"max", "l2"}
    winner = "l2" if by["l2"]["score"] > by["max"]["score"] else "max"
    assert m.feature_norm_ == res["feature_norm"] == winner
    assert (m.k_ins_, m.k_feat_, m.lam_) == (by[winner]["k_ins"], by[winner]["k_feat"],
                                             by[winner]["lam"])
    for name in METRICS:
        b = res["best_by_metric"][name]
        assert b["score"] == max(by["max"]["best_by_metric"][name]["score"],
                                 by["l2"]["best_by_metric"][name]["score"])
    # each normalisation's search is the plain search on that scaling of X
    from mlw_lcif._scaling import feature_scaler

    Xs = feature_scaler("l2").fit(X).transform(X)
    direct = search_hyperparameters(Xs, sp.csr_matrix(Y), n_folds=3, seed=1)
    np.testing.assert_array_equal(direct["all_scores"], by["l2"]["all_scores"])
    # a fixed feature_norm searches only that one
    m1 = LCIF(cv=3, random_state=1, feature_norm="max").fit(X, Y)
    assert m1.feature_norm_ == "max" and set(m1.cv_results_["by_feature_norm"]) == {"max"}


def test_the_grid_is_extended_to_59_when_the_best_k_is_the_largest(monkeypatch) -> None:
    """Section IV-D1: k is searched up to 60 when the best k is the grid's largest.
    The grids are shrunk here ((1, 3), then (1, 3, 5, 7)) to keep the test fast; noisy
    labels make a larger k better."""
    import mlw_lcif.search as S

    rng = np.random.default_rng(0)
    centre = rng.integers(0, 2, 160)
    X = (rng.random((160, 30)) < np.where(centre[:, None] == 1, 0.4, 0.1)).astype(float)
    X[:, :15] *= (rng.random((160, 15)) < 0.5)
    Y = np.stack([centre ^ (rng.random(160) < 0.3), 1 - centre], axis=1).astype(np.uint8)
    monkeypatch.setattr(S, "K_GRID", (1, 3))
    monkeypatch.setattr(S, "K_GRID_EXTENDED", (1, 3, 5, 7))
    kw = dict(norms=("max",), kind="instance_knn", n_folds=3, seed=0)
    res = S.search_with_feature_norm(X, sp.csr_matrix(Y), **kw)
    assert res["k_grid_extended"] and res["k_ins_grid"] == [1, 3, 5, 7]
    flat = S.search_with_feature_norm(X, sp.csr_matrix(Y), extend_k=False, **kw)
    assert not flat["k_grid_extended"] and flat["k_ins"] == 3
    # a best k inside the grid is not extended
    inner = S.search_with_feature_norm(X, sp.csr_matrix(Y), k_grid=(1, 3, 5, 7, 9), **kw)
    assert not inner["k_grid_extended"]


@pytest.mark.pipeline
def test_table_one_statistics_of_bibtex(mulan_dir) -> None:
    """Table I: bibtex has 4,880 training and 2,515 test instances, 1,836 features, 159
    labels and a training label cardinality of 2.38."""
    tr = mlw.load_dataset(mulan_dir / "bibtex-train.arff")
    te = mlw.load_dataset(mulan_dir / "bibtex-test.arff")
    assert (tr.X.shape, te.X.shape[0], tr.Y.shape[1]) == ((4880, 1836), 2515, 159)
    assert round(float(tr.Y.sum()) / 4880, 2) == 2.38


@pytest.mark.pipeline
def test_the_readme_example_gives_its_printed_bibtex_accuracy(mulan_dir) -> None:
    """The README's example: LCIF at the configuration the paper's protocol selects on
    bibtex for accuracy, (k_ins, k_feat, lam) = (5, 1, 0.6) with features in [0, 1],
    scores the printed test accuracy 0.374 (Table II: 0.362)."""
    tr = mlw.load_dataset(mulan_dir / "bibtex-train.arff")
    te = mlw.load_dataset(mulan_dir / "bibtex-test.arff")
    m = mlw.get_learner("lcif", k_ins=5, k_feat=1, lam=0.6,
                        feature_norm="max").fit(tr.X, tr.Y)
    r = mlw.evaluate(te.Y, m.predict(te.X), scores=m.predict_proba(te.X))
    assert round(float(r["accuracy"]), 3) == 0.374


@pytest.mark.pipeline
def test_a_checkpointed_search_resumes_to_the_uninterrupted_scores(tmp_path) -> None:
    """Folds saved by an interrupted search are loaded, not recomputed, and the resumed
    search gives the uninterrupted scores bit for bit; ``only_folds`` is the mean over
    those folds; other arguments never read the saved folds."""
    X, Y = _data(2)
    Xs, Ycsr = P.FeatureScaler().fit(X).transform(X), sp.csr_matrix(Y)
    kw = dict(n_folds=4, seed=3, k_grid=(1, 3, 5), lam_grid=(0.0, 0.5, 1.0))
    full = search_hyperparameters(Xs, Ycsr, **kw)
    one = {f: search_hyperparameters(Xs, Ycsr, only_folds=[f], checkpoint=tmp_path,
                                     **kw)["all_scores"] for f in (0, 2)}
    assert len(list(tmp_path.glob("*.npy"))) == 2
    two = search_hyperparameters(Xs, Ycsr, only_folds=[2, 0], checkpoint=tmp_path, **kw)
    assert two["folds"] == [0, 2]
    np.testing.assert_allclose(two["all_scores"], (one[0] + one[2]) / 2, rtol=0, atol=1e-15)
    resumed = search_hyperparameters(Xs, Ycsr, checkpoint=tmp_path, **kw)
    np.testing.assert_array_equal(resumed["all_scores"], full["all_scores"])
    assert resumed["folds"] == [0, 1, 2, 3] and len(list(tmp_path.glob("*.npy"))) == 4
    # a saved fold is read: zero fold 1's file and the mean loses exactly its part
    f1 = next(tmp_path.glob("*-fold1.npy"))
    part1 = np.load(f1)
    np.save(f1, np.zeros_like(part1))
    tampered = search_hyperparameters(Xs, Ycsr, checkpoint=tmp_path, **kw)["all_scores"]
    np.testing.assert_allclose(tampered * 4 + part1, full["all_scores"] * 4, atol=1e-12)
    # another seed (other folds) gets files of its own
    search_hyperparameters(Xs, Ycsr, checkpoint=tmp_path, **{**kw, "seed": 4})
    assert len(list(tmp_path.glob("*.npy"))) == 8
    with pytest.raises(ValueError, match="only_folds must name folds in 0..3"):
        search_hyperparameters(Xs, Ycsr, only_folds=[4], **kw)
