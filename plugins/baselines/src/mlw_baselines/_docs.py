"""Parameter documentation shared by the baseline learners.

A module with no imports, so that registering the plugin (``plugin.py``) imports
neither scikit-learn nor the estimators.
"""

#: The ``base_estimator`` shortcut names (built in :mod:`mlw_baselines._base_estimator`).
SHORTCUT_NAMES = ("logistic_regression", "decision_tree", "random_forest", "linear_svc",
                  "bernoulli_nb", "logistic_regression_unpenalised")

BASE_ESTIMATOR_DOC = (
    "scikit-learn classifier cloned for every model: None (MaxAbsScaler + logistic "
    "regression, lbfgs, C=1, max_iter=1000), a shortcut name (" + ", ".join(SHORTCUT_NAMES)
    + "), a dotted path to a scikit-learn classifier class (sklearn.svm.LinearSVC) or "
    "an estimator object; without predict_proba the sigmoid/softmax of "
    "decision_function is used"
)

BASE_PARAMS_DOC = (
    "parameters of the base classifier as a dict ({\"C\": 10}), set with set_params "
    "(on a pipeline shortcut, a name the pipeline lacks goes to its classifier); on the "
    "command line --param base__C=10"
)
