"""The split criteria of the LaCovaC family, evaluated in O(1) or close to it per candidate.

A candidate split moves some rows of a node (``nm`` rows, label counts ``c``, pair
co-occurrence counts ``Cv``, indexed by the node's co-occurring pairs) to one child; the
rest of the node (``nr = n - nm`` rows, counts ``tc - c`` and ``tC - C``) is the other
child. With ``sample_weight`` every row counts its weight (a row of weight 2 is two
rows): sizes and counts below are sums of weights, and the formulas are unchanged.

LaCova criterion (the paper's Section 3.2): per child, the minimum of its sum of label
variances and its sum of absolute label covariances, weighted by the child's size. For a
child of ``s`` rows both sums have integer numerators over ``s**2``:

    V = s * sum_j c_j - sum_j c_j**2                      (s**2 * sum of variances)
    F = sum_{j<k} |s * C_jk - c_j * c_k|                  (s**2 * sum of |covariances|)

so the criterion is computed exactly and rounded once: the weighted value
``(min(V_m, F_m) / nm + min(V_r, F_r) / nr) / n``. Ties between candidates are then
exact ties, and the search keeps the first one. Without weights (or with integer ones)
the counts and sums are integers held in float64 (every value stays far below 2**53, so
each operation is exact and the order of summation does not matter); float arithmetic
vectorises where 64-bit integer multiplication does not. Real-valued weights make them
floating-point sums (both tree builders accumulate them in the same order).

Making this cheap (nothing here changes the value):

- a lower bound of ``F`` from the row cardinalities k_i (their variance is the sum of the
  label variances plus twice the sum of covariances), ``F >= |s sum k_i^2 - (sum k_i)^2 -
  V| / 2``, costs O(1); a candidate is evaluated exactly only when that bound says it can
  beat the best so far, and when ``V <= bound`` the child's minimum is ``V``;
- pairs that never co-occur in a child contribute ``c_j c_k``: summed in O(1) as
  ``((sum c)^2 - sum c^2) / 2``, so only co-occurring pairs are visited;
- when the moved rows are few (sparse data), ``F`` of the moved side runs over the pairs
  that co-occur in them only, and ``F`` of the other side is the per-node function
  ``G(s) = sum_{j<k} |s tC_jk - tc_j tc_k|`` (piecewise linear in ``s``: the pairs'
  breakpoints ``tc_j tc_k / tC_jk`` sorted once per node with prefix sums, so ``G(s)``
  is a binary search) corrected for the pairs that involve a moved label; otherwise one
  branch-free loop over the node's co-occurring pairs gives both.

The node's *context* (its co-occurring pairs, a label adjacency over them and the ``G``
table) is built once per node by :func:`node_context`; all its arrays are preallocated
buffers (see :func:`context_buffers`) so the tree builder allocates nothing per node.
The variance criterion (fewer than two varying labels) and ML-C4.5's entropy keep their
floating-point form.

The per-candidate functions (:func:`evaluate` and what it calls) are compiled without
numba's reference counting (:data:`njit_noref`): they take some 25 arrays and allocate
nothing, and with it every call paid an atomic increment and decrement of each array's
reference count (as :func:`evaluate` was inlined, so did the search at every candidate),
which was 60% of the whole fit's time on yeast (``perf``).
"""

from __future__ import annotations

import numpy as np

from mlw.jit import kernel
from mlw_lacovac._kernels.sort import argsort_quick
from mlw_lacovac._kernels.stats import row_weight

#: ``kernel`` for kernels that allocate no array and create no array view they keep:
#: compiled without numba's runtime (NRT), so passing arrays to them and between their
#: variables costs no atomic reference-count operations. The searches call them per
#: candidate; they must never allocate (numba refuses to compile an allocation here).
njit_noref = kernel(_nrt=False)

#: Criterion codes of the split searches.
CRIT_LACOVA = 0  # min(sum of variances, sum of |covariances|) per child (LaCova/LaCovaC)
CRIT_VARIANCE = 1  # sum of label variances (a node with fewer than two varying labels)
CRIT_ENTROPY = 2  # sum of binary label entropies (ML-C4.5)

