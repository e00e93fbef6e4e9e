"""The synthetic generator of Section 6.1: determinism (pinned by a checksum), the
cardinality target, the splits and the two kinds of noise."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import mlw
from mlw_ssvm import generate_synthetic
from mlw_ssvm.synthetic import MAX_SHARE, MIN_SHARE


def _digest(sets) -> str:
    h = hashlib.sha256()
    for s in ("train", "validation", "test"):
        h.update(np.ascontiguousarray(sets[s].X, "<f8").tobytes())
        h.update(np.ascontiguousarray(sets[s].Y, "u1").tobytes())
    return h.hexdigest()


def test_same_seed_same_data_on_any_machine():
    """Integer arithmetic on PCG64's raw stream only: this checksum must hold on every
    platform and numpy version (a change here changes every published result)."""
    sets = generate_synthetic(seed=1, labels=10, cardinality=2.5, noise="swap:0.2")
    assert _digest(sets) == "42db9c88ac5bd0a7a50d3efa40283268e8009bd9e220344da9b6e607e0e27b13"
    assert _digest(generate_synthetic(seed=1, labels=10, cardinality=2.5,
                                      noise="swap:0.2")) == _digest(sets)
    assert _digest(generate_synthetic(seed=2, labels=10, cardinality=2.5,
                                      noise="swap:0.2")) != _digest(sets)


@pytest.mark.parametrize("L, card", [(10, 1.8), (10, 4.0), (25, 3.1), (50, 2.5), (50, 4.3)])
def test_training_set_meets_the_cardinality_and_density_targets(L, card):
    sets = generate_synthetic(seed=L, labels=L, cardinality=card)
    tr = sets["train"]
    assert tr.X.shape == (400, 25) and tr.Y.shape == (400, L)
    assert sets["validation"].n_instances == 400 and sets["test"].n_instances == 600
    assert tr.cardinality == round(card * 400) / 400
    assert tr.density == pytest.approx(tr.cardinality / L)
    counts = tr.Y.sum(axis=0)
    assert counts.min() >= np.ceil(400 * MIN_SHARE) and counts.max() <= 400 * MAX_SHARE
    assert ((tr.X > 0) & (tr.X < 1)).all()
    # validation and test come from the same hyperplanes: similar cardinality
    for s in ("validation", "test"):
        assert abs(sets[s].cardinality - tr.cardinality) < 0.35 * card


def test_noise_touches_train_and_validation_only():
    clean = generate_synthetic(seed=5, labels=25, cardinality=3.0)
    for noise in ("bernoulli:0.05", "swap:0.3"):
        noisy = generate_synthetic(seed=5, labels=25, cardinality=3.0, noise=noise)
        for s in ("train", "validation", "test"):
            assert np.array_equal(noisy[s].X, clean[s].X)
        assert np.array_equal(noisy["test"].Y, clean["test"].Y)
        for s in ("train", "validation"):
            assert not np.array_equal(noisy[s].Y, clean[s].Y)
            assert noisy[s].provenance["noise"]["kind"] == noise.split(":")[0]


def test_bernoulli_flips_each_label_with_probability_pr():
    clean = generate_synthetic(seed=3, labels=50, cardinality=3.0)["train"].Y
    noisy = generate_synthetic(seed=3, labels=50, cardinality=3.0,
                               noise="bernoulli:0.09")["train"].Y
    rate = (clean != noisy).mean()  # 20,000 labels: sd of the rate is 0.002
    assert 0.08 < rate < 0.10
    # a larger level flips a superset of the entries a smaller level flips
    less = generate_synthetic(seed=3, labels=50, cardinality=3.0,
                              noise="bernoulli:0.03")["train"].Y
    assert np.all((clean != less) <= (clean != noisy))


def test_swap_keeps_each_instance_cardinality():
    clean = generate_synthetic(seed=4, labels=10, cardinality=3.0)["train"].Y
    noisy = generate_synthetic(seed=4, labels=10, cardinality=3.0,
                               noise="swap:0.4")["train"].Y
    assert np.array_equal(clean.sum(axis=1), noisy.sum(axis=1))
    changed = (clean != noisy).any(axis=1)
    assert 0.33 < changed.mean() < 0.47  # 400 instances, pr = 0.4 (minus full/empty rows)
    assert set((clean != noisy)[changed].sum(axis=1)) == {2}  # one 0 and one 1 swapped


def test_generate_dataset_api_and_parameter_checks():
    sets = mlw.generate_dataset("synthetic", seed=7, labels=10, cardinality=2.0,
                                n_train=50, n_validation=20, n_test=30, features=4)
    assert set(sets) == {"train", "validation", "test"}
    assert sets["train"].X.shape == (50, 4) and sets["test"].Y.shape == (30, 10)
    assert "generator" in sets["train"].provenance
    with pytest.raises(ValueError, match="cannot be met"):
        generate_synthetic(labels=3, cardinality=3.0)
    with pytest.raises(ValueError, match="noise must be"):
        generate_synthetic(noise="gaussian:0.1")
    with pytest.raises(ValueError, match="noise must be"):
        generate_synthetic(noise="swap:1.5")
    with pytest.raises(ValueError, match="labels must be an integer"):
        generate_synthetic(labels=2.5)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        generate_synthetic(seed=-1)
