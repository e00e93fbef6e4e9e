"""Label statistics of a node and LaCovaC's label clustering (Section 3.3 of the paper).

``Y`` is CSR ``(indptr, indices)`` of the positive labels; a node is an int64 array of
row numbers plus a ``label_map`` (global label -> local position, -1 when the label is
not part of the node). Local positions preserve the global order.

Rows carry weights ``w`` (``sample_weight``; None without it: every row counts 1, and
the JIT compiles that case with the weight folded away) and act as that many copies of
themselves: every count here is a sum of weights, accumulated in row order (so a label
present in every row counts exactly the node's weight, and integer weights give the
counts of repeated rows exactly).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from mlw.jit import kernel


def row_weight(w, r):
    """The weight of row ``r``: ``w[r]``, or 1 when ``w`` is None. In compiled kernels
    the choice is made on the type of ``w`` (the overload below), so with no weights the
    constant 1 folds into the arithmetic and unweighted fits run the unweighted code."""
    return 1.0 if w is None else w[r]


@overload(row_weight, inline="always")
def _row_weight(w, r):
    if isinstance(w, (types.NoneType, types.Omitted)):
        return lambda w, r: 1.0
    return lambda w, r: w[r]


@kernel
def weight_sum(w, rows):
    """The weight of a node: ``w[rows]`` summed in row order (its size when None)."""
    if w is None:
        return float(rows.size)
    s = 0.0
    for t in range(rows.size):
        s += w[rows[t]]
    return s


@kernel
def node_stats(y_indptr, y_indices, w, rows, label_map, nloc, counts, co, buf):
    """Weighted label counts ``counts[:nloc]`` and pair co-occurrence counts
    ``co[:nloc, :nloc]`` (upper triangle) of a node, into preallocated float buffers."""
    for j in range(nloc):
        counts[j] = 0.0
        for k in range(nloc):
            co[j, k] = 0.0
    for t in range(rows.size):
        r = rows[t]
        wr = row_weight(w, r)
        m = 0
        for p in range(y_indptr[r], y_indptr[r + 1]):
            j = label_map[y_indices[p]]
            if j >= 0:
                buf[m] = j
                m += 1
        for a in range(m):
            ja = buf[a]
            counts[ja] += wr
            for b in range(a + 1, m):
                co[ja, buf[b]] += wr


@kernel
def node_label_stats(y_indptr, y_indices, rows, label_map, n_lab, w=None):
    """Counts ``c[j]`` of each local label and the co-occurrence counts ``C[j, k]``
    (``j < k``, upper triangle) over the rows of a node, weighted by ``w`` (per global
    row; None: every row counts 1)."""
    counts = np.empty(n_lab)
    co = np.empty((n_lab, n_lab))
    buf = np.empty(n_lab, np.int64)
    node_stats(y_indptr, y_indices, w, rows, label_map, n_lab, counts, co, buf)
    return counts, co


@kernel
def phi_matrix(counts, co, n):
    """Phi (Pearson) correlation of binary labels from counts; 0 where a label is
    constant (its correlation is undefined). Symmetric, unit diagonal for varying
    labels."""
    L = counts.size
    R = np.zeros((L, L), np.float64)
    nf = float(n)
    for j in range(L):
        vj = float(counts[j]) * (nf - counts[j])
        if vj > 0:
            R[j, j] = 1.0
        for k in range(j + 1, L):
            vk = float(counts[k]) * (nf - counts[k])
            if vj > 0 and vk > 0:
                r = (nf * co[j, k] - float(counts[j]) * counts[k]) / np.sqrt(vj * vk)
                R[j, k] = r
                R[k, j] = r
    return R


@kernel
def _find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@kernel
def threshold_components(R, lam):
    """Single-linkage clusters at distance ``1 - lam``: the connected components of
    the graph with an edge where ``|R[j, k]| > lam``. Returns a component id per label,
    numbered by first appearance (0, 1, ...)."""
    L = R.shape[0]
    parent = np.arange(L)
    for j in range(L):
        for k in range(j + 1, L):
            if abs(R[j, k]) > lam:
                a = _find(parent, j)
                b = _find(parent, k)
                if a != b:
                    if a < b:
                        parent[b] = a
                    else:
                        parent[a] = b
    comp = np.full(L, -1, np.int64)
    nxt = 0
    for j in range(L):
        root = _find(parent, j)
        if comp[root] < 0:
            comp[root] = nxt
            nxt += 1
        comp[j] = comp[root]
    return comp


@kernel
def sum_abs_covariance(counts, co, n):
    """Sum over label pairs of |cov(y_j, y_k)| (population covariance)."""
    L = counts.size
    s = 0.0
    inv = 1.0 / n
    for j in range(L):
        pj = counts[j] * inv
        for k in range(j + 1, L):
            s += abs(co[j, k] * inv - pj * counts[k] * inv)
    return s


@kernel
def lacova_cov_threshold(counts, n):
    """LaCova's critical value of the sum of |covariances| under label independence:
    mean + 2 standard deviations of the sum of half-normal |cov| approximations."""
    L = counts.size
    s1 = 0.0
    s2 = 0.0
    inv = 1.0 / n
    for j in range(L):
        pj = counts[j] * inv
        for k in range(j + 1, L):
            pk = counts[k] * inv
            v = pj * pk * (1.0 - pj) * (1.0 - pk)
            s1 += np.sqrt(v)
            s2 += v
    if n <= 1:
        return np.inf
    mean = np.sqrt(2.0 / (np.pi * (n - 1))) * s1
    sd = np.sqrt((1.0 - 2.0 / np.pi) / (n - 1) * s2)
    return mean + 2.0 * sd


@kernel
def local_labels(y_indptr, y_indices, rows, label_map):
    """The node's rows as a CSR of local label positions (positive labels only)."""
    n = rows.size
    ptr = np.zeros(n + 1, np.int64)
    for t in range(n):
        r = rows[t]
        m = 0
        for p in range(y_indptr[r], y_indptr[r + 1]):
            if label_map[y_indices[p]] >= 0:
                m += 1
        ptr[t + 1] = ptr[t] + m
    idx = np.empty(ptr[n], np.int64)
    for t in range(n):
        r = rows[t]
        m = ptr[t]
        for p in range(y_indptr[r], y_indptr[r + 1]):
            j = label_map[y_indices[p]]
            if j >= 0:
                idx[m] = j
                m += 1
    return ptr, idx
