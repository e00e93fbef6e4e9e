"""mlw-ssvm: structured SVMs that optimise Hamming, F-beta/Jaccard or subset 0/1 loss,
and the synthetic multi-label generator of their paper.

After Díez, Luaces, del Coz and Bahamonde, "Optimizing Different Loss Functions in
Multilabel Classifications". Public names are imported lazily (PEP 562), so importing
the package (or its ``plugin`` module) loads neither numba nor scikit-learn.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from mlw_ssvm.model import StructF1, StructHamming, StructSubset, StructuredSVM
    from mlw_ssvm.synthetic import generate_synthetic

_PUBLIC = {
    "StructuredSVM": "mlw_ssvm.model",
    "StructHamming": "mlw_ssvm.model",
    "StructF1": "mlw_ssvm.model",
    "StructSubset": "mlw_ssvm.model",
    "generate_synthetic": "mlw_ssvm.synthetic",
}

__all__ = ["StructF1", "StructHamming", "StructSubset", "StructuredSVM", "generate_synthetic"]


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'mlw_ssvm' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
