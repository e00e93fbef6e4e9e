"""Leaves: the label-subset distribution of a leaf's rows, the leaf probabilities, and
predictions routed through a flattened tree.

A fitted tree's leaves are flat arrays: leaf ``l`` models the labels
``leaf_labels[leaf_lab_ptr[l]:leaf_lab_ptr[l+1]]`` (its block); its observed subsets are
``sub_count[leaf_sub_ptr[l]:leaf_sub_ptr[l+1]]`` times seen (the weight of its rows with
``sample_weight``), as 0/1 rows of the block stored from ``sub_bits[leaf_bits_ptr[l]]`` on
(row-major), ordered by decreasing count, ties by first appearance among the leaf's
rows.
"""

from __future__ import annotations

import numpy as np

from mlw.jit import kernel
from mlw_lacovac._kernels.sort import argsort_stable
from mlw_lacovac._kernels.stats import row_weight

# node kinds
LEAF = 0
HSPLIT = 1
VSPLIT = 2

_FNV = np.uint64(0x100000001B3)
_SEED = np.uint64(0xCBF29CE484222325)


def leaf_buffers(n_max: int, n_labels: int):
    """Work buffers of :func:`leaf_subsets` for leaves of up to ``n_max`` rows."""
    size = 1
    while size < 2 * max(n_max, 1):
        size *= 2
    return (np.full(size, -1, np.int64), np.empty(size, np.uint64), np.empty(n_max + 1, np.int64),
            np.empty(n_max, np.int64), np.empty(n_max), np.empty(n_max, np.int64),
            np.empty(n_max, np.int64))


@kernel
def leaf_subsets(y_indptr, y_indices, w, rows, label_map, htab, hkey, sub_ptr, sub_row, cnt,
                 slot, lab):
    """The distinct label subsets (restricted to the labels with ``label_map >= 0``) of
    ``rows``, in order of first appearance: returns ``nsub``; subset ``s`` first appears
    at local row ``sub_row[s]`` and is seen ``cnt[s]`` times (the sum of the weights
    ``w`` of its rows, in row order; None: 1 each); its local label positions
    are ``lab[sub_ptr[s]:sub_ptr[s+1]]`` (ascending). ``htab`` (all -1, size a power of 2
    at least twice the rows) is left all -1."""
    mask = np.uint64(htab.size - 1)
    nsub = 0
    sub_ptr[0] = 0
    for t in range(rows.size):
        r = rows[t]
        start = sub_ptr[nsub]
        m = 0
        h = _SEED
        for p in range(y_indptr[r], y_indptr[r + 1]):
            j = label_map[y_indices[p]]
            if j >= 0:
                lab[start + m] = j
                m += 1
                h = (h ^ np.uint64(j + 1)) * _FNV
        h = (h ^ np.uint64(m)) * _FNV
        pos = h & mask
        found = -1
        while htab[pos] >= 0:
            s = htab[pos]
            if hkey[pos] == h and sub_ptr[s + 1] - sub_ptr[s] == m:
                same = True
                b = sub_ptr[s]
                for i in range(m):
                    if lab[b + i] != lab[start + i]:
                        same = False
                        break
                if same:
                    found = s
                    break
            pos = (pos + np.uint64(1)) & mask
        if found >= 0:
            cnt[found] += row_weight(w, r)
        else:
            htab[pos] = nsub
            hkey[pos] = h
            slot[nsub] = pos
            sub_row[nsub] = t
            cnt[nsub] = row_weight(w, r)
            sub_ptr[nsub + 1] = start + m
            nsub += 1
    for s in range(nsub):
        htab[slot[s]] = -1
    return nsub


