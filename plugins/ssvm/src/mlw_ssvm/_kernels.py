"""Numba kernels of the structured SVM: example-based losses, the loss-augmented argmax
oracles (Díez et al., Sections 4.2-4.4), joint-constraint sums and the per-example
constraint cache.

Conventions. ``S`` is the (n, L) float64 matrix of label scores s_il = <w_l, x_i> (bias
included), ``Y`` and ``Ybar`` are (n, L) uint8 0/1 matrices. Every oracle returns, for
each row, a label vector maximising  Delta(y_i, ybar) + sum_l s_il * ybar_l  (the
margin-rescaling argmax of Eq. 7) and its loss Delta(y_i, ybar). Ratios with a zero
denominator follow mlw's metric convention (docs/guide/metrics.md): 1 when the prediction is
perfect there (a = b = c = 0), 0 otherwise. Validation is done by the Python wrappers.
"""

from __future__ import annotations

import numpy as np

from mlw.jit import kernel

#: Loss codes (``loss_code`` arguments).
LOSS_HAMMING = 0  # b + c: the number of wrong labels (see ``docs/methods/ssvm.md`` on its scale)
LOSS_SUBSET = 1  # [y != ybar]
LOSS_FBETA = 2  # 1 - (1 + beta^2) a / ((1 + beta^2) a + b + beta^2 c)
LOSS_JACCARD = 3  # 1 - a / (a + b + c)
LOSS_PRECISION = 4  # 1 - a / (a + b)
LOSS_RECALL = 5  # 1 - a / (a + c)


@kernel
def _ratio(num, den, perfect):
    if den > 0.0:
        return num / den
    return 1.0 if perfect else 0.0


@kernel
def contingency_loss(code, beta2, a, b, c, d):
    """Loss of a prediction with contingency counts a (true positives), b (false
    positives), c (false negatives), d (true negatives); ``beta2`` is beta squared."""
    perfect = b == 0 and c == 0
    if code == LOSS_HAMMING:
        return float(b + c)
    if code == LOSS_SUBSET:
        return 0.0 if perfect else 1.0
    af, bf, cf = float(a), float(b), float(c)
    if code == LOSS_FBETA:
        return 1.0 - _ratio((1.0 + beta2) * af, (1.0 + beta2) * af + bf + beta2 * cf,
                            perfect and a == 0)
    if code == LOSS_JACCARD:
        return 1.0 - _ratio(af, af + bf + cf, perfect and a == 0)
    if code == LOSS_PRECISION:
        return 1.0 - _ratio(af, af + bf, perfect and a == 0)
    # LOSS_RECALL
    return 1.0 - _ratio(af, af + cf, perfect and a == 0)


@kernel
def row_loss(code, beta2, y, ybar):
    """Delta(y, ybar) of one pair of 0/1 vectors."""
    a = 0
    b = 0
    c = 0
    for j in range(y.size):
        if y[j]:
            if ybar[j]:
                a += 1
            else:
                c += 1
        elif ybar[j]:
            b += 1
    return contingency_loss(code, beta2, a, b, c, y.size - a - b - c)


@kernel
def losses(code, beta2, Y, Ybar):
    """Delta(y_i, ybar_i) for every row."""
    n = Y.shape[0]
    out = np.empty(n, np.float64)
    for i in range(n):
        out[i] = row_loss(code, beta2, Y[i], Ybar[i])
    return out


# ----------------------------------------------------------------------------------------
# loss-augmented argmax oracles
# ----------------------------------------------------------------------------------------
@kernel
def _argmax_hamming(s, y, out):
    """Section 4.3: per label, ybar_l = 1 iff s_l + [y_l = 0] > [y_l = 1] (the loss
    counts wrong labels, b + c)."""
    L = s.size
    errors = 0
    for j in range(L):
        if y[j]:
            v = 1 if s[j] > 1.0 else 0
        else:
            v = 1 if s[j] > -1.0 else 0
        out[j] = v
        if v != y[j]:
            errors += 1
    return float(errors)


@kernel
def _argmax_subset(s, y, out):
    """Section 4.2: the thresholded vector [s > 0] if it differs from y (loss 1 is the
    largest possible); otherwise y itself or y with the label of smallest |s| flipped,
    whichever scores higher (the flip gains 1 and loses |s|)."""
    L = s.size
    same = True
    for j in range(L):
        v = 1 if s[j] > 0.0 else 0
        out[j] = v
        if v != y[j]:
            same = False
    if not same:
        return 1.0
    m = 0
    for j in range(1, L):
        if abs(s[j]) < abs(s[m]):
            m = j
    if 1.0 - abs(s[m]) > 0.0:
        out[m] = 1 - out[m]
        return 1.0
    return 0.0


