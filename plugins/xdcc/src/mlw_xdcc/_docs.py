"""Documentation of every learner parameter, for the registrations in ``plugin.py``.

The booster parameters' documentation lives with their declaration
(:mod:`mlw_xdcc._params`); the learner-specific ones are here.  Neither module imports
numba or the estimators, so registering the plugin stays cheap.
"""

from mlw_xdcc._params import BOOSTER_PARAM_DOCS

__all__ = ["BOOSTER_PARAM_DOCS", "CC_DOCS", "JOINT_THRESHOLD_DOCS", "THRESHOLD_DOCS",
           "XDCC_DOCS"]

THRESHOLD_DOCS = {
    "threshold": "thresholding strategy applied to predict_proba (default: the core's "
                 "'cardinality:top_label=auto'; 'fixed' is the 0.5 cut)",
}

#: A chain's ``threshold``: its own decision or a strategy on its marginals (issue 19).
JOINT_THRESHOLD_DOCS = {
    "threshold": "None: the chain's own decision (the paper's); otherwise a thresholding "
                 "strategy applied to predict_proba (default: the core's "
                 "'cardinality:top_label=auto')",
}

XDCC_DOCS = {
    "chain_length": "rounds of the dynamic chain (default: ceil(label cardinality) + 1, "
                    "at most 2 and at most the number of labels)",
    "cumulated": "Eq. 9: non-propagated labels take the max over rounds (XDCC-cum); "
                 "False: they are negative (XDCC-std)",
    "label_features": "what a propagated label feeds later rounds: 'probability' (Eq. 8) "
                      "or 'binary' (its 0/1 value)",
    "extremes_over": "Eq. 8's most/least probable label among 'all' labels (as printed; "
                     "an instance may propagate nothing in a round) or the 'open' ones",
    "propagation": "training labels propagated with in_sample predictions (the paper's) "
                   "or out_of_fold ones (an extension)",
    "propagation_folds": "folds of out_of_fold propagation (default 5)",
}

CC_DOCS = {
    "order": "label order: None for random (random_state) or a permutation of range(L)",
}