@kernel
def leaf_models(leaf_lab_ptr, leaf_sub_ptr, leaf_bits_ptr, sub_count, sub_bits, leaf_n, alpha,
                laplace):
    """Per leaf label slot: the marginal score, the mode's bit, log q and log(1 - q), with
    ``q = (c + 1) / (n + 2)`` the Laplace estimate of the label in the leaf.

    The score is ``q`` (``laplace``) or the marginal of the smoothed joint,
    ``(c + alpha q) / (n + alpha)``. The mode is the most frequent subset, ties broken by
    the higher product of the Laplace marginals (``Q``), then by first appearance (the
    log factors are summed in ascending order, so two subsets whose factors are the same
    multiset tie exactly, whatever their positions)."""
    total = leaf_lab_ptr[leaf_lab_ptr.size - 1]
    marg = np.empty(total)
    mode = np.zeros(total, np.uint8)
    logq1 = np.empty(total)
    logq0 = np.empty(total)
    width = 0
    for leaf in range(leaf_lab_ptr.size - 1):
        width = max(width, leaf_lab_ptr[leaf + 1] - leaf_lab_ptr[leaf])
    terms = np.empty(width)
    srt = np.empty(width, np.int64)
    for leaf in range(leaf_lab_ptr.size - 1):
        l0 = leaf_lab_ptr[leaf]
        m = leaf_lab_ptr[leaf + 1] - l0
        s0 = leaf_sub_ptr[leaf]
        s1 = leaf_sub_ptr[leaf + 1]
        bp = leaf_bits_ptr[leaf]
        n = float(leaf_n[leaf])
        for i in range(m):
            c = 0.0
            for s in range(s0, s1):
                if sub_bits[bp + (s - s0) * m + i]:
                    c += sub_count[s]
            q = (c + 1.0) / (n + 2.0)
            if laplace or n + alpha <= 0:
                marg[l0 + i] = q
            else:
                marg[l0 + i] = (c + alpha * q) / (n + alpha)
            logq1[l0 + i] = np.log(q)
            logq0[l0 + i] = np.log1p(-q)
        # ties in count: the higher log Q (its terms summed in ascending order, so that
        # subsets with the same multiset of factors tie exactly; products equal in exact
        # arithmetic but summed from other factors may differ in the last bits, hence the
        # relative tolerance), then the first seen
        best = s0
        best_lq = -np.inf
        if s1 - s0 > 1 and sub_count[s0 + 1] == sub_count[s0]:
            for s in range(s0, s1):
                if sub_count[s] != sub_count[s0]:
                    break
                for i in range(m):
                    if sub_bits[bp + (s - s0) * m + i]:
                        terms[i] = logq1[l0 + i]
                    else:
                        terms[i] = logq0[l0 + i]
                argsort_stable(terms, m, srt)
                lq = 0.0
                for i in range(m):
                    lq += terms[srt[i]]
                if s == s0 or lq > best_lq + 1e-12 * max(1.0, abs(best_lq)):
                    best_lq = lq
                    best = s
        for i in range(m):
            mode[l0 + i] = sub_bits[bp + (best - s0) * m + i]
    return marg, mode, logq1, logq0


def pack_nodes(kind, feature, child_ptr, children, leaf_id):
    """The tree as one int32 record per node for prediction: ``[code, first child,
    children, leaf id]`` with code = the feature of a horizontal split (its children are
    ``first`` for ``x <= threshold`` and ``first + 1``), -1 for a leaf, -2 for a vertical
    split. A node's children have consecutive ids. :func:`walk_layout` turns it into the
    layout prediction walks."""
    rec = np.empty((kind.size, 4), np.int32)
    rec[:, 0] = np.where(kind == HSPLIT, feature, np.where(kind == LEAF, -1, -2))
    first = np.zeros(kind.size, np.int64)
    has = np.diff(child_ptr) > 0
    first[has] = children[child_ptr[:-1][has]]
    rec[:, 1] = first
    rec[:, 2] = np.diff(child_ptr)
    rec[:, 3] = leaf_id
    return rec


# Prediction walks one row at a time through the tree laid out for the walk
# (:func:`walk_layout`): nodes in depth-first order, so a horizontal split's first child
# is the next node (``x <= threshold``) and only the second is a stored index; a vertical
# split's children that are leaves come first, their leaves numbered consecutively, so
# the split reaches them all as one range of leaves whose label slots are one contiguous
# run of the leaf table; the leaf table (labels, marginals, modes) is in walk order too.
# One walker, :func:`_next_range`, hands out the slot ranges a row reaches one at a time
# (:func:`_next_leaf`: one leaf at a time), so each consumer (marginals and modes,
# log P(y | x), routes) acts on a range as the walk finds it, with no list of ranges in
# between; :func:`_walk_buffers`, :func:`_row_start` and :func:`_scatter` are the per-call
# and per-row setup all three share.


