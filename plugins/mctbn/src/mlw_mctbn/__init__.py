"""mlw-mctbn: mixtures of conditional tree-structured Bayesian networks.

- :class:`MixtureOfCTBNs` (``mc``): Hong, Batal and Hauskrecht, CIKM 2014.
- :class:`CTBN` (``ctbn``): one conditional tree (the paper's "SC").

Importing this package is cheap: the estimators (and numba, scikit-learn) are imported
on first use of a public name (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["CTBN", "MixtureOfCTBNs"]

if TYPE_CHECKING:  # pragma: no cover
    from mlw_mctbn.model import CTBN, MixtureOfCTBNs


def __getattr__(name: str) -> Any:
    if name in __all__:
        from mlw_mctbn import model

        return getattr(model, name)
    raise AttributeError(f"module 'mlw_mctbn' has no attribute {name!r}")
