"""Numba kernels of the mixture of CTBNs: plain functions over arrays, no validation.

Logistic regression (one shared solver)
    ``fit_logistic`` minimises, over ``theta = [w (m), v, b]``,

        f = sum_{r in rows} s_r [log(1 + exp(z_r)) - y_r z_r] + (lam / 2) (|w|^2 + v^2)
        z_r = sum_j x_rj scale_j w_j + v p_r + b

    by L-BFGS with a backtracking (Armijo) line search, from a warm start ``theta``.
    ``X`` is dense (``Xd``) or CSR (``indptr, indices, data``) selected by ``sparse``;
    ``rows`` selects the training rows (no copy of X); ``scale`` is the max-abs feature
    scaling applied on the fly; ``p`` the parent label's 0/1 column (``v`` stays 0
    when ``use_parent`` is false). The intercept is not penalised.

Trees (CTBNs)
    A tree is ``parent`` (d,), ``-1`` for a root, and ``order`` (d,), a topological
    order (parents first). Its factor ``i`` is P(y_i = 1 | x_n, y_parent) =
    sigmoid(A[n, i] + V[n, i] * y_parent): the logit with the parent at 0 and its
    change when the parent is 1, both precomputed per row and tree (a parent-as-feature
    factor has the same V for every row; a switching factor's V is the difference of
    its two logistic regressions' logits). A mixture stacks K trees: ``A`` and ``V``
    (n, K, d), ``parents``/``orders`` (K, d), ``log_lam`` (K,).

Maximum branching
    ``max_branching(W)`` is Chu-Liu/Edmonds on the complete graph with self-loop
    weights ``W[i, i]`` read as edges from a virtual root.
"""

from __future__ import annotations

import numpy as np

from mlw.jit import kernel

# -- logistic regression --------------------------------------------------------------


@kernel
def _log1pexp_sigmoid(z):
    """log(1 + exp(z)) and sigmoid(z), overflow-free, from one exp(-|z|)."""
    e = np.exp(-abs(z))
    if z > 0.0:
        return z + np.log1p(e), 1.0 / (1.0 + e)
    return np.log1p(e), e / (1.0 + e)


@kernel
def _log1pexp(z):
    return _log1pexp_sigmoid(z)[0]


@kernel
def _sigmoid(z):
    return _log1pexp_sigmoid(z)[1]


#: Floating-point reassociation for the two dot products below only, so LLVM vectorises
#: them (no NaN/inf assumptions: "nnan"/"ninf" are not set).
_DOT_MATH = {"reassoc", "contract", "nsz", "arcp"}


@kernel(fastmath=_DOT_MATH)
def _dot_dense_row(Xd, r, w):
    acc = 0.0
    for j in range(w.shape[0]):
        acc += Xd[r, j] * w[j]
    return acc


@kernel(fastmath=_DOT_MATH)
def _dot_sparse_row(indptr, indices, data, r, w):
    acc = 0.0
    for q in range(indptr[r], indptr[r + 1]):
        acc += data[q] * w[indices[q]]
    return acc


@kernel(fastmath=_DOT_MATH)
def _dot(a, b):
    acc = 0.0
    for j in range(a.shape[0]):
        acc += a[j] * b[j]
    return acc


@kernel
def _margins(theta, sparse, Xd, indptr, indices, data, scale, p, use_parent, rows, z, w):
    """``z[t]`` the logit of row ``rows[t]``; ``w`` (m,) is scratch (the scaled weights)."""
    m = scale.shape[0]
    v = theta[m]
    b = theta[m + 1]
    for j in range(m):
        w[j] = scale[j] * theta[j]
    for t in range(rows.shape[0]):
        r = rows[t]
        if sparse:
            acc = _dot_sparse_row(indptr, indices, data, r, w)
        else:
            acc = _dot_dense_row(Xd, r, w)
        acc += b
        if use_parent:
            acc += v * p[r]
        z[t] = acc


