"""Writing datasets as ARFF (Mulan layout with a label XML, or MEKA's ``-C``).

Features are written as ``numeric`` attributes, labels as ``{0,1}``. Values use
``repr`` so they read back bit for bit; NaN is written as ``?``. Files are written to a
temporary name and renamed, so a failure never leaves a half-written file.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.dataset import Dataset
from mlw.files import atomic_write
from mlw.io.mulan import _SPLIT_SUFFIX, write_label_xml

_PLAIN = re.compile(r"^[A-Za-z0-9_.\-+/:()\[\]<>=!#$&*;^|~]+$")


def quote_name(name: str) -> str:
    """An ARFF name, quoted with Weka's escapes when it is not a plain token."""
    if name and _PLAIN.match(name) and name[0] not in "{}%,'\"@":
        return name
    out = (name.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
           .replace("\t", "\\t").replace("\r", "\\r").replace("%", "\\%"))
    return f"'{out}'"


def _fmt(v: float) -> str:
    if math.isnan(v):
        return "?"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(float(v))


def write_arff(dataset: Dataset, path: str | Path, *, sparse: bool | None = None,
               layout: str = "mulan", relation: str | None = None) -> list[Path]:
    """Write ``dataset`` to ``path`` as ARFF; returns the files written.

    ``layout="mulan"`` puts the labels last and writes ``NAME.xml`` beside the file
    (``yeast-train.arff`` -> ``yeast.xml``); ``layout="meka"`` puts them first and
    writes ``-C L`` into the relation name. ``sparse`` defaults to whether ``X`` is CSR.
    """
    path = Path(path)
    if layout not in ("mulan", "meka"):
        raise ValueError(f"layout must be 'mulan' or 'meka', got {layout!r}")
    X, Y = dataset.X, dataset.Y
    if sparse is None:
        sparse = sp.issparse(X)
    n, d = X.shape
    L = Y.shape[1]
    Xc = sp.csr_matrix(X)
    Yc = sp.csr_matrix(Y)
    feats = [f"@attribute {quote_name(f)} numeric" for f in dataset.feature_names]
    labs = [f"@attribute {quote_name(lab)} {{0,1}}" for lab in dataset.label_names]
    rel = relation or dataset.name
    if layout == "meka":
        rel = f"{rel}: -C {L}"
        attrs, x_off, y_off = labs + feats, L, 0
    else:
        attrs, x_off, y_off = feats + labs, 0, d
    with atomic_write(path, "w", encoding="utf-8") as fh:
        fh.write(f"@relation {quote_name(rel)}\n\n")
        fh.write("\n".join(attrs))
        fh.write("\n\n@data\n")
        for i in range(n):
            xi = Xc.indices[Xc.indptr[i]:Xc.indptr[i + 1]] + x_off
            xv = Xc.data[Xc.indptr[i]:Xc.indptr[i + 1]]
            yi = Yc.indices[Yc.indptr[i]:Yc.indptr[i + 1]] + y_off
            if sparse:
                idx = np.concatenate([xi, yi])
                val = np.concatenate([xv, np.ones(yi.size)])
                order = np.argsort(idx, kind="stable")
                body = ",".join(f"{j} {_fmt(v)}" for j, v in
                                zip(idx[order].tolist(), val[order].tolist(), strict=True))
                fh.write("{" + body + "}\n")
            else:
                row = np.zeros(d + L)
                row[xi] = xv
                row[yi] = 1.0
                fh.write(",".join(_fmt(v) for v in row.tolist()) + "\n")
    written = [path]
    if layout == "mulan":
        stem = path.name[:-len(".arff")] if path.name.endswith(".arff") else path.stem
        xml = path.with_name(_SPLIT_SUFFIX.sub("", stem) + ".xml")
        write_label_xml(xml, list(dataset.label_names))
        written.append(xml)
    return written


def write_mulan_splits(splits: Any, folder: str | Path, name: str) -> list[Path]:
    """Write a dataset, or a ``{split: Dataset}`` mapping such as a generator returns, as
    Mulan files in ``folder``: ``NAME-<split>.arff`` for each split (``NAME.arff`` for a
    single dataset) and one ``NAME.xml``. Returns the files written (each atomically).
    The folder is created if needed."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder} exists and is not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(splits, Dataset):
        return write_arff(splits, folder / f"{name}.arff")
    written: list[Path] = []
    for split, ds in splits.items():
        for p in write_arff(ds, folder / f"{name}-{split}.arff"):
            if p not in written:
                written.append(p)
    return written
