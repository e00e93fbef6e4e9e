"""Resolving ``--data`` / ``--test`` into datasets and an evaluation plan."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

import mlw
from mlw.dataset import Dataset
from mlw.io import bundled_datasets

#: The default of ``mlw fit --data``: the dataset bundled with the core.
DEFAULT_DATA = "emotions"
#: Folds of the cross-validation run on a single file given without --test or --cv.
DEFAULT_CV = 10


def _bundled_names() -> dict[str, dict[str, Any]]:
    return {str(b.get("name")): b for b in bundled_datasets()}


def concat(a: Dataset, b: Dataset, *, name: str) -> Dataset:
    """Rows of ``a`` then ``b`` (same features and labels), keeping sparse sparse."""
    if list(a.feature_names) != list(b.feature_names) or list(a.label_names) != list(
            b.label_names):
        raise ValueError(f"cannot join {a.name!r} and {b.name!r}: their features or labels "
                         f"differ")
    def stack(x: Any, y: Any) -> Any:
        if sp.issparse(x) or sp.issparse(y):
            return sp.vstack([sp.csr_matrix(x), sp.csr_matrix(y)], format="csr")
        return np.vstack([x, y])

    return Dataset(stack(a.X, b.X), stack(a.Y, b.Y), list(a.feature_names),
                   list(a.label_names), name,
                   {"joined": [a.provenance, b.provenance]})


@dataclass
class Plan:
    """What ``mlw fit`` evaluates: ``kind`` is ``"holdout"`` (``train`` vs ``test``) or
    ``"cv"`` (``k``-fold cross-validation over ``train``)."""

    kind: str
    train: Dataset
    test: Dataset | None
    k: int | None
    dataset: str
    note: str | None = None


def _named(source: str, test: str | None, cv: int | None, label: str) -> Plan:
    """A dataset given by name (bundled, ``PATH/NAME`` with ``NAME-train.arff`` and
    ``NAME-test.arff``, or found in ``$MLW_DATA_PATH``): its own split when it has one."""
    train = mlw.load_dataset(source, split="train")
    other = mlw.load_dataset(source, split="test")
    same = (train.provenance.get("path") is not None
            and train.provenance.get("path") == other.provenance.get("path"))
    test_split: Dataset | None = None if same else other
    if test is not None:
        return Plan("holdout", train, _load_file(test, "--test"), None, label)
    if cv is not None:
        whole = concat(train, test_split, name=label) if test_split is not None else train
        return Plan("cv", whole, None, cv, label)
    if test_split is not None:
        return Plan("holdout", train, test_split, None, label)
    return Plan("cv", train, None, DEFAULT_CV, label,
                note=f"{label} has no test split: {DEFAULT_CV}-fold cross-validation")


def _load_file(path: str, option: str) -> Dataset:
    if not Path(path).exists():
        raise FileNotFoundError(f"{option} {path}: no such file")
    return mlw.load_dataset(path)


def resolve(data: str | None, test: str | None, cv: int | None) -> Plan:
    """The evaluation plan for ``mlw fit`` (see ``docs/cli.md``):

    - ``--test PATH``: hold-out, train on ``--data``, evaluate on ``--test``;
    - ``--cv K``: K-fold iteratively stratified cross-validation over ``--data`` (for a
      dataset with a standard split: over its train and test parts joined);
    - neither, a dataset name (bundled, such as the default ``emotions``, or
      ``DIR/NAME`` with ``NAME-train.arff``/``NAME-test.arff``, or a name found in
      ``$MLW_DATA_PATH``): its standard train/test split;
    - neither, a file: 10-fold cross-validation over the file.
    """
    if test is not None and cv is not None:
        raise ValueError("give either --test (hold-out) or --cv (cross-validation), not both")
    if cv is not None and cv < 2:
        raise ValueError(f"--cv must be at least 2, got {cv}")
    source = data or DEFAULT_DATA
    if Path(source).is_file():
        train = mlw.load_dataset(source)
        if test is not None:
            return Plan("holdout", train, _load_file(test, "--test"), None, train.name)
        if cv is not None:
            return Plan("cv", train, None, cv, train.name)
        return Plan("cv", train, None, DEFAULT_CV, train.name,
                    note=f"no --test or --cv given: {DEFAULT_CV}-fold cross-validation over "
                         f"{source}")
    try:
        return _named(source, test, cv, Path(source).name if source not in
                      _bundled_names() else source)
    except FileNotFoundError as exc:
        if "no dataset" not in str(exc):
            raise
        names = ", ".join(sorted(_bundled_names())) or "none"
        raise FileNotFoundError(
            f"--data {source}: no such file or dataset (bundled: {names}; a name NAME is "
            f"also looked up as NAME-train.arff/NAME-test.arff and in $MLW_DATA_PATH)"
        ) from None