@kernel
def _objective(theta, sparse, Xd, indptr, indices, data, scale, y, s, p, use_parent, rows,
               lam, z, grad, w):
    """Objective value; fills ``grad`` and the margins ``z`` (``w``: scratch)."""
    m = scale.shape[0]
    _margins(theta, sparse, Xd, indptr, indices, data, scale, p, use_parent, rows, z, w)
    f = 0.0
    for j in range(m + 2):
        grad[j] = 0.0
    for t in range(rows.shape[0]):
        r = rows[t]
        sr = s[r]
        if sr == 0.0:
            continue
        zt = z[t]
        lse, sig = _log1pexp_sigmoid(zt)
        f += sr * (lse - y[r] * zt)
        g = sr * (sig - y[r])
        if g == 0.0:
            continue
        grad[m + 1] += g
        if use_parent:
            grad[m] += g * p[r]
        # the feature gradient unscaled here, times scale once below
        if sparse:
            for q in range(indptr[r], indptr[r + 1]):
                grad[indices[q]] += g * data[q]
        else:
            for j in range(m):
                grad[j] += g * Xd[r, j]
    reg = 0.0
    for j in range(m):
        grad[j] *= scale[j]
        reg += theta[j] * theta[j]
        grad[j] += lam * theta[j]
    if use_parent:
        reg += theta[m] * theta[m]
        grad[m] += lam * theta[m]
    else:
        grad[m] = 0.0
    return f + 0.5 * lam * reg


@kernel
def fit_logistic(theta, sparse, Xd, indptr, indices, data, scale, y, s, p, use_parent, rows,
                 lam, max_iter, tol, history):
    """L-BFGS from ``theta`` (updated in place). Stops when the largest gradient entry is
    at most ``tol * sum(s)``, or the objective stops decreasing, or after ``max_iter``
    iterations. Every accepted step decreases the objective (Armijo), so a warm start
    is never made worse. Returns ``(f, iterations)``."""
    n_par = theta.shape[0]
    nr = rows.shape[0]
    z = np.empty(nr)
    w = np.empty(scale.shape[0])
    grad = np.empty(n_par)
    S = np.zeros((history, n_par))
    Yh = np.zeros((history, n_par))
    rho = np.zeros(history)
    alpha = np.zeros(history)
    wsum = 0.0
    for t in range(nr):
        wsum += s[rows[t]]
    if wsum <= 0.0:
        return 0.0, 0
    gtol = tol * wsum
    f = _objective(theta, sparse, Xd, indptr, indices, data, scale, y, s, p, use_parent,
                   rows, lam, z, grad, w)
    new_theta = np.empty(n_par)
    new_grad = np.empty(n_par)
    direction = np.empty(n_par)
    stored = 0
    head = 0
    it = 0
    while it < max_iter:
        gmax = 0.0
        for j in range(n_par):
            if abs(grad[j]) > gmax:
                gmax = abs(grad[j])
        if gmax <= gtol:
            break
        # two-loop recursion
        for j in range(n_par):
            direction[j] = -grad[j]
        for c in range(stored):
            k = (head - 1 - c) % history
            a = rho[k] * _dot(S[k], direction)
            alpha[k] = a
            for j in range(n_par):
                direction[j] -= a * Yh[k, j]
        if stored > 0:
            k = (head - 1) % history
            yy = _dot(Yh[k], Yh[k])
            gamma = 1.0 / (rho[k] * yy)
            for j in range(n_par):
                direction[j] *= gamma
        else:
            gn = np.sqrt(_dot(grad, grad))
            for j in range(n_par):
                direction[j] /= max(gn, 1.0)
        for c in range(stored - 1, -1, -1):
            k = (head - 1 - c) % history
            bcoef = rho[k] * _dot(Yh[k], direction)
            for j in range(n_par):
                direction[j] += S[k, j] * (alpha[k] - bcoef)
        slope = _dot(grad, direction)
        if slope >= 0.0:  # not a descent direction: restart from steepest descent
            stored = 0
            gn = 0.0
            for j in range(n_par):
                gn += grad[j] * grad[j]
            gn = np.sqrt(gn)
            slope = 0.0
            for j in range(n_par):
                direction[j] = -grad[j] / max(gn, 1.0)
                slope += grad[j] * direction[j]
        step = 1.0
        accepted = False
        for _ in range(40):
            for j in range(n_par):
                new_theta[j] = theta[j] + step * direction[j]
            f_new = _objective(new_theta, sparse, Xd, indptr, indices, data, scale, y, s,
                               p, use_parent, rows, lam, z, new_grad, w)
            if f_new <= f + 1e-4 * step * slope:
                accepted = True
                break
            step *= 0.5
        if not accepted:
            break
        sy = 0.0
        for j in range(n_par):
            S[head, j] = new_theta[j] - theta[j]
            Yh[head, j] = new_grad[j] - grad[j]
            sy += S[head, j] * Yh[head, j]
        if sy > 1e-12:
            rho[head] = 1.0 / sy
            head = (head + 1) % history
            if stored < history:
                stored += 1
        decrease = f - f_new
        for j in range(n_par):
            theta[j] = new_theta[j]
            grad[j] = new_grad[j]
        f = f_new
        it += 1
        if decrease <= 1e-12 * max(abs(f), 1.0):
            break
    return f, it


