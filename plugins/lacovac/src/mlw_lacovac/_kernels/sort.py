"""The two sorts of the tree builder, each one kernel compiled once (float64 keys, int64
positions), in place of numpy's sorts in numba, which compile five to seven helper
kernels per dtype and kind (10 CPU seconds of a first fit went to them).

- :func:`argsort_quick` returns exactly what ``np.argsort(keys[:n])`` returns in numba (its
  quicksort, ties in the same order, NaN last), so trees do not change;
- :func:`argsort_stable` is ``np.argsort(keys[:n], kind="stable")`` (ties by position).
"""

from __future__ import annotations

import numpy as np

from mlw.jit import kernel

#: numba's quicksort: insertion sort below this many keys, at most this deep a stack
_SMALL = 15
_MAX_STACK = 100


@kernel
def _lt(a, b):
    """``a < b`` with NaN above every number (numpy's order)."""
    return a < b or (np.isnan(b) and not np.isnan(a))


@kernel
def argsort_quick(keys, n, order):
    """``order[:n]`` = ``np.argsort(keys[:n])`` as numba computes it: the same quicksort
    (median-of-three pivot, insertion sort below 15 keys, the larger part stacked), so
    equal keys come out in the same order."""
    for i in range(n):
        order[i] = i
    if n < 2:
        return
    st_lo = np.empty(_MAX_STACK, np.int64)
    st_hi = np.empty(_MAX_STACK, np.int64)
    st_lo[0] = 0
    st_hi[0] = n - 1
    top = 1
    while top > 0:
        top -= 1
        low = st_lo[top]
        high = st_hi[top]
        while high - low >= _SMALL:
            # partition order[low:high + 1] around the median of three
            mid = (low + high) >> 1
            if _lt(keys[order[mid]], keys[order[low]]):
                order[low], order[mid] = order[mid], order[low]
            if _lt(keys[order[high]], keys[order[mid]]):
                order[high], order[mid] = order[mid], order[high]
            if _lt(keys[order[mid]], keys[order[low]]):
                order[low], order[mid] = order[mid], order[low]
            pivot = keys[order[mid]]
            order[high], order[mid] = order[mid], order[high]
            i = low
            j = high - 1
            while True:
                while i < high and _lt(keys[order[i]], pivot):
                    i += 1
                while j >= low and _lt(pivot, keys[order[j]]):
                    j -= 1
                if i >= j:
                    break
                order[i], order[j] = order[j], order[i]
                i += 1
                j -= 1
            order[i], order[high] = order[high], order[i]
            if high - i > i - low:
                if high > i:
                    st_lo[top] = i + 1
                    st_hi[top] = high
                    top += 1
                high = i - 1
            else:
                if i > low:
                    st_lo[top] = low
                    st_hi[top] = i - 1
                    top += 1
                low = i + 1
        for i in range(low + 1, high + 1):
            k = order[i]
            v = keys[k]
            j = i
            while j > low and _lt(v, keys[order[j - 1]]):
                order[j] = order[j - 1]
                j -= 1
            order[j] = k


@kernel
def argsort_stable(keys, n, order):
    """``order[:n]`` = ``np.argsort(keys[:n], kind="stable")``: a merge sort of runs of
    16 sorted by insertion; equal keys keep their positions' order."""
    for i in range(n):
        order[i] = i
    run = 16
    for a in range(0, n, run):
        b = min(a + run, n)
        for i in range(a + 1, b):
            k = order[i]
            v = keys[k]
            j = i
            while j > a and _lt(v, keys[order[j - 1]]):
                order[j] = order[j - 1]
                j -= 1
            order[j] = k
    if n <= run:
        return
    src = order
    dst = np.empty(n, np.int64)
    swapped = False
    width = run
    while width < n:
        for a in range(0, n, 2 * width):
            m = min(a + width, n)
            b = min(a + 2 * width, n)
            i = a
            j = m
            for t in range(a, b):
                # the left run wins ties: stable
                if j >= b or (i < m and not _lt(keys[src[j]], keys[src[i]])):
                    dst[t] = src[i]
                    i += 1
                else:
                    dst[t] = src[j]
                    j += 1
        src, dst = dst, src
        swapped = not swapped
        width *= 2
    if swapped:
        for i in range(n):
            order[i] = src[i]
