"""Iterative stratification (Sechidis, Tsoumakas and Vlahavas, 2011), cross-validation
and hold-out evaluation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import KFold, cross_val_score

import mlw
from mlw.model_selection import (
    IterativeStratifiedKFold,
    cross_validate,
    holdout,
    iterative_stratification,
)


def label_distribution(Y: Any, folds: np.ndarray, k: int) -> float:
    """The paper's Label Distribution (LD) measure (lower is better): the mean over
    labels and folds of |d_j^i / (|S_j| - d_j^i) - D^i / (|D| - D^i)|."""
    Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
    n = Y.shape[0]
    whole = Y.sum(axis=0)
    ratio_whole = whole / (n - whole)
    terms = []
    for j in range(k):
        part = Y[folds == j]
        d = part.sum(axis=0)
        terms.append(np.abs(d / (part.shape[0] - d) - ratio_whole))
    return float(np.mean(terms))


@pytest.fixture(scope="module")
def yeast(mulan_dir) -> mlw.Dataset:
    return mlw.load_dataset(mulan_dir / "yeast-train.arff")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_fold_gets_about_n_over_k_rows(yeast, seed) -> None:
    folds = iterative_stratification(yeast.Y, 10, seed=seed)
    sizes = np.bincount(folds, minlength=10)
    assert sizes.sum() == yeast.n_instances == 1500
    assert np.all(np.abs(sizes - 150) <= 0.08 * 150), sizes


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_label_is_split_about_evenly(yeast, seed) -> None:
    """Each label's examples spread over the folds: within 6 of n_i / k (yeast's rarest
    label has 21 examples, its commonest 1138)."""
    Y = yeast.Y
    folds = iterative_stratification(Y, 10, seed=seed)
    per_fold = np.array([np.asarray(Y[folds == j].sum(axis=0)).ravel() for j in range(10)])
    expected = np.asarray(Y.sum(axis=0)).ravel() / 10
    assert np.abs(per_fold - expected).max() <= 6


def _proportion_gap(Y: Any, folds: np.ndarray, k: int) -> float:
    """Mean over folds and labels of |fold's label proportion - whole set's|."""
    Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
    whole = Y.mean(axis=0)
    return float(np.mean([np.abs(Y[folds == j].mean(axis=0) - whole) for j in range(k)]))


def test_label_distribution_is_closer_than_random_kfold(yeast) -> None:
    """Measured on yeast-train, 10 folds, seeds 0-2: LD 0.051 (iterative) vs 0.100
    (shuffled KFold); proportion gap 0.006 vs 0.024. LD also charges the fold-size
    spread that iterative stratification trades for label balance (as in the paper)."""
    strat_folds = [iterative_stratification(yeast.Y, 10, seed=s) for s in range(3)]
    rand_folds = []
    for s in range(3):
        folds = np.empty(yeast.n_instances, dtype=np.int64)
        for j, (_, test) in enumerate(KFold(10, shuffle=True, random_state=s).split(yeast.X)):
            folds[test] = j
        rand_folds.append(folds)
    for measure, factor in ((label_distribution, 0.7), (_proportion_gap, 0.4)):
        strat = np.mean([measure(yeast.Y, f, 10) for f in strat_folds])
        rand = np.mean([measure(yeast.Y, f, 10) for f in rand_folds])
        assert strat < factor * rand, (measure.__name__, strat, rand)


def test_rare_label_examples_go_to_different_folds() -> None:
    """A label with exactly k examples is processed first and lands once per fold."""
    rng = np.random.default_rng(0)
    Y = (rng.random((60, 4)) < 0.5).astype(np.uint8)
    Y[:, 3] = 0
    Y[rng.choice(60, 5, replace=False), 3] = 1
    folds = iterative_stratification(Y, 5, seed=4)
    assert sorted(folds[Y[:, 3] == 1].tolist()) == [0, 1, 2, 3, 4]


def test_same_seed_same_folds_other_seed_other_folds(yeast) -> None:
    a = iterative_stratification(yeast.Y, 5, seed=7)
    b = iterative_stratification(yeast.Y, 5, seed=7)
    c = iterative_stratification(yeast.Y, 5, seed=8)
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()


def test_dense_and_csr_labels_give_the_same_folds(yeast) -> None:
    dense = np.asarray(yeast.Y.toarray() if sp.issparse(yeast.Y) else yeast.Y)
    np.testing.assert_array_equal(iterative_stratification(dense, 10, seed=3),
                                  iterative_stratification(sp.csr_matrix(dense), 10, seed=3))


def test_examples_without_labels_balance_the_fold_sizes() -> None:
    Y = np.zeros((20, 3), dtype=np.uint8)
    Y[:6, 0] = 1  # 6 labelled rows, 14 empty ones
    folds = iterative_stratification(Y, 4, seed=0)
    assert sorted(np.bincount(folds).tolist()) == [5, 5, 5, 5]
    assert sorted(np.bincount(folds[:6], minlength=4).tolist()) == [1, 1, 2, 2]


@pytest.mark.parametrize("k, message", [(1, "at least 2"), (11, "larger than the number"),
                                        (2.5, "must be an integer")])
def test_bad_number_of_folds(k, message) -> None:
    with pytest.raises(ValueError, match=message):
        iterative_stratification(np.eye(10, dtype=np.uint8), k)


def test_splitter_partitions_the_rows_and_works_in_sklearn(yeast) -> None:
    cv = IterativeStratifiedKFold(n_splits=4, seed=1)
    seen = np.zeros(yeast.n_instances, dtype=int)
    for train, test in cv.split(yeast.X, yeast.Y):
        assert np.intersect1d(train, test).size == 0
        assert train.size + test.size == yeast.n_instances
        seen[test] += 1
    assert (seen == 1).all()
    assert cv.get_n_splits() == 4
    with pytest.raises(ValueError, match="needs the label matrix"):
        next(cv.split(yeast.X))


class MeanLearner(mlw.MultiLabelLearner):
    """Scores every label by its training frequency; a joint model of independent labels
    (so it has log_proba_of)."""

    def __init__(self, threshold: str = "fixed") -> None:
        self.threshold = threshold

    def _fit(self, X, Y):
        self.p_ = np.clip(np.asarray(Y.mean(axis=0)).ravel(), 1e-6, 1 - 1e-6)

    def _predict_proba(self, X):
        return np.tile(self.p_, (X.shape[0], 1))

    def log_proba_of(self, X, Y):
        Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
        return (Y * np.log(self.p_) + (1 - Y) * np.log1p(-self.p_)).sum(axis=1)


class LabelsOnlyLearner(mlw.MultiLabelLearner):
    """Predicts the most frequent label set; no scores (joint decision)."""

    _joint_prediction = True

    def _fit(self, X, Y):
        self.p_ = np.asarray(Y.mean(axis=0)).ravel()

    def _predict(self, X):
        return np.tile((self.p_ >= 0.5).astype(np.uint8), (X.shape[0], 1))


def test_cross_validate_clones_per_fold_and_evaluates_each_fold(yeast) -> None:
    learner = MeanLearner()
    calls: list[tuple[int, int]] = []
    result = cross_validate(learner, yeast, k=3, seed=5, progress=lambda d, k: calls.append((d, k)))
    assert calls == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert not hasattr(learner, "p_")  # the given learner is never fitted
    assert result.kind == "cv" and len(result.folds) == 3
    folds = iterative_stratification(yeast.Y, 3, seed=5)
    for j, fold in enumerate(result.folds):
        train, test = yeast.subset(folds != j), yeast.subset(folds == j)
        model = MeanLearner().fit(train.X, train.Y)
        expected = mlw.evaluate(test.Y, model.predict(test.X), scores=model.predict_proba(test.X),
                                log_proba=model.log_proba_of(test.X, test.Y))
        assert fold.metrics == pytest.approx(expected)
        assert (fold.n_train, fold.n_test, fold.fold) == (train.n_instances, test.n_instances, j)
        assert fold.fit_seconds >= 0 and fold.predict_seconds >= 0
    assert "cll_loss" in result.metrics and "average_precision" in result.metrics
    assert result.metrics["hamming_loss"] == pytest.approx(
        np.mean([f.metrics["hamming_loss"] for f in result.folds]))


def test_cross_validate_selected_metrics_and_learner_without_scores(yeast) -> None:
    result = cross_validate(LabelsOnlyLearner(), yeast, k=2, seed=0,
                            metrics=["hamming_loss", "f1_micro"])
    assert list(result.metrics) == ["hamming_loss", "f1_micro"]
    everything = cross_validate(LabelsOnlyLearner(), yeast, k=2, seed=0)
    assert "average_precision" not in everything.metrics  # no scores, no ranking metrics
    with pytest.raises(ValueError, match="metric 'ranking_loss' needs per-label scores, which "
                                         "LabelsOnlyLearner does not predict"):
        cross_validate(LabelsOnlyLearner(), yeast, k=2, metrics=["ranking_loss"])


class JointWithMarginals(mlw.MultiLabelLearner):
    """A joint learner (its own decision: the empty set) that also gives marginal
    scores varying by row, like LaCovaC."""

    _joint_prediction = True
    fits = 0

    def _fit(self, X, Y):
        type(self).fits += 1
        self.lo_ = X[:, : Y.shape[1]].min(axis=0)
        self.span_ = np.ptp(X[:, : Y.shape[1]], axis=0) + 1e-12

    def _predict_proba(self, X):
        return np.clip((X[:, : self.lo_.shape[0]] - self.lo_) / self.span_, 0.0, 1.0)

    def _predict(self, X):
        return np.zeros((X.shape[0], self.lo_.shape[0]), dtype=np.uint8)


def test_cross_validate_scores_label_sets_from_a_threshold_on_the_marginals(yeast) -> None:
    """threshold= replaces the learner's own label sets by the strategy's, fitted on each
    fold's training part (Pcut on a joint learner's marginals, as MEKA evaluates)."""
    from mlw.thresholds import PCut

    names = ["hamming_loss", "f1_micro", "subset_accuracy", "ranking_loss"]
    result = cross_validate(JointWithMarginals(), yeast, k=3, seed=1, metrics=names,
                            threshold="pcut")
    own = cross_validate(JointWithMarginals(), yeast, k=3, seed=1, metrics=names)
    folds = iterative_stratification(yeast.Y, 3, seed=1)
    for j, fold in enumerate(result.folds):
        train, test = yeast.subset(folds != j), yeast.subset(folds == j)
        model = JointWithMarginals().fit(train.X, train.Y)
        scores = model.predict_proba(test.X)
        pcut = PCut().fit(None, train.Y).predict(scores)
        assert fold.metrics == pytest.approx(mlw.evaluate(test.Y, pcut, scores=scores,
                                                          metrics=names))
        assert own.folds[j].metrics == pytest.approx(
            mlw.evaluate(test.Y, model.predict(test.X), scores=scores, metrics=names))
    # the ranking metric comes from the scores either way; the label sets differ
    assert result.metrics["ranking_loss"] == pytest.approx(own.metrics["ranking_loss"])
    assert result.metrics["f1_micro"] > own.metrics["f1_micro"] == 0.0


def test_threshold_errors_come_before_any_fit(yeast) -> None:
    JointWithMarginals.fits = 0
    with pytest.raises(mlw.plugins.UnknownNameError, match="did you mean 'pcut'"):
        cross_validate(JointWithMarginals(), yeast, k=2, threshold="pcutt")
    assert JointWithMarginals.fits == 0
    with pytest.raises(ValueError, match="makes its own joint decision and predicts no label "
                                         "scores, so a threshold does not apply"):
        cross_validate(LabelsOnlyLearner(), yeast, k=2, threshold="fixed")


def test_holdout_with_a_threshold(mulan_dir, yeast) -> None:
    from mlw.thresholds import PCut

    test = mlw.load_dataset(mulan_dir / "yeast-test.arff")
    held = holdout(JointWithMarginals(), yeast, test, metrics=["f1_micro"], threshold="pcut")
    pcut = PCut().fit(None, yeast.Y).predict(held.model.predict_proba(test.X))
    assert held.metrics == pytest.approx(mlw.evaluate(test.Y, pcut, metrics=["f1_micro"]))


def test_holdout_returns_the_fitted_model(mulan_dir, yeast) -> None:
    test = mlw.load_dataset(mulan_dir / "yeast-test.arff")
    result = holdout(MeanLearner(), yeast, test, metrics=["hamming_loss"])
    assert result.kind == "holdout" and result.model.p_.shape == (14,)
    assert (result.n_train, result.n_test) == (1500, 917)
    expected = mlw.evaluate(test.Y, result.model.predict(test.X), metrics=["hamming_loss"])
    assert result.metrics == pytest.approx(expected)


def test_holdout_rejects_mismatched_sets(yeast) -> None:
    other = mlw.Dataset(yeast.X[:, :5], yeast.Y, yeast.feature_names[:5],
                        list(yeast.label_names), "cut")
    with pytest.raises(ValueError, match=r"^cut: column 'Att6' of the training data is "
                                         r"missing$"):
        holdout(MeanLearner(), yeast, other)


def test_sklearn_cross_val_score_with_the_stratified_splitter(yeast) -> None:
    from sklearn.metrics import hamming_loss, make_scorer

    scores = cross_val_score(MeanLearner(), yeast.X, yeast.Y,
                             cv=IterativeStratifiedKFold(3, seed=0),
                             scoring=make_scorer(hamming_loss, greater_is_better=False))
    assert scores.shape == (3,) and np.all(scores < 0)


def test_metric_needs_are_checked_before_any_fit(mulan_dir, yeast) -> None:
    """holdout and cross_validate refuse a metric the learner cannot feed before fitting
    (a user of the Python API gets the same check as the CLI)."""
    test = mlw.load_dataset(mulan_dir / "yeast-test.arff")
    JointWithMarginals.fits = 0
    with pytest.raises(ValueError, match="metric 'cll_loss' needs log P"):
        holdout(JointWithMarginals(), yeast, test, metrics=["cll_loss"])
    with pytest.raises(ValueError, match="metric 'cll_loss' needs log P"):
        cross_validate(JointWithMarginals(), yeast, k=2, metrics=["hamming_loss", "cll_loss"])
    with pytest.raises(mlw.UnknownNameError, match="unknown metric 'hamming'"):
        holdout(JointWithMarginals(), yeast, test, metrics=["hamming"])
    assert JointWithMarginals.fits == 0


def test_prepare_evaluation_routes_the_threshold() -> None:
    from mlw.model_selection import prepare_evaluation

    # a learner with a threshold parameter gets it (a clone: the given one is unchanged)
    br = MeanLearner()
    setup = prepare_evaluation(br, ["f1_micro"], "pcut")
    assert setup.learner is not br and setup.learner.threshold == "pcut"
    assert (setup.evaluation_threshold, setup.decision) == (None, "threshold pcut")
    assert br.threshold == "fixed"
    # a joint learner keeps its decision; the evaluation scores the strategy on marginals
    joint = prepare_evaluation(JointWithMarginals(), None, "pcut")
    assert (joint.evaluation_threshold, joint.decision) == ("pcut", "pcut on the marginals")
    assert prepare_evaluation(JointWithMarginals()).decision == "joint"
    assert prepare_evaluation(MeanLearner()).decision == "threshold fixed"
    with pytest.raises(ValueError, match="no metrics given"):
        prepare_evaluation(MeanLearner(), [])


def test_cross_validate_refit_and_the_record(yeast) -> None:
    result = cross_validate(MeanLearner(), yeast, k=2, metrics=["hamming_loss"], refit=True)
    assert result.model.p_.shape == (14,) and result.refit_seconds >= 0
    np.testing.assert_allclose(result.model.p_, np.asarray(yeast.Y.mean(axis=0)).ravel())
    record = result.as_dict()
    assert record["evaluation"] == "2-fold cv" and len(record["folds"]) == 2
    assert record["compile_seconds"] >= 0 and record["decision"] == "threshold fixed"
    assert all(f.compile_seconds >= 0 for f in result.folds)
    assert cross_validate(MeanLearner(), yeast, k=2, metrics=["hamming_loss"]).model is None


def test_get_learner_seeds_random_state_unless_given() -> None:
    assert mlw.get_learner("cc", seed=7).random_state == 7
    assert mlw.get_learner("cc", seed=7, random_state=1).random_state == 1
    assert mlw.get_learner("cc").random_state == 0  # the learner's own default
    mlw.get_learner("lcif", seed=3)  # lcif has random_state: fine
    with pytest.raises(ValueError, match="has no parameter 'bogus'"):
        mlw.get_learner("br", bogus=1)


class _CountingJoint(JointWithMarginals):
    passes = 0

    def _predict_with_scores(self, X):
        type(self).passes += 1
        return self._predict(X), self._predict_proba(X)


def test_evaluation_predicts_once_through_predict_with_scores(mulan_dir, yeast) -> None:
    test = mlw.load_dataset(mulan_dir / "yeast-test.arff")
    _CountingJoint.passes = 0
    holdout(_CountingJoint(), yeast, test, metrics=["hamming_loss", "ranking_loss"])
    assert _CountingJoint.passes == 1


def test_metrics_and_per_label_table_come_from_one_context(mulan_dir, yeast,
                                                           monkeypatch) -> None:
    """The per-label table reuses the metrics' counts: one EvalContext per fold."""
    import mlw.evaluation as ms

    built = []

    class Counting(ms.EvalContext):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(ms, "EvalContext", Counting)
    test = mlw.load_dataset(mulan_dir / "yeast-test.arff")
    result = holdout(_CountingJoint(), yeast, test, metrics=["hamming_loss", "auc_macro"],
                     per_label=True)
    assert len(built) == 1
    table = result.per_label
    direct = mlw.evaluate(test.Y, *result.model.predict_with_scores(test.X), per_label=True)
    assert table["f1"].to_list() == direct["f1"].to_list()
    assert result.metrics["hamming_loss"] == mlw.evaluate(
        test.Y, result.model.predict(test.X), metrics=["hamming_loss"])["hamming_loss"]


