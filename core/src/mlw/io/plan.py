"""What to evaluate on: a dataset name or path, with an optional test file, number of
folds or training rows, resolved into a hold-out or a cross-validation plan. ``mlw
fit``, every ``mlw bench`` cell and the Python API build it here, so they answer the
same: which evaluation a source gets (:func:`choose_evaluation`), how a test set is
aligned with the training columns (:meth:`DataPlan.holdout`,
:func:`mlw.io.align_test`) and how a fold is cut (:meth:`DataPlan.fold`,
:func:`mlw.splits.fold_parts`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mlw.dataset import Dataset
from mlw.io._common import DataFormatError
from mlw.io.alignment import align_test
from mlw.io.bundled import BUNDLED, DEFAULT_DATA
from mlw.io.load import DatasetNotFoundError, has_test_split, load_dataset, parse_generator_spec
from mlw.params import Spec
from mlw.splits import fold_parts, iterative_stratification
from mlw.validation import check_folds, require_text

#: Folds of the cross-validation run on a source without a test part, a test set or k.
DEFAULT_CV = 10
#: Seed of the folds (and of the learners) when none is given.
DEFAULT_SEED = 0
#: How a dataset is evaluated: ``"auto"`` (a hold-out when it has a test part, else
#: cross-validation), ``"cv"`` or ``"holdout"``.
EVALUATIONS = ("auto", "cv", "holdout")


@dataclass
class DataPlan:
    """What an evaluation runs on: ``kind`` is ``"holdout"`` (``train`` against
    ``test``, aligned with ``train``'s columns) or ``"cv"`` (``k``-fold iteratively
    stratified cross-validation over ``train``, folds seeded by ``seed``).
    ``dataset`` is the name to report; ``note`` says what was chosen for the user when
    they did not. Build one with :meth:`holdout`, :meth:`cross_validation` or
    :func:`plan_data`; :meth:`fold` gives fold ``j``'s training and test parts."""

    kind: str
    train: Dataset
    test: Dataset | None
    k: int | None
    dataset: str
    note: str | None = None
    seed: int | None = DEFAULT_SEED
    _fold_of: Any = field(default=None, init=False, repr=False, compare=False)
    _last: Any = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def holdout(cls, train: Dataset, test: Dataset, *, dataset: str | None = None,
                note: str | None = None) -> DataPlan:
        """Train on ``train``, test on ``test`` encoded as ``train`` is
        (:func:`mlw.io.align_test`: a column that cannot be aligned is a
        ``ValueError`` naming it)."""
        return cls("holdout", train, align_test(train, test), None,
                   dataset or train.name, note)

    @classmethod
    def cross_validation(cls, data: Dataset, k: int = DEFAULT_CV, *,
                         seed: int | None = DEFAULT_SEED, dataset: str | None = None,
                         note: str | None = None) -> DataPlan:
        """``k``-fold iteratively stratified cross-validation over ``data``."""
        return cls("cv", data, None, check_folds(k), dataset or data.name, note, seed)

    @property
    def n_folds(self) -> int:
        """1 for a hold-out, else ``k``."""
        return 1 if self.kind == "holdout" else int(self.k or DEFAULT_CV)

    def fold_assignment(self) -> np.ndarray:
        """The fold of every row of ``train`` (cross-validation; computed once)."""
        if self._fold_of is None:
            self._fold_of = iterative_stratification(self.train.Y, self.n_folds,
                                                     seed=self.seed)
        return self._fold_of

    def fold(self, j: int) -> tuple[Dataset, Dataset]:
        """``(train, test)`` of fold ``j`` (0 for a hold-out)."""
        if not 0 <= j < self.n_folds:
            raise ValueError(f"fold {j} does not exist (folds are 0..{self.n_folds - 1})")
        if self.kind == "holdout":
            assert self.test is not None
            return self.train, self.test
        if self._last is None or self._last[0] != j:  # a cell asks for its fold twice
            self._last = (j, fold_parts(self.train, self.fold_assignment(), j))
        parts: tuple[Dataset, Dataset] = self._last[1]
        return parts


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


