"""The booster and the chain grow the pinned reference trees (``reference_fits.py``):
speed changes of a round must not change what XDCC computes."""

from __future__ import annotations

import numpy as np
import pytest
import reference_fits as ref


@pytest.fixture(scope="module")
def reference():
    with np.load(ref.REFERENCE) as z:
        return {k: z[k] for k in z.files}


@pytest.fixture(scope="module")
def data_cache():
    return {}


@pytest.mark.parametrize("case", list(ref.CASES))
def test_same_trees_and_scores_as_the_reference(case, reference, mulan_dir, data_cache):
    got = ref.fit_case(case, mulan_dir, data_cache)
    want_p = reference[f"{case}/proba"]
    assert got["proba"].shape == want_p.shape
    np.testing.assert_allclose(got["proba"], want_p, rtol=0, atol=1e-12)
    assert bytes(got["structure"]) == bytes(reference[f"{case}/structure"]), (
        f"{case}: the trees' structure (features, thresholds, default sides, children) "
        f"differs from the reference")


def test_reference_covers_every_case(reference):
    assert {k.split("/")[0] for k in reference} == set(ref.CASES)