@kernel
def walk_layout(rec, threshold, leaf_lab_ptr, leaf_labels, marg, mode):
    """The tree of ``rec`` (:func:`pack_nodes`) laid out for :func:`_next_range`:

    - ``nodes`` (int32, (N, 4), one 16-byte record per node): ``[feature, second child,
      threshold]`` of a horizontal split (the first child is the next node; the threshold's
      float64 bits fill columns 2-3, read through ``nodes.view(np.float64)[:, 1]``, so a
      test costs one cache line, not two), ``[-3 - m, q]`` of a leaf whose ``m`` label
      slots start at slot ``q``, ``[-2, v]`` of a vertical split, whose ``vch[v:]`` holds
      ``k`` (its children that are not leaves), ``lo``, ``hi`` (the slots of its leaf
      children, one contiguous run) and the ``k`` other children;
    - ``slots`` (float64, (S, 2)): per label slot, in walk order, ``[label, marginal]``
      side by side (one cache line per reached leaf, where three arrays cost three),
      ``lmode`` its mode's bit;
    - ``lptr``: walk leaf ``l`` has the slots ``lptr[l]:lptr[l + 1]``; ``slot_leaf`` the
      walk leaf of each slot; ``lorig`` the tree's leaf id of each walk leaf.

    Every leaf models at least one label (a tree's label blocks are never empty)."""
    N = rec.shape[0]
    new = np.empty(N, np.int64)
    order = np.empty(N, np.int64)
    stack = np.empty(N + 1, np.int64)
    top = 0
    stack[0] = 0
    k = 0
    nv = 0
    while top >= 0:  # depth-first; a vertical split's leaf children first
        v = stack[top]
        top -= 1
        new[v] = k
        order[k] = v
        k += 1
        c = rec[v, 0]
        if c >= 0:
            top += 1
            stack[top] = rec[v, 1] + 1
            top += 1
            stack[top] = rec[v, 1]
        elif c == -2:
            c0 = rec[v, 1]
            nch = rec[v, 2]
            nv += 3 + nch
            for i in range(nch - 1, -1, -1):
                if rec[c0 + i, 0] != -1:
                    top += 1
                    stack[top] = c0 + i
            for i in range(nch - 1, -1, -1):
                if rec[c0 + i, 0] == -1:
                    top += 1
                    stack[top] = c0 + i
    nodes = np.zeros((N, 4), np.int32)
    thr = nodes.view(np.float64)
    vch = np.empty(max(nv, 1), np.int32)
    nleaf = leaf_lab_ptr.size - 1
    nslot = leaf_lab_ptr[nleaf]
    lptr = np.empty(nleaf + 1, np.int64)
    slots = np.empty((nslot, 2))
    lmode = np.empty(nslot, np.uint8)
    slot_leaf = np.empty(nslot, np.int64)
    lorig = np.empty(nleaf, np.int64)
    lptr[0] = 0
    nl = 0
    p = 0
    for k in range(N):
        v = order[k]
        c = rec[v, 0]
        if c >= 0:
            nodes[k, 0] = c
            nodes[k, 1] = new[rec[v, 1] + 1]
            thr[k, 1] = threshold[v]
        elif c == -1:
            leaf = rec[v, 3]
            q0 = lptr[nl]
            nodes[k, 0] = -3 - (leaf_lab_ptr[leaf + 1] - leaf_lab_ptr[leaf])
            nodes[k, 1] = q0
            lorig[nl] = leaf
            for q in range(leaf_lab_ptr[leaf], leaf_lab_ptr[leaf + 1]):
                slots[q0, 0] = leaf_labels[q]
                slots[q0, 1] = marg[q]
                lmode[q0] = mode[q]
                slot_leaf[q0] = nl
                q0 += 1
            nl += 1
            lptr[nl] = q0
        else:
            c0 = rec[v, 1]
            nch = rec[v, 2]
            nodes[k, 0] = -2
            nodes[k, 1] = p
            lo = N
            hi = -1
            m = 0
            for i in range(nch):
                w = new[c0 + i]
                if rec[c0 + i, 0] == -1:  # its slots are found below
                    lo = min(lo, w)
                    hi = max(hi, w)
                else:
                    vch[p + 3 + m] = w
                    m += 1
            vch[p] = m
            vch[p + 1] = lo  # walk NODE ids for now, turned into slots below
            vch[p + 2] = hi
            p += 3 + nch
    for k in range(N):  # leaf-child node ranges -> slot ranges
        if nodes[k, 0] == -2:
            a = nodes[k, 1]
            if vch[a + 1] <= vch[a + 2]:
                last = vch[a + 2]
                vch[a + 1] = nodes[vch[a + 1], 1]
                vch[a + 2] = nodes[last, 1] - 3 - nodes[last, 0]
            else:
                vch[a + 1] = 0
                vch[a + 2] = 0
    return nodes, vch, slots, lmode, lptr, slot_leaf, lorig