def choose_evaluation(source: str, *, test: str | None = None, cv: int | None = None,
                      train_rows: int | None = None, evaluation: str = "auto",
                      folds: int = DEFAULT_CV, name: str | None = None
                      ) -> tuple[str, int | None]:
    """``("holdout", None)`` or ``("cv", k)`` for ``source``, without loading it: the
    one rule of ``mlw fit`` and ``mlw bench``. A test set or ``train_rows`` make a
    hold-out; ``cv=K`` (or ``evaluation="cv"``, with ``folds``) a K-fold
    cross-validation; otherwise a source with a test part
    (:func:`mlw.io.load.has_test_split`) is a hold-out and any other gets ``folds``-fold
    cross-validation (``evaluation="holdout"`` refuses it, naming ``name``)."""
    if evaluation not in EVALUATIONS:
        raise ValueError(f"evaluation must be one of {', '.join(EVALUATIONS)}, got "
                         f"{evaluation!r}")
    if evaluation == "cv" and cv is None:
        cv = folds
    if cv is not None and (test is not None or train_rows is not None):
        raise ValueError("give either a test set (hold-out) or a number of folds "
                         "(cross-validation), not both")
    if cv is not None:
        return "cv", check_folds(cv)
    if test is not None or train_rows is not None or has_test_split(source):
        return "holdout", None
    if evaluation == "holdout":
        raise ValueError(f"dataset {name or source!r} has no test part for a hold-out; "
                         f"use evaluation = \"cv\", test = ... or train_rows = N")
    return "cv", check_folds(folds)


def _label(source: str) -> str:
    return source if source in BUNDLED or ":" in source else Path(source).name


def _load_train(source: str, split: str, labels: dict[str, Any]) -> Dataset:
    """``source``'s ``split``; a name nothing answers to gets the message listing where
    names are looked up (a generator spec keeps its own message)."""
    try:
        return load_dataset(source, split=split, **labels)
    except DatasetNotFoundError as exc:
        if Path(source).is_file() or Spec.name_of(source) is not None:
            raise
        names = ", ".join(sorted(BUNDLED)) or "none"
        raise DatasetNotFoundError(
            f"{source}: no such file or dataset (bundled: {names}; a name NAME is also "
            f"looked up as NAME-train.arff/NAME-test.arff and in $MLW_DATA_PATH; "
            f"NAME:key=value,... names a generator)") from exc


def _load_test(test: str, labels: dict[str, Any]) -> Dataset:
    """A test file, or the test split of a dataset name."""
    require_text(test, "the test set path")
    if Path(test).exists() or Path(test).is_symlink():  # a broken link: the loader says so
        return load_dataset(test, **labels)
    try:
        return load_dataset(test, split="test", **labels)
    except DatasetNotFoundError:
        raise DatasetNotFoundError(f"test set {test}: no such file") from None


