"""mlw-plugin-template: a minimal third-party mlw plugin (one learner, one metric)."""

from mlw_plugin_template.centroid import NearestCentroid
from mlw_plugin_template.metric import cardinality_error

__all__ = ["NearestCentroid", "cardinality_error"]
__version__ = "0.1.0"
