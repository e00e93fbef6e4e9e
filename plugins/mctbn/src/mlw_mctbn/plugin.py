"""Registers the learners ``mc`` (mixture of CTBNs) and ``ctbn`` (one CTBN) with mlw.

Each learner's parameters are documented in its class docstring, where ``mlw learners
NAME`` reads them.
"""

from __future__ import annotations

from collections.abc import Callable

import mlw

#: The model state of the CTBN learners besides their classes (``LearnerSpec.model_types``).
_MODEL_TYPES = ("mlw_mctbn._learning:EMTrace",)


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="mc",
        factory="mlw_mctbn.model:MixtureOfCTBNs",
        description="Mixture of conditional tree-structured Bayesian networks (Hong et al. "
                    "2014): EM, boosting-like tree growth, annealed MAP, exact marginals",
    ))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="ctbn",
        factory="mlw_mctbn.model:CTBN",
        description="One conditional tree-structured Bayesian network (Batal et al. 2013): "
                    "maximum-branching structure, exact MAP and marginals",
    ))
