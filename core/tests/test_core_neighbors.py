"""mlw.neighbors against the brute force of naive_neighbors: identical neighbours, order,
ties and values on every path (CSR inverted index, the 0/1 kernel, dense BLAS products),
for cosine and Euclidean, with leave-one-out and masks. Small data: this file also runs
without the JIT (.ci/run)."""

from __future__ import annotations

import subprocess
import sys

import naive_neighbors as naive
import numpy as np
import pytest
import scipy.sparse as sp

import mlw.neighbors
from mlw.neighbors import NeighborIndex, kneighbors


def _random(rng: np.random.Generator, n: int, d: int, density: float, kind: str) -> np.ndarray:
    mask = rng.random((n, d)) < density
    if kind == "binary":
        vals = np.ones((n, d))
    elif kind == "integer":
        vals = rng.integers(1, 4, size=(n, d)).astype(float)
    else:
        vals = rng.random((n, d))
    M = np.where(mask, vals, 0.0)
    M[rng.integers(0, n)] = 0.0  # an all-zero row
    return M


def _lists(idx: np.ndarray, val: np.ndarray) -> list[list[tuple[int, float]]]:
    return [[(int(r), float(v)) for r, v in zip(ri, vi, strict=True) if r >= 0]
            for ri, vi in zip(idx, val, strict=True)]


def _assert_same(got: list, want: list, exact: bool) -> None:
    if exact:
        assert got == want
        return
    for g, w in zip(got, want, strict=True):
        assert [r for r, _ in g] == [r for r, _ in w]
        np.testing.assert_allclose([v for _, v in g], [v for _, v in w], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
@pytest.mark.parametrize("kind", ["binary", "integer", "real"])
@pytest.mark.parametrize("layout", ["csr", "dense", "dense-index-csr-query",
                                    "csr-index-dense-query"])
def test_matches_brute_force(metric: str, kind: str, layout: str,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(len(kind) * 7 + len(layout))
    T = _random(rng, 40, 12, 0.25, kind)
    Q = _random(rng, 25, 12, 0.25, kind)
    Ti = T if layout.startswith("dense") else sp.csr_matrix(T)
    Qi = Q if layout in ("dense", "csr-index-dense-query") else sp.csr_matrix(Q)
    index = NeighborIndex(Ti, metric=metric)
    for k in (1, 4, 9):
        # small searches run serially; k = 4 forces the parallel kernels
        monkeypatch.setattr(mlw.neighbors, "_PARALLEL_MIN_PAIRS", 0 if k == 4 else 1 << 23)
        got = _lists(*index.query(Qi, k=k))
        # integer data: dot products and squared norms are exact, so are the results;
        # the Euclidean distance of real data is sqrt(|q|²+|t|²-2q·t), not the
        # reference's sqrt(Σ(q-t)²): equal to rounding
        exact = kind != "real" or (metric == "cosine" and layout in ("csr",
                                                                     "csr-index-dense-query"))
        _assert_same(got, naive.kneighbors(T, Q, k, metric), exact)


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_ties_go_to_the_lower_index(metric: str) -> None:
    T = np.array([[1, 0], [0, 1], [1, 0], [1, 0], [1, 1]], dtype=float)
    for Ti in (T, sp.csr_matrix(T)):
        idx, val = NeighborIndex(Ti, metric=metric).query(np.array([[1.0, 0.0]]), k=3)
        assert idx[0].tolist() == [0, 2, 3]
        assert np.allclose(val[0], 1.0 if metric == "cosine" else 0.0)


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
@pytest.mark.parametrize("dense", [False, True])
def test_leave_one_out_exclude_and_mask(metric: str, dense: bool) -> None:
    rng = np.random.default_rng(7)
    T = _random(rng, 50, 10, 0.3, "integer")
    M = T if dense else sp.csr_matrix(T)
    index = NeighborIndex(M, metric=metric)
    loo = naive.kneighbors(T, T, 5, metric, exclude=list(range(50)))
    assert _lists(*index.query(k=5)) == loo
    assert _lists(*kneighbors(M, k=5, metric=metric)) == loo
    # exclude: leave-one-out for a subset of the indexed rows
    rows = np.array([3, 17, 40])
    assert _lists(*index.query(M[rows], k=5, exclude=rows)) == [loo[r] for r in rows]
    allowed = rng.random(50) < 0.6
    want = naive.kneighbors(T, T, 5, metric, allowed=allowed)
    assert _lists(*index.query(k=5, exclude_self=False, allowed=allowed)) == want
    # a mask leaving fewer than k rows pads with -1 (and inf distances)
    few = np.zeros(50, dtype=bool)
    few[[2, 9]] = True
    idx, val = index.query(T[:1] if dense else M[:1], k=4, allowed=few)
    assert (idx[0, 2:] == -1).all()
    assert (val[0, 2:] == (0.0 if metric == "cosine" else np.inf)).all()


def test_cosine_pads_rows_without_a_positive_similarity() -> None:
    T = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 0]]))
    idx, sim = NeighborIndex(T).query(np.array([[0, 0, 1.0], [1.0, 0, 0], [0, 0, 0]]), k=2)
    assert idx.tolist() == [[-1, -1], [0, -1], [-1, -1]]
    assert sim.tolist() == [[0, 0], [1.0, 0], [0, 0]]