def plan_data(data: str | None = None, *, test: str | None = None,
              cv: int | None = None, n_labels: int | None = None,
              labels: Sequence[str] | str | None = None, train_rows: int | None = None,
              evaluation: str = "auto", folds: int = DEFAULT_CV,
              seed: int | None = DEFAULT_SEED, name: str | None = None) -> DataPlan:
    """The evaluation plan for a dataset (see ``docs/guide/cli.md``, ``mlw fit``; the rule is
    :func:`choose_evaluation`):

    - ``test``: hold-out, train on ``data``, evaluate on the ``test`` file (or a
      dataset name's test split), aligned with the training columns by name;
    - ``cv=K``: K-fold iteratively stratified cross-validation over every row of
      ``data`` (for a dataset with a standard split: its train and test parts joined;
      for a generated one, all its splits), folds seeded by ``seed``;
    - ``train_rows=N``: hold-out, the first N rows of ``data`` against the rest;
    - none of these, a dataset name (bundled, such as the default ``emotions``;
      ``DIR/NAME`` with ``NAME-train.arff``/``NAME-test.arff``; a name in
      ``$MLW_DATA_PATH``; a generator spec such as ``synthetic:labels=25``): its
      standard train/test split;
    - none of these, a file (or a name without a test part): ``folds``-fold
      cross-validation (10 by default), with a ``note``.

    ``evaluation`` (``"auto"``, ``"cv"``, ``"holdout"``) is an ``mlw bench`` config's:
    ``"cv"`` takes ``folds``, ``"holdout"`` refuses a source without a test part.
    ``name`` is the dataset's name in reports (default: the name or the file's).

    Which columns are labels, for files without label metadata (CSV, Parquet, an ARFF
    without Mulan XML or MEKA ``-C``), or to override it: ``labels`` names the label
    columns in order (a list, or one comma-separated string), ``n_labels=N`` takes the
    first ``N`` columns, ``-N`` the last ``N`` (MEKA's ``-C``). Both apply to the
    training and the test data, and never to a generated dataset (an error).

    An empty name is an error (never the default dataset), and so is a training or test
    part without rows. Raises :class:`DatasetNotFoundError` when nothing answers to
    ``data``.

    Examples
    --------
    >>> plan = plan_data("emotions")
    >>> plan.kind, plan.train.n_instances, plan.test.n_instances
    ('holdout', 391, 202)
    >>> plan_data("emotions", cv=5).train.n_instances
    593
    """
    plan = _plan_data(data, test=test, cv=cv, n_labels=n_labels, labels=labels,
                      train_rows=train_rows, evaluation=evaluation, folds=folds, seed=seed,
                      name=name)
    for part in (plan.train, plan.test):
        if part is not None and part.n_instances == 0:
            path = part.provenance.get("path") or part.name
            raise DataFormatError(path, None, "has no data rows (its data section is empty)")
    return plan


def _plan_data(data: str | None, *, test: str | None, cv: int | None,
               n_labels: int | None, labels: Sequence[str] | str | None,
               train_rows: int | None, evaluation: str, folds: int, seed: int | None,
               name: str | None) -> DataPlan:
    if data is not None:
        require_text(data, "the dataset name or path")
    options = _label_options(n_labels, labels)
    source = DEFAULT_DATA if data is None else data
    if options and parse_generator_spec(source) is not None:
        raise ValueError(f"{source}: a generated dataset knows its labels; the label "
                         f"columns (labels, n_labels) apply to files only")
    is_file = Path(source).is_file()
    kind, k = choose_evaluation(source, test=test, cv=cv, train_rows=train_rows,
                                evaluation=evaluation, folds=folds, name=name)
    if kind == "cv":
        whole = _load_train(source, "all", options)
        label = name or (whole.name if is_file else _label(source))
        note = None
        if cv is None and evaluation == "auto":
            note = (f"no test set or number of folds given: {k}-fold cross-validation "
                    f"over {source}" if is_file else
                    f"{label} has no test split: {k}-fold cross-validation")
        return DataPlan.cross_validation(whole, k or DEFAULT_CV, seed=seed, dataset=label,
                                         note=note)
    if train_rows is not None:
        whole = _load_train(source, "all", options)
        label = name or (whole.name if is_file else _label(source))
        n = whole.n_instances
        if train_rows >= n:
            raise ValueError(f"dataset {label!r}: train_rows={train_rows} leaves no test "
                             f"rows ({n} rows)")
        return DataPlan.holdout(whole.subset(np.arange(train_rows), name=f"{label}-train"),
                                whole.subset(np.arange(train_rows, n), name=f"{label}-test"),
                                dataset=label)
    train = _load_train(source, "train", options)
    label = name or (train.name if is_file else _label(source))
    other = _load_test(test, options) if test is not None else \
        load_dataset(source, split="test", **options)
    return DataPlan.holdout(train, other, dataset=label)
