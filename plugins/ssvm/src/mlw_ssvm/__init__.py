"""mlw-ssvm: structured SVMs that optimise Hamming, F-beta/Jaccard or subset 0/1 loss,
and the synthetic multi-label generator of their paper.

After Díez, Luaces, del Coz and Bahamonde, "Optimizing Different Loss Functions in
Multilabel Classifications". Public names are imported lazily (PEP 562), so importing
the package (or its ``plugin`` module) loads neither numba nor scikit-learn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlw.lazy import attach

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


__getattr__, __dir__ = attach(__name__, _PUBLIC)