def test_blocks_give_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    T = _random(rng, 60, 15, 0.2, "real")
    Q = _random(rng, 33, 15, 0.2, "real")
    for metric in ("cosine", "euclidean"):
        for Ti, Qi in ((sp.csr_matrix(T), sp.csr_matrix(Q)), (T, Q)):
            index = NeighborIndex(Ti, metric=metric)
            a, b = index.query(Qi, k=6), index.query(Qi, k=6, block=5)
            with monkeypatch.context() as m:  # the parallel kernels: the same results
                m.setattr(mlw.neighbors, "_PARALLEL_MIN_PAIRS", 0)
                c = index.query(Qi, k=6)
            assert np.array_equal(a[0], c[0]) and np.array_equal(a[1], c[1])
            assert np.array_equal(a[0], b[0])
            if sp.issparse(Ti):
                assert np.array_equal(a[1], b[1])
            else:  # BLAS may round a product differently for another block shape
                np.testing.assert_allclose(a[1], b[1], rtol=1e-13)


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_dense_and_sparse_scans_agree(metric: str) -> None:
    # one query touches almost every row (full scan), another only a few (touched rows,
    # then for Euclidean the untouched rows by increasing norm)
    rng = np.random.default_rng(11)
    T = _random(rng, 80, 30, 0.1, "real")
    T[:, 0] = rng.random(80) + 0.1
    Q = np.zeros((3, 30))
    Q[0, 0], Q[0, 5] = 1.0, 0.5
    Q[1, 7] = 1.0
    Q[2, 7] = 0.01  # nearest by distance: short rows sharing nothing
    idx, val = NeighborIndex(sp.csr_matrix(T), metric=metric).query(sp.csr_matrix(Q), k=7)
    _assert_same(_lists(idx, val), naive.kneighbors(T, Q, 7, metric), metric == "cosine")


def test_euclidean_finds_rows_that_share_no_feature() -> None:
    T = sp.csr_matrix(np.array([[5.0, 5.0, 0], [0, 0, 0.1], [0, 0, 0], [4.0, 0, 0]]))
    idx, dist = NeighborIndex(T, metric="euclidean").query(sp.csr_matrix([[1.0, 0, 0]]), k=4)
    assert idx[0].tolist() == [2, 1, 3, 0]
    np.testing.assert_allclose(dist[0], [1.0, np.sqrt(1.01), 3.0, np.sqrt(41.0)])


# -- the 0/1 kernel ----------------------------------------------------------------------


def _binary(rng: np.random.Generator, n: int, d: int, density: float) -> np.ndarray:
    M = (rng.random((n, d)) < density).astype(float)
    M[rng.integers(0, n)] = 0.0  # an all-zero row
    return M


@pytest.mark.parametrize("tile", [64, 128, 16384])
def test_binary_kernel_matches_brute_force(tile: int) -> None:
    rng = np.random.default_rng(tile)
    T = _binary(rng, 230, 14, 0.25)  # few features: many exact ties
    Q = _binary(rng, 30, 14, 0.25)
    index = NeighborIndex(sp.csr_matrix(T), tile=tile)
    assert index.binary
    for k in (1, 3, 8):
        assert _lists(*index.query(sp.csr_matrix(Q), k=k)) == naive.kneighbors(T, Q, k)