@kernel
def log_lik_rows(theta, sparse, Xd, indptr, indices, data, scale, y, s, p, use_parent, rows):
    """sum_{r in rows} s_r log P(y_r | x_r, p_r) of a fitted logistic regression."""
    z = np.empty(rows.shape[0])
    _margins(theta, sparse, Xd, indptr, indices, data, scale, p, use_parent, rows, z,
             np.empty(scale.shape[0]))
    total = 0.0
    for t in range(rows.shape[0]):
        r = rows[t]
        total -= s[r] * (_log1pexp(z[t]) - y[r] * z[t])
    return total


# -- trees ------------------------------------------------------------------------------


@kernel
def _log_factor(a, v, yi, yp):
    """log P(y_i = yi | x, y_parent = yp) for logit a + v * yp."""
    z = a + v * yp
    if yi == 1:
        return -_log1pexp(-z)
    return -_log1pexp(z)


@kernel
def component_log_proba(A, V, parents, Y):
    """log P(y_n | x_n, T_k), shape (n, K); ``Y`` uint8 (n, d)."""
    n, K, d = A.shape
    out = np.empty((n, K))
    for r in range(n):
        for k in range(K):
            acc = 0.0
            for i in range(d):
                pa = parents[k, i]
                yp = 0.0
                if pa >= 0:
                    yp = float(Y[r, pa])
                acc += _log_factor(A[r, k, i], V[r, k, i], Y[r, i], yp)
            out[r, k] = acc
    return out


@kernel
def _logsumexp(vals):
    mx = -np.inf
    for k in range(vals.shape[0]):
        if vals[k] > mx:
            mx = vals[k]
    if mx == -np.inf:
        return mx
    acc = 0.0
    for k in range(vals.shape[0]):
        acc += np.exp(vals[k] - mx)
    return mx + np.log(acc)


@kernel
def mixture_log_proba(A, V, parents, log_lam, Y):
    """log sum_k lam_k P(y_n | x_n, T_k), shape (n,)."""
    comp = component_log_proba(A, V, parents, Y)
    n, K = comp.shape
    out = np.empty(n)
    buf = np.empty(K)
    for r in range(n):
        for k in range(K):
            buf[k] = log_lam[k] + comp[r, k]
        out[r] = _logsumexp(buf)
    return out


@kernel
def mixture_marginals(A, V, parents, orders, lam):
    """Exact P(y_i = 1 | x) of the mixture, shape (n, d): per tree, the marginal of
    each node from its parent's marginal in topological order (a directed tree without
    evidence), then the lam-weighted sum."""
    n, K, d = A.shape
    out = np.zeros((n, d))
    q = np.empty(d)
    for r in range(n):
        for k in range(K):
            for t in range(d):
                i = orders[k, t]
                pa = parents[k, i]
                a = A[r, k, i]
                if pa < 0:
                    q[i] = _sigmoid(a)
                else:
                    qp = q[pa]
                    q[i] = (1.0 - qp) * _sigmoid(a) + qp * _sigmoid(a + V[r, k, i])
                out[r, i] += lam[k] * q[i]
    return out


