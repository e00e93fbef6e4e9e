"""Statistics as the seed papers report them, on fold-level results:

- per dataset and learner, the mean and standard deviation of a metric over folds;
- ranks per dataset (1 = best, ties share the average rank) and average ranks;
- the Friedman test over datasets and the Nemenyi critical difference (Demšar, 2006,
  "Statistical comparisons of classifiers over multiple data sets", JMLR 7, Sec. 3.2.2);
- paired t-tests over folds of each learner against a control (the mixture-of-CTBNs
  paper's markers: ``*`` the control is significantly better, ``⊗`` worse).

The distributions come from scipy.stats (``chi2``, ``f``, ``studentized_range``,
``ttest_rel``). The Friedman statistic is Demšar's formula on the average ranks,
Eq. (χ²_F), with the Iman-Davenport F_F beside it; scipy's tie-corrected
``friedmanchisquare`` is reported too. ``core/tests/test_core_experiments_stats.py`` checks
the numbers against Demšar's worked example (Table 6: χ²_F = 9.28, F_F = 3.69,
CD = 1.25 at α = 0.05 and 1.12 at α = 0.10).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlw.plugins import get_plugin_manager

CONTROL_BETTER = "*"
CONTROL_WORSE = "⊗"


def average_ranks(values: np.ndarray, *, higher_is_better: bool = True) -> tuple[np.ndarray,
                                                                                 np.ndarray]:
    """Ranks of the columns (learners) in every row (dataset) of ``values``, 1 = best,
    ties sharing the average rank; returns ``(ranks, average ranks)``."""
    from scipy.stats import rankdata

    values = np.asarray(values, dtype=float)
    if values.ndim != 2 or values.shape[0] == 0:
        raise ValueError("average_ranks needs a (datasets, learners) array with rows")
    if np.isnan(values).any():
        raise ValueError("average_ranks: values contain NaN (a missing result)")
    signed = -values if higher_is_better else values
    ranks = np.vstack([rankdata(row, method="average") for row in signed])
    return ranks, ranks.mean(axis=0)


@dataclass
class FriedmanResult:
    """The Friedman test over ``n_datasets`` datasets and ``n_learners`` learners.

    ``statistic`` is Demšar's χ²_F from the average ranks (no tie correction),
    ``p_value`` its χ² tail (k - 1 degrees of freedom); ``iman_davenport`` the F_F
    statistic with ``iman_davenport_p`` (F with k - 1 and (k - 1)(N - 1) degrees of
    freedom, Demšar's recommendation); ``scipy_statistic``/``scipy_p`` scipy's
    tie-corrected ``friedmanchisquare`` (None with fewer than 3 learners or from
    average ranks alone)."""

    statistic: float
    p_value: float
    iman_davenport: float
    iman_davenport_p: float
    n_datasets: int
    n_learners: int
    average_ranks: np.ndarray
    scipy_statistic: float | None = None
    scipy_p: float | None = None


def friedman_from_ranks(avg_ranks: Sequence[float], n_datasets: int) -> FriedmanResult:
    """The Friedman test from average ranks (Demšar 2006, Sec. 3.2.2)."""
    from scipy.stats import chi2, f

    r = np.asarray(avg_ranks, dtype=float)
    k, n = r.size, int(n_datasets)
    if k < 2 or n < 2:
        raise ValueError(f"the Friedman test needs at least 2 learners and 2 datasets "
                         f"(got {k} and {n})")
    stat = 12.0 * n / (k * (k + 1)) * (float(np.sum(r ** 2)) - k * (k + 1) ** 2 / 4.0)
    p = float(chi2.sf(stat, k - 1))
    denom = n * (k - 1) - stat
    ff = (n - 1) * stat / denom if denom > 0 else math.inf
    pf = float(f.sf(ff, k - 1, (k - 1) * (n - 1))) if math.isfinite(ff) else 0.0
    return FriedmanResult(stat, p, ff, pf, n, k, r)


def friedman_test(values: np.ndarray, *, higher_is_better: bool = True) -> FriedmanResult:
    """The Friedman test on a (datasets, learners) array of scores."""
    from scipy.stats import friedmanchisquare

    values = np.asarray(values, dtype=float)
    _, avg = average_ranks(values, higher_is_better=higher_is_better)
    out = friedman_from_ranks(avg, values.shape[0])
    if values.shape[1] >= 3:
        with np.errstate(all="ignore"):
            res = friedmanchisquare(*[values[:, j] for j in range(values.shape[1])])
        out.scipy_statistic = float(res.statistic)
        out.scipy_p = float(res.pvalue)
    return out


def nemenyi_q(n_learners: int, alpha: float = 0.05) -> float:
    """The Nemenyi test's critical value q_α: the studentized range quantile for
    ``n_learners`` groups and infinite degrees of freedom, divided by sqrt(2)
    (Demšar's Table 5(a): 2.569 for 4 learners at α = 0.05)."""
    from scipy.stats import studentized_range

    if n_learners < 2:
        raise ValueError("the Nemenyi test needs at least 2 learners")
    return float(studentized_range.ppf(1.0 - alpha, n_learners, np.inf) / math.sqrt(2.0))


def nemenyi_cd(n_learners: int, n_datasets: int, alpha: float = 0.05) -> float:
    """The critical difference of average ranks, q_α · sqrt(k(k+1) / (6N))."""
    k, n = int(n_learners), int(n_datasets)
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n))


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the paired t-test of fold scores ``a`` against ``b``
    (scipy's ``ttest_rel``); 1.0 when they are identical, NaN with fewer than 2 pairs."""
    from scipy.stats import ttest_rel

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size < 2 or x.size != y.size:
        return math.nan
    if np.allclose(x, y, rtol=0, atol=1e-12):
        return 1.0
    with np.errstate(all="ignore"):
        p = float(ttest_rel(x, y).pvalue)
    return 1.0 if math.isnan(p) else p


# --- the summary of one metric ------------------------------------------------------------
@dataclass
class MetricSummary:
    """One metric over datasets (rows) and learners (columns): fold means, standard
    deviations (ddof=1 over folds; 0 for one fold), fold counts, ranks, average ranks
    over the datasets every learner has, the Friedman test and Nemenyi CD, and the
    paired t-test markers against ``control``."""

    metric: str
    higher_is_better: bool
    datasets: list[str]
    learners: list[str]
    labels: list[str]
    mean: np.ndarray
    sd: np.ndarray
    n_folds: np.ndarray
    ranks: np.ndarray  # NaN rows for datasets some learner lacks
    avg_ranks: np.ndarray | None
    ranked_datasets: list[str]
    friedman: FriedmanResult | None
    cd: float | None
    alpha: float
    control: str | None
    markers: list[list[str]] = field(default_factory=list)  # per dataset, per learner
    win_tie_loss: dict[str, tuple[int, int, int]] = field(default_factory=dict)


def fold_values(df: Any, metric: str) -> dict[tuple[str, str], dict[int, float]]:
    """``{(dataset, learner): {fold: value}}`` of the successful records."""
    import polars as pl

    col = f"metric_{metric}"
    if col not in df.columns:
        return {}
    ok = df.filter((pl.col("status") == "ok") & pl.col(col).is_not_null())
    out: dict[tuple[str, str], dict[int, float]] = {}
    for ds, learner, fold, value in ok.select(["dataset", "learner", "fold", col]).iter_rows():
        out.setdefault((ds, learner), {})[int(fold)] = float(value)
    return out


def learner_labels(df: Any) -> dict[str, str]:
    """Each learner key of ``df`` with the label its tables show: the records' ``label``,
    and, where two keys share one (``mc`` and ``mc_feature`` both "MC"), the key after
    it (``MC (mc_feature)``): a table, a rank or a figure keyed by label would otherwise
    show one learner's figures under the other's name."""
    keys = _ordered(df["learner"].to_list()) if df.height else []
    given = dict(zip(df["learner"].to_list(), df["label"].to_list(), strict=True)) \
        if "label" in df.columns and df.height else {}
    label = {k: str(given.get(k) or k) for k in keys}
    counts = Counter(label.values())
    return {k: (v if counts[v] == 1 or v == k else f"{v} ({k})") for k, v in label.items()}


def _ordered(values: list[str]) -> list[str]:
    seen: list[str] = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def summary_table(df: Any, metric: str, *, learners: Sequence[str] | None = None,
                  datasets: Sequence[str] | None = None, control: str | None = None,
                  alpha: float = 0.05) -> MetricSummary:
    """Summarise ``metric`` from fold-level records (``mlw.experiments.read_results``).

    ``learners``/``datasets`` fix the order (default: first appearance); ``control``
    is the learner the paired t-tests compare against (default: the first)."""
    import polars as pl

    higher = get_plugin_manager().metric(metric).greater_is_better
    ok = df.filter(pl.col("status") == "ok") if df.height else df
    learners = list(learners) if learners is not None else _ordered(ok["learner"].to_list())
    datasets = list(datasets) if datasets is not None else _ordered(ok["dataset"].to_list())
    label_of = learner_labels(df)  # every record's learner: the same labels as the report's
    values = fold_values(df, metric)
    shape = (len(datasets), len(learners))
    mean, sd = np.full(shape, np.nan), np.full(shape, np.nan)
    counts = np.zeros(shape, dtype=int)
    for i, ds in enumerate(datasets):
        for j, learner in enumerate(learners):
            v = list(values.get((ds, learner), {}).values())
            if v:
                mean[i, j] = float(np.mean(v))
                sd[i, j] = float(np.std(v, ddof=1)) if len(v) > 1 else 0.0
                counts[i, j] = len(v)
    complete = ~np.isnan(mean).any(axis=1)
    ranks = np.full(shape, np.nan)
    avg = friedman = cd = None
    ranked = [d for d, c in zip(datasets, complete, strict=True) if c]
    if complete.any() and len(learners) >= 1:
        r, avg = average_ranks(np.round(mean[complete], 12), higher_is_better=higher)
        ranks[complete] = r
        if len(ranked) >= 2 and len(learners) >= 2:
            friedman = friedman_test(np.round(mean[complete], 12), higher_is_better=higher)
            cd = nemenyi_cd(len(learners), len(ranked), alpha)
    control = control if control in learners else (learners[0] if learners else None)
    markers = [["" for _ in learners] for _ in datasets]
    wtl: dict[str, tuple[int, int, int]] = {}
    if control is not None:
        c = learners.index(control)
        for j, learner in enumerate(learners):
            if j == c:
                continue
            win = tie = loss = 0
            for i, ds in enumerate(datasets):
                a = values.get((ds, control), {})
                b = values.get((ds, learner), {})
                folds = sorted(set(a) & set(b))
                if len(folds) < 2:
                    continue
                p = paired_t_test([a[f] for f in folds], [b[f] for f in folds])
                if math.isnan(p) or p >= alpha:
                    tie += 1
                    continue
                control_better = (mean[i, c] > mean[i, j]) == higher
                markers[i][j] = CONTROL_BETTER if control_better else CONTROL_WORSE
                if control_better:
                    win += 1
                else:
                    loss += 1
            wtl[learner] = (win, tie, loss)
    return MetricSummary(metric=metric, higher_is_better=higher, datasets=datasets,
                         learners=learners, labels=[label_of.get(x, x) for x in learners],
                         mean=mean, sd=sd, n_folds=counts, ranks=ranks, avg_ranks=avg,
                         ranked_datasets=ranked, friedman=friedman, cd=cd, alpha=alpha,
                         control=control, markers=markers, win_tie_loss=wtl)


def paired_t_tests(df: Any, metric: str, control: str, *, alpha: float = 0.05
                   ) -> dict[tuple[str, str], float]:
    """``{(dataset, learner): p-value}`` of the paired t-test over folds of every
    learner against ``control`` on every dataset both have two or more folds of."""
    values = fold_values(df, metric)
    out = {}
    for (ds, learner), b in values.items():
        a = values.get((ds, control))
        if learner == control or a is None:
            continue
        folds = sorted(set(a) & set(b))
        if len(folds) >= 2:
            out[(ds, learner)] = paired_t_test([a[f] for f in folds], [b[f] for f in folds])
    return out


def metrics_of(df: Any) -> list[str]:
    """The metrics the records hold, in column order."""
    return [c.removeprefix("metric_") for c in df.columns if c.startswith("metric_")]
