"""Registers the learners ``mc`` (mixture of CTBNs) and ``ctbn`` (one CTBN) with mlw."""

from __future__ import annotations

from collections.abc import Callable

import mlw
from mlw.registry import TOP_LABEL_DOC

_COMMON = {
    "C": "inverse L2 strength of every logistic-regression factor (max-abs scaled "
         "features); None: chosen from Cs by internal validation log-likelihood",
    "Cs": "grid of C values searched when C is None (from the CLI: Cs=0.1,1,10)",
    "validation_fraction": "share of the training data held out to choose C (and, for "
                           "mc, to stop the growth, Sec. 5.3.2)",
    "holdout_fraction": "share of the (weighted) training data that scores the edges of "
                        "the structure search (Sec. 5.3.1)",
    "random_state": "seed of the splits, the CV folds and the annealing",
    "top_label": TOP_LABEL_DOC,
    "factor": "how the parent enters P(y_i | x, y_parent): switching (one regression "
              "on x per parent value, as the authors' code) or feature (one logistic "
              "regression on x and the parent's value)",
}


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
        param_docs={
            **_COMMON,
            "max_trees": "upper bound on the trees grown",
            "n_trees": "grow exactly this many trees; None: stop when the internal "
                       "validation log-likelihood gets worse (Sec. 5.3.2)",
            "em_max_iter": "M-steps per EM run at most",
            "em_tol": "EM stops when the penalised log-likelihood improves by less than "
                      "this (relative)",
            "n_anneal_iter": "sweeps of simulated annealing for the MAP (0: best tree MAP)",
            "anneal_t_start": "annealing temperature of the first sweep",
            "anneal_t_end": "annealing temperature of the last sweep",
            "keep_path": "keep the mixture after each tree of the growth (staged_models)",
            "patience": "growth stops after this many trees in a row below the best "
                        "validation log-likelihood; the best mixture is kept (1: the "
                        "paper's stop at the first worse tree)",
            "em_weights": "M-step instance weights: gamma (MAP-EM, monotone), normalised "
                          "(Eq. 10 literally: each tree regularised as one of all the "
                          "data) or auto (grow both, keep the better on validation)",
        },
    ))
    register(mlw.LearnerSpec(
        model_types=_MODEL_TYPES,
        name="ctbn",
        factory="mlw_mctbn.model:CTBN",
        description="One conditional tree-structured Bayesian network (Batal et al. 2013): "
                    "maximum-branching structure, exact MAP and marginals",
        param_docs=dict(_COMMON),
    ))
