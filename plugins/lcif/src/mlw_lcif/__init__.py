"""mlw-lcif: LCIF, instance and feature neighbours for efficient multi-label
classification (Feremans, Cule, Vens and Goethals, DSAA 2017).

Learners ``lcif``, ``lcif2``, ``instance_knn`` and ``feature_knn``; hyper-parameter
search with cached neighbour lists in :func:`search_hyperparameters`.
"""

from mlw_lcif.model import LCIF, LCIF2, FeatureKNN, InstanceKNN
from mlw_lcif.search import search_hyperparameters

__all__ = ["LCIF", "LCIF2", "FeatureKNN", "InstanceKNN", "search_hyperparameters"]
