"""The random feature subsets of forest trees: a splitmix64 stream and a partial
Fisher-Yates shuffle, so the numba builder and the Python reference builder draw the
same features from the same seed."""

from __future__ import annotations

import numpy as np

from mlw.jit import kernel

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@kernel
def next_u64(state):
    """The next 64-bit number of the splitmix64 stream whose state is ``state[0]``."""
    state[0] += _GAMMA
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@kernel
def draw_features(state, perm, k, out):
    """``out[:k]``: ``k`` distinct features of ``perm.size`` drawn uniformly, ascending.
    ``perm`` is a permutation of ``0..d-1`` kept between draws (any permutation is a valid
    start for the partial shuffle)."""
    d = perm.size
    for i in range(k):
        j = i + np.int64(next_u64(state) % np.uint64(d - i))
        tmp = perm[i]
        perm[i] = perm[j]
        perm[j] = tmp
    # ascending without a sort (one kernel fewer to compile): mark, then scan
    drawn = np.empty(d, np.bool_)
    for f in range(d):
        drawn[f] = False
    for i in range(k):
        drawn[perm[i]] = True
    m = 0
    for f in range(d):
        if drawn[f]:
            out[m] = f
            m += 1
