"""The numba kernels against hand computations and the pure-Python references."""

from __future__ import annotations

import naive_lacovac as naive
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from mlw_lacovac import _kernels as K
from mlw_lacovac._tree import lambda_n


def _T(X: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(X.T)


def _stats(Y: np.ndarray, w: np.ndarray | None = None):
    """The root node's label statistics (row weights ``w``, or unweighted) and local
    labels, as the builder hands them to the split search."""
    Yc = sp.csr_matrix(Y.astype(np.uint8))
    rows = np.arange(Y.shape[0], dtype=np.int64)
    lm = np.arange(Y.shape[1], dtype=np.int64)
    yp, yi = Yc.indptr.astype(np.int64), Yc.indices.astype(np.int64)
    counts, co = K.node_label_stats(yp, yi, rows, lm, Y.shape[1], w)
    lptr, lidx = K.local_labels(yp, yi, rows, lm)
    return counts, co, lptr, lidx, rows


def test_label_stats_are_counts_and_upper_cooccurrences():
    Y = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1], [0, 0, 0]])
    counts, co, *_ = _stats(Y)
    assert counts.tolist() == [2, 3, 2]
    full = Y.T @ Y
    assert np.array_equal(co, np.triu(full, 1))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 30), st.integers(1, 9))
def test_phi_matches_pearson(seed, n, L):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, L)) < rng.random(L)).astype(np.uint8)
    counts, co, *_ = _stats(Y)
    assert np.allclose(K.phi_matrix(counts, co, n), naive.phi(Y), atol=1e-12)


def test_phi_of_a_constant_label_is_zero():
    Y = np.array([[1, 1], [1, 0], [1, 1]])
    counts, co, *_ = _stats(Y)
    R = K.phi_matrix(counts, co, 3)
    assert R[0, 1] == 0.0 and R[0, 0] == 0.0 and R[1, 1] == 1.0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 14), st.floats(0.0, 1.0))
def test_clustering_equals_brute_force_connected_components(seed, L, lam):
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1, 1, (L, L))
    R = (A + A.T) / 2
    comp = K.threshold_components(R, lam)
    got = sorted(sorted(np.flatnonzero(comp == c).tolist()) for c in range(comp.max() + 1))
    want = sorted(sorted(c) for c in naive.connected_components(R, lam))
    assert got == want
    # numbered by first appearance
    firsts = [int(np.flatnonzero(comp == c)[0]) for c in range(comp.max() + 1)]
    assert firsts == sorted(firsts)


def test_single_linkage_is_transitive_not_complete():
    # 0-1 and 1-2 correlated above lambda, 0-2 not: single linkage joins all three
    R = np.array([[1, 0.9, 0.1, 0], [0.9, 1, 0.8, 0], [0.1, 0.8, 1, 0], [0, 0, 0, 1]])
    assert K.threshold_components(R, 0.5).tolist() == [0, 0, 0, 1]
    # the threshold is strict: |phi| = lambda does not link
    assert K.threshold_components(R, 0.9).tolist() == [0, 1, 2, 3]
    # negative correlation links as well (distance 1 - |phi|)
    assert K.threshold_components(-R, 0.5).tolist() == [0, 0, 0, 1]


def test_lambda_n():
    assert lambda_n(12) == pytest.approx(1.96 / np.sqrt(11))
    assert lambda_n(101, z=2.0) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="at least 2 rows"):
        lambda_n(1)


# the hand-computed node of the criterion test ------------------------------------------
# rows        labels      left = rows 0-2, right = rows 3-5
#  r0         1 1 0       left : p = (1, 2/3, 1/3), var sum = 0 + 2/9 + 2/9 = 4/9
#  r1         1 1 0              cov(1,2) = 0 - 2/3*1/3 = -2/9, others 0 -> |cov| sum 2/9
#  r2         1 0 1              measure = min(4/9, 2/9) = 2/9
#  r3         0 0 1       right: p = (0, 1/3, 2/3), var sum 4/9
#  r4         0 1 1              cov(1,2) = 1/3 - 2/9 = 1/9 -> measure = 1/9
#  r5         0 0 0       split = (3 * 2/9 + 3 * 1/9) / 6 = 1/6
HAND_Y = np.array([[1, 1, 0], [1, 1, 0], [1, 0, 1], [0, 0, 1], [0, 1, 1], [0, 0, 0]])
H23 = -(2 / 3 * np.log2(2 / 3) + 1 / 3 * np.log2(1 / 3))


@pytest.mark.parametrize("crit, expected", [(K.CRIT_LACOVA, 1 / 6),
                                            (K.CRIT_VARIANCE, 4 / 9),
                                            (K.CRIT_ENTROPY, 2 * H23)])