@kernel
def tree_map(A, V, parents, orders):
    """Exact MAP label vector of every tree by max-sum (leaves up, then root down),
    shape (n, K, d) uint8, and its log P(y | x, T_k), shape (n, K). Ties go to 0."""
    n, K, d = A.shape
    out = np.zeros((n, K, d), dtype=np.uint8)
    val = np.empty((n, K))
    # msg[i, yp]: best log-probability of i's subtree given the parent's value yp
    msg = np.empty((d, 2))
    best = np.zeros((d, 2), dtype=np.uint8)   # argmax y_i given yp
    child_sum = np.empty((d, 2))              # sum of children's messages given y_i
    for r in range(n):
        for k in range(K):
            for i in range(d):
                child_sum[i, 0] = 0.0
                child_sum[i, 1] = 0.0
            for t in range(d - 1, -1, -1):
                i = orders[k, t]
                a = A[r, k, i]
                v = V[r, k, i]
                for yp in range(2):
                    s0 = _log_factor(a, v, 0, float(yp)) + child_sum[i, 0]
                    s1 = _log_factor(a, v, 1, float(yp)) + child_sum[i, 1]
                    if s1 > s0:
                        msg[i, yp] = s1
                        best[i, yp] = 1
                    else:
                        msg[i, yp] = s0
                        best[i, yp] = 0
                pa = parents[k, i]
                if pa >= 0:
                    child_sum[pa, 0] += msg[i, 0]
                    child_sum[pa, 1] += msg[i, 1]
            total = 0.0
            for t in range(d):
                i = orders[k, t]
                pa = parents[k, i]
                if pa < 0:
                    out[r, k, i] = best[i, 0]
                    total += msg[i, 0]
                else:
                    out[r, k, i] = best[i, out[r, k, pa]]
            val[r, k] = total
    return out, val


@kernel
def _flip_delta(a_k, v_k, parent_k, ch_ptr_k, ch_k, y, i):
    """Change of log P(y | x, T_k) when y_i flips (only factor i and i's children's
    factors change)."""
    pa = parent_k[i]
    yp = 0.0
    if pa >= 0:
        yp = float(y[pa])
    yi = y[i]
    nyi = 1 - yi
    delta = _log_factor(a_k[i], v_k[i], nyi, yp) - _log_factor(a_k[i], v_k[i], yi, yp)
    for q in range(ch_ptr_k[i], ch_ptr_k[i + 1]):
        c = ch_k[q]
        delta += (_log_factor(a_k[c], v_k[c], y[c], float(nyi))
                  - _log_factor(a_k[c], v_k[c], y[c], float(yi)))
    return delta


@kernel
def anneal_map(A, V, parents, ch_ptr, ch, log_lam, init, n_iter, t_start, t_end, seed):
    """Approximate mixture MAP by simulated annealing, one row at a time.

    From ``init`` (n, d), each iteration is one sweep over the labels in a random
    order proposing to flip each; a flip that changes log P(y | x) by ``delta`` is
    accepted when ``delta >= 0`` or with probability ``exp(delta / T)``, and the
    temperature falls geometrically from ``t_start`` to ``t_end`` over the
    ``n_iter`` iterations. Returns the best vector visited and its log P(y | x).
    ``ch_ptr`` (K, d + 1) and ``ch`` (K, d) are each tree's children lists."""
    n, K, d = A.shape
    np.random.seed(seed)
    out = np.empty((n, d), dtype=np.uint8)
    out_lp = np.empty(n)
    y = np.empty(d, dtype=np.uint8)
    comp = np.empty(K)
    newcomp = np.empty(K)
    perm = np.arange(d)
    if n_iter > 1:
        ratio = (t_end / t_start) ** (1.0 / (n_iter - 1))
    else:
        ratio = 1.0
    for r in range(n):
        for i in range(d):
            y[i] = init[r, i]
        for k in range(K):
            acc = 0.0
            for i in range(d):
                pa = parents[k, i]
                yp = 0.0
                if pa >= 0:
                    yp = float(y[pa])
                acc += _log_factor(A[r, k, i], V[r, k, i], y[i], yp)
            comp[k] = log_lam[k] + acc
        cur = _logsumexp(comp)
        best_lp = cur
        for i in range(d):
            out[r, i] = y[i]
        temp = t_start
        for _ in range(n_iter):
            np.random.shuffle(perm)
            for t in range(d):
                i = perm[t]
                for k in range(K):
                    newcomp[k] = comp[k] + _flip_delta(A[r, k], V[r, k], parents[k],
                                                       ch_ptr[k], ch[k], y, i)
                new = _logsumexp(newcomp)
                delta = new - cur
                if delta >= 0.0 or np.random.random() < np.exp(delta / temp):
                    y[i] = 1 - y[i]
                    for k in range(K):
                        comp[k] = newcomp[k]
                    cur = new
                    if cur > best_lp:
                        best_lp = cur
                        for j in range(d):
                            out[r, j] = y[j]
            temp *= ratio
        out_lp[r] = best_lp
    return out, out_lp


