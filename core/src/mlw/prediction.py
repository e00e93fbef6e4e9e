"""Predicting with a saved model: the data it is given, checked against what the model
was fitted on, and the predictions written as CSV (``mlw predict``)."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import scipy.sparse as sp

from mlw.dataset import Dataset


@dataclass
class Predictions:
    """Label sets predicted for a dataset: ``Y`` (0/1, dense or CSR), ``label_names``
    (from the model file, else ``label_0``...), and ``notes`` worth telling the user
    (such as feature names that differ from the training data's)."""

    Y: Any
    label_names: list[str]
    dataset: Dataset
    notes: list[str] = field(default_factory=list)

    @property
    def cardinality(self) -> float:
        return float(self.Y.sum()) / max(int(self.Y.shape[0]), 1)


def _data_to_predict(data: str) -> Dataset:
    """A file, or a bundled dataset name (its test split)."""
    from mlw.io import load_dataset
    from mlw.io.bundled import BUNDLED
    from mlw.io.load import DatasetNotFoundError

    if not data.strip():
        raise ValueError("the path of the data to predict is empty")
    if data in BUNDLED and not Path(data).exists():
        return load_dataset(data, split="test")
    if not Path(data).exists():
        raise DatasetNotFoundError(f"{data}: no such file")
    return load_dataset(data)


def predict_file(model: str | Path, data: str) -> Predictions:
    """Load the model file ``model`` (checked, see :func:`mlw.load_model`) and predict
    the label sets of ``data`` (a file, or a bundled dataset's test split).

    Raises ``ValueError`` when the data has another number of features than the model
    was fitted on.
    """
    from mlw.persistence import load_model, read_header

    header = read_header(model)
    fitted = load_model(model)
    ds = _data_to_predict(data)
    meta = header.get("metadata", {})
    notes = []
    n_features = getattr(fitted, "n_features_in_", None)
    if n_features is not None and ds.n_features != n_features:
        raise ValueError(f"{data} has {ds.n_features} features but the model was fitted "
                         f"on {n_features}")
    saved_features = meta.get("feature_names")
    if saved_features and list(saved_features) != list(ds.feature_names):
        notes.append(f"the feature names of {data} differ from the training data's")
    Y = fitted.predict(ds.X)
    names = list(meta.get("label_names") or [])
    if len(names) != Y.shape[1]:
        names = [f"label_{j}" for j in range(Y.shape[1])]
    return Predictions(Y, names, ds, notes)


def write_predictions(predictions: Predictions, out: str | Path | IO[str]) -> None:
    """Write the predictions as CSV (a header of label names, one 0/1 row per instance)
    to a file, atomically, or to an open text stream."""
    if isinstance(out, (str, Path)):
        from mlw._atomic import atomic_write

        with atomic_write(out, "w", encoding="utf-8") as fh:
            _write_csv(fh, predictions)
    else:
        _write_csv(out, predictions)


def _write_csv(fh: IO[str], predictions: Predictions) -> None:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(predictions.label_names)
    Y = predictions.Y
    if sp.issparse(Y):
        Y = sp.csr_matrix(Y)
        L = Y.shape[1]
        for i in range(Y.shape[0]):
            row = np.zeros(L, dtype=np.uint8)
            row[Y.indices[Y.indptr[i]:Y.indptr[i + 1]]] = 1
            writer.writerow(row.tolist())
    else:
        for row in np.asarray(Y, dtype=np.uint8):
            writer.writerow(row.tolist())