def test_split_criterion_on_a_hand_computed_node(crit, expected):
    tc, tC, *_ = _stats(HAND_Y)
    cl, Cl, *_ = _stats(HAND_Y[:3])
    assert K.split_quality(3, cl, Cl, 6, tc, tC, crit) == pytest.approx(expected)
    left = np.array([True] * 3 + [False] * 3)
    assert naive.split_quality(HAND_Y, left, crit) == pytest.approx(expected)


def test_split_search_on_the_hand_computed_node():
    tc, tC, lptr, lidx, rows = _stats(HAND_Y)
    X = np.array([[0.0], [0.0], [0.0], [1.0], [1.0], [1.0]])
    f, t, q = K.best_split_dense(_T(X), np.zeros((0, 0), np.uint16), rows, lptr, lidx, tc, tC,
                                 np.array([0]), np.array([1]), K.CRIT_LACOVA)
    assert (f, t) == (0, 0.5) and q == pytest.approx(1 / 6)


def _random_problem(seed, n, d, L, sparse_frac=0.0):
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, (n, d)).astype(float)  # ties, negatives, zeros
    if sparse_frac:
        X[rng.random((n, d)) < sparse_frac] = 0.0
    base = rng.random((n, 1))
    Y = ((rng.random((n, L)) + 0.5 * base) > 0.9).astype(np.uint8)
    return X, Y


def _check_against_brute_force(X, Y, m, crit, f, t, q, w=None) -> bool:
    """The kernel's best split ``(f, t, q)`` has the brute force's quality, and its
    partition scores ``q``; ``False`` (with ``f < 0`` checked) when no split is valid."""
    nf, nt, nq = naive.best_split(X, Y, m, crit, w)
    if nf < 0:
        assert f < 0
        return False
    assert q == pytest.approx(nq, abs=1e-9)
    assert naive.split_quality(Y, X[:, f] <= t, crit, w) == pytest.approx(q, abs=1e-9)
    return True


def _per_feature(seed, d, m):
    """Minimum child sizes per feature: m for every feature, or (odd seeds) a mix of 1..m
    so that features with different minima compete."""
    if seed % 2 == 0:
        return np.full(d, m, np.int64)
    return np.random.default_rng(seed).integers(1, m + 1, d).astype(np.int64)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 40), st.integers(1, 5), st.integers(1, 6),
       st.integers(1, 4), st.sampled_from([K.CRIT_LACOVA, K.CRIT_VARIANCE, K.CRIT_ENTROPY]))
def test_dense_split_search_equals_brute_force(seed, n, d, L, m, crit):
    X, Y = _random_problem(seed, n, d, L)
    tc, tC, lptr, lidx, rows = _stats(Y)
    m = _per_feature(seed, d, m)
    f, t, q = K.best_split_dense(_T(X), np.zeros((0, 0), np.uint16), rows, lptr, lidx, tc, tC,
                                 np.arange(d), m, crit)
    _check_against_brute_force(X, Y, m, crit, f, t, q)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 40), st.integers(1, 5), st.integers(1, 6),
       st.integers(1, 4), st.sampled_from([K.CRIT_LACOVA, K.CRIT_VARIANCE, K.CRIT_ENTROPY]))
def test_sparse_split_search_equals_dense(seed, n, d, L, m, crit):
    X, Y = _random_problem(seed, n, d, L, sparse_frac=0.6)
    tc, tC, lptr, lidx, rows = _stats(Y)
    m = _per_feature(seed, d, m)
    Xs = sp.csr_matrix(X)
    fmask = np.ones(d, np.bool_)
    f, t, q = K.best_split_sparse(Xs.indptr.astype(np.int64), Xs.indices.astype(np.int64),
                                  Xs.data, d, rows, lptr, lidx, tc, tC, fmask, m, crit)
    if not _check_against_brute_force(X, Y, m, crit, f, t, q):
        return
    mask = K.partition_mask_sparse(Xs.indptr.astype(np.int64), Xs.indices.astype(np.int64),
                              Xs.data, rows, f, t)
    assert np.array_equal(mask, X[:, f] <= t)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 40), st.integers(1, 6), st.integers(2, 8),
       st.integers(1, 4), st.sampled_from([K.CRIT_LACOVA, K.CRIT_VARIANCE, K.CRIT_ENTROPY]),
       st.booleans())
