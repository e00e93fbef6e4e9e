"""mlw: a workbench for multi-label classification.

>>> import mlw
>>> train = mlw.load_dataset("emotions")                      # doctest: +SKIP
>>> learner = mlw.get_learner("br").fit(train.X, train.Y)     # doctest: +SKIP
>>> mlw.cross_validate(mlw.get_learner("br"), train, k=5).metrics  # doctest: +SKIP
"""

from mlw.api import (
    generate_dataset,
    get_learner,
    get_threshold,
    list_generators,
    list_learners,
    list_loaders,
    list_metrics,
    list_plugins,
    list_thresholds,
)
from mlw.dataset import Dataset
from mlw.evaluation import evaluate
from mlw.hookspecs import hookimpl
from mlw.io import load_dataset
from mlw.learner import MultiLabelLearner
from mlw.metrics.context import EvalContext
from mlw.model_selection import (
    EvaluationResult,
    FoldResult,
    IterativeStratifiedKFold,
    cross_validate,
    holdout,
    iterative_stratification,
)
from mlw.persistence import (
    ModelFileError,
    ModelVersionError,
    ModelVersionWarning,
    load_model,
    read_header,
    save_model,
)
from mlw.plugins import PluginInfo, UnknownNameError
from mlw.registry import (
    GeneratorSpec,
    LearnerSpec,
    LearnerTags,
    LoaderSpec,
    MetricSpec,
    RegistrationError,
    ThresholdSpec,
)

__version__ = "0.1.0"

__all__ = [
    "Dataset",
    "EvalContext",
    "EvaluationResult",
    "FoldResult",
    "IterativeStratifiedKFold",
    "ModelFileError",
    "ModelVersionError",
    "ModelVersionWarning",
    "GeneratorSpec",
    "LearnerSpec",
    "LearnerTags",
    "LoaderSpec",
    "MetricSpec",
    "MultiLabelLearner",
    "PluginInfo",
    "RegistrationError",
    "ThresholdSpec",
    "UnknownNameError",
    "cross_validate",
    "evaluate",
    "generate_dataset",
    "get_learner",
    "get_threshold",
    "holdout",
    "hookimpl",
    "iterative_stratification",
    "list_generators",
    "list_learners",
    "list_loaders",
    "list_metrics",
    "list_plugins",
    "list_thresholds",
    "load_dataset",
    "load_model",
    "read_header",
    "save_model",
]