@kernel
def _tree_size_poly(A, V, parents, orders, r, k, clamp, poly, size, tmp, total):
    """The distribution of |y| under tree ``k`` for row ``r``, with ``y_clamp`` clamped
    to 1 (no clamp when ``clamp < 0``), into ``total`` (length d + 1): ``total[s] =
    P(|y| = s, y_clamp = 1)``. Leaves up: ``poly[i, b, c]`` is P(c ones in i's subtree,
    given y_i = b), a child's polynomial summed over its value under its factor and
    multiplied into its parent's; the roots' are then multiplied together."""
    d = A.shape[2]
    for i in range(d):
        size[i] = 1
        for b in range(2):
            for c in range(d + 1):
                poly[i, b, c] = 0.0
        poly[i, 0, 0] = 0.0 if i == clamp else 1.0
        poly[i, 1, 1] = 1.0
    for c in range(d + 1):
        total[c] = 0.0
    total[0] = 1.0
    total_size = 0
    for t in range(d - 1, -1, -1):
        i = orders[k, t]
        pa = parents[k, i]
        a = A[r, k, i]
        v = V[r, k, i]
        si = size[i]
        if pa < 0:
            p1 = _sigmoid(a)
            for c in range(total_size + si + 1):
                tmp[c] = 0.0
            for c1 in range(total_size + 1):
                if total[c1] == 0.0:
                    continue
                for c2 in range(si + 1):
                    m = (1.0 - p1) * poly[i, 0, c2] + p1 * poly[i, 1, c2]
                    tmp[c1 + c2] += total[c1] * m
            total_size += si
            for c in range(total_size + 1):
                total[c] = tmp[c]
            continue
        sp_ = size[pa]
        for b in range(2):
            p1 = _sigmoid(a + v * b)
            for c in range(sp_ + si + 1):
                tmp[c] = 0.0
            for c1 in range(sp_ + 1):
                x = poly[pa, b, c1]
                if x == 0.0:
                    continue
                for c2 in range(si + 1):
                    tmp[c1 + c2] += x * ((1.0 - p1) * poly[i, 0, c2] + p1 * poly[i, 1, c2])
            for c in range(sp_ + si + 1):
                poly[pa, b, c] = tmp[c]
        size[pa] = sp_ + si


@kernel
def mixture_size_marginals(A, V, parents, orders, lam):
    """Exact P(y_j = 1, |y| = s | x) of the mixture, shape (n, d, d) (entry
    ``[r, j, s - 1]``): per tree, the size distribution with y_j clamped to 1
    (:func:`_tree_size_poly`, O(d^2) per label), lam-weighted. O(n K d^3)."""
    n, K, d = A.shape
    out = np.zeros((n, d, d))
    poly = np.zeros((d, 2, d + 1))
    size = np.zeros(d, dtype=np.int64)
    tmp = np.zeros(d + 1)
    total = np.zeros(d + 1)
    for r in range(n):
        for k in range(K):
            for j in range(d):
                _tree_size_poly(A, V, parents, orders, r, k, j, poly, size, tmp, total)
                for s in range(1, d + 1):
                    out[r, j, s - 1] += lam[k] * total[s]
    return out


@kernel
def mixture_sample(A, V, parents, orders, lam, n_samples, seed):
    """``n_samples`` label vectors per row drawn from the mixture (a tree drawn by its
    weight ``lam``, then its labels in topological order, each given its parent's):
    uint8 (n, n_samples, d)."""
    n, K, d = A.shape
    np.random.seed(seed)
    out = np.zeros((n, n_samples, d), dtype=np.uint8)
    cum = np.cumsum(lam)
    for r in range(n):
        for t in range(n_samples):
            u = np.random.random() * cum[K - 1]
            k = 0
            while k < K - 1 and cum[k] <= u:
                k += 1
            for q in range(d):
                i = orders[k, q]
                pa = parents[k, i]
                z = A[r, k, i]
                if pa >= 0 and out[r, t, pa] == 1:
                    z += V[r, k, i]
                if np.random.random() < _sigmoid(z):
                    out[r, t, i] = 1
    return out