def test_sparse_search_of_01_features_equals_brute_force(seed, n, d, L, m, crit, weighted):
    """0/1 features (text data: every feature of enron and bibtex) take the sparse
    search's own path (``search_ones``: each feature one candidate, its rows moved onto
    an empty side with the branch-free label and pair appends of ``move_row`` /
    ``add_pairs``), which random integer features almost never reach."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < rng.uniform(0.1, 0.6)).astype(float)
    base = rng.random((n, 1))
    Y = ((rng.random((n, L)) + 0.5 * base) > 0.8).astype(np.uint8)
    w = rng.uniform(0.2, 3.0, n) if weighted else None
    tc, tC, lptr, lidx, rows = _stats(Y, w)
    m = _per_feature(seed, d, m)
    Xs = sp.csr_matrix(X)
    f, t, q = K.best_split_sparse(Xs.indptr.astype(np.int64), Xs.indices.astype(np.int64),
                                  Xs.data, d, rows, lptr, lidx, tc, tC, np.ones(d, np.bool_),
                                  m, crit, weights=w)
    _check_against_brute_force(X, Y, m, crit, f, t, q, w)


def test_histogram_bins_only_restrict_candidates():
    X, Y = _random_problem(3, 60, 4, 3)
    X = X + np.random.default_rng(0).normal(0, 0.01, X.shape)  # all values distinct
    tc, tC, lptr, lidx, rows = _stats(Y)
    xbin = K.histogram_bins(X, 4)
    assert xbin.shape == (4, 60) and xbin.max() <= 3
    two = np.full(4, 2, np.int64)
    f, t, q = K.best_split_dense(_T(X), xbin, rows, lptr, lidx, tc, tC, np.arange(4), two,
                                 K.CRIT_LACOVA)
    exact = K.best_split_dense(_T(X), np.zeros((0, 0), np.uint16), rows, lptr, lidx, tc, tC,
                               np.arange(4), two, K.CRIT_LACOVA)
    assert q >= exact[2] - 1e-12
    left = X[:, f] <= t
    assert naive.split_quality(Y, left, 0) == pytest.approx(q)
    # the threshold lies between two bins
    assert set(xbin[f, left]).isdisjoint(set(xbin[f, ~left]))


def test_lacova_covariance_threshold_formula():
    counts = np.array([5, 10, 2])
    n = 20
    p = counts / n
    s1 = s2 = 0.0
    for j in range(3):
        for k in range(j + 1, 3):
            v = p[j] * p[k] * (1 - p[j]) * (1 - p[k])
            s1 += np.sqrt(v)
            s2 += v
    want = np.sqrt(2 / (np.pi * (n - 1))) * s1 + 2 * np.sqrt((1 - 2 / np.pi) / (n - 1) * s2)
    assert K.lacova_cov_threshold(counts, n) == pytest.approx(want)
    Y = (np.random.default_rng(1).random((n, 3)) < 0.4).astype(np.uint8)
    c, C, *_ = _stats(Y)
    assert K.sum_abs_covariance(c, C, n) == pytest.approx(naive.abs_covariance_sum(Y))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 40), st.integers(1, 4), st.integers(1, 5),
       st.integers(1, 3), st.sampled_from([K.CRIT_LACOVA, K.CRIT_VARIANCE, K.CRIT_ENTROPY]))
def test_rank_bins_counting_sort_equals_the_comparison_sort_scan(seed, n, d, L, m, crit):
    X, Y = _random_problem(seed, n, d, L)
    tc, tC, lptr, lidx, rows = _stats(Y)
    m = _per_feature(seed, d, m)
    ranks = K.rank_bins(X)
    assert ranks is not None and ranks.shape == (d, n)
    # a subset of rows, so the node's rank range is narrower than the column's
    sub = rows[: max(2, n // 2)]
    tc2, tC2, lptr2, lidx2, _ = _stats(Y[sub])
    for rws, a, b, c_, d_ in ((rows, tc, tC, lptr, lidx), (sub, tc2, tC2, lptr2, lidx2)):
        exact = K.best_split_dense(_T(X), np.zeros((0, 0), np.uint16), rws, c_, d_, a, b,
                                   np.arange(d), m, crit)
        counted = K.best_split_dense(_T(X), ranks, rws, c_, d_, a, b, np.arange(d), m, crit)
        assert counted[0] == exact[0] and counted[1] == exact[1]
        assert counted[2] == pytest.approx(exact[2], abs=1e-12) or exact[0] < 0


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 30), st.integers(1, 4), st.integers(1, 5),
       st.integers(1, 4), st.sampled_from([K.CRIT_LACOVA, K.CRIT_VARIANCE, K.CRIT_ENTROPY]),
       st.booleans())
def test_weighted_split_search_equals_weighted_brute_force(seed, n, d, L, m, crit, sparse):
    """sample_weight: real-valued row weights in the criterion and in the
    children's minimum size, dense and sparse, against the weighted brute force."""
    X, Y = _random_problem(seed, n, d, L, sparse_frac=0.5 if sparse else 0.0)
    w = np.random.default_rng(seed + 7).uniform(0.2, 3.0, n)
    tc, tC, lptr, lidx, rows = _stats(Y, w)
    m = _per_feature(seed, d, m)
    if sparse:
        Xs = sp.csr_matrix(X)
        f, t, q = K.best_split_sparse(Xs.indptr.astype(np.int64), Xs.indices.astype(np.int64),
                                      Xs.data, d, rows, lptr, lidx, tc, tC,
                                      np.ones(d, np.bool_), m, crit, weights=w)
    else:
        f, t, q = K.best_split_dense(_T(X), np.zeros((0, 0), np.uint16), rows, lptr, lidx, tc,
                                     tC, np.arange(d), m, crit, weights=w)
    _check_against_brute_force(X, Y, m, crit, f, t, q, w)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 60), st.integers(2, 64))
