"""Names kept for scripts that import them from here: the folds are
:mod:`mlw.splits`, the evaluation path :mod:`mlw.evaluation` and the plan it runs
:mod:`mlw.plan`; choosing a learner's parameters is :mod:`mlw.selection`."""

from __future__ import annotations

from mlw.evaluation import (
    cross_validate,
    evaluate_fitted,
    fit_and_evaluate,
    holdout,
    run_fold,
    run_plan,
)
from mlw.fold_results import EvaluationResult, FoldResult
from mlw.io.alignment import align_test
from mlw.plan import EvaluationPlan, EvaluationSetup, prepare_evaluation
from mlw.splits import IterativeStratifiedKFold, cv_splits, iterative_stratification

__all__ = [
    "EvaluationPlan",
    "EvaluationResult",
    "EvaluationSetup",
    "FoldResult",
    "IterativeStratifiedKFold",
    "align_test",
    "cross_validate",
    "cv_splits",
    "evaluate_fitted",
    "fit_and_evaluate",
    "holdout",
    "iterative_stratification",
    "prepare_evaluation",
    "run_fold",
    "run_plan",
]
