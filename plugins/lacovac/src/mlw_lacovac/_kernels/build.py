"""The tree builder: Algorithms 1 and 2 of the paper over an explicit node stack, in one
numba call per tree (no Python per node; the GIL is released, so forest trees grow in
threads).

Nodes are numbered, processed and their leaves created in exactly the order of the
Python reference builder (:class:`mlw_lacovac._reference.ReferenceTreeBuilder`): a node's
children get consecutive ids when it is processed, and the stack is last-in first-out.
A node's rows are a segment of one row buffer: a horizontal split partitions its
segment in place (stable, so rows keep their order), the first child of a vertical split
reuses the segment and the others get copies; buffer space above every live segment is
reused.

Rows are weighted (``w``, ``sample_weight``; None without it, which compiles to the
unweighted arithmetic) as frequencies: a node's
size (``n_rows``, what ``m``, ``min_child`` and lambda_n see), its label counts and the
leaves' subset counts are sums of weights, so integer weights grow the tree of the
repeated rows.
"""

from __future__ import annotations

import numpy as np

from mlw.jit import kernel
from mlw_lacovac._kernels.criterion import CRIT_ENTROPY, CRIT_LACOVA, CRIT_VARIANCE, node_context
from mlw_lacovac._kernels.leaves import HSPLIT, LEAF, VSPLIT, leaf_subsets
from mlw_lacovac._kernels.rng import draw_features
from mlw_lacovac._kernels.sort import argsort_stable
from mlw_lacovac._kernels.split_dense import partition_dense, search_dense
from mlw_lacovac._kernels.split_sparse import partition_sparse, search_sparse
from mlw_lacovac._kernels.stats import (
    lacova_cov_threshold,
    node_stats,
    phi_matrix,
    sum_abs_covariance,
    threshold_components,
    weight_sum,
)

METHOD_LACOVAC = 0
METHOD_LACOVA = 1
METHOD_MLC45 = 2


@kernel
def _grow(a, need):
    if need <= a.size:
        return a
    b = np.empty(max(need, 2 * a.size), a.dtype)
    for i in range(a.size):  # a loop: a slice copy compiles numba's shape-error path
        b[i] = a[i]
    return b


@kernel
def local_labels_into(y_indptr, y_indices, rows, label_map, lptr, lidx):
    """The node's rows as a CSR of local label positions, into ``lptr``/``lidx``."""
    lptr[0] = 0
    m = 0
    for t in range(rows.size):
        r = rows[t]
        for p in range(y_indptr[r], y_indptr[r + 1]):
            j = label_map[y_indices[p]]
            if j >= 0:
                lidx[m] = j
                m += 1
        lptr[t + 1] = m


