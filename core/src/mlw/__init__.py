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
    "get_learner": "mlw.api",
    "get_threshold": "mlw.api",
    "get_decoder": "mlw.api",
    "list_decoders": "mlw.api",
    "list_generators": "mlw.api",
    "list_learners": "mlw.api",
    "list_loaders": "mlw.api",
    "list_metrics": "mlw.api",
    "list_plugins": "mlw.api",
    "list_thresholds": "mlw.api",
    "CalibratedLearner": "mlw.calibration",
    "ConformalRecall": "mlw.conformal",
    "Dataset": "mlw.dataset",
    "evaluate": "mlw.evaluation",
    "EvalContext": "mlw.metrics.context",
    "load_dataset": "mlw.io",
    "DatasetNotFoundError": "mlw.io.load",
    "DataPlan": "mlw.io.plan",
    "plan_data": "mlw.io.plan",
    "MultiLabelLearner": "mlw.learner",
    "EvaluationResult": "mlw.model_selection",
    "FoldResult": "mlw.model_selection",
    "IterativeStratifiedKFold": "mlw.model_selection",
    "cross_validate": "mlw.model_selection",
    "holdout": "mlw.model_selection",
    "iterative_stratification": "mlw.model_selection",
    "prepare_evaluation": "mlw.model_selection",
    "EvaluationSetup": "mlw.model_selection",
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
    "files", "hookspecs", "io", "jit",
    "jsonsafe", "learner", "metrics", "model_selection", "neighbors", "params",
    "persistence", "plugins", "prediction", "registry", "results", "thresholds",
    "validation", "warmup",
})


__getattr__, __dir__ = attach(__name__, _LAZY, submodules=_SUBMODULES)


if TYPE_CHECKING:  # what type checkers and IDEs see
    from mlw.api import (
        generate_dataset,
        get_decoder,
        get_learner,
        get_threshold,
        list_decoders,
        list_generators,
        list_learners,
        list_loaders,
        list_metrics,
        list_plugins,
        list_thresholds,
    )
    from mlw.calibration import CalibratedLearner
    from mlw.conformal import ConformalRecall
    from mlw.dataset import Dataset
    from mlw.evaluation import evaluate
    from mlw.io import load_dataset
    from mlw.io.load import DatasetNotFoundError
    from mlw.io.plan import DataPlan, plan_data
    from mlw.jsonsafe import to_jsonable
    from mlw.learner import MultiLabelLearner
    from mlw.metrics.context import EvalContext
    from mlw.model_selection import (
        EvaluationResult,
        EvaluationSetup,
        FoldResult,
        IterativeStratifiedKFold,
        cross_validate,
        holdout,
        iterative_stratification,
        prepare_evaluation,
    )
    from mlw.persistence import (
        ModelFileError,
        ModelVersionError,
        ModelVersionWarning,
        UntrustedModelError,
        load_model,
        read_header,
        save_model,
    )
    from mlw.plugins import AmbiguousNameError, PluginInfo, UnknownNameError
    from mlw.prediction import Predictions, predict_file, write_predictions
    from mlw.validation import check_param

__all__ = [
    "AmbiguousNameError",
    "CalibratedLearner",
    "ConformalRecall",
    "Dataset",
    "DataPlan",
    "DecoderSpec",
    "DatasetNotFoundError",
    "EvalContext",
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
    "predict_file",
    "prepare_evaluation",
    "read_header",
    "save_model",
    "to_jsonable",
    "write_predictions",
]
