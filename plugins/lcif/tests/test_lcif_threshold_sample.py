"""``threshold_sample``: the cardinality threshold fitted on the leave-one-out scores of a
seeded random subsample of the training rows (each scored against all training rows)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw_lcif import LCIF, InstanceKNN


@pytest.fixture(scope="module")
def bibtex(mulan_dir):
    return mlw.load_dataset(mulan_dir / "bibtex-train.arff")


def test_subsample_threshold_is_the_full_one_on_bibtex(bibtex) -> None:
    # the paper's data set and LCIF setting: 1,000 of 4,880 rows give the same threshold
    # (the issue allows one 0.01 search step) for several seeds
    full = LCIF(k_ins=9, k_feat=1, lam=0.7, threshold_sample=None).fit(bibtex.X, bibtex.Y)
    assert full.threshold_rows_ == bibtex.X.shape[0]
    for seed in (0, 1):
        sub = LCIF(k_ins=9, k_feat=1, lam=0.7, threshold_sample=1000,
                   random_state=seed).fit(bibtex.X, bibtex.Y)
        assert sub.threshold_rows_ == 1000
        assert abs(sub.threshold_.threshold_ - full.threshold_.threshold_) <= 0.01 + 1e-12


def test_sampled_rows_keep_their_exact_leave_one_out_scores() -> None:
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((300, 20)) < 0.2).astype(float))
    Y = sp.csr_matrix((rng.random((300, 4)) < 0.3).astype(np.uint8))
    m = LCIF(k_ins=5, k_feat=2, threshold_sample=None).fit(X, Y)
    full = sp.vstack(list(m._training_score_blocks(block=64))).toarray()
    rows = np.sort(rng.choice(300, 70, replace=False))
    sub = sp.vstack(list(m._training_score_blocks(block=32, rows=rows))).toarray()
    np.testing.assert_array_equal(sub, full[rows])


def test_sample_covering_the_data_is_the_exact_procedure() -> None:
    rng = np.random.default_rng(1)
    X = (rng.random((120, 10)) < 0.3).astype(float)
    Y = (rng.random((120, 5)) < 0.3).astype(np.uint8)
    a = InstanceKNN(k_ins=4, threshold_sample=None).fit(X, Y)
    b = InstanceKNN(k_ins=4, threshold_sample=120).fit(X, Y)
    c = InstanceKNN(k_ins=4).fit(X, Y)  # default 20,000 > 120 rows: all rows
    assert a.threshold_rows_ == b.threshold_rows_ == c.threshold_rows_ == 120
    assert a.threshold_.threshold_ == b.threshold_.threshold_ == c.threshold_.threshold_
    d = InstanceKNN(k_ins=4, threshold_sample=50, random_state=3).fit(X, Y)
    e = InstanceKNN(k_ins=4, threshold_sample=50, random_state=3).fit(X, Y)
    assert d.threshold_rows_ == 50 and d.threshold_.threshold_ == e.threshold_.threshold_


@pytest.mark.parametrize("bad", [0, -5, 2.5, True, "all"])
def test_bad_threshold_sample_is_a_clear_error(bad) -> None:
    X = np.eye(4)
    Y = np.eye(4, 2, dtype=np.uint8)
    with pytest.raises(ValueError, match="threshold_sample"):
        LCIF(k_ins=1, threshold_sample=bad).fit(X, Y)