@kernel(inline="always")
def _walk_buffers(nodes, n_features, sparse):
    """The walk's node stack and, for sparse ``X``, the dense row buffer (all zeros)."""
    return np.empty(nodes.shape[0] + 1, np.int64), np.zeros(n_features if sparse else 0)


@kernel(inline="always")
def _scatter(x_indptr, x_indices, x_data, sparse, r, xbuf, value):
    """A sparse row ``r``'s values into ``xbuf`` (``value``), or back to zeros."""
    if x_indptr is not None:  # None for dense X: nothing of this is compiled then
        for p in range(x_indptr[r], x_indptr[r + 1]):
            xbuf[x_indices[p]] = x_data[p] if value else 0.0


@kernel(inline="always")
def _row_start(x_indptr, x_indices, x_data, sparse, r, xbuf, stack):
    """Row ``r``'s walk state at the root (its values scattered): returns ``top``."""
    _scatter(x_indptr, x_indices, x_data, sparse, r, xbuf, True)
    stack[0] = 0
    return 0


@kernel(inline="always")
def _next_range(X, xbuf, sparse, r, nodes, thr, vch, stack, top):
    """The walk of row ``r`` from its state ``stack[:top + 1]`` (start: ``top = 0``,
    ``stack[0] = 0``, the root) to the next leaf range it reaches: returns ``(top, lo,
    hi)``, the label slots ``lo .. hi - 1``, or ``lo = -1`` when the row has reached all
    its leaves. ``xbuf`` holds the row's values when ``X`` is sparse; ``thr`` is
    ``nodes.view(np.float64)``."""
    while top >= 0:
        v = stack[top]
        top -= 1
        while True:
            f = nodes[v, 0]
            if f >= 0:
                x = xbuf[f] if sparse else X[r, f]
                v = nodes[v, 1] if x > thr[v, 1] else v + 1
            elif f != -2:  # a leaf
                return top, nodes[v, 1], nodes[v, 1] - 3 - f
            else:  # its other children first onto the stack, then its own leaf run
                a = nodes[v, 1]
                for i in range(vch[a] - 1, -1, -1):
                    top += 1
                    stack[top] = vch[a + 3 + i]
                if vch[a + 2] > vch[a + 1]:
                    return top, vch[a + 1], vch[a + 2]
                break
    return top, -1, -1


@kernel(inline="always")
def _next_leaf(X, xbuf, sparse, r, nodes, thr, vch, stack, top, q, hi, lptr, slot_leaf):
    """:func:`_next_range` one leaf at a time, for the consumers that need leaves, not
    slots: from the state ``(top, q, hi)`` (start: ``q = hi = 0``) returns the next
    state and the walk leaf reached, -1 when the row has reached all its leaves."""
    if q >= hi:
        top, q, hi = _next_range(X, xbuf, sparse, r, nodes, thr, vch, stack, top)
        if q < 0:
            return top, q, hi, -1
    wl = slot_leaf[q]
    return top, lptr[wl + 1], hi, wl