@kernel
def _argmax_contingency(code, beta2, s, y, out, pos, neg, psum, nsum):
    """Algorithm 2 (after Joachims 2005): for every number a of true positives, the
    best prediction with a true positives and b false positives switches on the a
    highest-scoring relevant labels and the b highest-scoring irrelevant ones. For a
    fixed a, Delta(a, b, ...) is concave in b for every contingency loss here and the
    prefix sums of the descending negative scores are concave too, so the best b is
    found by bisection on the sign of the increments: O(L log L) per row instead of the
    paper's O(L^2) double loop (tests check both against brute force)."""
    L = s.size
    npos = 0
    nneg = 0
    for j in range(L):
        if y[j]:
            pos[npos] = j
            npos += 1
        else:
            neg[nneg] = j
            nneg += 1
    # descending order of the scores within each group
    po = np.argsort(-s[pos[:npos]], kind="mergesort")
    no = np.argsort(-s[neg[:nneg]], kind="mergesort")
    psum[0] = 0.0
    for k in range(npos):
        psum[k + 1] = psum[k] + s[pos[po[k]]]
    nsum[0] = 0.0
    for k in range(nneg):
        nsum[k + 1] = nsum[k] + s[neg[no[k]]]
    best = -np.inf
    best_a = 0
    best_b = 0
    best_loss = 0.0
    for a in range(npos + 1):
        c = npos - a
        lo = 0
        hi = nneg
        while lo < hi:
            mid = (lo + hi) // 2
            f0 = contingency_loss(code, beta2, a, mid, c, nneg - mid) + nsum[mid]
            f1 = contingency_loss(code, beta2, a, mid + 1, c, nneg - mid - 1) + nsum[mid + 1]
            if f1 > f0:
                lo = mid + 1
            else:
                hi = mid
        loss = contingency_loss(code, beta2, a, lo, c, nneg - lo)
        v = loss + nsum[lo] + psum[a]
        if v > best:
            best = v
            best_a = a
            best_b = lo
            best_loss = loss
    for j in range(L):
        out[j] = 0
    for k in range(best_a):
        out[pos[po[k]]] = 1
    for k in range(best_b):
        out[neg[no[k]]] = 1
    return best_loss


@kernel
def most_violated(code, beta2, S, Y):
    """The loss-augmented argmax (Eq. 7) of every row: ``(Ybar, losses)``."""
    n, L = S.shape
    Ybar = np.empty((n, L), np.uint8)
    out_loss = np.empty(n, np.float64)
    pos = np.empty(L, np.int64)
    neg = np.empty(L, np.int64)
    psum = np.empty(L + 1, np.float64)
    nsum = np.empty(L + 1, np.float64)
    for i in range(n):
        if code == LOSS_HAMMING:
            out_loss[i] = _argmax_hamming(S[i], Y[i], Ybar[i])
        elif code == LOSS_SUBSET:
            out_loss[i] = _argmax_subset(S[i], Y[i], Ybar[i])
        else:
            out_loss[i] = _argmax_contingency(code, beta2, S[i], Y[i], Ybar[i], pos, neg,
                                              psum, nsum)
    return Ybar, out_loss


@kernel
def most_violated_contingency(code, beta2, S, Y):
    """Algorithm 2 for any loss code, Hamming and subset 0/1 included (a cross-check of
    their dedicated oracles)."""
    n, L = S.shape
    Ybar = np.empty((n, L), np.uint8)
    out_loss = np.empty(n, np.float64)
    pos = np.empty(L, np.int64)
    neg = np.empty(L, np.int64)
    psum = np.empty(L + 1, np.float64)
    nsum = np.empty(L + 1, np.float64)
    for i in range(n):
        out_loss[i] = _argmax_contingency(code, beta2, S[i], Y[i], Ybar[i], pos, neg,
                                          psum, nsum)
    return Ybar, out_loss


# ----------------------------------------------------------------------------------------
# joint constraints
# ----------------------------------------------------------------------------------------
@kernel
def margin_gap(S, Y, Ybar):
    """(1/n) sum_i sum_l s_il (y_il - ybar_il) = <w, g> of the joint constraint of
    ``Ybar`` (g defined in :func:`constraint_sum_dense`)."""
    n, L = S.shape
    total = 0.0
    for i in range(n):
        for j in range(L):
            if Y[i, j] != Ybar[i, j]:
                if Y[i, j]:
                    total += S[i, j]
                else:
                    total -= S[i, j]
    return total / n


