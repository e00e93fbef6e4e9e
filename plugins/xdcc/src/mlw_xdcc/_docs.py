"""Documentation of the booster parameters, shared by every learner of the plugin.

Kept in a module of its own, with no imports, so that registering the plugin
(``plugin.py``) imports neither numba nor the estimators.
"""

BOOSTER_PARAM_DOCS = {
    "n_estimators": "boosting rounds (trees) per booster",
    "max_depth": "maximum tree depth",
    "learning_rate": "shrinkage eta applied to every leaf weight",
    "reg_lambda": "L2 regularisation lambda of the leaf weights (the paper's epsilon)",
    "gamma": "minimum split loss: splits gaining less are pruned bottom-up",
    "min_child_weight": "minimum hessian sum (over labels) in a child",
    "subsample": "fraction of training rows drawn (Bernoulli) for each tree",
    "colsample_bytree": "fraction of features drawn for each tree",
    "split": "split criterion of Table 1: sum_gain, max_gain, sum_weight, max_weight, "
             "sum_abs_g, max_abs_g",
    "max_bin": "maximum number of quantile bins per feature",
    "random_state": "seed of row/column subsampling (and of the CC label order)",
}