@kernel
def route(X, x_indptr, x_indices, x_data, sparse, n, n_features, nodes, vch, lptr,
          slot_leaf, lorig, max_leaves):
    """For each row, the ids of the leaves it reaches (one per label block), padded with
    -1: shape (n, max_leaves). A horizontal split sends a row to one child
    (``x[feature] <= threshold``: the first), a vertical split to all of them."""
    out = np.full((n, max_leaves), -1, np.int64)
    thr = nodes.view(np.float64)
    stack, xbuf = _walk_buffers(nodes, n_features, sparse)
    for r in range(n):
        top = _row_start(x_indptr, x_indices, x_data, sparse, r, xbuf, stack)
        q = hi = m = 0
        while True:
            top, q, hi, wl = _next_leaf(X, xbuf, sparse, r, nodes, thr, vch, stack, top, q,
                                        hi, lptr, slot_leaf)
            if wl < 0:
                break
            out[r, m] = lorig[wl]
            m += 1
        _scatter(x_indptr, x_indices, x_data, sparse, r, xbuf, False)
    return out


#: a dense walk's segment of at most this many rows goes on one row at a time
#: (:func:`_next_range`); kernel CPU ms, best of 60: 0, 1, 4 rows within 7% of
#: each other on yeast (0.127, 0.125, 0.134) and scene (0.069, 0.068, 0.069), 16 slower
#: (0.166, 0.075)
_ROW_WALK_MAX = 4


@kernel(inline="always")
def _write_range(P, Y, r, slots, lmode, lo, hi, want_p, want_y):
    """The label slots ``lo .. hi - 1`` a row ``r`` reached: marginals added into ``P``,
    modes into ``Y``."""
    if want_p:
        for q in range(lo, hi):
            P[r, int(slots[q, 0])] += slots[q, 1]
    if want_y:
        for q in range(lo, hi):
            Y[r, int(slots[q, 0])] = lmode[q]


@kernel
def predict_leaves(X, x_indptr, x_indices, x_data, sparse, n, n_features, nodes, vch,
                   slots, lmode, P, Y, want_p, want_y):
    """The marginals of the leaves each row reaches into ``P`` (``want_p``; added, so a
    forest can sum its trees) and their modes into ``Y`` (``want_y``).

    A sparse row is scattered into a dense buffer and walked alone (:func:`_next_range`),
    so every test is one load of a buffer that stays in the L1 cache. Dense rows walk the
    tree together: a horizontal split partitions its segment of the row ids (no branch
    per row), a vertical split hands the same segment to each child, a leaf writes its
    slots for every row of its segment, and a segment of at most :data:`_ROW_WALK_MAX`
    rows goes on one row at a time. Each node is read once for all the rows that reach
    it, and the per-row work is a load, a compare and a store without a dependent chain
    of loads (kernel CPU ms, best of 100: yeast 0.254 -> 0.136,
    scene 0.200 -> 0.073; on sparse rows the gathered
    values are scattered over a rows x features buffer and the walk of blocks was
    slower). A row reaches each label through one leaf, so ``P`` and ``Y`` are the row
    walk's bit for bit."""
    thr = nodes.view(np.float64)
    stack, xbuf = _walk_buffers(nodes, n_features, sparse)
    if x_indptr is not None:  # not `sparse`: numba compiles this for CSR X only
        for r in range(n):
            top = _row_start(x_indptr, x_indices, x_data, sparse, r, xbuf, stack)
            while True:
                top, lo, hi = _next_range(X, xbuf, sparse, r, nodes, thr, vch, stack, top)
                if lo < 0:
                    break
                _write_range(P, Y, r, slots, lmode, lo, hi, want_p, want_y)
            _scatter(x_indptr, x_indices, x_data, sparse, r, xbuf, False)
        return
    if n == 0:
        return
    seg = np.arange(n)
    tmp = np.empty(n, np.int64)
    N = nodes.shape[0]
    sv = np.empty(N + 1, np.int64)  # pending nodes and their segments seg[sa:sb]
    sa = np.empty(N + 1, np.int64)
    sb = np.empty(N + 1, np.int64)
    top = 0
    sv[0] = 0
    sa[0] = 0
    sb[0] = n
    while top >= 0:
        v = sv[top]
        a = sa[top]
        b = sb[top]
        top -= 1
        if b - a <= _ROW_WALK_MAX:
            for k in range(a, b):
                r = seg[k]
                rt = 0
                stack[0] = v
                while True:
                    rt, lo, hi = _next_range(X, xbuf, False, r, nodes, thr, vch, stack, rt)
                    if lo < 0:
                        break
                    _write_range(P, Y, r, slots, lmode, lo, hi, want_p, want_y)
            continue
        while True:
            f = nodes[v, 0]
            if f >= 0:  # rows with x <= threshold to the front, the others to the back
                t = thr[v, 1]
                lo = a
                hi = b
                for k in range(a, b):
                    r = seg[k]
                    right = X[r, f] > t
                    tmp[lo] = r
                    tmp[hi - 1] = r
                    lo += 1 - right
                    hi -= right
                for k in range(a, b):
                    seg[k] = tmp[k]
                if lo < b:  # the second child later
                    top += 1
                    sv[top] = nodes[v, 1]
                    sa[top] = lo
                    sb[top] = b
                if lo == a:
                    break
                v += 1  # the first child now, or soon when its segment is small
                b = lo
                if b - a <= _ROW_WALK_MAX:
                    top += 1
                    sv[top] = v
                    sa[top] = a
                    sb[top] = b
                    break
            elif f != -2:  # a leaf
                for k in range(a, b):
                    _write_range(P, Y, seg[k], slots, lmode, nodes[v, 1], nodes[v, 1] - 3 - f,
                                 want_p, want_y)
                break
            else:  # every child gets the segment (partitions only reorder it)
                c = nodes[v, 1]
                for i in range(vch[c] - 1, -1, -1):
                    top += 1
                    sv[top] = vch[c + 3 + i]
                    sa[top] = a
                    sb[top] = b
                if vch[c + 2] > vch[c + 1]:
                    for k in range(a, b):
                        _write_range(P, Y, seg[k], slots, lmode, vch[c + 1], vch[c + 2],
                                     want_p, want_y)
                break