@kernel
def _differing(Y, Ybar, i, diff, sign):
    """The labels where row ``i`` of ``Ybar`` differs from ``Y``: their indices into
    ``diff[:m]``, +1 (y = 1) or -1 into ``sign[:m]``; returns m."""
    m = 0
    for j in range(Y.shape[1]):
        if Y[i, j] != Ybar[i, j]:
            diff[m] = j
            sign[m] = 1.0 if Y[i, j] else -1.0
            m += 1
    return m


@kernel
def constraint_sum_dense(X, bias, Y, Ybar):
    """g = (1/n) sum_i x_i (x) (y_i - ybar_i) with the bias feature appended: a
    (p + 1, L) matrix whose last row is the bias part. Only the labels where ybar
    differs from y contribute."""
    n, p = X.shape
    L = Y.shape[1]
    g = np.zeros((p + 1, L), np.float64)
    diff = np.empty(L, np.int64)
    sign = np.empty(L, np.float64)
    for i in range(n):
        m = _differing(Y, Ybar, i, diff, sign)
        if m == 0:
            continue
        for f in range(p):
            v = X[i, f]
            if v != 0.0:
                for k in range(m):
                    g[f, diff[k]] += v * sign[k]
        for k in range(m):
            g[p, diff[k]] += bias * sign[k]
    return g / n


@kernel
def constraint_sum_csr(indptr, indices, data, p, bias, Y, Ybar):
    """:func:`constraint_sum_dense` for CSR ``X`` (``indptr, indices, data``)."""
    n, L = Y.shape
    g = np.zeros((p + 1, L), np.float64)
    diff = np.empty(L, np.int64)
    sign = np.empty(L, np.float64)
    for i in range(n):
        m = _differing(Y, Ybar, i, diff, sign)
        if m == 0:
            continue
        for t in range(indptr[i], indptr[i + 1]):
            f = indices[t]
            v = data[t]
            for k in range(m):
                g[f, diff[k]] += v * sign[k]
        for k in range(m):
            g[p, diff[k]] += bias * sign[k]
    return g / n


# ----------------------------------------------------------------------------------------
# constraint cache (SVM-struct's -w 4: up to m label vectors per example)
# ----------------------------------------------------------------------------------------
@kernel
def _row_value(s, y, ybar, loss):
    """Violation of one example's constraint: loss - sum_l s_l (y_l - ybar_l)."""
    v = loss
    for j in range(s.size):
        if y[j] != ybar[j]:
            if y[j]:
                v -= s[j]
            else:
                v += s[j]
    return v


@kernel
def cache_best(S, Y, cache_Y, cache_loss, cache_count):
    """Per example, the cached label vector of largest violation under the current
    scores, or y itself (violation 0) when none is violated: ``(Ybar, losses)``."""
    n, L = S.shape
    Ybar = np.empty((n, L), np.uint8)
    out_loss = np.zeros(n, np.float64)
    for i in range(n):
        best = 0.0
        best_k = -1
        for k in range(cache_count[i]):
            v = _row_value(S[i], Y[i], cache_Y[i, k], cache_loss[i, k])
            if v > best:
                best = v
                best_k = k
        if best_k < 0:
            for j in range(L):
                Ybar[i, j] = Y[i, j]
        else:
            for j in range(L):
                Ybar[i, j] = cache_Y[i, best_k, j]
            out_loss[i] = cache_loss[i, best_k]
    return Ybar, out_loss


@kernel
def cache_insert(S, Y, Ybar, ybar_loss, cache_Y, cache_loss, cache_count):
    """Add each example's new label vector to its cache unless it equals y or is
    already cached; a full cache drops its least violated entry. Returns the number of
    vectors added."""
    n, L = S.shape
    m = cache_Y.shape[1]
    added = 0
    for i in range(n):
        same = True
        for j in range(L):
            if Ybar[i, j] != Y[i, j]:
                same = False
                break
        if same:
            continue
        dup = False
        for k in range(cache_count[i]):
            eq = True
            for j in range(L):
                if cache_Y[i, k, j] != Ybar[i, j]:
                    eq = False
                    break
            if eq:
                dup = True
                break
        if dup:
            continue
        if cache_count[i] < m:
            slot = cache_count[i]
            cache_count[i] += 1
        else:
            slot = 0
            worst = np.inf
            for k in range(m):
                v = _row_value(S[i], Y[i], cache_Y[i, k], cache_loss[i, k])
                if v < worst:
                    worst = v
                    slot = k
        for j in range(L):
            cache_Y[i, slot, j] = Ybar[i, j]
        cache_loss[i, slot] = ybar_loss[i]
        added += 1
    return added
