"""Aligning a dataset with the one a model was trained on: by column name, and by
nominal value.

Two files of the same data need not agree column by column: a test ARFF may declare its
attributes in another order, list a nominal attribute's values as ``{z,y,x}`` instead of
``{x,y,z}`` (which reorders its one-hot columns, or inverts a two-valued attribute's 0/1
column), and a CSV's text column may have other distinct values in the test part than
in the training part (so it is encoded with other columns). A model sees only numbers,
so every one of these would silently give wrong predictions.

:func:`align` re-encodes a dataset with the *training* data's encoding: columns are
matched by name; a nominal attribute is decoded to its values and encoded again as the
training data encoded it. What cannot be aligned is refused with a one-line
``ValueError`` naming the column: a training column the data lacks, a column that is
numeric in one and nominal in the other, a nominal value the training data never
declared (with the instance that has it), a label column the data lacks. Columns the
training data does not have are ignored with a :class:`~mlw.io.DatasetWarning`.

The encoding of each source column is what the core loaders record in
``provenance["schema"]``; datasets without it (the XC format, plugins' loaders,
datasets built in Python) are matched by column name alone. :func:`reference_of` gives
the JSON-able description of a training set that the CLI stores in a model file, so
``mlw predict`` aligns new data the same way.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.dataset import Dataset
from mlw.io._common import DatasetWarning

__all__ = ["align", "align_test", "reference_of"]


def reference_of(dataset: Dataset) -> dict[str, Any]:
    """What :func:`align` needs of a training set, as plain JSON values."""
    ref: dict[str, Any] = {"feature_names": list(dataset.feature_names),
                           "label_names": list(dataset.label_names)}
    schema = dataset.provenance.get("schema") if isinstance(dataset.provenance, dict) else None
    if isinstance(schema, list):
        ref["schema"] = [dict(e) for e in schema]
    return ref


def _as_reference(reference: Dataset | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(reference, Dataset):
        return reference_of(reference)
    if not isinstance(reference, Mapping) or "feature_names" not in reference:
        raise TypeError("reference must be a Dataset or a mapping with 'feature_names' "
                        "(see mlw.io.reference_of)")
    return dict(reference)


def _attributes(feature_names: list[str], schema: Any) -> list[dict[str, Any]]:
    """Source attributes with their first column: the schema when it accounts for every
    column, else one numeric attribute per column."""
    out: list[dict[str, Any]] = []
    if isinstance(schema, list):
        col = 0
        ok = True
        for entry in schema:
            enc = entry.get("encoding") if isinstance(entry, Mapping) else None
            if enc == "dropped":
                out.append({**entry, "start": -1, "width": 0})
                continue
            width = len(entry.get("values") or ()) if enc == "onehot" else 1
            if enc not in ("numeric", "binary", "onehot") or width < 1:
                ok = False
                break
            out.append({**entry, "start": col, "width": width})
            col += width
        if ok and col == len(feature_names):
            return out
    return [{"name": n, "encoding": "numeric", "start": j, "width": 1}
            for j, n in enumerate(feature_names)]


def _same_encoding(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    if a["encoding"] != b["encoding"]:
        return False
    if a["encoding"] == "numeric":
        return True
    return list(a.get("values") or []) == list(b.get("values") or []) and \
        a.get("one") == b.get("one")


def _column(X: Any, j: int) -> np.ndarray:
    if sp.issparse(X):
        return np.asarray(X[:, [j]].toarray()).ravel()
    return np.asarray(X[:, j], dtype=np.float64)


def _decode(X: Any, attr: Mapping[str, Any]) -> tuple[np.ndarray, list[str]]:
    """Codes (index into the returned values; -1 = missing) of a nominal attribute."""
    values = [str(v) for v in attr.get("values") or []]
    start, width = attr["start"], attr["width"]
    if attr["encoding"] == "binary":
        col = _column(X, start)
        codes = np.full(col.shape[0], -1, dtype=np.int64)
        one = attr.get("one")
        if one is None:  # a single declared value: the column is 0
            codes[col == 0] = 0 if values else -1
            return codes, values
        i_one = values.index(str(one))
        codes[col == 1] = i_one
        codes[col == 0] = 1 - i_one
        return codes, values
    block = X[:, start:start + width]
    block = np.asarray(block.toarray() if sp.issparse(block) else block, dtype=np.float64)
    codes = np.argmax(np.nan_to_num(block, nan=-1.0), axis=1).astype(np.int64)
    valid = np.all(np.isfinite(block), axis=1) & (block.max(axis=1, initial=0.0) == 1.0)
    codes[~valid] = -1
    return codes, values


def _encode(codes: np.ndarray, data_values: list[str], ref: Mapping[str, Any],
            data_name: str) -> np.ndarray:
    """The block of ``ref``'s columns for values ``data_values[codes]``."""
    ref_values = [str(v) for v in ref.get("values") or []]
    index = {v: i for i, v in enumerate(ref_values)}
    mapping = np.array([index.get(v, -2) for v in data_values] + [-1], dtype=np.int64)
    mapped = mapping[codes]  # codes == -1 picks the trailing -1 (missing)
    bad = np.flatnonzero(mapped == -2)
    if bad.size:
        value = data_values[int(codes[bad[0]])]
        shown = ", ".join(ref_values[:8]) + (", ..." if len(ref_values) > 8 else "")
        raise ValueError(f"{data_name}: column {ref['name']!r} has value {value!r} (instance "
                         f"{int(bad[0])}, 0-based), which the training data's {ref['name']!r} "
                         f"does not have (values: {shown})")
    n = codes.shape[0]
    missing = mapped == -1
    if ref["encoding"] == "binary":
        one = ref.get("one")
        col = np.zeros(n) if one is None else (mapped == index[str(one)]).astype(np.float64)
        col[missing] = np.nan
        return col.reshape(-1, 1)
    block = np.zeros((n, len(ref_values)))
    rows = np.flatnonzero(~missing)
    block[rows, mapped[rows]] = 1.0
    block[missing] = np.nan
    return block