@kernel(nogil=True)
def grow_tree(method, m, min_child, z, split_floor, XT, xbin, x_indptr, x_indices,
              x_data, xone, y_indptr, y_indices, w, n_labels, root_rows, max_features,
              rng_state):
    """Grow one tree; see :class:`mlw_lacovac._tree.TreeBuilder` for the parameters and
    :class:`mlw_lacovac._tree.Tree` for the arrays returned.

    Dense ``X`` comes as ``XT, xbin`` with ``x_indptr, x_indices, x_data, xone`` None,
    sparse ``X`` the other way round: every dense/sparse branch tests an argument
    ``is not None``, which numba resolves at compile time when the argument is None
    (and only then: each path has its own test, never an ``else``), so a dense fit never
    compiles the sparse search and partition, nor a sparse one the dense ones."""
    d = min_child.size
    n0 = root_rows.size
    Lg = n_labels
    nmax = max(n0, 1)
    # ---- work buffers, allocated once per tree
    label_map = np.full(Lg, -1, np.int64)
    leaf_map = np.full(Lg, -1, np.int64)
    vmap = np.full(Lg, -1, np.int64)
    counts = np.zeros(Lg)
    co = np.zeros((Lg, Lg))
    lbuf = np.empty(Lg, np.int64)
    ylen = 0
    for t in range(n0):
        r = root_rows[t]
        ylen += y_indptr[r + 1] - y_indptr[r]
    lptr = np.empty(nmax + 1, np.int64)
    lidx = np.empty(max(ylen, 1), np.int64)
    pmax = max(1, Lg * (Lg - 1) // 2)
    pj = np.empty(pmax, np.int64)
    pk = np.empty(pmax, np.int64)
    ptc = np.empty(pmax)
    pidx = np.empty((Lg, Lg), np.int64)
    adj_ptr = np.empty(Lg + 1, np.int64)
    adj_k = np.empty(2 * pmax, np.int64)
    adj_p = np.empty(2 * pmax, np.int64)
    adj_b = np.empty(2 * pmax)
    adj_w = np.empty(2 * pmax)
    gb = np.empty(pmax)
    gtc = np.empty(pmax + 1)
    gpp = np.empty(pmax + 1)
    tot = np.zeros(8)
    c = np.zeros(Lg)
    Cv = np.zeros(pmax)
    touched = np.empty(Lg + 1, np.int64)  # one spare entry: move_row's branch-free append
    mp = np.empty(pmax + 1, np.int64)
    acc = np.zeros(5)
    cnt = np.zeros(2, np.int64)
    deg = np.empty(Lg)
    cb = np.empty(Lg)
    order = np.empty(nmax, np.int64)
    kb = np.empty(nmax, np.int64)
    nbins = 0
    if xbin is not None:
        for f in range(xbin.shape[0]):  # xbin.max() compiles two more kernels
            for r in range(xbin.shape[1]):
                nbins = max(nbins, int(xbin[f, r]) + 1)
    bcount = np.empty(nbins + 1, np.int64)
    vals = np.empty(nmax)
    tmp = np.empty(nmax, np.int64)
    # sparse X: the node's column view
    xlen = 0
    if x_indptr is not None:
        for t in range(n0):
            r = root_rows[t]
            xlen += x_indptr[r + 1] - x_indptr[r]
    cnt_all = np.empty(d, np.int64)
    w_all = np.empty(d)
    cptr = np.empty(d + 1, np.int64)
    fillp = np.empty(d, np.int64)
    crow = np.empty(max(xlen, 1), np.int64)
    cval = np.empty(max(xlen, 1))
    fmask = np.ones(d, np.bool_)
    all_features = np.arange(d)
    perm = np.arange(d)
    drawn = np.empty(max(max_features, 1), np.int64)
    # leaves
    hsize = 1
    while hsize < 2 * nmax:
        hsize *= 2
    htab = np.full(hsize, -1, np.int64)
    hkey = np.empty(hsize, np.uint64)
    sub_ptr = np.empty(nmax + 1, np.int64)
    sub_row = np.empty(nmax, np.int64)
    scnt = np.empty(nmax)
    slot = np.empty(nmax, np.int64)
    slab = np.empty(max(ylen, 1), np.int64)
    # ---- the tree, grown in place
    cap = 2 * nmax + 16
    kind = np.empty(cap, np.int64)
    feature = np.empty(cap, np.int64)
    threshold = np.empty(cap)
    quality = np.empty(cap)
    first_child = np.empty(cap, np.int64)
    n_child = np.empty(cap, np.int64)
    n_rows = np.empty(cap)
    node_lset = np.empty(cap, np.int64)
    leaf_id = np.empty(cap, np.int64)
    n_nodes = 0
    lset_ptr = np.empty(64, np.int64)
    lset_lab = np.empty(max(Lg, 16), np.int64)
    lset_ptr[0] = 0
    lset_ptr[1] = Lg
    for j in range(Lg):
        lset_lab[j] = j
    n_lsets = 1
    leaf_node = np.empty(nmax + 16, np.int64)
    leaf_sub_ptr = np.zeros(nmax + 17, np.int64)
    leaf_bits_ptr = np.zeros(nmax + 17, np.int64)
    sub_count = np.empty(nmax + 16)
    sub_bits = np.empty(4 * nmax + 64, np.uint8)
    n_leaves = np.int64(0)  # not a literal 0: _add_leaf compiles once, not twice
    # rows and the stack
    rows_buf = np.empty(2 * nmax, np.int64)
    for t in range(n0):  # a loop: a slice copy compiles numba's shape-error path
        rows_buf[t] = root_rows[t]
    st_node = np.empty(64, np.int64)
    st_s = np.empty(64, np.int64)
    st_n = np.empty(64, np.int64)
    st_ls = np.empty(64, np.int64)
    st_cl = np.empty(64, np.bool_)
    st_end = np.empty(64, np.int64)
    # root
    kind[0] = LEAF
    feature[0] = -1
    threshold[0] = 0.0
    quality[0] = np.nan
    n_child[0] = 0
    first_child[0] = 0
    n_rows[0] = weight_sum(w, root_rows)
    node_lset[0] = 0
    leaf_id[0] = -1
    n_nodes = 1
    st_node[0] = 0
    st_s[0] = 0
    st_n[0] = n0
    st_ls[0] = 0
    st_cl[0] = False
    st_end[0] = n0
    sp = 1
    while sp > 0:
        sp -= 1
        v = st_node[sp]
        s = st_s[sp]
        n = st_n[sp]
        ls = st_ls[sp]
        clustered = st_cl[sp]
        top = s + n
        if sp > 0 and st_end[sp - 1] > top:
            top = st_end[sp - 1]
        # room for the children and leaves this node can create
        need = n_nodes + Lg + 2
        if need > kind.size:
            kind = _grow(kind, need)
            feature = _grow(feature, need)
            threshold = _grow(threshold, need)
            quality = _grow(quality, need)
            first_child = _grow(first_child, need)
            n_child = _grow(n_child, need)
            n_rows = _grow(n_rows, need)
            node_lset = _grow(node_lset, need)
            leaf_id = _grow(leaf_id, need)
        need = sp + Lg + 2
        if need > st_node.size:
            st_node = _grow(st_node, need)
            st_s = _grow(st_s, need)
            st_n = _grow(st_n, need)
            st_ls = _grow(st_ls, need)
            st_cl = _grow(st_cl, need)
            st_end = _grow(st_end, need)
        rows = rows_buf[s:s + n]
        wn = n_rows[v]  # the node's weight (n without sample_weight)
        l0 = lset_ptr[ls]
        nl = lset_ptr[ls + 1] - l0
        for i in range(nl):
            label_map[lset_lab[l0 + i]] = i
        node_stats(y_indptr, y_indices, w, rows, label_map, nl, counts, co, lbuf)
        for i in range(nl):
            label_map[lset_lab[l0 + i]] = -1
        nvary = 0
        for i in range(nl):
            if counts[i] > 0 and counts[i] < wn:
                nvary += 1
        make_leaf = wn < m or wn < 2 or nvary == 0
        q_best = np.nan
        f_best = -1
        t_best = 0.0
        nleft = 0
        if not make_leaf:
            vi = np.empty(nvary, np.int64)
            k = 0
            for i in range(nl):
                if counts[i] > 0 and counts[i] < wn:
                    vi[k] = i
                    k += 1
            vcounts = np.empty(nvary)
            vco = np.zeros((nvary, nvary))
            for a in range(nvary):
                vcounts[a] = counts[vi[a]]
                for b in range(a + 1, nvary):
                    vco[a, b] = co[vi[a], vi[b]]
            # ---- label clustering (vertical split)
            comp = np.zeros(nvary, np.int64)
            ngroups = 1
            if not clustered and nvary >= 2 and method != METHOD_MLC45:
                if method == METHOD_LACOVAC:
                    R = phi_matrix(vcounts, vco, wn)
                    comp = threshold_components(R, z / np.sqrt(wn - 1.0))
                    ngroups = 0
                    for a in range(nvary):
                        ngroups = max(ngroups, comp[a] + 1)
                elif sum_abs_covariance(vcounts, vco, wn) <= lacova_cov_threshold(vcounts, wn):
                    for a in range(nvary):
                        comp[a] = a
                    ngroups = nvary
            has_const = method != METHOD_MLC45 and nvary < nl
            if ngroups + has_const > 1:
                kind[v] = VSPLIT
                first_child[v] = n_nodes
                n_child[v] = ngroups + has_const
                need = lset_ptr[n_lsets] + nl
                lset_lab = _grow(lset_lab, need)
                lset_ptr = _grow(lset_ptr, n_lsets + ngroups + 2)
                first_pending = n_nodes
                for g in range(ngroups + has_const):
                    b0 = lset_ptr[n_lsets]
                    b1 = b0
                    if g < ngroups:
                        for a in range(nvary):
                            if comp[a] == g:
                                lset_lab[b1] = lset_lab[l0 + vi[a]]
                                b1 += 1
                    else:
                        for i in range(nl):
                            if counts[i] == 0 or counts[i] == wn:
                                lset_lab[b1] = lset_lab[l0 + i]
                                b1 += 1
                    lset_ptr[n_lsets + 1] = b1
                    cnode = n_nodes
                    kind[cnode] = LEAF
                    feature[cnode] = -1
                    threshold[cnode] = 0.0
                    quality[cnode] = np.nan
                    n_child[cnode] = 0
                    first_child[cnode] = 0
                    n_rows[cnode] = wn
                    node_lset[cnode] = n_lsets
                    leaf_id[cnode] = -1
                    n_lsets += 1
                    n_nodes += 1
                # the constant labels: one pure leaf, now (as the reference builder)
                if has_const:
                    cnode = n_nodes - 1
                    (leaf_node, leaf_sub_ptr, leaf_bits_ptr, sub_count,
                     sub_bits) = _add_leaf(cnode, rows, node_lset[cnode], lset_ptr, lset_lab,
                                           y_indptr, y_indices, w, leaf_map, htab, hkey, sub_ptr,
                                           sub_row, scnt, slot, slab, n_leaves, leaf_node,
                                           leaf_sub_ptr, leaf_bits_ptr, sub_count, sub_bits)
                    leaf_id[cnode] = n_leaves
                    n_leaves += 1
                # push the label clusters, the first one on top; it reuses the segment
                for g in range(ngroups - 1, -1, -1):
                    cnode = first_pending + g
                    if g == 0:
                        seg = s
                    else:
                        rows_buf = _grow(rows_buf, top + n)
                        seg = top
                        for t in range(n):
                            rows_buf[seg + t] = rows_buf[s + t]
                        top += n
                    st_node[sp] = cnode
                    st_s[sp] = seg
                    st_n[sp] = n
                    st_ls[sp] = node_lset[cnode]
                    st_cl[sp] = True
                    end = seg + n
                    if sp > 0 and st_end[sp - 1] > end:
                        end = st_end[sp - 1]
                    st_end[sp] = end
                    sp += 1
                continue
            # ---- horizontal split on the labels that vary here
            if method == METHOD_MLC45:
                crit = CRIT_ENTROPY
            elif nvary >= 2:
                crit = CRIT_LACOVA
            else:
                crit = CRIT_VARIANCE
            for a in range(nvary):
                vmap[lset_lab[l0 + vi[a]]] = a
            local_labels_into(y_indptr, y_indices, rows, vmap, lptr, lidx)
            for a in range(nvary):
                vmap[lset_lab[l0 + vi[a]]] = -1
            if max_features > 0:
                draw_features(rng_state, perm, max_features, drawn)
                feats = drawn[:max_features]
            else:
                feats = all_features
            if wn >= split_floor:
                node_context(vcounts, vco, w, rows, lptr[:n + 1], wn, pj, pk, ptc, pidx,
                             adj_ptr, adj_k, adj_p, adj_b, adj_w, gb, gtc, gpp, tot)
                if x_indptr is not None:
                    if max_features > 0:
                        fmask[:] = False
                        for i in range(max_features):
                            fmask[feats[i]] = True
                    f_best, t_best, q_best = search_sparse(
                        x_indptr, x_indices, x_data, rows, w, lptr, lidx, vcounts, fmask, xone,
                        min_child, crit, pj, pk, ptc, pidx, adj_ptr, adj_k, adj_p, adj_b, adj_w,
                        gb, gtc, gpp, tot, c, Cv, touched, mp, acc, cnt, deg, cb, cnt_all, w_all,
                        cptr, fillp, crow, cval)
                if XT is not None:  # not `else`: numba prunes a branch only on a None
                    f_best, t_best, q_best = search_dense(
                        XT, xbin, rows, w, lptr, lidx, vcounts, feats, min_child, crit, pj, pk,
                        ptc, pidx, adj_ptr, adj_k, adj_p, adj_b, adj_w, gb, gtc, gpp, tot, c, Cv,
                        touched, mp, acc, cnt, deg, cb, order, kb, bcount, vals)
            if f_best < 0:
                make_leaf = True
            elif crit == CRIT_ENTROPY:
                parent = 0.0
                for a in range(nvary):
                    p = vcounts[a] / wn
                    parent -= p * np.log2(p) + (1 - p) * np.log2(1 - p)
                if q_best >= parent - 1e-12:  # C4.5 splits only on a positive gain
                    make_leaf = True
        if make_leaf:
            (leaf_node, leaf_sub_ptr, leaf_bits_ptr, sub_count,
             sub_bits) = _add_leaf(v, rows, ls, lset_ptr, lset_lab, y_indptr, y_indices, w,
                                   leaf_map, htab, hkey, sub_ptr, sub_row, scnt, slot, slab,
                                   n_leaves, leaf_node, leaf_sub_ptr, leaf_bits_ptr, sub_count,
                                   sub_bits)
            leaf_id[v] = n_leaves
            n_leaves += 1
            continue
        if x_indptr is not None:
            nleft = partition_sparse(x_indptr, x_indices, x_data, rows_buf, s, n, f_best,
                                     t_best, tmp)
        if XT is not None:
            nleft = partition_dense(XT, rows_buf, s, n, f_best, t_best, tmp)
        kind[v] = HSPLIT
        feature[v] = f_best
        threshold[v] = t_best
        quality[v] = q_best
        first_child[v] = n_nodes
        n_child[v] = 2
        for h in range(2):
            cnode = n_nodes
            kind[cnode] = LEAF
            feature[cnode] = -1
            threshold[cnode] = 0.0
            quality[cnode] = np.nan
            n_child[cnode] = 0
            first_child[cnode] = 0
            n_rows[cnode] = weight_sum(w, rows_buf[s:s + nleft] if h == 0 else
                                       rows_buf[s + nleft:s + n])
            node_lset[cnode] = ls
            leaf_id[cnode] = -1
            n_nodes += 1
        # the right child below, the left one on top
        for h in range(2):
            st_node[sp] = first_child[v] + 1 - h
            st_s[sp] = s + nleft if h == 0 else s
            st_n[sp] = n - nleft if h == 0 else nleft
            st_ls[sp] = ls
            st_cl[sp] = False
            end = s + n
            if sp > 0 and st_end[sp - 1] > end:
                end = st_end[sp - 1]
            st_end[sp] = end
            sp += 1
    # ---- flatten
    child_ptr = np.zeros(n_nodes + 1, np.int64)
    for v in range(n_nodes):
        child_ptr[v + 1] = child_ptr[v] + n_child[v]
    children = np.empty(child_ptr[n_nodes], np.int64)
    for v in range(n_nodes):
        for i in range(n_child[v]):
            children[child_ptr[v] + i] = first_child[v] + i
    reach = np.ones(n_nodes, np.int64)
    for v in range(n_nodes - 1, -1, -1):
        if kind[v] == HSPLIT:
            reach[v] = max(reach[first_child[v]], reach[first_child[v] + 1])
        elif kind[v] == VSPLIT:
            tot_r = 0
            for i in range(n_child[v]):
                tot_r += reach[first_child[v] + i]
            reach[v] = tot_r
    nb = leaf_bits_ptr[n_leaves]
    nsub = leaf_sub_ptr[n_leaves]
    return (kind[:n_nodes].copy(), feature[:n_nodes].copy(), threshold[:n_nodes].copy(),
            quality[:n_nodes].copy(), child_ptr, children, n_rows[:n_nodes].copy(),
            node_lset[:n_nodes].copy(), leaf_id[:n_nodes].copy(),
            lset_ptr[:n_lsets + 1].copy(), lset_lab[:lset_ptr[n_lsets]].copy(),
            leaf_node[:n_leaves].copy(), leaf_sub_ptr[:n_leaves + 1].copy(),
            leaf_bits_ptr[:n_leaves + 1].copy(), sub_count[:nsub].copy(),
            sub_bits[:nb].copy(), reach[0])


@kernel
def _add_leaf(v, rows, ls, lset_ptr, lset_lab, y_indptr, y_indices, w, leaf_map, htab, hkey,
              sub_ptr, sub_row, scnt, slot, slab, n_leaves, leaf_node, leaf_sub_ptr,
              leaf_bits_ptr, sub_count, sub_bits):
    """Append the leaf of node ``v``: the subsets of its labels seen in its rows, by
    decreasing count (ties: first appearance), as 0/1 rows of the block."""
    l0 = lset_ptr[ls]
    m = lset_ptr[ls + 1] - l0
    for i in range(m):
        leaf_map[lset_lab[l0 + i]] = i
    nsub = leaf_subsets(y_indptr, y_indices, w, rows, leaf_map, htab, hkey, sub_ptr, sub_row,
                        scnt, slot, slab)
    for i in range(m):
        leaf_map[lset_lab[l0 + i]] = -1
    keys = np.empty(nsub)
    for s in range(nsub):
        keys[s] = -scnt[s]
    order = np.empty(nsub, np.int64)
    argsort_stable(keys, nsub, order)
    leaf_node = _grow(leaf_node, n_leaves + 1)
    leaf_sub_ptr = _grow(leaf_sub_ptr, n_leaves + 2)
    leaf_bits_ptr = _grow(leaf_bits_ptr, n_leaves + 2)
    s0 = leaf_sub_ptr[n_leaves]
    b0 = leaf_bits_ptr[n_leaves]
    sub_count = _grow(sub_count, s0 + nsub)
    sub_bits = _grow(sub_bits, b0 + nsub * m)
    for i in range(nsub):
        s = order[i]
        sub_count[s0 + i] = scnt[s]
        base = b0 + i * m
        for j in range(m):
            sub_bits[base + j] = 0
        for p in range(sub_ptr[s], sub_ptr[s + 1]):
            sub_bits[base + slab[p]] = 1
    leaf_node[n_leaves] = v
    leaf_sub_ptr[n_leaves + 1] = s0 + nsub
    leaf_bits_ptr[n_leaves + 1] = b0 + nsub * m
    return leaf_node, leaf_sub_ptr, leaf_bits_ptr, sub_count, sub_bits