def test_binary_kernel_leave_one_out_and_mask() -> None:
    rng = np.random.default_rng(5)
    T = _binary(rng, 150, 12, 0.3)
    index = NeighborIndex(sp.csr_matrix(T), tile=64)
    assert _lists(*index.query(k=5, block=40)) == naive.kneighbors(
        T, T, 5, exclude=list(range(150)))
    allowed = rng.random(150) < 0.5
    assert _lists(*index.query(k=5, exclude_self=False, allowed=allowed)) == \
        naive.kneighbors(T, T, 5, allowed=allowed)


def test_binary_kernel_long_queries_and_sparse_tiles() -> None:
    # queries with more than 127 (no word-parallel test) and more than 255 non-zeros
    # (general kernel) next to short ones; tiles mostly empty for most queries
    rng = np.random.default_rng(2)
    d = 400
    T = _binary(rng, 300, d, 0.02)
    T[:40] = rng.random((40, d)) < 0.7
    Q = _binary(rng, 12, d, 0.02)
    Q[0] = rng.random(d) < 0.4   # ~160 non-zeros
    Q[1] = rng.random(d) < 0.8   # ~320 non-zeros
    Q[2, :] = 0.0
    Q[2, 5] = 1.0
    Qs = sp.csr_matrix(Q)
    assert np.diff(Qs.indptr)[0] > 127 and np.diff(Qs.indptr)[1] > 255
    got = NeighborIndex(sp.csr_matrix(T), tile=64).query(Qs, k=6)
    assert _lists(*got) == naive.kneighbors(T, Q, 6)


def test_real_values_take_the_general_kernel() -> None:
    rng = np.random.default_rng(4)
    T = _binary(rng, 50, 8, 0.4)
    T[3, 2] = 0.5
    Q = _binary(rng, 6, 8, 0.4)
    index = NeighborIndex(sp.csr_matrix(T))
    assert not index.binary
    assert _lists(*index.query(sp.csr_matrix(Q), k=4)) == naive.kneighbors(T, Q, 4)
    # a 0/1 index, real-valued queries: the general kernel, same result as brute force
    Tb = _binary(rng, 50, 8, 0.4)
    Q[0, 1] = 0.25
    got = NeighborIndex(sp.csr_matrix(Tb), tile=64).query(sp.csr_matrix(Q), k=4)
    assert _lists(*got) == naive.kneighbors(Q=Q, T=Tb, k=4)
    assert not NeighborIndex(sp.csr_matrix(Tb), metric="euclidean").binary
    assert not NeighborIndex(sp.csr_matrix(Tb), binary_kernel=False).binary


# -- validation and laziness -------------------------------------------------------------


@pytest.mark.parametrize("call,message", [
    (lambda T: NeighborIndex(T, metric="manhattan"), "parameter 'metric' must be a string"),
    (lambda T: NeighborIndex(T[:0]), "cannot index 0 rows"),
    (lambda T: NeighborIndex(T).query(T, k=0), "parameter 'k' must be an integer >= 1 and <= 4"),
    (lambda T: NeighborIndex(T).query(T, k=5), "parameter 'k' must be an integer >= 1 and <= 4"),
    (lambda T: NeighborIndex(T).query(T, k=2.0), "parameter 'k' must be an integer"),
    (lambda T: NeighborIndex(T).query(T[:, :2], k=1), "has 2 features"),
    (lambda T: NeighborIndex(T).query(T, k=1, exclude_self=True), "exclude_self needs X=None"),
    (lambda T: NeighborIndex(T).query(k=1, exclude=[0, 1, 2, 3]), "not both"),
    (lambda T: NeighborIndex(T).query(T, k=1, exclude=[0, 1]), "exclude must be an integer"),
    (lambda T: NeighborIndex(T).query(T, k=1, exclude=[0, 1, 2, 9]), "exclude must hold"),
    (lambda T: NeighborIndex(T).query(T, k=1, allowed=[1, 0]), "allowed must have one entry"),
    (lambda T: NeighborIndex(T * np.nan), "NaN"),
])
def test_bad_input_is_a_one_line_value_error(call, message: str) -> None:
    T = np.eye(4, 3)
    with pytest.raises(ValueError, match=message) as err:
        call(T)
    assert "\n" not in str(err.value)


