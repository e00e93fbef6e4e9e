"""mlw-mctbn: mixtures of conditional tree-structured Bayesian networks.

- :class:`MixtureOfCTBNs` (``mc``): Hong, Batal and Hauskrecht, CIKM 2014.
- :class:`CTBN` (``ctbn``): one conditional tree (the paper's "SC").

Importing this package is cheap: the estimators (and numba, scikit-learn) are imported
on first use of a public name (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlw.lazy import attach

__version__ = "0.1.0"

__all__ = ["CTBN", "MixtureOfCTBNs"]

if TYPE_CHECKING:  # pragma: no cover
    from mlw_mctbn.model import CTBN, MixtureOfCTBNs


__getattr__, __dir__ = attach(__name__, {name: "mlw_mctbn.model" for name in __all__})
