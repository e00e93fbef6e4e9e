"""Numba kernels of LCIF: the sparse scoring of candidate labels, the filtering of
cached neighbour lists and the cross-validation grid. The kNN searches themselves
(instance neighbours, feature→label neighbours, sim_ALL neighbours) are the core's
:mod:`mlw.neighbors`, and so is the accumulation of the neighbours' label rows
(``mlw.neighbors.scatter_touched``, the core's public kernel API).

All functions take raw arrays (CSR as ``indptr, indices, data``), never Python
objects, and never validate: the wrappers in :mod:`mlw_lcif.model` do. Parallel kernels
split the queries into chunks and run the chunks with ``prange``; each chunk allocates
its own accumulator once, so memory is bounded by ``n_chunks × n_labels`` plus the
outputs.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from mlw.jit import kernel
from mlw.neighbors import scatter_touched

#: The readings of conf_FL (``feature_votes``), as the kernels take them: each feature
#: votes for its own neighbourhood over the sum of all the query's feature values
#: ("neighbours"); every feature votes for every candidate (the printed formula, "all");
#: the mean over the features that vote for the label ("neighbour_mean").
VOTES_NEIGHBOURS = 0
VOTES_ALL = 1
VOTES_MEAN = 2


@kernel
def _score_row(i, nbr_idx, nbr_sim, k_ins, s_indptr, s_indices, s_data,
               q_indptr, q_indices, q_data, fl_idx, fl_sim, k_feat, votes,
               f_indptr, f_indices, f_data, lam, acc_ins, acc_fl, den_fl, seen, touched,
               cand):
    """Accumulate the instance and feature confidences of query i into the dense
    per-label buffers; returns (number of candidate labels, sum of sims, sum of x).

    ``seen[lab]`` is 1 for a candidate of the instance part and 3 for a candidate of
    the feature part (a label among the ``k_feat`` nearest labels of one of the query's
    non-zero features, the paper's Eq. 3); the caller resets it to 0. ``votes`` is the
    reading of conf_FL (``VOTES_*``): ``VOTES_ALL`` sums over *all* the query's non-zero
    features (``f_*``: the CSR feature→label cosine matrix), for the feature part's
    candidates only (``cand``: a buffer for their list), as the paper prints it;
    otherwise each feature votes only for the labels of its own neighbourhood
    (``fl_sim``), and with ``VOTES_MEAN`` the features' values are also summed per
    label into ``den_fl`` (the denominator of the mean over the voting features)."""
    nt = 0
    wsum = 0.0
    if lam > 0.0:
        for q in range(k_ins):
            r = nbr_idx[i, q]
            if r < 0:
                break
            w = nbr_sim[i, q]
            wsum += w
            nt = scatter_touched(acc_ins, seen, touched, nt, s_indices, s_data,
                                 s_indptr[r], s_indptr[r + 1], w)
    xsum = 0.0
    if lam < 1.0:
        nc = 0
        for p in range(q_indptr[i], q_indptr[i + 1]):
            j = q_indices[p]
            v = q_data[p]
            if v <= 0.0:
                continue
            xsum += v
            for q in range(k_feat):
                lab = fl_idx[j, q]
                if lab < 0:
                    break
                if seen[lab] == 0:
                    touched[nt] = lab
                    nt += 1
                if seen[lab] != 3:
                    seen[lab] = 3
                    cand[nc] = lab
                    nc += 1
                if votes != VOTES_ALL:
                    acc_fl[lab] += v * fl_sim[j, q]
                    if votes == VOTES_MEAN:
                        den_fl[lab] += v
        if votes == VOTES_ALL and nc > 0:
            # each feature's similarity to each candidate, features in query order (the
            # same sums as the formula's): a row is scanned, or searched when it is much
            # longer than the candidate list
            for p in range(q_indptr[i], q_indptr[i + 1]):
                j = q_indices[p]
                v = q_data[p]
                if v <= 0.0:
                    continue
                a = f_indptr[j]
                b = f_indptr[j + 1]
                if b - a <= 64 * nc:
                    for pp in range(a, b):
                        lab = f_indices[pp]
                        if seen[lab] == 3:
                            acc_fl[lab] += v * f_data[pp]
                else:
                    row = f_indices[a:b]
                    for c in range(nc):
                        lab = cand[c]
                        pos = np.searchsorted(row, lab)
                        if pos < b - a and row[pos] == lab:
                            acc_fl[lab] += v * f_data[a + pos]
    return nt, wsum, xsum


@kernel
def _fl_value(num, den_label, xsum, votes):
    """conf_FL of one candidate from its accumulated numerator: over the voting
    features' values (``VOTES_MEAN``) or over all the query's feature values."""
    den = den_label if votes == VOTES_MEAN else xsum
    return num / den if den > 0.0 else 0.0


@kernel(parallel=True)
def score_candidates(nbr_idx, nbr_sim, k_ins, s_indptr, s_indices, s_data,
                     q_indptr, q_indices, q_data, fl_idx, fl_sim, k_feat, votes,
                     f_indptr, f_indices, f_data, lam, n_labels, n_chunks):
    """LCIF scores of every query over its candidate labels only, as CSR.

    score(x, y) = lam * conf_INS(x, y) + (1 - lam) * conf_FL(x, y) with
    conf_INS = sum_{i in N_k(x)} sim(x, i) s_iy / sum_{i in N_k(x)} sim(x, i)
    (``s`` is the training label matrix, or the second-order scores for LCIF2) and
    conf_FL = sum_j x_j sim(f_j, y) / sum_j x_j over all non-zero features j, for the
    labels y in the k_feat-neighbourhood of at least one of them (0 for the others)
    with ``votes == VOTES_ALL``; with ``VOTES_NEIGHBOURS`` only the features whose
    neighbourhood holds y add to the numerator; with ``VOTES_MEAN`` to the numerator and
    the denominator (the x-weighted mean similarity of the features voting for y).
    Candidates are the labels of the neighbours and of the features' neighbourhoods;
    an entry is stored only when its score is positive. Rows have sorted indices.
    """
    n_q = nbr_idx.shape[0]
    counts = np.zeros(n_q + 1, dtype=np.int64)
    chunk = (n_q + n_chunks - 1) // n_chunks
    # pass 1: the number of positive-scored candidates per query
    for c in prange(n_chunks):
        start = c * chunk
        stop = min(n_q, start + chunk)
        if start >= stop:
            continue
        acc_ins = np.zeros(n_labels, dtype=np.float64)
        acc_fl = np.zeros(n_labels, dtype=np.float64)
        den_fl = np.zeros(n_labels, dtype=np.float64)
        seen = np.zeros(n_labels, dtype=np.uint8)
        touched = np.empty(n_labels, dtype=np.int32)
        cand = np.empty(n_labels, dtype=np.int32)
        for i in range(start, stop):
            nt, wsum, xsum = _score_row(i, nbr_idx, nbr_sim, k_ins, s_indptr, s_indices,
                                        s_data, q_indptr, q_indices, q_data, fl_idx,
                                        fl_sim, k_feat, votes, f_indptr, f_indices,
                                        f_data, lam, acc_ins, acc_fl, den_fl, seen,
                                        touched, cand)
            m = 0
            for q in range(nt):
                lab = touched[q]
                v = 0.0
                if wsum > 0.0:
                    v += lam * (acc_ins[lab] / wsum)
                v += (1.0 - lam) * _fl_value(acc_fl[lab], den_fl[lab], xsum, votes)
                if v > 0.0:
                    m += 1
                acc_ins[lab] = 0.0
                acc_fl[lab] = 0.0
                den_fl[lab] = 0.0
                seen[lab] = 0
            counts[i + 1] = m
    indptr = np.cumsum(counts)
    indices = np.empty(indptr[n_q], dtype=np.int32)
    data = np.empty(indptr[n_q], dtype=np.float64)
    # pass 2: fill
    for c in prange(n_chunks):
        start = c * chunk
        stop = min(n_q, start + chunk)
        if start >= stop:
            continue
        acc_ins = np.zeros(n_labels, dtype=np.float64)
        acc_fl = np.zeros(n_labels, dtype=np.float64)
        den_fl = np.zeros(n_labels, dtype=np.float64)
        seen = np.zeros(n_labels, dtype=np.uint8)
        touched = np.empty(n_labels, dtype=np.int32)
        cand = np.empty(n_labels, dtype=np.int32)
        for i in range(start, stop):
            nt, wsum, xsum = _score_row(i, nbr_idx, nbr_sim, k_ins, s_indptr, s_indices,
                                        s_data, q_indptr, q_indices, q_data, fl_idx,
                                        fl_sim, k_feat, votes, f_indptr, f_indices,
                                        f_data, lam, acc_ins, acc_fl, den_fl, seen,
                                        touched, cand)
            labs = np.sort(touched[:nt])
            pos = indptr[i]
            for q in range(nt):
                lab = labs[q]
                v = 0.0
                if wsum > 0.0:
                    v += lam * (acc_ins[lab] / wsum)
                v += (1.0 - lam) * _fl_value(acc_fl[lab], den_fl[lab], xsum, votes)
                if v > 0.0:
                    indices[pos] = lab
                    data[pos] = v
                    pos += 1
                acc_ins[lab] = 0.0
                acc_fl[lab] = 0.0
                den_fl[lab] = 0.0
                seen[lab] = 0
    return indptr, indices, data


@kernel(parallel=True)
def filter_neighbours(idx, sim, drop, k):
    """Keep, in order, the first k neighbours of each row whose index is not marked in
    ``drop`` (uint8 per training row). Returns the filtered lists and, per row, whether
    the result may be incomplete (the source list was full and ran out)."""
    n, kk = idx.shape
    out_i = np.full((n, k), -1, dtype=np.int32)
    out_s = np.zeros((n, k), dtype=np.float64)
    short = np.zeros(n, dtype=np.uint8)
    for i in prange(n):
        m = 0
        for q in range(kk):
            r = idx[i, q]
            if r < 0:
                break
            if drop[r]:
                continue
            out_i[i, m] = r
            out_s[i, m] = sim[i, q]
            m += 1
            if m == k:
                break
        if m < k and idx[i, kk - 1] >= 0:
            short[i] = 1
    return out_i, out_s, short


@kernel
def _bucket(s, T):
    """Largest m with T[m] <= s (T ascending, T[0] = 0); -1 when s < T[0]."""
    nT = T.shape[0]
    m = int(s * (nT - 1))
    if m > nT - 1:
        m = nT - 1
    if m < 0:
        m = 0
    while m + 1 < nT and T[m + 1] <= s:
        m += 1
    while m >= 0 and T[m] > s:
        m -= 1
    return m


@kernel
def _cardinality_threshold(A, B, lam, is_val, T, coarse, fine, target, top_label):
    """Replicates ``mlw.thresholds.CardinalityMatching`` (two-pass search, top-label
    rule) on the training rows of lam*A + (1-lam)*B; returns the index of T chosen."""
    n, L = A.shape
    nT = T.shape[0]
    hist = np.zeros(nT, dtype=np.int64)
    top = np.zeros(nT, dtype=np.int64)
    n_tr = 0
    for i in range(n):
        if is_val[i]:
            continue
        n_tr += 1
        rmax = -1.0
        for j in range(L):
            s = lam * A[i, j] + (1.0 - lam) * B[i, j]
            if s > rmax:
                rmax = s
            if s > 0.0:  # as the core: only positive scores are ever predicted
                hist[_bucket(s, T)] += 1
        if rmax > 0.0:
            top[_bucket(rmax, T)] += 1
    # count_ge[m] = #entries >= T[m]; below[m] = #rows with 0 < rowmax < T[m]
    count_ge = np.zeros(nT, dtype=np.int64)
    acc = 0
    for m in range(nT - 1, -1, -1):
        acc += hist[m]
        count_ge[m] = acc
    below = np.zeros(nT, dtype=np.int64)
    acc = 0
    for m in range(nT):
        below[m] = acc
        acc += top[m]
    best_m = coarse[0]
    best_v = -np.inf
    for c in range(coarse.shape[0]):
        m = coarse[c]
        cnt = count_ge[m] + (below[m] if top_label else 0)
        v = -abs(cnt / n_tr - target)
        if v > best_v:
            best_v = v
            best_m = m
    t2 = best_m
    v2 = -np.inf
    for c in range(fine.shape[1]):
        m = fine[best_m, c]
        if m < 0:
            continue
        cnt = count_ge[m] + (below[m] if top_label else 0)
        v = -abs(cnt / n_tr - target)
        if v > v2:
            v2 = v
            t2 = m
    return t2 if v2 > best_v else best_m


@kernel
def _metrics_on_validation(A, B, lam, is_val, Y, t, top_label, out):
    """All selection metrics of the thresholded validation rows, written into ``out``:
    0 accuracy, 1 f1_example, 2 f1_micro, 3 f1_macro, 4 -hamming_loss,
    5 subset_accuracy (larger is better for all). Zero denominators follow
    mlw.evaluate: 1 where the prediction is perfect (nothing true, nothing predicted)."""
    n, L = A.shape
    tp_l = np.zeros(L, dtype=np.int64)
    fp_l = np.zeros(L, dtype=np.int64)
    fn_l = np.zeros(L, dtype=np.int64)
    pred = np.zeros(L, dtype=np.uint8)
    acc_sum = 0.0
    f1_sum = 0.0
    sub_sum = 0.0
    n_val = 0
    for i in range(n):
        if not is_val[i]:
            continue
        n_val += 1
        npred = 0
        rmax = -1.0
        jmax = 0
        for j in range(L):
            s = lam * A[i, j] + (1.0 - lam) * B[i, j]
            if s > rmax:
                rmax = s
                jmax = j
            if s >= t and s > 0.0:
                pred[j] = 1
                npred += 1
            else:
                pred[j] = 0
        if top_label and npred == 0 and rmax > 0.0:
            pred[jmax] = 1
            npred = 1
        tp = 0
        ntrue = 0
        for j in range(L):
            y = Y[i, j]
            ntrue += y
            if pred[j] and y:
                tp += 1
                tp_l[j] += 1
            elif pred[j]:
                fp_l[j] += 1
            elif y:
                fn_l[j] += 1
        union = npred + ntrue - tp
        acc_sum += 1.0 if union == 0 else tp / union
        den = npred + ntrue
        f1_sum += 1.0 if den == 0 else 2.0 * tp / den
        sub_sum += 1.0 if (tp == npred and tp == ntrue) else 0.0
    if n_val == 0:
        return
    TP = 0
    FP = 0
    FN = 0
    mac = 0.0
    for j in range(L):
        TP += tp_l[j]
        FP += fp_l[j]
        FN += fn_l[j]
        den = 2 * tp_l[j] + fp_l[j] + fn_l[j]
        mac += 1.0 if den == 0 else 2.0 * tp_l[j] / den
    out[0] = acc_sum / n_val
    out[1] = f1_sum / n_val
    den = 2 * TP + FP + FN
    out[2] = 1.0 if den == 0 else 2.0 * TP / den
    out[3] = mac / L
    out[4] = -(FP + FN) / (n_val * L)
    out[5] = sub_sum / n_val


@kernel(parallel=True)
def grid_evaluate(A, B, lams, is_val, Y, T, coarse, fine, target, top_label):
    """Score every (k_ins, k_feat, lambda) of one fold: A (n_k, n, L) instance
    confidences, B (n_kf, n, L) feature confidences of all rows (training rows scored
    without themselves, validation rows against the training rows only). The threshold
    is fitted by cardinality matching on the training rows; the metrics (see
    ``_metrics_on_validation``) are computed on the validation rows.
    Returns (n_k, n_kf, n_lam, 6)."""
    na = A.shape[0]
    nb = B.shape[0]
    nl = lams.shape[0]
    out = np.zeros((na, nb, nl, 6), dtype=np.float64)
    for ab in prange(na * nb):
        a = ab // nb
        b = ab % nb
        for q in range(nl):
            lam = lams[q]
            if (lam == 1.0 and b > 0) or (lam == 0.0 and a > 0):
                continue  # the other part has no weight: same as (a, 0) / (0, b)
            m = _cardinality_threshold(A[a], B[b], lam, is_val, T, coarse, fine, target,
                                       top_label)
            _metrics_on_validation(A[a], B[b], lam, is_val, Y, T[m], top_label,
                                   out[a, b, q])
    for a in range(na):
        for b in range(nb):
            for q in range(nl):
                if lams[q] == 1.0 and b > 0:
                    out[a, b, q] = out[a, 0, q]
                elif lams[q] == 0.0 and a > 0:
                    out[a, b, q] = out[0, b, q]
    return out