# layout of the context's scalar array ``tot``
T_SUM = 0  # sum_j tc_j (= sum over rows of their label count k_i)
T_SQ = 1  # sum_j tc_j**2
T_K2 = 2  # sum over rows of w_i k_i**2
T_TC = 3  # sum of tC over co-occurring pairs
T_PP = 4  # sum of tc_j tc_k over co-occurring pairs
T_GNON = 5  # sum of tc_j tc_k over the pairs that never co-occur
T_N = 6  # rows of the node (their weight)
T_P = 7  # number of co-occurring pairs
T_LEN = 8


def context_buffers(n_max: int, n_labels: int):
    """Preallocated arrays of a node context (:func:`node_context`) for nodes of up to
    ``n_max`` rows and ``n_labels`` local labels."""
    pmax = max(1, n_labels * (n_labels - 1) // 2)
    return (np.empty(pmax, np.int64), np.empty(pmax, np.int64), np.empty(pmax),
            np.empty((n_labels, n_labels), np.int64), np.empty(n_labels + 1, np.int64),
            np.empty(2 * pmax, np.int64), np.empty(2 * pmax, np.int64),
            np.empty(2 * pmax), np.empty(2 * pmax), np.empty(pmax), np.empty(pmax + 1),
            np.empty(pmax + 1), np.zeros(T_LEN))


def state_buffers(n_labels: int):
    """The moved side's state: ``(c, Cv, touched, mp, acc, cnt, deg, cb)``."""
    pmax = max(1, n_labels * (n_labels - 1) // 2)
    return (np.zeros(n_labels), np.zeros(pmax), np.empty(n_labels + 1, np.int64),
            np.empty(pmax + 1, np.int64), np.zeros(5), np.zeros(2, np.int64),
            np.empty(n_labels), np.empty(n_labels))


@kernel
def node_context(tc, tC, w, rows, lptr, n, pj, pk, ptc, pidx, adj_ptr, adj_k, adj_p, adj_b,
                 adj_w, gb, gtc, gpp, tot):
    """Fill the node context of a node of weight ``n`` (rows ``rows`` weighted ``w``, None:
    1 each; their local labels ``lptr``): the co-occurring pairs ``(pj, pk)`` (j < k) with
    their counts ``ptc`` and indices ``pidx[j, k]`` (-1: the pair never co-occurs), each
    label's co-occurring partners (``adj_ptr``/``adj_k``, pair index ``adj_p``) sorted by
    the breakpoint ``adj_b = tc_j tc_k / tC_jk`` (the child size ``s`` from which ``s
    tC_jk >= tc_j tc_k``) with the running sums ``adj_w`` of the partners' ``tc_k``, the
    breakpoints of all pairs sorted (``gb``) with the prefix sums of their ``tC``
    (``gtc``) and ``tc_j tc_k`` (``gpp``), and the scalars in ``tot``."""
    L = tc.size
    P = 0
    for j in range(L + 1):
        adj_ptr[j] = 0
    t1 = 0.0
    t2 = 0.0
    for j in range(L):
        t1 += tc[j]
        t2 += tc[j] * tc[j]
        for k in range(j + 1, L):
            if tC[j, k] > 0:
                pj[P] = j
                pk[P] = k
                ptc[P] = float(tC[j, k])
                pidx[j, k] = P
                P += 1
                adj_ptr[j + 1] += 1
                adj_ptr[k + 1] += 1
            else:
                pidx[j, k] = -1
    for j in range(L):
        adj_ptr[j + 1] += adj_ptr[j]
    # fill the adjacency from the back: adj_ptr[j + 1] (the end of j's partners) is the
    # fill pointer and ends as the start of j's; shifted back below. Each label's
    # partners come in ascending pair order
    for p in range(P - 1, -1, -1):
        j = pj[p]
        k = pk[p]
        adj_ptr[k + 1] -= 1
        adj_k[adj_ptr[k + 1]] = j
        adj_p[adj_ptr[k + 1]] = p
        adj_ptr[j + 1] -= 1
        adj_k[adj_ptr[j + 1]] = k
        adj_p[adj_ptr[j + 1]] = p
    for j in range(L):
        adj_ptr[j] = adj_ptr[j + 1]
    adj_ptr[L] = 2 * P
    # each label's partners by breakpoint (insertion sort: a label has few partners)
    for j in range(L):
        a = adj_ptr[j]
        for q in range(a, adj_ptr[j + 1]):
            k = adj_k[q]
            b = tc[j] * tc[k] / ptc[adj_p[q]]
            p = adj_p[q]
            i = q - 1
            while i >= a and adj_b[i] > b:
                adj_b[i + 1] = adj_b[i]
                adj_k[i + 1] = adj_k[i]
                adj_p[i + 1] = adj_p[i]
                i -= 1
            adj_b[i + 1] = b
            adj_k[i + 1] = k
            adj_p[i + 1] = p
        run = 0.0
        for q in range(a, adj_ptr[j + 1]):
            run += tc[adj_k[q]]
            adj_w[q] = run
    # G(s) = sum over co-occurring pairs |s tC - tc_j tc_k|: positive from the
    # breakpoint s >= tc_j tc_k / tC on; the breakpoints sorted, with prefix sums
    for p in range(P):
        gb[p] = tc[pj[p]] * tc[pk[p]] / ptc[p]
    srt = np.empty(P, np.int64)
    argsort_quick(gb, srt.size, srt)
    gtc[0] = 0.0
    gpp[0] = 0.0
    for i in range(P):
        p = srt[i]
        gtc[i + 1] = gtc[i] + ptc[p]
        gpp[i + 1] = gpp[i] + tc[pj[p]] * tc[pk[p]]
    for i in range(P):
        gb[i] = tc[pj[srt[i]]] * tc[pk[srt[i]]] / ptc[srt[i]]
    k2 = 0.0
    for t in range(lptr.size - 1):
        k = lptr[t + 1] - lptr[t]
        k2 += row_weight(w, rows[t]) * (k * k)
    tot[T_SUM] = t1
    tot[T_SQ] = t2
    tot[T_K2] = k2
    tot[T_TC] = gtc[P]
    tot[T_PP] = gpp[P]
    tot[T_GNON] = (t1 * t1 - t2) * 0.5 - gpp[P]
    tot[T_N] = n
    tot[T_P] = P


@kernel(inline="always")
def _g(s, gb, gtc, gpp, tot):
    """sum over all label pairs j < k of |s tC_jk - tc_j tc_k|."""
    lo = 0
    hi = int(tot[T_P])
    while lo < hi:  # the pairs with a breakpoint <= s
        mid = (lo + hi) // 2
        if gb[mid] <= s:
            lo = mid + 1
        else:
            hi = mid
    return s * (2.0 * gtc[lo] - tot[T_TC]) - (2.0 * gpp[lo] - tot[T_PP]) + tot[T_GNON]


@njit_noref
def moved_F(nm, a0, a1, c, Cv, mp, nmp, pj, pk):
    """``F`` of the moved side from its co-occurring pairs ``mp[:nmp]`` (pair indices);
    the other pairs add ``c_j c_k`` each, summed as ``((sum c)^2 - sum c^2) / 2``."""
    F = (a0 * a0 - a1) * 0.5
    for i in range(nmp):
        p = mp[i]
        x = c[pj[p]] * c[pk[p]]
        F += abs(nm * Cv[p] - x) - x
    return F


@njit_noref
def rest_F(nr, a0, a1, a2, c, Cv, touched, ntouch, tc, ptc, adj_ptr, adj_k, adj_p, gb, gtc,
           gpp, tot):
    """``F`` of the rest of the node (counts ``tc - c``, pairs ``tC - C``, ``nr`` rows):
    ``G(nr)`` corrected for the pairs with a moved label (``touched[:ntouch]``)."""
    t1 = float(tot[T_SUM])
    t2 = float(tot[T_SQ])
    s1 = t1 - a0
    s2 = t2 - 2.0 * a2 + a1
    F = _g(nr, gb, gtc, gpp, tot) + (s1 * s1 - s2) * 0.5 - (t1 * t1 - t2) * 0.5
    for i in range(ntouch):
        j = touched[i]
        tj = float(tc[j])
        crj = tj - c[j]
        for q in range(adj_ptr[j], adj_ptr[j + 1]):
            k = adj_k[q]
            if c[k] > 0.0 and k < j:
                continue  # both moved: counted once, from the smaller label
            p = adj_p[q]
            tk = float(tc[k])
            x = crj * (tk - c[k])
            y = tj * tk
            F += abs(nr * (ptc[p] - Cv[p]) - x) - abs(nr * ptc[p] - y) - (x - y)
    return F


@njit_noref
def both_F(nm, n, a0, a1, a2, c, Cv, tc, pj, pk, ptc, tot, cb):
    """``(F_moved, F_rest)`` in one branch-free loop over the node's co-occurring pairs."""
    nr = n - nm
    s1 = tot[T_SUM] - a0
    s2 = tot[T_SQ] - 2.0 * a2 + a1
    fm = (a0 * a0 - a1) * 0.5
    fr = (s1 * s1 - s2) * 0.5
    for j in range(tc.size):
        cb[j] = tc[j] - c[j]
    for p in range(int(tot[T_P])):
        j = pj[p]
        k = pk[p]
        x = c[j] * c[k]
        cm = Cv[p]
        fm += abs(nm * cm - x) - x
        y = cb[j] * cb[k]
        fr += abs(nr * (ptc[p] - cm) - y) - y
    return fm, fr


@kernel(inline="always")
def lacova_bound(nm, n, a0, a1, a2, a4, tot):
    """Lower bound of the LaCova criterion of a candidate and the pieces the exact value
    needs: ``(q_bound, Vm, LBm, Vr, LBr)``. ``q_bound`` is exact when ``Vm <= LBm`` and
    ``Vr <= LBr`` (both minima are the variances)."""
    nr = n - nm
    vm = nm * a0 - a1
    s1 = tot[T_SUM] - a0
    s2 = tot[T_SQ] - 2.0 * a2 + a1
    vr = nr * s1 - s2
    lbm = abs(nm * a4 - a0 * a0 - vm) * 0.5
    lbr = abs(nr * (tot[T_K2] - a4) - s1 * s1 - vr) * 0.5
    mm = vm if vm <= lbm else lbm
    mr = vr if vr <= lbr else lbr
    return (mm / nm + mr / nr) / n, vm, lbm, vr, lbr


@njit_noref
def rest_bound(nr, a0, a1, a2, a4, c, touched, ntouch, tc, adj_ptr, adj_b, adj_w, gb, gtc,
               gpp, tot):
    """A lower bound of ``F`` of the rest of the node in O(touched labels x log partners).

    Per pair, the rest's term minus the node-form term ``|nr tC - tc_j tc_k|`` is at least
    ``-nr Cm_jk`` for two moved labels, and exactly ``2 c_j tc_k`` for one moved label j
    whose pair is positively associated at this size (``nr tC_jk >= tc_j tc_k``), else at
    least 0; the bound keeps ``G(nr)``, the O(1) part for the pairs that never co-occur,
    ``-nr sum Cm`` (``sum Cm = (a4 - a0) / 2``) and, per moved label, ``2 c_j`` times the
    ``tc_k`` of its positively associated partners less those of all moved labels."""
    t1 = float(tot[T_SUM])
    t2 = float(tot[T_SQ])
    s1 = t1 - a0
    s2 = t2 - 2.0 * a2 + a1
    lb = (_g(nr, gb, gtc, gpp, tot) + (s1 * s1 - s2) * 0.5 - (t1 * t1 - t2) * 0.5
          - nr * (a4 - a0) * 0.5)
    tt = 0.0
    for i in range(ntouch):
        tt += tc[touched[i]]
    for i in range(ntouch):
        j = touched[i]
        lo = adj_ptr[j]
        hi = adj_ptr[j + 1]
        while lo < hi:  # the partners with a breakpoint <= nr come first
            mid = (lo + hi) // 2
            if adj_b[mid] <= nr:
                lo = mid + 1
            else:
                hi = mid
        if lo > adj_ptr[j]:
            w = adj_w[lo - 1] - tt
            if w > 0.0:
                lb += 2.0 * c[j] * w
    return lb


@njit_noref
def lacova_exact(nm, n, c, Cv, touched, mp, acc, cnt, tc, pj, pk, ptc, adj_ptr, adj_k, adj_p,
                 adj_b, adj_w, gb, gtc, gpp, tot, cb, vm, lbm, vr, lbr, best_q):
    """The exact LaCova criterion after :func:`lacova_bound` could not prune it (first
    :func:`rest_bound` tries once more)."""
    nr = n - nm
    a0 = acc[0]
    a1 = acc[1]
    a2 = acc[2]
    mm = vm if vm <= lbm else lbm
    mr = vr if vr <= lbr else lbr
    if cnt[1] + acc[4] < tot[T_P]:
        # few moved labels and pairs (sparse data): a sharper bound of the rest first,
        # then visit only those; the re-check between the two sides skips the second
        # when the first already loses
        if vr > lbr:
            b = rest_bound(nr, a0, a1, a2, acc[3], c, touched, cnt[0], tc, adj_ptr, adj_b,
                           adj_w, gb, gtc, gpp, tot)
            if b > lbr:
                lbr = b
                mr = vr if vr <= lbr else lbr
                if (mm / nm + mr / nr) / n >= best_q - 1e-12:
                    return np.inf
        if vm > lbm:
            f = moved_F(nm, a0, a1, c, Cv, mp, cnt[1], pj, pk)
            mm = vm if vm <= f else f
            if vr > lbr and (mm / nm + mr / nr) / n >= best_q - 1e-12:
                return np.inf
        if vr > lbr:
            f = rest_F(nr, a0, a1, a2, c, Cv, touched, cnt[0], tc, ptc, adj_ptr, adj_k,
                       adj_p, gb, gtc, gpp, tot)
            mr = vr if vr <= f else f
        return (mm / nm + mr / nr) / n
    fm, fr = both_F(nm, n, a0, a1, a2, c, Cv, tc, pj, pk, ptc, tot, cb)
    if vm > lbm:
        mm = vm if vm <= fm else fm
    if vr > lbr:
        mr = vr if vr <= fr else fr
    return (mm / nm + mr / nr) / n


@njit_noref
def float_criterion(nm, n, a0, a1, a2, c, tc, tot, crit):
    """The variance (CRIT_VARIANCE) or entropy (CRIT_ENTROPY) criterion in floating
    point (as mlw computed it before the exact LaCova form): the weighted sum over both
    children."""
    nr = n - nm
    if crit == CRIT_ENTROPY:
        el = 0.0
        er = 0.0
        il = 1.0 / nm
        ir = 1.0 / nr
        for j in range(tc.size):
            p = c[j] * il
            if p > 0.0 and p < 1.0:
                el -= p * np.log2(p) + (1.0 - p) * np.log2(1.0 - p)
            p = (tc[j] - c[j]) * ir
            if p > 0.0 and p < 1.0:
                er -= p * np.log2(p) + (1.0 - p) * np.log2(1.0 - p)
        return (nm * el + nr * er) / n
    fa0 = float(a0)
    fa1 = float(a1)
    vl = fa0 / nm - fa1 / (nm * nm)
    s1 = float(tot[T_SUM]) - fa0
    s2 = float(tot[T_SQ]) - 2.0 * a2 + fa1
    vr = s1 / nr - s2 / (nr * nr)
    return (nm * vl + nr * vr) / n


# ----------------------------------------------------------------------------------------
# the moved side
# ----------------------------------------------------------------------------------------
@kernel(inline="always")
def move_row(t, w, lptr, lidx, c, Cv, pidx, tc, deg, touched, mp, acc, cnt, pairs, fresh):
    """Add local row ``t`` (of weight ``w``) to the moved side: counts ``c`` (``touched``
    lists the labels with ``c > 0``), pair counts ``Cv`` when ``pairs`` (``mp`` lists the
    pairs with ``Cv > 0``); the sums ``acc`` = (a0 = sum c, a1 = sum c^2, a2 = sum tc c,
    a4 = sum w_i k_i^2, sum of the touched labels' degrees) and ``cnt`` = (touched,
    pairs).

    ``fresh`` (a constant at each call site) appends a new label without a branch: the
    label is written past the list's end and kept only when it is new (``touched`` has
    one spare entry). For the few rows of one sparse candidate moved onto an empty side
    (:func:`~mlw_lacovac._kernels.split_sparse.search_ones`) whether a label is new is
    unpredictable and the mispredicted branch cost more than the store; a scan that
    moves rows one after another finds its labels already there, and keeps the
    branch."""
    p0 = lptr[t]
    p1 = lptr[t + 1]
    # the sums in local variables for the row (the compiler cannot keep array elements
    # in registers across the stores to ``c``): the same additions in the same order
    a1 = acc[1]
    a2 = acc[2]
    a4 = acc[4]
    nt = cnt[0]
    for a in range(p0, p1):
        j = lidx[a]
        old = c[j]
        new = old == 0.0
        if fresh:
            touched[nt] = j
            nt += new
            a4 += deg[j] * new  # integer degrees: adding 0.0 changes nothing
        elif new:
            touched[nt] = j
            nt += 1
            a4 += deg[j]
        c[j] = old + w
        a1 += (2.0 * old + w) * w
        a2 += tc[j] * w
        if pairs:
            for b in range(a + 1, p1):
                p = pidx[j, lidx[b]]
                if Cv[p] == 0.0:
                    mp[cnt[1]] = p
                    cnt[1] += 1
                Cv[p] += w
    acc[1] = a1
    acc[2] = a2
    acc[4] = a4
    cnt[0] = nt
    k = p1 - p0
    acc[0] += k * w
    acc[3] += (k * k) * w


@kernel(inline="always")
def add_pairs(t, w, lptr, lidx, Cv, pidx, mp, cnt):
    """The pair counts of row ``t`` (weight ``w``) only (rows whose labels were moved
    without them, by :func:`~mlw_lacovac._kernels.split_sparse.search_ones`: a new
    pair is appended to ``mp`` without a branch, as ``fresh`` labels in
    :func:`move_row`; ``mp`` has one spare entry)."""
    p1 = lptr[t + 1]
    npair = cnt[1]
    for a in range(lptr[t], p1):
        j = lidx[a]
        for b in range(a + 1, p1):
            p = pidx[j, lidx[b]]
            mp[npair] = p
            npair += Cv[p] == 0.0
            Cv[p] += w
    cnt[1] = npair


@kernel(inline="always")
def reset_moved(c, Cv, touched, mp, acc, cnt):
    """Empty the moved side (only the touched entries are written)."""
    for i in range(cnt[0]):
        c[touched[i]] = 0.0
    for i in range(cnt[1]):
        Cv[mp[i]] = 0.0
    for i in range(5):
        acc[i] = 0.0
    cnt[0] = 0
    cnt[1] = 0


@njit_noref
def evaluate(nm, n, c, Cv, touched, mp, acc, cnt, tc, pj, pk, ptc, adj_ptr, adj_k, adj_p, adj_b,
             adj_w, gb, gtc, gpp, tot, cb, crit, best_q):
    """Criterion of the candidate that puts the moved rows (state ``c``, ``Cv``, ``acc``,
    ``cnt`` with the pair counts up to date) on one side, or ``inf`` when it cannot beat
    ``best_q`` by more than 1e-12."""
    if crit != CRIT_LACOVA:
        return float_criterion(nm, n, acc[0], acc[1], acc[2], c, tc, tot, crit)
    q, vm, lbm, vr, lbr = lacova_bound(nm, n, acc[0], acc[1], acc[2], acc[3], tot)
    if q >= best_q - 1e-12:
        return np.inf
    if vm <= lbm and vr <= lbr:
        return q
    return lacova_exact(nm, n, c, Cv, touched, mp, acc, cnt, tc, pj, pk, ptc, adj_ptr, adj_k,
                        adj_p, adj_b, adj_w, gb, gtc, gpp, tot, cb, vm, lbm, vr, lbr, best_q)
