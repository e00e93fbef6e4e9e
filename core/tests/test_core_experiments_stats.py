"""Statistics of mlw.experiments, checked against Demšar's worked example (JMLR 7, 2006,
Sec. 3.2.2, Table 6: AUC of four C4.5 variants on 14 data sets)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlw.experiments.plots import cliques
from mlw.experiments.stats import (
    average_ranks,
    friedman_from_ranks,
    friedman_test,
    nemenyi_cd,
    nemenyi_q,
    paired_t_test,
)

NAMES = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
# Table 6 as printed (three decimals)
AUC = np.array([
    [0.763, 0.768, 0.771, 0.798], [0.599, 0.591, 0.590, 0.569], [0.954, 0.971, 0.968, 0.967],
    [0.628, 0.661, 0.654, 0.657], [0.882, 0.888, 0.886, 0.898], [0.936, 0.931, 0.916, 0.931],
    [0.661, 0.668, 0.609, 0.685], [0.583, 0.583, 0.563, 0.625], [0.775, 0.838, 0.866, 0.875],
    [1.000, 1.000, 1.000, 1.000], [0.940, 0.962, 0.965, 0.962], [0.619, 0.666, 0.614, 0.669],
    [0.972, 0.981, 0.975, 0.975], [0.957, 0.978, 0.946, 0.970],
])
PAPER_RANKS = [3.143, 2.000, 2.893, 1.964]


def test_average_ranks_of_table_6() -> None:
    # The printed table ranks "voting" 0.975 / 0.975 as 2 and 3 (the unrounded AUCs
    # differ); with that tie broken as printed the average ranks are the paper's.
    table = AUC.copy()
    table[12, 3] -= 1e-4
    _, avg = average_ranks(table)
    assert np.round(avg, 3).tolist() == PAPER_RANKS
    # as printed, the tie is shared: C4.5+cf and C4.5+m+cf move by 0.5 / 14
    _, tied = average_ranks(AUC)
    assert tied[2] - avg[2] == pytest.approx(0.5 / 14)
    assert avg[3] - tied[3] == pytest.approx(0.5 / 14)


def test_friedman_statistics_of_the_worked_example() -> None:
    res = friedman_from_ranks(PAPER_RANKS, 14)
    assert res.statistic == pytest.approx(9.28, abs=0.005)        # χ²_F = 9.28
    assert res.iman_davenport == pytest.approx(3.69, abs=0.005)   # F_F = 3.69
    # F(3, 39) critical value at 0.05 is 2.85: the null hypothesis is rejected
    from scipy.stats import f
    assert f.ppf(0.95, 3, 39) == pytest.approx(2.85, abs=0.005)
    assert res.iman_davenport_p < 0.05
    table = AUC.copy()
    table[12, 3] -= 1e-4
    full = friedman_test(table)
    assert full.statistic == pytest.approx(res.statistic, abs=0.01)
    assert full.scipy_statistic is not None and full.scipy_statistic >= full.statistic


def test_nemenyi_critical_values_and_cd() -> None:
    assert nemenyi_q(4, 0.05) == pytest.approx(2.569, abs=5e-4)  # Table 5(a)
    assert nemenyi_q(4, 0.10) == pytest.approx(2.291, abs=5e-4)
    assert nemenyi_q(2, 0.05) == pytest.approx(1.960, abs=5e-4)
    assert nemenyi_q(10, 0.05) == pytest.approx(3.164, abs=5e-4)
    assert nemenyi_cd(4, 14, 0.05) == pytest.approx(1.25, abs=0.005)
    assert nemenyi_cd(4, 14, 0.10) == pytest.approx(1.12, abs=0.005)


def test_cd_groups_as_in_figure_1a() -> None:
    # At alpha = 0.10: C4.5 is worse than C4.5+m and C4.5+m+cf; C4.5+cf joins both groups.
    order = np.argsort(PAPER_RANKS)  # best first: m+cf, m, cf, C4.5
    groups = [[NAMES[order[i]] for i in range(a, b + 1)]
              for a, b in cliques(PAPER_RANKS, nemenyi_cd(4, 14, 0.10))]
    assert groups == [["C4.5+m+cf", "C4.5+m", "C4.5+cf"], ["C4.5+cf", "C4.5"]]
    assert cliques(PAPER_RANKS, nemenyi_cd(4, 14, 0.05)) == [(0, 3)]  # nothing significant


def test_paired_t_test_matches_scipy_and_handles_identical_folds() -> None:
    from scipy.stats import ttest_rel

    a = [0.61, 0.64, 0.60, 0.66, 0.63]
    b = [0.58, 0.60, 0.59, 0.61, 0.62]
    assert paired_t_test(a, b) == pytest.approx(ttest_rel(a, b).pvalue)
    assert paired_t_test(a, a) == 1.0
    assert math.isnan(paired_t_test([0.5], [0.4]))


def test_bad_input_is_one_line_error() -> None:
    with pytest.raises(ValueError, match="NaN"):
        average_ranks(np.array([[0.1, np.nan]]))
    with pytest.raises(ValueError, match="at least 2"):
        friedman_from_ranks([1.0], 5)
