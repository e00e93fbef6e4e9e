"""The loss kernels and the loss-augmented argmax oracles against their definitions,
brute-force enumeration of all 2^L label vectors, and Algorithm 2 as printed."""

from __future__ import annotations

import naive_ssvm as naive
import numpy as np
import pytest

import mlw
from mlw_ssvm import _kernels as K

CODES = [K.LOSS_HAMMING, K.LOSS_SUBSET, K.LOSS_FBETA, K.LOSS_JACCARD, K.LOSS_PRECISION,
         K.LOSS_RECALL]
BETA2 = [1.0, 0.25, 4.0, 0.0]


def _cases(seed: int, count: int, max_labels: int):
    """Random scores on several scales (|s| around the loss steps matters) and label
    vectors, with the empty and the full vector included."""
    rng = np.random.default_rng(seed)
    for t in range(count):
        L = int(rng.integers(1, max_labels + 1))
        scale = [0.05, 0.3, 1.0, 3.0][t % 4]
        s = rng.normal(scale=scale, size=L)
        if t % 7 == 0:
            y = np.zeros(L, np.uint8)
        elif t % 7 == 1:
            y = np.ones(L, np.uint8)
        else:
            y = (rng.random(L) < rng.uniform(0.1, 0.7)).astype(np.uint8)
        yield s, y


def test_kernel_losses_match_definitions():
    rng = np.random.default_rng(0)
    for _ in range(300):
        L = int(rng.integers(1, 9))
        y = (rng.random(L) < 0.4).astype(np.uint8)
        yb = (rng.random(L) < 0.4).astype(np.uint8)
        for code in CODES:
            for beta2 in BETA2:
                assert K.row_loss(code, beta2, y, yb) == pytest.approx(
                    naive.loss(code, beta2, y, yb), abs=1e-12)


def test_losses_agree_with_mlw_metrics():
    """1 - f1_example, 1 - accuracy (Jaccard), 1 - precision/recall_example, the
    Hamming count and 1 - subset accuracy: the same empty-set conventions as mlw."""
    rng = np.random.default_rng(1)
    Y = (rng.random((200, 6)) < 0.3).astype(np.uint8)
    P = (rng.random((200, 6)) < 0.3).astype(np.uint8)
    Y[:5] = 0
    P[:3] = 0  # empty/empty, empty/non-empty and non-empty/empty rows
    m = mlw.evaluate(Y, P)
    mean = {c: K.losses(c, 1.0, Y, P).mean() for c in CODES}
    assert mean[K.LOSS_FBETA] == pytest.approx(1 - m["f1_example"])
    assert mean[K.LOSS_JACCARD] == pytest.approx(1 - m["accuracy"])
    assert mean[K.LOSS_PRECISION] == pytest.approx(1 - m["precision_example"])
    assert mean[K.LOSS_RECALL] == pytest.approx(1 - m["recall_example"])
    assert mean[K.LOSS_SUBSET] == pytest.approx(1 - m["subset_accuracy"])
    assert mean[K.LOSS_HAMMING] / 6 == pytest.approx(m["hamming_loss"])


@pytest.mark.parametrize("code", CODES)
def test_oracles_reach_the_brute_force_maximum(code):
    for t, (s, y) in enumerate(_cases(10 + code, 60, 10)):
        beta2 = BETA2[t % len(BETA2)]
        Ybar, lo = K.most_violated(code, beta2, s[None, :], y[None, :])
        best = naive.brute_force(code, beta2, s, y)
        got = naive.value(code, beta2, s, y, Ybar[0])
        assert got == pytest.approx(best, abs=1e-9), (code, s, y, Ybar[0])
        assert lo[0] == pytest.approx(naive.loss(code, beta2, y, Ybar[0]), abs=1e-12)


@pytest.mark.parametrize("code", CODES)
def test_contingency_oracle_equals_algorithm2_as_printed(code):
    """The bisection over false positives finds what the paper's double loop finds,
    also for L beyond brute force (and for Hamming and 0/1 loss, whose dedicated
    oracles are cross-checked the same way)."""
    for t, (s, y) in enumerate(_cases(30 + code, 40, 24)):
        beta2 = BETA2[t % len(BETA2)]
        Ybar, lo = K.most_violated_contingency(code, beta2, s[None, :], y[None, :])
        best, _ = naive.algorithm2(code, beta2, s, y)
        assert naive.value(code, beta2, s, y, Ybar[0]) == pytest.approx(best, abs=1e-9)
        Yd, _ = K.most_violated(code, beta2, s[None, :], y[None, :])
        assert naive.value(code, beta2, s, y, Yd[0]) == pytest.approx(best, abs=1e-9)


def test_hamming_oracle_is_per_label():
    s = np.array([[2.0, 0.5, -0.5, -2.0, 0.5, -0.5]])
    y = np.array([[1, 1, 1, 0, 0, 0]], np.uint8)
    Ybar, lo = K.most_violated(K.LOSS_HAMMING, 1.0, s, y)
    # y=1: keep iff s > 1; y=0: switch on iff s > -1
    assert Ybar.tolist() == [[1, 0, 0, 0, 1, 1]]
    assert lo[0] == 4.0


def test_subset_oracle_flips_the_least_influential_label():
    y = np.array([[1, 0, 1]], np.uint8)
    Ybar, lo = K.most_violated(K.LOSS_SUBSET, 1.0, np.array([[2.0, -0.3, 5.0]]), y)
    assert Ybar.tolist() == [[1, 1, 1]] and lo[0] == 1.0
    # all margins beyond 1: y itself is the answer (loss 0)
    Ybar, lo = K.most_violated(K.LOSS_SUBSET, 1.0, np.array([[2.0, -1.5, 5.0]]), y)
    assert Ybar.tolist() == [[1, 0, 1]] and lo[0] == 0.0
    # the thresholded vector differs from y: it is the answer
    Ybar, lo = K.most_violated(K.LOSS_SUBSET, 1.0, np.array([[-2.0, -1.5, 5.0]]), y)
    assert Ybar.tolist() == [[0, 0, 1]] and lo[0] == 1.0
