"""The data model: a multi-label dataset."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.validation import check_X, check_Y

ArrayOrCSR = np.ndarray | sp.csr_matrix | sp.csr_array


@dataclass
class Dataset:
    """A multi-label dataset.

    Attributes
    ----------
    X : ndarray of float64, shape (n, d), or CSR matrix of float64
        Features. Sparse files give CSR and it stays CSR end to end.
    Y : ndarray of uint8, shape (n, L), or CSR matrix of uint8
        Label indicator matrix (1 = the instance has the label).
    feature_names, label_names : list of str
        Column names, in column order. Label columns follow the Mulan XML's order when
        an XML file was given.
    name : str
        Short name (``"yeast-train"``).
    provenance : dict
        Where the data came from: ``path``, ``format``, loader options, dropped
        attributes and any other notes the loader recorded.
    """

    X: Any
    Y: Any
    feature_names: list[str]
    label_names: list[str]
    name: str = "dataset"
    provenance: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.X = check_X(self.X, allow_nan=True, what=f"dataset {self.name!r}: X")
        self.Y = check_Y(self.Y, n_rows=self.X.shape[0], what=f"dataset {self.name!r}: Y")
        if len(self.feature_names) != self.X.shape[1]:
            raise ValueError(f"dataset {self.name!r}: {len(self.feature_names)} feature names "
                             f"for {self.X.shape[1]} feature columns")
        if len(self.label_names) != self.Y.shape[1]:
            raise ValueError(f"dataset {self.name!r}: {len(self.label_names)} label names "
                             f"for {self.Y.shape[1]} label columns")

    @property
    def n_instances(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_labels(self) -> int:
        return int(self.Y.shape[1])

    @property
    def cardinality(self) -> float:
        """Mean number of labels per instance."""
        return float(self.Y.sum()) / max(self.n_instances, 1)

    @property
    def density(self) -> float:
        """Cardinality divided by the number of labels."""
        return self.cardinality / max(self.n_labels, 1)

    def subset(self, rows: np.ndarray, *, name: str | None = None) -> Dataset:
        """The dataset restricted to ``rows`` (indices or a boolean mask)."""
        return Dataset(self.X[rows], self.Y[rows], list(self.feature_names),
                       list(self.label_names), name or self.name, dict(self.provenance))

    @staticmethod
    def concat(parts: Sequence[Dataset], *, name: str | None = None) -> Dataset:
        """The rows of ``parts``, in order, as one dataset (same features and labels,
        by name and order); CSR stays CSR. The provenance records the parts'.

        Examples
        --------
        >>> import mlw
        >>> tr, te = mlw.load_dataset("emotions"), mlw.load_dataset("emotions", split="test")
        >>> Dataset.concat([tr, te], name="emotions").n_instances
        593
        """
        if not parts:
            raise ValueError("Dataset.concat needs at least one dataset")
        first = parts[0]
        for other in parts[1:]:
            if list(other.feature_names) != list(first.feature_names):
                raise ValueError(f"cannot join {first.name!r} and {other.name!r}: their "
                                 f"features differ (names or order)")
            if list(other.label_names) != list(first.label_names):
                raise ValueError(f"cannot join {first.name!r} and {other.name!r}: their "
                                 f"labels differ (names or order)")

        def stack(blocks: list[Any]) -> Any:
            if any(sp.issparse(b) for b in blocks):
                return sp.vstack([sp.csr_matrix(b) for b in blocks], format="csr")
            return np.vstack(blocks)

        return Dataset(stack([d.X for d in parts]), stack([d.Y for d in parts]),
                       list(first.feature_names), list(first.label_names),
                       name or first.name, {"joined": [d.provenance for d in parts]})

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "n_instances": self.n_instances,
            "n_features": self.n_features,
            "n_labels": self.n_labels,
            "cardinality": round(self.cardinality, 4),
            "density": round(self.density, 4),
            "sparse_X": sp.issparse(self.X),
            "sparse_Y": sp.issparse(self.Y),
        }

    def __repr__(self) -> str:
        kind = "CSR" if sp.issparse(self.X) else "dense"
        return (f"Dataset({self.name!r}, {self.n_instances}x{self.n_features} {kind} X, "
                f"{self.n_labels} labels, cardinality {self.cardinality:.3f})")