# -- maximum branching ----------------------------------------------------------------------


@kernel
def _max_arborescence(n_nodes, src, dst, w, root):
    """Chu-Liu/Edmonds: the maximum-weight spanning arborescence rooted at ``root`` of
    the graph with edges ``src -> dst`` of weights ``w``. Returns, for every node, the
    index of its incoming edge in the input (-1 for the root). Every node must be
    reachable from the root. Recursive contraction, O(V E)."""
    m = src.shape[0]
    in_edge = np.full(n_nodes, -1, dtype=np.int64)
    for e in range(m):
        v = dst[e]
        if v == root or src[e] == v:
            continue
        if in_edge[v] < 0 or w[e] > w[in_edge[v]]:
            in_edge[v] = e
    # find cycles among the chosen edges
    comp = np.full(n_nodes, -1, dtype=np.int64)
    mark = np.full(n_nodes, -1, dtype=np.int64)
    n_comp = 0
    has_cycle = False
    for v0 in range(n_nodes):
        v = v0
        while v != root and mark[v] < 0 and comp[v] < 0:
            mark[v] = v0
            v = src[in_edge[v]]
        if v != root and mark[v] == v0 and comp[v] < 0:
            # v is on a new cycle
            has_cycle = True
            u = v
            while True:
                comp[u] = n_comp
                u = src[in_edge[u]]
                if u == v:
                    break
            n_comp += 1
    if not has_cycle:
        return in_edge
    # contract: nodes not on a cycle get their own component
    for v in range(n_nodes):
        if comp[v] < 0:
            comp[v] = n_comp
            n_comp += 1
    on_cycle = np.zeros(n_nodes, dtype=np.bool_)
    cyc_size = np.zeros(n_comp, dtype=np.int64)
    for v in range(n_nodes):
        cyc_size[comp[v]] += 1
    for v in range(n_nodes):
        on_cycle[v] = cyc_size[comp[v]] > 1
    nsrc = np.empty(m, dtype=np.int64)
    ndst = np.empty(m, dtype=np.int64)
    nw = np.empty(m)
    keep = np.empty(m, dtype=np.int64)
    nm = 0
    for e in range(m):
        cu = comp[src[e]]
        cv = comp[dst[e]]
        if cu == cv:
            continue
        v = dst[e]
        ww = w[e]
        if on_cycle[v]:
            ww = w[e] - w[in_edge[v]]
        nsrc[nm] = cu
        ndst[nm] = cv
        nw[nm] = ww
        keep[nm] = e
        nm += 1
    sub = _max_arborescence(n_comp, nsrc[:nm], ndst[:nm], nw[:nm], comp[root])
    result = in_edge.copy()
    for c in range(n_comp):
        if sub[c] < 0:
            continue
        e = keep[sub[c]]
        result[dst[e]] = e  # the entering edge replaces the cycle edge into dst[e]
    return result


@kernel
def max_branching(W):
    """The CTBN structure maximising sum_i W[parent(i), i] (``W[i, i]``: no parent):
    parent array (d,), -1 for a root. Solved as the maximum spanning arborescence of
    the complete graph plus a virtual root ``d`` with edges ``d -> i`` of weight
    ``W[i, i]``."""
    d = W.shape[0]
    m = d * d
    src = np.empty(m, dtype=np.int64)
    dst = np.empty(m, dtype=np.int64)
    w = np.empty(m)
    e = 0
    for i in range(d):
        for j in range(d):
            src[e] = d if i == j else j
            dst[e] = i
            w[e] = W[j, i]
            e += 1
    chosen = _max_arborescence(d + 1, src, dst, w, d)
    parent = np.empty(d, dtype=np.int64)
    for i in range(d):
        s = src[chosen[i]]
        parent[i] = -1 if s == d else s
    return parent
