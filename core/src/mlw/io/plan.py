"""What to evaluate on: a dataset name or path, with an optional test file or number of
folds, resolved into a hold-out or a cross-validation plan (``mlw fit`` and
``mlw bench`` use the same rules, so the Python API gives the same answers)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlw.dataset import Dataset
from mlw.io._common import DataFormatError
from mlw.io.bundled import BUNDLED, DEFAULT_DATA
from mlw.io.load import DatasetNotFoundError, load_dataset

#: Folds of the cross-validation run on a single file given without a test set or k.
DEFAULT_CV = 10


@dataclass
class DataPlan:
    """What an evaluation runs on: ``kind`` is ``"holdout"`` (``train`` against
    ``test``) or ``"cv"`` (``k``-fold cross-validation over ``train``). ``dataset`` is
    the name to report; ``note`` says what was chosen for the user when they did not."""

    kind: str
    train: Dataset
    test: Dataset | None
    k: int | None
    dataset: str
    note: str | None = None


def _load_file(path: str, what: str, labels: dict[str, Any]) -> Dataset:
    if not path.strip():
        raise ValueError(f"the {what} path is empty")
    if not Path(path).exists() and not Path(path).is_symlink():
        raise DatasetNotFoundError(f"{what} {path}: no such file")
    return load_dataset(path, **labels)


def _label_options(n_labels: int | None, label_columns: Sequence[str] | str | None
                   ) -> dict[str, Any]:
    """The loader options saying which columns are labels (checked: one or the other,
    ``n_labels`` a non-zero integer, names not empty nor repeated)."""
    if n_labels is not None and label_columns is not None:
        raise ValueError("say which columns are labels either by name (labels) or by "
                         "count (n_labels), not both")
    if n_labels is not None:
        if isinstance(n_labels, bool) or not isinstance(n_labels, int) or n_labels == 0:
            raise ValueError(f"the number of labels must be a non-zero integer (N: the "
                             f"first N columns, -N: the last N), got {n_labels!r}")
        return {"n_labels": n_labels}
    if label_columns is not None:
        names = [c.strip() for c in label_columns.split(",")] \
            if isinstance(label_columns, str) else [str(c).strip() for c in label_columns]
        if not names or any(not c for c in names):
            raise ValueError(f"the label column names are empty or have an empty name: "
                             f"{label_columns!r}")
        twice = sorted({c for c in names if names.count(c) > 1})
        if twice:
            raise ValueError(f"label column {twice[0]!r} is named twice")
        return {"label_columns": names}
    return {}


def _named(source: str, test: str | None, cv: int | None, label: str,
           labels: dict[str, Any]) -> DataPlan:
    """A dataset given by name (bundled, ``PATH/NAME`` with ``NAME-train.arff`` and
    ``NAME-test.arff``, found in ``$MLW_DATA_PATH``, or a generator spec): its own
    split when it has one."""
    from mlw.io.load import parse_generator_spec

    if labels and parse_generator_spec(source) is not None:
        raise ValueError(f"{source}: a generated dataset knows its labels; the label "
                         f"columns (labels, n_labels) apply to files only")
    try:
        train = load_dataset(source, split="train", **labels)
    except DatasetNotFoundError as exc:
        if ":" in source and source.split(":", 1)[0].isidentifier():
            raise  # a generator spec: its own message says what is wrong
        names = ", ".join(sorted(BUNDLED)) or "none"
        raise DatasetNotFoundError(
            f"{source}: no such file or dataset (bundled: {names}; a name NAME is also "
            f"looked up as NAME-train.arff/NAME-test.arff and in $MLW_DATA_PATH; "
            f"NAME:key=value,... names a generator)") from exc
    try:
        other: Dataset | None = load_dataset(source, split="test", **labels)
    except DatasetNotFoundError:
        other = None
    if other is not None and train.provenance.get("path") is not None and \
            train.provenance.get("path") == other.provenance.get("path"):
        other = None  # one file answered for both splits
    if test is not None:
        return DataPlan("holdout", train, _load_file(test, "test set", labels), None, label)
    if cv is not None:
        whole = Dataset.concat([train, other], name=label) if other is not None else train
        return DataPlan("cv", whole, None, cv, label)
    if other is not None:
        return DataPlan("holdout", train, other, None, label)
    return DataPlan("cv", train, None, DEFAULT_CV, label,
                    note=f"{label} has no test split: {DEFAULT_CV}-fold cross-validation")


def plan_data(data: str | None = None, *, test: str | None = None,
              cv: int | None = None, n_labels: int | None = None,
              labels: Sequence[str] | str | None = None) -> DataPlan:
    """The evaluation plan for a dataset (see ``docs/guide/cli.md``, ``mlw fit``):

    - ``test``: hold-out, train on ``data``, evaluate on the ``test`` file;
    - ``cv=K``: K-fold iteratively stratified cross-validation over ``data`` (for a
      dataset with a standard split: over its train and test parts joined);
    - neither, a dataset name (bundled, such as the default ``emotions``; ``DIR/NAME``
      with ``NAME-train.arff``/``NAME-test.arff``; a name in ``$MLW_DATA_PATH``; a
      generator spec such as ``synthetic:labels=25``): its standard train/test split;
    - neither, a file: 10-fold cross-validation over the file.

    Which columns are labels, for files without label metadata (CSV, Parquet, an ARFF
    without Mulan XML or MEKA ``-C``), or to override it: ``labels`` names the label
    columns in order (a list, or one comma-separated string), ``n_labels=N`` takes the
    first ``N`` columns, ``-N`` the last ``N`` (MEKA's ``-C``). Both apply to the
    training and the test data, and never to a generated dataset (an error).

    An empty name is an error (never the default dataset). Raises
    :class:`DatasetNotFoundError` when nothing answers to ``data``.

    Examples
    --------
    >>> plan = plan_data("emotions")
    >>> plan.kind, plan.train.n_instances, plan.test.n_instances
    ('holdout', 391, 202)
    >>> plan_data("emotions", cv=5).train.n_instances
    593
    """
    plan = _plan_data(data, test=test, cv=cv, n_labels=n_labels, labels=labels)
    for part in (plan.train, plan.test):
        if part is not None and part.n_instances == 0:
            path = part.provenance.get("path") or part.name
            raise DataFormatError(path, None, "has no data rows (its data section is empty)")
    return plan


def _plan_data(data: str | None, *, test: str | None, cv: int | None,
               n_labels: int | None, labels: Sequence[str] | str | None) -> DataPlan:
    if test is not None and cv is not None:
        raise ValueError("give either a test set (hold-out) or a number of folds "
                         "(cross-validation), not both")
    if cv is not None and (isinstance(cv, bool) or not isinstance(cv, int) or cv < 2):
        raise ValueError(f"the number of folds must be an integer of at least 2, got {cv!r}")
    if data is not None and not data.strip():
        raise ValueError("the dataset name or path is empty")
    options = _label_options(n_labels, labels)
    source = DEFAULT_DATA if data is None else data
    if Path(source).is_file():
        train = load_dataset(source, **options)
        if test is not None:
            return DataPlan("holdout", train, _load_file(test, "test set", options), None,
                            train.name)
        if cv is not None:
            return DataPlan("cv", train, None, cv, train.name)
        return DataPlan("cv", train, None, DEFAULT_CV, train.name,
                        note=f"no test set or number of folds given: {DEFAULT_CV}-fold "
                             f"cross-validation over {source}")
    label = source if source in BUNDLED or ":" in source else Path(source).name
    return _named(source, test, cv, label, options)
