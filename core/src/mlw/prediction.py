"""Predicting with a saved model: the data it is given, checked against what the model
was fitted on, and the predictions written as CSV (``mlw predict``)."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import scipy.sparse as sp

from mlw._guard import check_outputs, learner_call
from mlw.dataset import Dataset
from mlw.files import atomic_write
from mlw.io import load_dataset
from mlw.io._common import DataFormatError, read_bytes, read_head
from mlw.io.alignment import align
from mlw.io.arff_header import parse_header
from mlw.io.bundled import BUNDLED
from mlw.io.load import choose_loader, resolve_source
from mlw.io.tabular import parquet_columns, rust_panic_text_dropped
from mlw.metrics.at_k import check_k
from mlw.persistence import load_model, read_header
from mlw.validation import require_text


@dataclass
class Predictions:
    """Label sets predicted for a dataset: ``Y`` (0/1, dense or CSR), ``label_names``
    (from the model file, else ``label_0``...), and ``notes`` worth telling the user
    (such as feature names that differ from the training data's). With a ranking
    (``predict_file(..., top_k=K)``), ``topk`` holds it (:class:`mlw.metrics.TopK`) and
    ``Y`` is ``None``."""

    Y: Any
    label_names: list[str]
    dataset: Dataset
    notes: list[str] = field(default_factory=list)
    topk: Any = None

    @property
    def n_instances(self) -> int:
        return int((self.Y if self.topk is None else self.topk.indices).shape[0])

    @property
    def cardinality(self) -> float:
        """Labels per instance: predicted, or ranked (positions that hold a label)."""
        if self.topk is not None:
            return float((self.topk.indices >= 0).sum()) / max(self.n_instances, 1)
        return float(self.Y.sum()) / max(int(self.Y.shape[0]), 1)


def _file_columns(path: Path, loader: str) -> list[str] | None:
    """The column (attribute) names of a data file, read from its header, for the
    formats whose label columns are named; ``None`` for the others."""
    if loader == "arff":
        return [a.name for a in parse_header(read_bytes(path), path).attributes]
    if loader in ("csv", "parquet"):
        import polars as pl

        if loader == "parquet":
            return parquet_columns(path)
        try:
            head = read_head(path, 1 << 20).split(b"\n", 1)[0]
            sep = "\t" if path.name.lower().split(".")[1:2] == ["tsv"] else ","
            with rust_panic_text_dropped():
                return list(pl.read_csv(head + b"\n", separator=sep, n_rows=0).columns)
        except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError,
                ValueError) as exc:
            raise DataFormatError(path, 1, f"cannot read the header ({exc})") from None
    return None


def load_to_predict(data: str, reference: dict[str, Any] | None = None) -> Dataset:
    """The data ``mlw predict`` is given: a file, or a bundled dataset name (its test
    split). Its label columns are optional: for the formats that name their columns
    (ARFF, CSV, Parquet), the training data's label names that the file has are read
    as labels and the rest of the file as features, so data without any label column
    loads too. With a ``reference`` (:func:`mlw.io.reference_of` of the training data,
    stored in the model file by ``mlw fit --save``) the data is then aligned with it
    (:func:`mlw.io.align`: columns by name, nominal attributes by value).
    """
    require_text(data, "the path of the data to predict")
    if data in BUNDLED and not Path(data).exists():
        ds = load_dataset(data, split="test")
    else:
        path, _ = resolve_source(data, split="test")  # load_dataset's lookup and checks
        labels = list((reference or {}).get("label_names") or [])
        spec = choose_loader(path)
        columns = _file_columns(path, spec.name) if labels else None
        if columns is None:
            ds = load_dataset(path)
        else:
            present = [name for name in labels if name in columns]
            options: dict[str, Any] = {"label_columns": present}
            if spec.name == "arff":
                options["xml"] = False
            ds = load_dataset(path, **options)
    if reference and reference.get("feature_names") is not None:
        ds = align(ds, reference)
    return ds


def predict_file(model: str | Path, data: str, *, trusted: Any = (),
                 top_k: int | None = None) -> Predictions:
    """Load the model file ``model`` (checked, see :func:`mlw.load_model`) and predict
    the label sets of ``data`` (a file, or a bundled dataset's test split; see
    :func:`load_to_predict`: label columns are optional, and the data is aligned with
    the training data the model file describes).

    ``trusted``: extra types the model may hold (see :func:`mlw.load_model`).
    ``top_k``: rank the ``top_k`` best-scored labels of each instance instead
    (``learner.predict_topk``; ``Predictions.topk``).

    Raises ``ValueError`` when the data has another number of features than the model
    was fitted on, and :class:`mlw.PluginError` naming the plugin when the learner's
    own code fails or its predictions break the learner contract.
    """
    fitted = load_model(model, trusted=trusted)
    header = read_header(model)
    meta = header.get("metadata", {})
    reference = meta.get("reference")
    if not isinstance(reference, dict) and meta.get("feature_names"):
        reference = {"feature_names": meta.get("feature_names"),
                     "label_names": meta.get("label_names") or []}
    ds = load_to_predict(data, reference if isinstance(reference, dict) else None)
    notes = []
    n_features = getattr(fitted, "n_features_in_", None)
    if n_features is not None and ds.n_features != n_features:
        raise ValueError(f"{data} has {ds.n_features} features but the model was fitted "
                         f"on {n_features}")
    n_labels = int(getattr(fitted, "n_labels_", 0))
    names = list(meta.get("label_names") or [])
    if len(names) != n_labels:
        names = [f"label_{j}" for j in range(n_labels)]
    if top_k is not None:
        k = check_k(top_k)
        if not hasattr(fitted, "predict_topk"):
            raise ValueError(f"{type(fitted).__name__} cannot rank labels (no predict_topk)")
        with learner_call(fitted, "predict_topk"):
            ranking = fitted.predict_topk(ds.X, k)
        return Predictions(None, names, ds, notes, topk=ranking)
    with learner_call(fitted, "predict"):
        Y = fitted.predict(ds.X)
    check_outputs(fitted, ds.n_instances, getattr(fitted, "n_labels_", None), Y_pred=Y)
    return Predictions(Y, names, ds, notes)


def write_predictions(predictions: Predictions, out: str | Path | IO[str]) -> None:
    """Write the predictions as CSV (a header of label names, one 0/1 row per instance)
    to a file, atomically, or to an open text stream. A ranking is written as one row
    per instance ``label_1,score_1,...,label_k,score_k`` (best first; label names,
    empty where fewer than k labels are ranked)."""
    if isinstance(out, (str, Path)):
        with atomic_write(out, "w", encoding="utf-8") as fh:
            _write_csv(fh, predictions)
    else:
        _write_csv(out, predictions)


def _write_csv(fh: IO[str], predictions: Predictions) -> None:
    writer = csv.writer(fh, lineterminator="\n")
    if predictions.topk is not None:
        _write_ranking(writer, predictions)
        return
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


def _write_ranking(writer: Any, predictions: Predictions) -> None:
    idx, scores = predictions.topk
    k = idx.shape[1]
    writer.writerow([c for r in range(1, k + 1) for c in (f"label_{r}", f"score_{r}")])
    names = predictions.label_names
    for row_idx, row_sc in zip(idx.tolist(), scores.tolist(), strict=True):
        writer.writerow([c for j, v in zip(row_idx, row_sc, strict=True)
                         for c in ((names[j], repr(v)) if j >= 0 else ("", ""))])