class SleepingLearner(MeanLearner):
    """Fits by waiting (wall time, next to no CPU) or by spinning (CPU time)."""

    def __init__(self, threshold: str = "fixed", mode: str = "sleep") -> None:
        super().__init__(threshold)
        self.mode = mode

    def _fit(self, X, Y):
        import time

        if self.mode == "sleep":
            time.sleep(0.25)
        else:
            start = time.process_time()
            while time.process_time() - start < 0.1:
                pass
        super()._fit(X, Y)


def test_fit_cpu_seconds_is_the_fits_process_cpu_time(yeast) -> None:
    """``fit_cpu_seconds`` counts CPU, not waiting: a fit that sleeps a quarter second
    has its wall time but almost no CPU time; one that spins 0.1 s of CPU has at least
    that. Both reach the fold means, ``as_dict`` (``mlw fit --json``) and the records."""
    test = yeast.subset(np.arange(100))
    slept = holdout(SleepingLearner(mode="sleep"), yeast, test, metrics=["hamming_loss"])
    fold = slept.folds[0]
    assert fold.fit_seconds >= 0.25 and fold.fit_cpu_seconds < 0.1
    spun = cross_validate(SleepingLearner(mode="spin"), yeast, k=2, seed=0,
                          metrics=["hamming_loss"])
    assert all(f.fit_cpu_seconds >= 0.1 for f in spun.folds)
    assert spun.fit_cpu_seconds == pytest.approx(np.mean([f.fit_cpu_seconds
                                                         for f in spun.folds]))
    record = spun.as_dict()
    assert record["fit_cpu_seconds"] == spun.fit_cpu_seconds
    assert [f["fit_cpu_seconds"] for f in record["folds"]] == \
        [f.fit_cpu_seconds for f in spun.folds]
    assert [r["fit_cpu_seconds"] for r in spun.records()] == \
        [f.fit_cpu_seconds for f in spun.folds]
    # a fold without the figure (built by hand) makes the mean unknown, not wrong
    spun.folds[0].fit_cpu_seconds = None
    assert spun.fit_cpu_seconds is None


def test_compile_timer_measures_wall_and_cpu_seconds_of_compiling() -> None:
    """A fresh (uncached) kernel compiled inside the block: both clocks advance, and
    the CPU seconds are what ``timed`` takes out of ``fit_cpu_seconds``."""
    import numba

    from mlw.evaluation import timed
    from mlw.jit import compile_timer

    if numba.config.DISABLE_JIT:
        pytest.skip("nothing is compiled without the JIT")

    @numba.njit(cache=False)
    def kernel(x):
        return x * 2.0 + 1.0

    with compile_timer() as spent:
        assert kernel(1.0) == 3.0
    assert spent.seconds > 0 and spent.cpu_seconds > 0

    @numba.njit(cache=False)
    def other(x):
        return x - 1.0

    value, seconds, compiling, cpu = timed(lambda: other(2.0))
    assert value == 1.0 and compiling > 0 and seconds >= 0 and cpu >= 0
