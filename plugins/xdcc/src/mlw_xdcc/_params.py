"""The booster's hyper-parameters, declared once for every learner of the plugin.

:class:`BoosterParams` is a dataclass whose fields carry their defaults and whose
docstring documents them.  The estimators (``MLXGB``, ``BRXGB``, ``CCXGB``, ``XDCC``)
are dataclasses that inherit these fields and add their own, so each parameter's name,
default and documentation is written here only (mlw reads a learner's parameter
documentation from the docstrings along its class hierarchy); the generated
``__init__`` only stores the parameters (scikit-learn's convention) and has an explicit
keyword-only signature, which ``get_params``/``clone`` read.  ``fit`` validates them
with :meth:`BoosterParams.booster_params` (one :func:`mlw.validation.check_param` per
parameter).
"""

from __future__ import annotations

from dataclasses import dataclass

#: split criteria of the paper's Table 1, in kernel code order
SPLIT_CRITERIA = ("sum_gain", "max_gain", "sum_weight", "max_weight", "sum_abs_g", "max_abs_g")


@dataclass(kw_only=True, repr=False, eq=False)
class BoosterParams:
    """Hyper-parameters of one boosted ensemble (XGBoost's names and defaults).

    Parameters
    ----------
    n_estimators : int, default 100
        Boosting rounds (trees) per booster.
    max_depth : int, default 6
        Maximum tree depth (any non-negative integer; 0: one leaf).
    learning_rate : float, default 0.3
        Shrinkage eta applied to every leaf weight.
    reg_lambda : float, default 1.0
        L2 regularisation lambda of the leaf weights (the paper's epsilon).
    gamma : float, default 0.0
        Minimum split loss: splits gaining less are pruned bottom-up.
    min_child_weight : float, default 1.0
        Minimum hessian sum (over labels) in a child.
    subsample : float, default 1.0
        Fraction of training rows drawn (Bernoulli) for each tree.
    colsample_bytree : float, default 1.0
        Fraction of features drawn for each tree.
    split : str, default "sum_gain"
        Split criterion of Table 1: sum_gain, max_gain, sum_weight, max_weight,
        sum_abs_g, max_abs_g.
    max_bin : int, default 256
        Maximum number of quantile bins per feature.
    random_state : int, default 0
        Seed of row/column subsampling (and of the CC label order).

    Examples
    --------
    >>> BoosterParams(n_estimators=10, split="max_gain").booster_params().n_estimators
    10
    >>> BoosterParams(max_depth=-1).booster_params()
    Traceback (most recent call last):
    ...
    ValueError: parameter 'max_depth' must be an integer >= 0, got -1
    """

    n_estimators: int = 100
    max_depth: int = 6
    learning_rate: float = 0.3
    reg_lambda: float = 1.0
    gamma: float = 0.0
    min_child_weight: float = 1.0
    subsample: float = 1.0
    colsample_bytree: float = 1.0
    split: str = "sum_gain"
    max_bin: int = 256
    random_state: int = 0

    def booster_params(self) -> BoosterParams:
        """A validated copy of the booster parameters (plain ints, floats and strings);
        a bad value is a one-line ``ValueError`` naming the parameter."""
        from mlw.validation import check_param

        return BoosterParams(
            n_estimators=check_param("n_estimators", self.n_estimators, int, low=1),
            max_depth=check_param("max_depth", self.max_depth, int, low=0),
            learning_rate=check_param("learning_rate", self.learning_rate, float, low=0,
                                      low_open=True),
            reg_lambda=check_param("reg_lambda", self.reg_lambda, float, low=0),
            gamma=check_param("gamma", self.gamma, float, low=0),
            min_child_weight=check_param("min_child_weight", self.min_child_weight, float,
                                         low=0),
            subsample=check_param("subsample", self.subsample, float, low=0, high=1,
                                  low_open=True),
            colsample_bytree=check_param("colsample_bytree", self.colsample_bytree, float,
                                         low=0, high=1, low_open=True),
            split=check_param("split", self.split, str, choices=SPLIT_CRITERIA),
            max_bin=check_param("max_bin", self.max_bin, int, low=2, high=65535),
            random_state=check_param("random_state", self.random_state, int, low=0),
        )
