"""The synthetic multi-label generator of Díez et al., Section 6.1.

Inputs are uniform in [0, 1]^p (p = 25); each of the L labels is the positive side of a
hyperplane; the hyperplanes are chosen so that the noise-free training set has a target
cardinality (and so density = cardinality / L, Table 1); training, validation and test
sets of 400, 400 and 600 instances share the hyperplanes; noise (Bernoulli or Swap) is
added to the training and validation labels only, the test labels stay noise free.

Where the paper searches the hyperplanes with a genetic algorithm, this generator
meets the same targets by construction (a documented search replacing the GA):

1. a random normal vector per label (each coordinate an Irwin-Hall sum of four uniform
   integers, i.e. roughly Gaussian and centred, so directions are spread over the
   sphere);
2. how many of the n training instances each label covers: the total T =
   round(cardinality * n) is shared out in proportion to Dirichlet(2, ..., 2) weights
   (pairs of uniform spacings), each count kept within [max(1, ceil(n / 100)),
   floor(3 n / 4)] (a label on at least 1% and at most 75% of the training set) with the
   excess moved to the labels of largest weight;
3. each hyperplane's offset is placed halfway between the k-th and (k+1)-th largest
   training projections, k being the label's count, so the training set has exactly
   the target cardinality.

Noise (the paper's two procedures): ``bernoulli:pr`` flips every label of every
training and validation instance independently with probability pr; ``swap:pr`` swaps,
with probability pr per instance, one randomly chosen relevant label with one
randomly chosen irrelevant one (so cardinality is kept; an instance with no relevant or
no irrelevant label is left alone).

Reproducibility: the same seed and parameters give the same data on any machine and
any numpy version. Only PCG64's raw 64-bit output is used (numpy guarantees the streams
of its bit generators and of SeedSequence), features are multiples of 2^-21 and the
hyperplane projections are exact integer arithmetic, so no floating-point rounding can
move a point across a hyperplane. Each part draws from its own stream
(SeedSequence([seed, part])): the noisy versions of a dataset share its inputs, its
hyperplanes and its noise-free labels, as the paper's noisy datasets do, and larger
noise levels flip a superset of the entries that smaller ones flip.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mlw.dataset import Dataset

#: Features are (2u + 1) / 2^FEATURE_BITS for u uniform in [0, 2^(FEATURE_BITS - 1)).
FEATURE_BITS = 21
#: Each label covers at least max(1, ceil(n * MIN_SHARE)) training instances ...
MIN_SHARE = 0.01
#: ... and at most floor(n * MAX_SHARE).
MAX_SHARE = 0.75
_PARTS = {"structure": 0, "train": 1, "validation": 2, "test": 3,
          "noise_train": 4, "noise_validation": 5}
SPLITS = ("train", "validation", "test")


class _Stream:
    """Uniform draws from PCG64's raw output only (stable across numpy versions)."""

    def __init__(self, seed: int, part: str) -> None:
        self._bits = np.random.PCG64(np.random.SeedSequence([seed, _PARTS[part]]))

    def raw(self, shape: Any) -> np.ndarray:
        size = int(np.prod(shape))
        return self._bits.random_raw(size).astype(np.uint64).reshape(shape)

    def bits(self, shape: Any, k: int) -> np.ndarray:
        """Uniform integers in [0, 2^k) as int64 (k <= 32)."""
        return (self.raw(shape) >> np.uint64(64 - k)).astype(np.int64)

    def unit(self, shape: Any) -> np.ndarray:
        """Uniform doubles in [0, 1) with 53 random bits (exact conversion)."""
        return (self.raw(shape) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def _below(r: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Map uniform uint64 ``r`` to integers in [0, bound) (multiply-shift, bound < 2^32)."""
    hi = r >> np.uint64(32)
    return ((hi * bound.astype(np.uint64)) >> np.uint64(32)).astype(np.int64)


def parse_noise(noise: Any) -> tuple[str, float]:
    """``"none"``, ``"bernoulli:pr"`` or ``"swap:pr"`` as (kind, pr)."""
    if not isinstance(noise, str):
        raise ValueError(f"noise must be 'none', 'bernoulli:PR' or 'swap:PR', got {noise!r}")
    text = noise.strip().lower()
    if text in ("none", "", "bernoulli:0", "swap:0"):
        return "none", 0.0
    kind, _, level = text.partition(":")
    try:
        pr = float(level)
    except ValueError:
        pr = math.nan
    if kind not in ("bernoulli", "swap") or not 0.0 <= pr <= 1.0:
        raise ValueError(f"noise must be 'none', 'bernoulli:PR' or 'swap:PR' with PR in "
                         f"[0, 1], got {noise!r}")
    return kind, pr


def _int(name: str, value: Any, low: int) -> int:
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _float(name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if isinstance(value, bool) or not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def label_counts(stream: _Stream, n: int, L: int, total: int) -> np.ndarray:
    """How many training instances each label covers (step 2 of the module doc)."""
    low = max(1, math.ceil(n * MIN_SHARE))
    high = math.floor(n * MAX_SHARE)
    cuts = np.sort(stream.bits((2 * L - 1,), 32))
    edges = np.concatenate([[0], cuts, [1 << 32]])
    spacing = np.diff(edges)
    weight = spacing[0::2] + spacing[1::2]  # Dirichlet(2, ..., 2) in integers
    share = [total * int(w) for w in weight]  # exact: Python integers
    counts = np.array([s >> 32 for s in share], dtype=np.int64)
    remainder = np.array([s & ((1 << 32) - 1) for s in share], dtype=np.int64)
    for j in np.argsort(-remainder, kind="stable")[: total - int(counts.sum())]:
        counts[j] += 1
    counts = np.clip(counts, low, high)
    order = np.argsort(-weight, kind="stable")
    diff = total - int(counts.sum())
    while diff != 0:
        for j in order:
            if diff > 0 and counts[j] < high:
                counts[j] += 1
                diff -= 1
            elif diff < 0 and counts[j] > low:
                counts[j] -= 1
                diff += 1
            if diff == 0:
                break
    return counts


def _inputs(stream: _Stream, n: int, p: int) -> np.ndarray:
    """Odd integers 2u + 1 in [1, 2^FEATURE_BITS): x = value / 2^FEATURE_BITS."""
    return 2 * stream.bits((n, p), FEATURE_BITS - 1) + 1


def _bernoulli(stream: _Stream, Y: np.ndarray, pr: float) -> np.ndarray:
    flip = stream.unit(Y.shape) < pr
    return np.where(flip, 1 - Y, Y).astype(np.uint8)


def _swap(stream: _Stream, Y: np.ndarray, pr: float) -> np.ndarray:
    n, L = Y.shape
    draws = stream.raw((n, 3))
    coin = (draws[:, 0] >> np.uint64(11)).astype(np.float64) * 2.0 ** -53 < pr
    ones = Y.sum(axis=1).astype(np.int64)
    k1 = _below(draws[:, 1], np.maximum(ones, 1))
    k0 = _below(draws[:, 2], np.maximum(L - ones, 1))
    out = Y.copy()
    for i in np.flatnonzero(coin & (ones > 0) & (ones < L)):
        on = np.flatnonzero(Y[i])
        off = np.flatnonzero(Y[i] == 0)
        out[i, on[k1[i]]] = 0
        out[i, off[k0[i]]] = 1
    return out


def generate_synthetic(*, seed: int = 0, labels: int = 25, cardinality: float = 3.0,
                       features: int = 25, n_train: int = 400, n_validation: int = 400,
                       n_test: int = 600, noise: str = "none") -> dict[str, Dataset]:
    """Training, validation and test sets of the paper's synthetic generator.

    Parameters
    ----------
    seed : int
        Seed (>= 0); the same seed and parameters give the same data anywhere.
    labels : int
        L, the number of labels (the paper: 10, 25, 50).
    cardinality : float
        Target mean number of labels per training instance (the paper: 2 to 4); met
        exactly on the noise-free training set (round(cardinality * n_train) labels).
    features : int
        p, the number of inputs, uniform in [0, 1] (the paper: 25).
    n_train, n_validation, n_test : int
        Sizes of the three sets (the paper: 400, 400, 600).
    noise : str
        ``"none"``, ``"bernoulli:PR"`` or ``"swap:PR"``: label noise of the training and
        validation sets (the paper: Bernoulli 0.01 to 0.09, Swap 0.05 to 0.4).

    Returns
    -------
    dict
        ``{"train": Dataset, "validation": Dataset, "test": Dataset}``.

    Examples
    --------
    >>> from mlw_ssvm import generate_synthetic
    >>> sets = generate_synthetic(seed=1, labels=10, cardinality=2.5)
    >>> sets["train"].X.shape, sets["train"].Y.shape, sets["train"].cardinality
    ((400, 25), (400, 10), 2.5)
    """
    seed = _int("seed", seed, 0)
    L = _int("labels", labels, 1)
    p = _int("features", features, 1)
    if p > 1000:
        raise ValueError(f"features must be at most 1000 (exact integer projections), got {p}")
    n = _int("n_train", n_train, 2)
    sizes = {"train": n, "validation": _int("n_validation", n_validation, 1),
             "test": _int("n_test", n_test, 1)}
    card = _float("cardinality", cardinality)
    kind, pr = parse_noise(noise)
    total = round(card * n)
    low, high = max(1, math.ceil(n * MIN_SHARE)), math.floor(n * MAX_SHARE)
    if not L * low <= total <= L * high:
        raise ValueError(f"cardinality {card:g} cannot be met with {L} labels on {n} training "
                         f"instances: each label covers {low} to {high} instances, so the "
                         f"cardinality must lie in [{L * low / n:g}, {L * high / n:g}]")

    structure = _Stream(seed, "structure")
    A = structure.bits((4, p, L), 19).sum(axis=0) - 2 * (1 << 19)  # normals, int64
    counts = label_counts(structure, n, L, total)
    Xint = {s: _inputs(_Stream(seed, s), sizes[s], p) for s in SPLITS}
    proj = Xint["train"] @ A  # exact int64 (|value| < 2^21 * 2^21 * p)
    top = -np.sort(-proj, axis=0)
    thresh2 = top[counts - 1, np.arange(L)] + top[counts, np.arange(L)]  # 2 * offset

    params = {"labels": L, "cardinality": card, "features": p, "n_train": n,
              "n_validation": sizes["validation"], "n_test": sizes["test"], "noise": noise}
    tag = "none" if kind == "none" else f"{kind}{pr:g}"
    out: dict[str, Dataset] = {}
    for split in SPLITS:
        P = proj if split == "train" else Xint[split] @ A
        Y = (2 * P > thresh2).astype(np.uint8)
        clean_cardinality = float(Y.sum()) / Y.shape[0]
        if kind != "none" and split != "test":
            stream = _Stream(seed, f"noise_{split}")
            Y = _bernoulli(stream, Y, pr) if kind == "bernoulli" else _swap(stream, Y, pr)
        X = Xint[split].astype(np.float64) / float(1 << FEATURE_BITS)
        out[split] = Dataset(
            X, Y, [f"x{j + 1}" for j in range(p)], [f"label{j + 1}" for j in range(L)],
            name=f"synthetic-L{L}-c{card:g}-{tag}-s{seed}-{split}",
            provenance={"generator": "synthetic", "seed": seed, "params": dict(params),
                        "split": split, "noise": {"kind": kind, "pr": pr},
                        "noise_free_cardinality": clean_cardinality,
                        "paper": "Díez et al., Optimizing Different Loss Functions in "
                                 "Multilabel Classifications, Section 6.1"})
    return out