def _check_labels(data: Dataset, ref_labels: list[str]) -> list[int] | None:
    """Column order of the data's labels in the reference's order (None: as is)."""
    have = list(data.label_names)
    if not have or have == ref_labels:
        return None
    missing = [n for n in ref_labels if n not in have]
    if missing:
        extra = [n for n in have if n not in ref_labels]
        more = f"; it has {extra[0]!r} instead" if extra else ""
        raise ValueError(f"{data.name}: label {missing[0]!r} of the training data is not a "
                         f"label of this data{more}")
    if len(set(have)) != len(have):
        raise ValueError(f"{data.name}: a label name appears twice")
    extra = [n for n in have if n not in ref_labels]
    if extra:
        raise ValueError(f"{data.name}: label {extra[0]!r} is not a label of the training "
                         f"data")
    return [have.index(n) for n in ref_labels]


def align(data: Dataset, reference: Dataset | Mapping[str, Any], *,
          extra: str = "warn") -> Dataset:
    """``data`` encoded as the training data ``reference`` is (see the module docs).

    Returns ``data`` itself when it already agrees column for column. ``extra`` says
    what a column the training data does not have is: ``"warn"`` (ignored with a
    :class:`~mlw.io.DatasetWarning`: new data to predict may carry more columns) or
    ``"error"`` (a ``ValueError`` naming it: a test set of an evaluation is the
    training data's format, anything else is most likely the wrong file).

    Examples
    --------
    >>> import numpy as np, mlw
    >>> train = mlw.Dataset(np.eye(2), np.eye(2, dtype=np.uint8), ["a", "b"], ["l1", "l2"])
    >>> test = mlw.Dataset(np.array([[5.0, 7.0]]), np.array([[0, 1]], dtype=np.uint8),
    ...                    ["b", "a"], ["l1", "l2"])
    >>> align(test, train).X
    array([[7., 5.]])
    """
    if extra not in ("warn", "error"):
        raise ValueError(f"extra must be 'warn' or 'error', got {extra!r}")
    ref = _as_reference(reference)
    ref_names = list(ref["feature_names"])
    ref_labels = list(ref.get("label_names") or [])
    label_order = _check_labels(data, ref_labels) if ref_labels else None
    data_attrs = _attributes(list(data.feature_names),
                             data.provenance.get("schema") if isinstance(data.provenance, dict)
                             else None)
    ref_attrs = _attributes(ref_names, ref.get("schema"))
    same_columns = list(data.feature_names) == ref_names
    by_name = {a["name"]: a for a in data_attrs}
    if len(by_name) != len(data_attrs):
        if same_columns and label_order is None:
            return data
        raise ValueError(f"{data.name}: a column name appears twice, so columns cannot be "
                         f"matched by name")
    if same_columns and label_order is None and all(
            a["name"] in by_name and (a["encoding"] == "dropped" or
                                      _same_encoding(a, by_name[a["name"]]))
            for a in ref_attrs):
        return data

    X = data.X
    n = data.n_instances
    pieces: list[Any] = []  # list of column indices (taken) or a dense block
    for attr in ref_attrs:
        if attr["encoding"] == "dropped":
            continue
        name = attr["name"]
        have = by_name.get(name)
        if have is None or have["encoding"] == "dropped":
            why = "was dropped when loading it" if have is not None else "is missing"
            raise ValueError(f"{data.name}: column {name!r} of the training data {why}")
        if _same_encoding(attr, have):
            pieces.append(list(range(have["start"], have["start"] + have["width"])))
            continue
        if "numeric" in (attr["encoding"], have["encoding"]):
            kinds = {"numeric": "numeric"}
            raise ValueError(f"{data.name}: column {name!r} is "
                             f"{kinds.get(have['encoding'], 'nominal')} here but "
                             f"{kinds.get(attr['encoding'], 'nominal')} in the training data")
        codes, values = _decode(X, have)
        pieces.append(_encode(codes, values, attr, data.name))
    used = {a["name"] for a in ref_attrs}
    unknown = [a["name"] for a in data_attrs
               if a["name"] not in used and a["encoding"] != "dropped"]
    if unknown:
        more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        names = f"{', '.join(map(repr, unknown[:3]))}{more}"
        if extra == "error":
            raise ValueError(f"{data.name}: column(s) the training data does not have: "
                             f"{names}")
        warnings.warn(f"{data.name}: ignored {len(unknown)} column(s) the training data does "
                      f"not have: {names}", DatasetWarning, stacklevel=2)
    X_new = _assemble(X, pieces, n)
    Y = data.Y if label_order is None else data.Y[:, label_order]
    provenance = dict(data.provenance)
    provenance["aligned_to_training"] = True
    if "schema" in ref:
        provenance["schema"] = [dict(e) for e in ref["schema"]]
    else:
        provenance.pop("schema", None)
    labels = ref_labels if (ref_labels and data.label_names) else list(data.label_names)
    return Dataset(X_new, Y, ref_names, labels, data.name, provenance)