def test_weighted_quantiles_are_numpys_on_the_repeated_column(seed, n, bins):
    """The bins' quantiles with integer weights are np.quantile of the repeated column,
    bit for bit; without weights, np.quantile of the column."""
    rng = np.random.default_rng(seed)
    col = rng.integers(-5, 6, n) + rng.normal(0, 1, n) * (seed % 2)
    w = rng.integers(1, 5, n)
    qs = np.arange(1, bins) / bins
    got = K.weighted_quantiles(col, qs, w.astype(float))
    assert np.array_equal(got, np.quantile(np.repeat(col, w), qs))
    assert np.array_equal(K.weighted_quantiles(col, qs), np.quantile(col, qs))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(0, 200),
       kind=st.sampled_from(["ties", "distinct", "descending", "nan"]))
def test_the_builders_sorts_are_numpys(seed, n, kind):
    """argsort_quick is numba's np.argsort (its quicksort: equal keys in the same order,
    which the trees depend on); argsort_stable is np.argsort(kind="stable"). numba's
    quicksort is taken in its pure-Python form, so the reference is the same with and
    without the JIT (numpy's own quicksort orders ties differently)."""
    from numba.misc.quicksort import make_py_quicksort

    from mlw_lacovac._kernels.sort import argsort_quick, argsort_stable

    def lt(a, b):  # numba's order of floats: NaN after every number
        return a < b or (np.isnan(b) and not np.isnan(a))

    quicksort = make_py_quicksort(lt=lt, is_argsort=True, is_np_array=True).run_quicksort

    def numba_argsort(a):
        return np.asarray(quicksort(a), dtype=np.int64)

    rng = np.random.default_rng(seed)
    keys = {"ties": rng.integers(0, 5, n).astype(float), "distinct": rng.normal(size=n),
            "descending": np.sort(rng.integers(0, 40, n).astype(float))[::-1].copy(),
            "nan": np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 4, n))}[kind]
    order = np.full(n + 2, -1, np.int64)  # longer than n: only order[:n] is written
    argsort_quick(keys, n, order)
    assert np.array_equal(order[:n], numba_argsort(keys)) and (order[n:] == -1).all()
    argsort_stable(keys, n, order)
    assert np.array_equal(order[:n], np.argsort(keys, kind="stable"))
    half = n // 2  # a prefix of the buffer, as the builder passes it
    argsort_quick(keys, half, order)
    assert np.array_equal(order[:half], numba_argsort(keys[:half].copy()))


def test_draw_features_are_a_sorted_partial_shuffle():
    """The forest's feature draws: the first k of the splitmix64 partial Fisher-Yates
    shuffle, ascending (the mark-and-scan in place of a sort)."""
    from mlw_lacovac._kernels.rng import next_u64

    d, k = 30, 7
    state, perm, out = np.array([5], np.uint64), np.arange(d), np.empty(k, np.int64)
    ref_state, ref_perm = state.copy(), perm.copy()
    for _ in range(3):
        K.draw_features(state, perm, k, out)
        for i in range(k):
            j = i + int(next_u64(ref_state) % np.uint64(d - i))
            ref_perm[i], ref_perm[j] = ref_perm[j], ref_perm[i]
        assert out.tolist() == sorted(ref_perm[:k].tolist())
        assert np.array_equal(perm, ref_perm)


@pytest.mark.parametrize("n, buffer", [(12, 64), (40, 64), (40, 3), (300, 5)])
def test_rows_ordered_by_bin_are_a_stable_sort_whatever_the_buffer(n, buffer):
    """_order_by_bin: insertion sort (n <= 16), counting sort, or, with more bins than
    its count buffer holds, a merge sort: the stable order of the bins each time."""
    from mlw_lacovac._kernels.split_dense import _order_by_bin

    kb = np.random.default_rng(n).integers(3, 40, n + 5).astype(np.int64)
    order = np.full(n + 5, -1, np.int64)
    assert _order_by_bin(kb, n, order, np.empty(buffer, np.int64))
    assert np.array_equal(order[:n], np.argsort(kb[:n], kind="stable"))
    assert not _order_by_bin(np.full(n, 7, np.int64), n, order, np.empty(buffer, np.int64))