@kernel
def log_proba_leaves(X, x_indptr, x_indices, x_data, sparse, n, n_features, nodes, vch,
                     lptr, slot_leaf, lorig, leaf_lab_ptr, leaf_labels, leaf_sub_ptr,
                     leaf_bits_ptr, sub_count, sub_bits, leaf_n, logq1, logq0, y_indptr,
                     y_indices, n_labels, alpha):
    """log P(y_i | x_i): over the leaves row i reaches, the sum of the log smoothed leaf
    probabilities ``(count(s) + alpha Q(s)) / (n + alpha)`` of its labels ``s`` in the
    leaf's block."""
    out = np.zeros(n)
    thr = nodes.view(np.float64)
    stack, xbuf = _walk_buffers(nodes, n_features, sparse)
    on = np.zeros(n_labels, np.uint8)
    for r in range(n):
        for p in range(y_indptr[r], y_indptr[r + 1]):
            on[y_indices[p]] = 1
        top = _row_start(x_indptr, x_indices, x_data, sparse, r, xbuf, stack)
        q = hi = 0
        while True:
            top, q, hi, wl = _next_leaf(X, xbuf, sparse, r, nodes, thr, vch, stack, top, q,
                                        hi, lptr, slot_leaf)
            if wl < 0:
                break
            leaf = lorig[wl]
            l0 = leaf_lab_ptr[leaf]
            m = leaf_lab_ptr[leaf + 1] - l0
            lq = 0.0
            for k in range(m):
                if on[leaf_labels[l0 + k]]:
                    lq += logq1[l0 + k]
                else:
                    lq += logq0[l0 + k]
            count = 0.0
            bp = leaf_bits_ptr[leaf]
            s0 = leaf_sub_ptr[leaf]
            for s in range(s0, leaf_sub_ptr[leaf + 1]):
                same = True
                for k in range(m):
                    if sub_bits[bp + (s - s0) * m + k] != on[leaf_labels[l0 + k]]:
                        same = False
                        break
                if same:
                    count = sub_count[s]
                    break
            out[r] += np.log((count + alpha * np.exp(lq)) / (leaf_n[leaf] + alpha))
        for p in range(y_indptr[r], y_indptr[r + 1]):
            on[y_indices[p]] = 0
        _scatter(x_indptr, x_indices, x_data, sparse, r, xbuf, False)
    return out