def align_test(train: Dataset, test: Dataset) -> Dataset:
    """``test`` encoded as ``train`` is (:func:`align`: features and labels by name,
    nominal attributes by value), or a ``ValueError`` naming the column that cannot be
    aligned: one the training set has and ``test`` lacks, or one ``test`` has and the
    training set does not. The one place an evaluation's test set is aligned
    (:meth:`mlw.DataPlan.holdout`, so ``mlw fit``, ``mlw bench`` and
    :func:`mlw.holdout`)."""
    aligned = align(test, train, extra="error")
    if train.n_features != aligned.n_features:
        raise ValueError(f"the test set has {aligned.n_features} features but the training "
                         f"set has {train.n_features}")
    if train.n_labels != aligned.n_labels:
        raise ValueError(f"the test set has {aligned.n_labels} labels but the training set "
                         f"has {train.n_labels}")
    if list(train.label_names) != list(aligned.label_names):
        raise ValueError("the test set's labels differ from the training set's "
                         "(names or order)")
    return aligned


def _assemble(X: Any, pieces: list[Any], n: int) -> Any:
    """Columns taken from ``X`` (runs of indices) and dense blocks, in order."""
    blocks: list[Any] = []
    run: list[int] = []
    for p in pieces:
        if isinstance(p, list):
            run.extend(p)
            continue
        if run:
            blocks.append(X[:, run])
            run = []
        blocks.append(sp.csr_matrix(p) if sp.issparse(X) else p)
    if run:
        blocks.append(X[:, run])
    if not blocks:
        return sp.csr_matrix((n, 0)) if sp.issparse(X) else np.zeros((n, 0))
    if sp.issparse(X):
        out = sp.hstack(blocks, format="csr")
        out.sort_indices()
        return out
    return np.hstack([np.asarray(b, dtype=np.float64) for b in blocks])
