"""Exact k-nearest-neighbour search for learners: cosine or Euclidean, dense or CSR.

The one kNN of mlw: LCIF and the kNN baselines (MLkNN, BRkNN, IBLR) all query it, so a
speed-up or a fix lands in every method at once.

>>> import numpy as np
>>> from mlw.neighbors import NeighborIndex, kneighbors
>>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.5, 0.5]])
>>> idx, sim = kneighbors(X, k=2)                  # leave-one-out: no row is its own neighbour
>>> idx.tolist()
[[1, 3], [0, 3], [3, 1], [1, 0]]
>>> index = NeighborIndex(X, metric="euclidean")
>>> idx, dist = index.query(np.array([[1.0, 0.05]]), k=1)
>>> int(idx[0, 0]), round(float(dist[0, 0]), 4)
(0, 0.05)

Conventions (the same for every path, tested against a brute force and scikit-learn):

- ``cosine``: similarity ``x·t / (|x| |t|)``, larger is nearer; only rows with a
  *positive* similarity are neighbours (a row sharing no feature with the query, or an
  all-zero row, is none), so a query can have fewer than k: the rest is padded with
  index -1 and similarity 0.
- ``euclidean``: distance ``sqrt(|x|² + |t|² - 2 x·t)`` (clipped at 0), smaller is
  nearer; every row qualifies (padding, index -1 and distance ``inf``, only when
  ``exclude``/``allowed`` leave fewer than k rows).
- Ties go to the lower row index. Results are sorted nearest first.
- Sparse stays sparse: a CSR index is an inverted index (feature → rows) searched with
  numba kernels, never densified; only the features stored in at least 20% of the rows
  are also kept as dense columns (at most 5 entries per stored value), which a query
  touching most rows adds in contiguous passes. A dense index uses BLAS dot products per
  block of queries. Rows whose stored values are all 1 (word presence) get a faster
  cosine kernel with exactly the same results.
- The leave-one-out query of a CSR index's own rows (``query()`` with no mask) visits
  every pair of rows once and updates both rows' neighbours: half the work of querying
  the rows one by one, the same results bit for bit.

numba is imported on the first query, not by ``import mlw`` nor ``import mlw.neighbors``.

Kernel API for a plugin's numba code: ``mlw.neighbors.scatter_touched(acc, seen,
touched, nt, rows, data, lo, hi, v)``, the numba function that adds ``v`` times the
postings ``lo:hi`` of ``rows``/``data`` into ``acc`` and lists each row met for the first
time (``seen[r] == 0``, then set to 1) in ``touched[nt:]``, returning the new count; it
is callable from ``@njit`` functions only and imports numba when first looked up (see
:func:`mlw.neighbors._kernels.scatter_touched` for the buffers' contract).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from mlw.validation import check_param, check_X

__all__ = ["METRICS", "NeighborIndex", "kneighbors"]

#: The metrics :class:`NeighborIndex` supports.
METRICS: tuple[str, ...] = ("cosine", "euclidean")

Metric = Literal["cosine", "euclidean"]

#: Largest block of dense dot products held at once (float64 entries): 32 MB.
_DENSE_BLOCK_ENTRIES = 4_000_000

#: Queries x indexed rows from which a (non-0/1) search runs in parallel. Below, the
#: kernels run in the calling thread: waking the worker threads for a region costs more
#: CPU than the few tens of milliseconds of work saves (yeast's training rows against
#: themselves and its test rows, 3.6 M pairs: 0.076 CPU s with 2 threads, 0.036 in one,
#: on the shared 2-core machine). Results are the same either way.
_PARALLEL_MIN_PAIRS = 1 << 23

#: CSR index: a feature stored in at least this fraction of the indexed rows is also
#: kept as a dense column, which a query touching most rows adds in one contiguous pass
#: instead of scattering the feature's long postings (the same sums, bit for bit).
#: bibtex's 42 such features: its leave-one-out and test queries 1.8x faster (0.61 ->
#: 0.35 and 0.33 -> 0.19 CPU s, one thread); 0.1 and 0.3 measured the same,
#: 0.05 slower (272 columns no longer fit the cache).
_FREQUENT_FEATURE_MIN = 0.2


def _k() -> Any:
    from mlw.neighbors import _kernels

    return _kernels


def __getattr__(name: str) -> Any:
    """The kernel API (``scatter_touched``), looked up lazily so that importing
    :mod:`mlw.neighbors` does not import numba."""
    if name == "scatter_touched":
        return _k().scatter_touched
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_BLAS: Any = None  # threadpoolctl's controller, found once (a lookup costs ~0.4 ms)


def _one_blas_thread() -> Any:
    """A context holding BLAS to one thread: the small products of a serial search
    (yeast: ML-kNN 0.06 -> 0.04 CPU s, where OpenBLAS's spinning workers
    cost more than they save); entering it costs ~0.02 ms."""
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


def _n_chunks(n_rows: int) -> int:
    """Query chunks run in parallel: a few per thread, never more than the rows."""
    from numba import get_num_threads

    return max(1, min(n_rows, 4 * get_num_threads()))


class NeighborIndex:
    """An exact k-nearest-neighbour index over the rows of ``X``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_rows, n_features)
        The rows to search (validated like a learner's ``X``: finite, float64; CSR
        stays CSR).
    metric : {"cosine", "euclidean"}
        Cosine similarity (larger is nearer; positive similarities only) or Euclidean
        distance.
    binary_kernel : bool
        For a CSR index under cosine whose stored values are all 1, use the 0/1 kernel
        (integer overlap counts in cache-sized tiles; the same results, about 4× faster
        on IMDB's word features). ``False`` forces the general kernel.
    tile : int
        Rows per tile of the 0/1 kernel: a positive multiple of 64 up to 65,536.

    Attributes
    ----------
    n_rows, n_features : int
    metric : str
    sparse : bool
        Whether the index is an inverted index over CSR rows.
    binary : bool
        Whether cosine queries of 0/1 rows take the 0/1 kernel.
    norms : ndarray of shape (n_rows,)
        Euclidean norm of every indexed row.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> T = sp.csr_matrix([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
    >>> idx, sim = NeighborIndex(T).query(sp.csr_matrix([[1.0, 0.0, 0.0]]), k=2)
    >>> idx.tolist(), sim.round(4).tolist()      # one row shares a feature, one pads
    ([[0, -1]], [[0.7071, 0.0]])
    """

    def __init__(self, X: Any, *, metric: Metric = "cosine", binary_kernel: bool = True,
                 tile: int = 16384) -> None:
        check_param("metric", metric, str, choices=METRICS)
        check_param("binary_kernel", binary_kernel, bool)
        K = _k()
        X = check_X(X, what="X_index")
        if X.shape[0] == 0:
            raise ValueError("X_index: cannot index 0 rows")
        self.metric: str = metric
        self._code = K.COSINE if metric == "cosine" else K.EUCLIDEAN
        self.n_rows, self.n_features = int(X.shape[0]), int(X.shape[1])
        self.sparse = bool(sp.issparse(X))
        self.binary = False
        self._X = X  # the indexed rows (a reference, not a copy): queries with X=None
        if self.sparse:
            C = X.tocsc()
            C.sort_indices()
            self._col_indptr = C.indptr.astype(np.int64)
            self._col_rows = C.indices.astype(np.int32)
            self._col_data = C.data.astype(np.float64)
            frequent = np.flatnonzero(np.diff(C.indptr) >= _FREQUENT_FEATURE_MIN * self.n_rows)
            self._dense_pos = np.full(self.n_features if frequent.size else 0, -1,
                                      dtype=np.int32)
            self._dense_pos[frequent] = np.arange(frequent.size, dtype=np.int32)
            self._dense_cols = np.ascontiguousarray(C[:, frequent].T.toarray(),
                                                    dtype=np.float64)
            self._sq = K.row_sq_norms(X.indptr.astype(np.int64), X.data)
            self.norms = np.sqrt(self._sq)
            self._order = (np.argsort(self._sq, kind="stable").astype(np.int64)
                           if metric == "euclidean" else np.zeros(0, dtype=np.int64))
            if binary_kernel and metric == "cosine" and X.nnz and np.all(X.data == 1.0):
                self._build_tiles(X, check_param("tile", tile, int, low=64, high=65536))
                self.binary = True
        else:
            self._sq = K.dense_row_sq_norms(X)
            self.norms = np.sqrt(self._sq)

    # -- the 0/1 kernel's layout ---------------------------------------------------------
    def _build_tiles(self, M: sp.csr_matrix, tile: int) -> None:
        B = _k().BINARY_BLOCK
        if tile % B:
            raise ValueError(f"tile must be a positive multiple of {B} up to 65536, got {tile}")
        n, d = M.shape
        inv = np.zeros(n)
        np.divide(1.0, self.norms, out=inv, where=self.norms > 0)
        perm = np.argsort(-inv, kind="stable")  # shortest rows first, all-zero rows last
        t_inv = inv[perm]
        nb = -(-n // B)
        padded = np.zeros(nb * B)
        padded[:n] = t_inv
        n_tiles = -(-n // tile)
        # non-zeros in (tile, feature, row) order: column tile * d + feature, then CSC
        Mp = M[perm]
        tile_of_row = np.repeat(np.arange(n, dtype=np.int64) // tile, np.diff(Mp.indptr))
        W = sp.csr_matrix((np.ones(Mp.nnz, dtype=np.uint8), tile_of_row * d + Mp.indices,
                           Mp.indptr), shape=(n, n_tiles * d)).tocsc()
        tile_indptr = np.empty((n_tiles, d + 1), dtype=np.int64)
        tile_indptr[:, :d] = W.indptr[:-1].reshape(n_tiles, d)
        tile_indptr[:, d] = W.indptr[d::d]
        self.tile = tile
        self._perm = perm.astype(np.int32)
        self._t_inv = t_inv
        self._blk_inv = padded.reshape(nb, B).max(axis=1)
        self._tile_indptr = tile_indptr
        self._tile_rows = (W.indices % tile).astype(np.uint16)

    # -- queries -------------------------------------------------------------------------
    def query(self, X: Any = None, *, k: int, exclude_self: bool | None = None,
              exclude: Any = None, allowed: Any = None,
              block: int = 16384) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest indexed rows of every row of ``X``.

        Parameters
        ----------
        X : ndarray or sparse matrix of shape (n_queries, n_features), or None
            The queries; ``None`` queries the indexed rows themselves.
        k : int
            Number of neighbours, 1 to ``n_rows``.
        exclude_self : bool or None
            Only with ``X=None``: query i never gets indexed row i (leave-one-out).
            Default: True when ``X`` is None.
        exclude : array of int of shape (n_queries,), optional
            Query i never gets indexed row ``exclude[i]`` (-1: none): leave-one-out
            for queries that are indexed rows, e.g. ``exclude=rows`` for ``X[rows]``.
        allowed : array of bool of shape (n_rows,), optional
            Only these indexed rows may be neighbours (e.g. a fold's training part).
        block : int
            Queries per Python-level block (memory: one block's outputs at a time).

        Returns
        -------
        indices : int32 ndarray of shape (n_queries, k)
            Nearest first, ties to the lower index; -1 pads missing neighbours.
        values : float64 ndarray of shape (n_queries, k)
            Cosine similarities (0 where padded) or Euclidean distances (``inf`` where
            padded).
        """
        K = _k()
        if X is None:
            if exclude is not None:
                raise ValueError("give exclude_self or exclude, not both")
            n_q = self.n_rows
            if exclude_self is None or exclude_self:
                exclude = np.arange(n_q, dtype=np.int64)
        else:
            if exclude_self:
                raise ValueError("exclude_self needs X=None (the indexed rows); for other "
                                 "queries pass exclude=<indexed row of each query>")
            X = check_X(X, what="X", n_features=self.n_features)
            n_q = X.shape[0]
        k = check_param("k", k, int, low=1, high=self.n_rows)
        block = check_param("block", block, int, low=1)
        if exclude is None:
            own = np.full(n_q, -1, dtype=np.int64)
        else:
            own = np.asarray(exclude)
            if own.shape != (n_q,) or own.dtype.kind not in "iu":
                raise ValueError(f"exclude must be an integer array of shape ({n_q},), "
                                 f"got {own.dtype} of shape {own.shape}")
            own = own.astype(np.int64)
            if own.size and (own.min() < -1 or own.max() >= self.n_rows):
                raise ValueError(f"exclude must hold indexed rows 0..{self.n_rows - 1} "
                                 f"or -1")
        if allowed is None:
            mask = np.zeros(0, dtype=np.uint8)
        else:
            mask = np.asarray(allowed)
            if mask.shape != (self.n_rows,):
                raise ValueError(f"allowed must have one entry per indexed row "
                                 f"({self.n_rows}), got shape {mask.shape}")
            mask = (mask != 0).astype(np.uint8)
        if (X is None and exclude is not None and allowed is None and self.sparse
                and not self.binary):
            # leave-one-out over the indexed rows: every pair once (the same results)
            idx, val = K.knn_self_search(
                self._X.indptr.astype(np.int64), self._X.indices.astype(np.int32),
                self._X.data, self._col_indptr, self._col_rows, self._col_data, self._sq,
                self._order, self._dense_cols, self._dense_pos, k, self._code)
            return self._values(idx, val)
        idx = np.full((n_q, k), -1, dtype=np.int32)
        val = np.zeros((n_q, k), dtype=np.float64)
        source = self._X if X is None else X
        parallel = n_q * self.n_rows >= _PARALLEL_MIN_PAIRS
        step = block
        if not self.sparse:
            step = min(block, max(1, _DENSE_BLOCK_ENTRIES // self.n_rows))
        for start in range(0, n_q, step):
            B = source[start:start + step]
            o = own[start:start + step]
            i, s = (self._query_sparse(B, k, o, mask, parallel) if self.sparse
                    else self._query_dense(B, k, o, mask, parallel))
            idx[start:start + B.shape[0]] = i
            val[start:start + B.shape[0]] = s
        return self._values(idx, val)

    def _values(self, idx: np.ndarray, val: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The kernels' scores as the metric's values (Euclidean: minus the squared
        distance -> the distance, ``inf`` where padded)."""
        if self._code == _k().EUCLIDEAN:
            val = np.sqrt(np.maximum(-val, 0.0))
            val[idx < 0] = np.inf
        return idx, val

    def _query_sparse(self, B: Any, k: int, own: np.ndarray, mask: np.ndarray,
                      parallel: bool = True) -> tuple[np.ndarray, np.ndarray]:
        K = _k()
        if not sp.issparse(B):
            B = sp.csr_matrix(B)
        nb = B.shape[0]
        if self.binary:
            # rows the 0/1 kernel can take: 0/1 values and at most 255 non-zeros
            fast = (np.diff(B.indptr) <= 255) if not B.nnz or np.all(B.data == 1.0) \
                else np.zeros(nb, dtype=bool)
        else:
            fast = np.zeros(nb, dtype=bool)
        idx = np.empty((nb, k), dtype=np.int32)
        val = np.empty((nb, k), dtype=np.float64)
        if fast.any():
            F = B[fast] if not fast.all() else B
            i, s = K.knn_search_binary(F.indptr.astype(np.int64), F.indices.astype(np.int32),
                                       own[fast], self._tile_indptr, self._tile_rows,
                                       self._t_inv, self._blk_inv, self._perm, k, mask,
                                       _n_chunks(F.shape[0]), self.tile, 64)
            idx[fast], val[fast] = i, s
        if not fast.all():
            G = B[~fast] if fast.any() else B
            ip = G.indptr.astype(np.int64)
            q_sq = K.row_sq_norms(ip, G.data)
            args = (ip, G.indices.astype(np.int32), G.data, q_sq, self._col_indptr,
                    self._col_rows, self._col_data, self._sq, self._order,
                    self._dense_cols, self._dense_pos, k, own[~fast], mask)
            i, s = (K.knn_search(*args, _n_chunks(G.shape[0]), self._code) if parallel
                    else K.knn_search_serial(*args, self._code))
            idx[~fast], val[~fast] = i, s
        return idx, val

    def _query_dense(self, B: Any, k: int, own: np.ndarray, mask: np.ndarray,
                     parallel: bool = True) -> tuple[np.ndarray, np.ndarray]:
        K = _k()
        if sp.issparse(B):
            q_sq = K.row_sq_norms(B.indptr.astype(np.int64), B.data)
            G = np.asarray(B @ self._X.T)
        elif parallel:
            q_sq = K.dense_row_sq_norms(B)
            G = B @ self._X.T
        else:  # a small product: BLAS in the calling thread too (same neighbours; a
            # product may differ in its last bits: yeast, scene distances by <= 7.5e-15)
            q_sq = K.dense_row_sq_norms(B)
            with _one_blas_thread():
                G = B @ self._X.T
        G = np.ascontiguousarray(G, dtype=np.float64)
        if parallel:
            return K.topk_from_products(G, q_sq, self._sq, k, own, mask,
                                        _n_chunks(B.shape[0]), self._code)
        return K.topk_from_products_serial(G, q_sq, self._sq, k, own, mask, self._code)


def kneighbors(X_index: Any, X_query: Any = None, *, k: int, metric: Metric = "cosine",
               exclude_self: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest rows of ``X_index`` for every row of ``X_query``: a one-off
    :class:`NeighborIndex` query (build the index once when querying it repeatedly).

    ``X_query=None`` queries ``X_index``'s own rows, leaving each row out of its own
    neighbours unless ``exclude_self=False``. Returns ``(indices, values)`` as
    :meth:`NeighborIndex.query`: cosine similarities (descending) or Euclidean
    distances (ascending), -1 padding.
    """
    return NeighborIndex(X_index, metric=metric).query(X_query, k=k, exclude_self=exclude_self)