def test_scatter_touched_kernel_api_matches_a_reference() -> None:
    # the public kernel (mlw.neighbors.scatter_touched, which LCIF calls from its own
    # kernels) against a plain-Python sum over the postings: the same sums in posting
    # order, each row listed once, in the order first met, after the rows already held
    from mlw.neighbors import scatter_touched

    rng = np.random.default_rng(5)
    n = 30
    rows = rng.integers(0, n, size=200).astype(np.int32)
    data = rng.standard_normal(200)
    acc = np.zeros(n)
    seen = np.zeros(n, dtype=np.uint8)
    touched = np.empty(n, dtype=np.int32)
    want_acc = [0.0] * n
    want_touched: list[int] = []
    nt = 0
    for lo, hi, v in [(0, 50, 0.5), (50, 50, 2.0), (40, 130, -1.25), (130, 200, 3.0)]:
        nt = scatter_touched(acc, seen, touched, nt, rows, data, lo, hi, v)
        for p in range(lo, hi):
            r = int(rows[p])
            if r not in want_touched:
                want_touched.append(r)
            want_acc[r] += v * float(data[p])
        assert touched[:nt].tolist() == want_touched
    assert acc.tolist() == want_acc
    assert seen.tolist() == [1 if r in want_touched else 0 for r in range(n)]


def test_query_start_matches_the_rule() -> None:
    # the per-query start of both search loops: a zero-norm cosine query is skipped,
    # 1/|q| (0 for a zero norm), and the bound a candidate must reach
    from mlw.neighbors._kernels import _query_start

    for nq2 in [0.0, 1e-300, 0.25, 2.0, 9e300]:
        inv = 1.0 / np.sqrt(nq2) if nq2 > 0.0 else 0.0
        assert _query_start(nq2, True) == ((True, 0.0, 0.0) if nq2 == 0.0
                                           else (False, inv, 0.0))
        assert _query_start(nq2, False) == (False, inv, -np.inf)


def test_import_is_lazy() -> None:
    # `import mlw` never imports mlw.neighbors, and mlw.neighbors loads its numba
    # kernels on the first query, not at import
    code = ("import sys, mlw; assert 'mlw.neighbors' not in sys.modules; "
            "import mlw.neighbors; assert 'mlw.neighbors._kernels' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_self_search_visits_each_pair_once_with_the_same_results(
        metric: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the leave-one-out self query (every pair once, both top-k lists updated) against
    # the brute force and, bit for bit, the per-query kernel (exclude=rows); rows that
    # touch most rows (full scan) beside short ones (touched rows, then for Euclidean
    # the rows sharing no feature, by norm); negative values, so a shared feature can
    # make a dot product negative; with and without the frequent features' dense columns
    rng = np.random.default_rng(21)
    T = _random(rng, 70, 40, 0.05, "real") - 0.3 * _random(rng, 70, 40, 0.05, "real")
    T[:25, :3] = rng.random((25, 3)) + 0.2  # three frequent features
    T[40] = 0.0
    T[41, 39] = 0.001                        # a short row sharing little
    M = sp.csr_matrix(T)
    rows = np.arange(70)
    results = []
    for share in (0.2, 2.0):  # dense columns for features in >= 20% of rows; none
        monkeypatch.setattr(mlw.neighbors, "_FREQUENT_FEATURE_MIN", share)
        index = NeighborIndex(M, metric=metric)
        assert index._dense_cols.shape[0] == (3 if share < 1 else 0)
        got = index.query(k=6)
        per_query = index.query(M, k=6, exclude=rows)
        assert np.array_equal(got[0], per_query[0]) and np.array_equal(got[1], per_query[1])
        results.append(got)
        _assert_same(_lists(*got), naive.kneighbors(T, T, 6, metric, exclude=list(rows)),
                     False)
    assert all(np.array_equal(a, b) for a, b in zip(results[0], results[1], strict=True))
