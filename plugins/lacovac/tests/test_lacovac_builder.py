"""The one-call numba tree builder against the Python reference builder, node for node,
on the shared real datasets: same structure, splits, thresholds, criterion
values, label blocks and leaf distributions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import mlw
from mlw_lacovac._reference import ReferenceTreeBuilder
from mlw_lacovac._tree import TreeBuilder, child_sizes

# (dataset, rows used: None = the whole training file); the large sets are cut so the
# slow reference builder stays within a few seconds
SETS = [("flags", None), ("emotions", None), ("yeast", None), ("scene", None),
        ("genbase", None), ("medical", 700), ("enron", 600), ("bibtex", 900),
        ("slashdot", 700)]


@pytest.fixture(scope="module")
def data(mulan_dir):
    out = {}
    for name, rows in SETS:
        path = mulan_dir / ("medical.arff" if name == "medical" else f"{name}-train.arff")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # genbase: the identifier attribute is dropped
            ds = mlw.load_dataset(path)
        X, Y = ds.X, sp.csr_matrix(ds.Y)
        if rows is not None:
            X, Y = X[:rows], Y[:rows]
        out[name] = (X, Y)
    return out


def _pair(method, X, **kw):
    sizes = child_sizes(X, kw.pop("min_child", 1), kw.pop("min_child_numeric", None), 5)
    fast = TreeBuilder(method, 5, sizes, **kw)
    ref = ReferenceTreeBuilder(method, 5, sizes, **kw)
    return fast, ref


@pytest.mark.parametrize("name", [s for s, _ in SETS])
@pytest.mark.parametrize("method", ["lacovac", "lacova", "ml_c45"])
def test_numba_builder_grows_the_reference_tree(data, name, method):
    X, Y = data[name]
    fast, ref = _pair(method, X, max_bins=64)
    a, b = fast.fit(X, Y), ref.fit(X, Y)
    assert a.n_nodes == b.n_nodes > 1
    assert a.same_as(b)


@pytest.mark.parametrize("name, kw", [
    ("emotions", dict(max_bins=None)),  # the paper's exact scan
    ("scene", dict(max_bins=None)),
    ("flags", dict(min_child=2, min_child_numeric=2)),
    ("genbase", dict(min_child=5)),
    ("yeast", dict(z=2.5)),
])
def test_variants_grow_the_reference_tree(data, name, kw):
    X, Y = data[name]
    fast, ref = _pair("lacovac", X, **kw)
    assert fast.fit(X, Y).same_as(ref.fit(X, Y))


@pytest.mark.parametrize("name", ["emotions", "medical", "enron"])
def test_forest_trees_draw_the_same_features_and_rows(data, name):
    """Random feature subsets per split (the same stream in both builders) and a
    bootstrap sample with repeated rows."""
    X, Y = data[name]
    rows = np.sort(np.random.default_rng(3).integers(0, X.shape[0], X.shape[0]))
    k = max(1, int(0.3 * X.shape[1]))
    fast, ref = _pair("lacovac", X, max_bins=64, max_features=k, seed=11)
    a, b = fast.fit(X, Y, rows=rows), ref.fit(X, Y, rows=rows)
    assert a.same_as(b)
    other = TreeBuilder("lacovac", 5, child_sizes(X, 1, None, 5), max_bins=64, max_features=k,
                        seed=12).fit(X, Y, rows=rows)
    assert not other.same_as(a)  # the seed matters
