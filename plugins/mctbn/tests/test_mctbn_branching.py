"""The maximum branching against networkx's maximum_spanning_arborescence."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from naive_mctbn import branching_score

from mlw_mctbn import _kernels


def networkx_best(W: np.ndarray) -> float:
    """Maximum spanning arborescence of the complete graph plus a virtual root ``d``
    with edges ``d -> i`` of weight ``W[i, i]`` (the root has no incoming edge, so it
    is the arborescence's root)."""
    d = W.shape[0]
    G = nx.DiGraph()
    for i in range(d):
        G.add_edge(d, i, weight=W[i, i])
        for j in range(d):
            if j != i:
                G.add_edge(j, i, weight=W[j, i])
    T = nx.maximum_spanning_arborescence(G, attr="weight", preserve_attrs=True)
    return float(sum(data["weight"] for _, _, data in T.edges(data=True)))


@pytest.mark.parametrize("d", [2, 3, 7, 14, 30])
def test_max_branching_equals_networkx_on_random_graphs(d):
    rng = np.random.default_rng(100 + d)
    for trial in range(4):
        # log-likelihood-like weights: negative, self-loops often the worst
        W = -rng.gamma(2.0, 10.0, size=(d, d))
        if trial % 2:
            W += rng.normal(scale=50.0, size=(d, d))
        parent = _kernels.max_branching(W)
        assert branching_score(W, parent) == pytest.approx(networkx_best(W), rel=1e-12)
        assert np.all((parent >= -1) & (parent < d)) and np.all(parent != np.arange(d))


def test_max_branching_keeps_forbidden_edges_out():
    d = 5
    W = np.random.default_rng(0).normal(size=(d, d))
    W[:, 2] = -1e300          # nothing may point into label 2
    W[2, 2] = -3.0            # ... except the root edge
    W[3, :] = -1e300          # label 3 is nobody's parent
    W[3, 3] = 0.0
    parent = _kernels.max_branching(W)
    assert parent[2] == -1 and 3 not in parent.tolist()
