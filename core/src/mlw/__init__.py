"""mlw: a workbench for multi-label classification.

>>> import mlw
>>> train = mlw.load_dataset("emotions")
>>> learner = mlw.get_learner("br").fit(train.X, train.Y)
>>> learner.predict(train.X[:2]).shape
(2, 6)
>>> result = mlw.cross_validate(mlw.get_learner("br"), train, k=3, metrics=["f1_micro"])
>>> 0.5 < result.metrics["f1_micro"] < 0.8
True

Every public name is importable from ``mlw`` itself. ``import mlw`` loads only the hook
specifications and the registration types: the rest (numpy, scikit-learn, numba
kernels) is imported on first use of a name (PEP 562), so registering a plugin and
starting the ``mlw`` command stay cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlw.hookspecs import hookimpl
from mlw.lazy import attach
from mlw.registry import (
    DecoderSpec,
    GeneratorSpec,
    LearnerSpec,
    LearnerTags,
    LoaderSpec,
    MetricSpec,
    PluginError,
    RegistrationError,
    ThresholdSpec,
)

__version__ = "0.1.0"

#: Public name -> the module that defines it (imported when the name is first used).
_LAZY: dict[str, str] = {
    "generate_dataset": "mlw.api",
    "get_learner": "mlw.factory",
    "get_threshold": "mlw.factory",
    "get_decoder": "mlw.factory",
    "list_decoders": "mlw.api",
    "list_generators": "mlw.api",
    "list_learners": "mlw.api",
    "list_loaders": "mlw.api",
    "list_metrics": "mlw.api",
    "list_plugins": "mlw.api",
    "list_thresholds": "mlw.api",
    "CalibratedLearner": "mlw.calibration",
    "ConformalLabelSets": "mlw.conformal",
    "ConformalRecall": "mlw.conformal",
    "Dataset": "mlw.dataset",
    "evaluate": "mlw.evaluation",
    "EvalContext": "mlw.metrics.context",
    "load_dataset": "mlw.io",
    "DatasetNotFoundError": "mlw.io.load",
    "DataPlan": "mlw.io.plan",
    "plan_data": "mlw.io.plan",
    "MultiLabelLearner": "mlw.learner",
    "EvaluationResult": "mlw.fold_results",
    "FoldResult": "mlw.fold_results",
    "IterativeStratifiedKFold": "mlw.splits",
    "cross_validate": "mlw.evaluation",
    "holdout": "mlw.evaluation",
    "run_plan": "mlw.evaluation",
    "iterative_stratification": "mlw.splits",
    "EvaluationPlan": "mlw.plan",
    "EvaluationSetup": "mlw.plan",
    "plan_evaluation": "mlw.plan",
    "prepare_evaluation": "mlw.plan",
    "ModelFileError": "mlw.persistence",
    "ModelVersionError": "mlw.persistence",
    "ModelVersionWarning": "mlw.persistence",
    "UntrustedModelError": "mlw.persistence",
    "load_model": "mlw.persistence",
    "read_header": "mlw.persistence",
    "save_model": "mlw.persistence",
    "PluginInfo": "mlw.plugins",
    "UnknownNameError": "mlw.plugins",
    "AmbiguousNameError": "mlw.plugins",
    "check_param": "mlw.validation",
    "Predictions": "mlw.prediction",
    "predict_file": "mlw.prediction",
    "write_predictions": "mlw.prediction",
    "to_jsonable": "mlw.jsonsafe",
}

#: Subpackages and modules reachable as attributes (``mlw.plugins.get_plugin_manager``).
_SUBMODULES = frozenset({
    "api", "calibration", "conformal", "dataset", "decoders", "evaluation", "experiments",
    "factory", "files", "fold_results", "hookspecs", "io", "jit", "jsonsafe", "learner",
    "metrics", "model_selection", "neighbors", "params", "persistence", "plan", "plugins",
    "prediction", "registry", "results", "selection", "splits", "thresholds",
    "validation", "warmup",
})


__getattr__, __dir__ = attach(__name__, _LAZY, submodules=_SUBMODULES)


if TYPE_CHECKING:  # what type checkers and IDEs see
    from mlw.api import (
        generate_dataset,
        list_decoders,
        list_generators,
        list_learners,
        list_loaders,
        list_metrics,
        list_plugins,
        list_thresholds,
    )
    from mlw.calibration import CalibratedLearner
    from mlw.conformal import ConformalLabelSets, ConformalRecall
    from mlw.dataset import Dataset
    from mlw.evaluation import cross_validate, evaluate, holdout, run_plan
    from mlw.factory import get_decoder, get_learner, get_threshold
    from mlw.fold_results import EvaluationResult, FoldResult
    from mlw.io import load_dataset
    from mlw.io.load import DatasetNotFoundError
    from mlw.io.plan import DataPlan, plan_data
    from mlw.jsonsafe import to_jsonable
    from mlw.learner import MultiLabelLearner
    from mlw.metrics.context import EvalContext
    from mlw.persistence import (
        ModelFileError,
        ModelVersionError,
        ModelVersionWarning,
        UntrustedModelError,
        load_model,
        read_header,
        save_model,
    )
    from mlw.plan import EvaluationPlan, EvaluationSetup, plan_evaluation, prepare_evaluation
    from mlw.plugins import AmbiguousNameError, PluginInfo, UnknownNameError
    from mlw.prediction import Predictions, predict_file, write_predictions
    from mlw.splits import IterativeStratifiedKFold, iterative_stratification
    from mlw.validation import check_param

__all__ = [
    "AmbiguousNameError",
    "CalibratedLearner",
    "ConformalLabelSets",
    "ConformalRecall",
    "Dataset",
    "DataPlan",
    "DecoderSpec",
    "DatasetNotFoundError",
    "EvalContext",
    "EvaluationPlan",
    "EvaluationResult",
    "EvaluationSetup",
    "FoldResult",
    "GeneratorSpec",
    "IterativeStratifiedKFold",
    "LearnerSpec",
    "LearnerTags",
    "LoaderSpec",
    "MetricSpec",
    "ModelFileError",
    "ModelVersionError",
    "ModelVersionWarning",
    "MultiLabelLearner",
    "PluginError",
    "PluginInfo",
    "Predictions",
    "RegistrationError",
    "ThresholdSpec",
    "UnknownNameError",
    "UntrustedModelError",
    "check_param",
    "cross_validate",
    "evaluate",
    "generate_dataset",
    "get_decoder",
    "get_learner",
    "get_threshold",
    "holdout",
    "hookimpl",
    "iterative_stratification",
    "list_decoders",
    "list_generators",
    "list_learners",
    "list_loaders",
    "list_metrics",
    "list_plugins",
    "list_thresholds",
    "load_dataset",
    "load_model",
    "plan_data",
    "plan_evaluation",
    "predict_file",
    "prepare_evaluation",
    "read_header",
    "run_plan",
    "save_model",
    "to_jsonable",
    "write_predictions",
]
