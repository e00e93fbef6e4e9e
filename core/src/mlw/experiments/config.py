"""Experiment configurations: a TOML file (or command-line options) turned into a checked
:class:`Experiment`: learners with their parameters, grids and inner model selection,
datasets with their evaluation protocol, metrics and seed.

Everything that can be checked before a fit is checked here (``load_config`` and
:meth:`Experiment.check`): unknown keys, learner and parameter names, metric names and
needs, threshold names, grid values, and that every dataset can be found. A mistake
costs nothing and is reported in one line naming the config file and the key.

The file format is documented in ``docs/guide/bench-and-report.md``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomllib

from mlw.factory import build_learner
from mlw.files import not_a_file
from mlw.io.load import (
    DATA_PATH_ENV,
    DatasetNotFoundError,
    data_path_candidates,
    parse_generator_spec,
    resolve_source,
)
from mlw.io.plan import DEFAULT_CV, DEFAULT_SEED
from mlw.params import Spec
from mlw.plan import prepare_evaluation, resolved_params
from mlw.plugins import get_plugin_manager
from mlw.registry import LearnerSpec
from mlw.selection import grid_points
from mlw.validation import require_text

EVALUATIONS = ("cv", "holdout", "auto")
SELECTION_METHODS = ("validation", "cv", "split")
SELECTION_SEARCHES = ("grid", "ordered")

_EXPERIMENT_KEYS = {"name", "description", "paper", "seed", "metrics", "threshold",
                    "data_path", "evaluation", "folds", "datasets", "control", "decode"}
_LEARNER_KEYS = {"learner", "params", "threshold", "grid", "select", "stages", "label",
                 "metrics", "attributes", "decode"}
_DATASET_KEYS = {"name", "source", "evaluation", "folds", "test", "train_rows"}
_SELECT_KEYS = {"metric", "method", "fraction", "folds", "seed", "search", "staged",
                "warm_start"}


class ConfigError(ValueError):
    """A malformed experiment config: the one-line message names the file and key."""


@dataclass(frozen=True)
class Selection:
    """Inner model selection over a learner's ``grid``, run inside every outer
    training part: ``method="validation"`` fits each grid point on a random
    ``1 - fraction`` of the training part and scores it on the rest;
    ``method="cv"`` scores each point by ``folds``-fold iteratively stratified CV of
    the training part; ``method="split"`` fits each point on the training part and
    scores it on the dataset's own ``validation`` split (a generator's, such as the
    structured-SVM paper's synthetic data). The point with the best ``metric`` (its
    registered direction) is refit on the whole training part; ties go to the first
    point in grid order.

    ``search="grid"`` scores every point; ``search="ordered"`` (a grid of one parameter
    whose values are listed in order, such as a regularisation path) starts at the
    middle value, moves towards the better neighbour while the score strictly improves,
    and stops at the first value that is not better: a line search for scores unimodal
    along the grid, as the mixture-of-CTBNs plugin chooses its own ``C``.

    ``staged="n_estimators"`` names a grid parameter whose values are a prefix of one
    fit (boosting rounds, a chain's length): for every combination of the other
    parameters the learner is fitted once, at the largest value, and every value is
    scored from its ``staged_predict(X, values)`` (``staged_predict(X)``'s stage
    ``v`` when it takes no values; ``staged_predict_proba`` likewise for a metric of
    scores). Exact only where the learner's stages equal fresh fits (its docs say so);
    the choice is the same as without ``staged``, from fewer fits.

    ``warm_start=True`` (``method="split"`` only) fits the grid's points in the order
    given on *one* learner, ``set_params`` between fits, so a learner with a
    ``warm_start`` parameter starts each fit from the previous solution (the
    structured-SVM paper's C path); the chosen point's model, trained on the
    training part, is the cell's model (no refit)."""

    metric: str
    method: str = "validation"
    fraction: float = 0.2
    folds: int = 5
    seed: int | None = None  # None: the experiment's seed
    search: str = "grid"
    staged: str | None = None
    warm_start: bool = False

    def as_dict(self) -> dict[str, Any]:
        out = {"metric": self.metric, "method": self.method, "fraction": self.fraction,
               "folds": self.folds, "seed": self.seed}
        if self.search != "grid":  # cell ids of grid searches stay what they were
            out["search"] = self.search
        if self.staged is not None:
            out["staged"] = self.staged
        if self.warm_start:
            out["warm_start"] = True
        return out


@dataclass(frozen=True)
class LearnerEntry:
    """One row of the results tables: a registered learner with fixed ``params``, an
    optional ``threshold``, and optionally a ``grid`` searched by ``select``.
    ``stages``: record the metrics of every stage the fitted model exposes (``True``:
    ``staged_models()`` or ``staged_predict(X)``; a list: ``staged_predict(X, list)``,
    e.g. boosting rounds). ``attributes``: fitted attributes recorded with each cell
    (``["C_", "n_trees_"]``: what the learner chose for itself; null where the fitted
    model lacks one). ``decode``: the decoder per metric (``"f1"``, ``"matched"``, or a
    table ``{f1_example = "f1", subset_accuracy = "subset"}``; see
    :func:`mlw.decoders.routing.resolve_decoders`), ``None`` for the learner's own label
    sets."""

    key: str
    learner: str
    params: Mapping[str, Any] = field(default_factory=dict)
    threshold: str | None = None
    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    select: Selection | None = None
    stages: bool | tuple[int, ...] = False
    label: str | None = None
    metrics: tuple[str, ...] | None = None  # instead of the experiment's
    attributes: tuple[str, ...] = ()  # recorded, not part of the cell id
    decode: str | Mapping[str, str] | None = None

    @property
    def display(self) -> str:
        return self.label or self.key


@dataclass(frozen=True)
class DatasetEntry:
    """A dataset and how it is evaluated: ``evaluation="cv"`` runs ``folds``-fold
    iteratively stratified CV over every row it has (a train/test pair joined, train
    rows first); ``"holdout"`` trains on its train part and tests on its test part
    (``test`` names a test file; ``train_rows=N`` takes the first N rows of one file as
    the train part); ``"auto"``: hold-out when it has a test part, else CV."""

    name: str
    source: str
    evaluation: str = "cv"
    folds: int = DEFAULT_CV
    test: str | None = None
    train_rows: int | None = None


@dataclass(frozen=True)
class Experiment:
    """A checked experiment: every (learner, dataset, fold) is one cell."""

    name: str
    learners: tuple[LearnerEntry, ...]
    datasets: tuple[DatasetEntry, ...]
    metrics: tuple[str, ...] | None = None
    seed: int = DEFAULT_SEED
    description: str = ""
    paper: str = ""
    control: str | None = None
    data_path: tuple[str, ...] = ()
    path: str | None = None  # the config file, if any
    only_folds: tuple[int, ...] | None = None  # run only these folds (smoke checks)

    def learner(self, key: str) -> LearnerEntry:
        for entry in self.learners:
            if entry.key == key:
                return entry
        raise KeyError(key)

    def with_overrides(self, *, learners: Sequence[str] | None = None,
                       datasets: Sequence[str] | None = None, folds: int | None = None,
                       only_folds: Sequence[int] | None = None,
                       metrics: Sequence[str] | None = None,
                       seed: int | None = None) -> Experiment:
        """The experiment restricted or changed from the command line: ``learners`` and
        ``datasets`` select entries by key/name (a name the config does not have is a
        new entry: a registered learner spec ``name:key=value,...``, a dataset name or
        path), ``folds`` replaces the number of CV folds, ``only_folds`` runs only
        those fold indices, ``metrics`` (the experiment's and every learner's) and
        ``seed`` replace the config's."""
        out = self
        if learners is not None:
            chosen = []
            for spec in learners:
                known = [e for e in self.learners if e.key == spec]
                chosen.append(known[0] if known else learner_from_spec(spec))
            out = replace(out, learners=tuple(chosen))
        if datasets is not None:
            picked = []
            for name in datasets:
                known_ds = [d for d in self.datasets if d.name == name]
                picked.append(known_ds[0] if known_ds else DatasetEntry(
                    name=_dataset_label(name), source=name, evaluation="cv",
                    folds=folds or DEFAULT_CV))
            out = replace(out, datasets=tuple(picked))
        if folds is not None:
            out = replace(out, datasets=tuple(replace(d, folds=folds) for d in out.datasets))
        if only_folds is not None:
            out = replace(out, only_folds=tuple(sorted(set(only_folds))))
        if metrics is not None:
            out = replace(out, metrics=tuple(metrics), learners=tuple(
                replace(e, metrics=None) for e in out.learners))
        if seed is not None:
            out = replace(out, seed=seed)
        return out

    def check(self) -> dict[str, str | None]:
        """Every check that needs no fit: learners, parameters, grids, metrics and their
        needs, thresholds, datasets found. Raises ``ValueError`` (or
        :class:`mlw.UnknownNameError`) with a one-line reason. Returns each learner's
        resolved parameters by key (:func:`check_experiment`)."""
        return check_experiment(self)


# --- parsing -------------------------------------------------------------------------------
def _where(path: str | None, key: str) -> str:
    return f"{path}: {key}" if path else key


def _fail(path: str | None, key: str, message: str) -> ConfigError:
    return ConfigError(f"{_where(path, key)}: {message}")


def _unknown_keys(path: str | None, where: str, got: Iterable[str], known: set[str]) -> None:
    extra = sorted(set(got) - known)
    if extra:
        raise _fail(path, where, f"unknown key {extra[0]!r} (known: {', '.join(sorted(known))})")


def _int(path: str | None, key: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise _fail(path, key, f"expected an integer >= {low}, got {value!r}")
    return value


def _dataset_label(source: str) -> str:
    """The name a dataset is reported under: a generator spec or bundled name as is, a
    path's file name without ``-train``/suffixes."""
    if Spec.name_of(source) is not None:
        return source
    name = Path(source).name
    for suffix in (".bz2", ".gz", ".arff", ".csv", ".parquet", ".txt"):
        name = name.removesuffix(suffix)
    return name.removesuffix("-train")


def learner_from_spec(spec: str, *, key: str | None = None) -> LearnerEntry:
    """``"br"`` or ``"br:threshold=pcut,base_estimator=decision_tree"`` (a registered
    learner and parameters typed by its defaults, as ``mlw fit --param``;
    :meth:`mlw.params.Spec.parse`)."""
    parsed = Spec.parse(spec, "learner")
    params = parsed.params(get_plugin_manager().learner(parsed.name).signature_params())
    threshold = None
    if "threshold" in params and isinstance(params["threshold"], str):
        threshold = params.pop("threshold")
    return LearnerEntry(key=key or spec.strip(), learner=parsed.name, params=params,
                        threshold=threshold)


def _selection(path: str | None, key: str, raw: Any) -> Selection | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _fail(path, key, "expected a table such as {metric = \"f1_example\", "
                               "method = \"validation\", fraction = 0.2}")
    _unknown_keys(path, key, raw, _SELECT_KEYS)
    if "metric" not in raw or not isinstance(raw["metric"], str):
        raise _fail(path, key, "needs metric = \"<a registered metric>\"")
    method = raw.get("method", "validation")
    if method not in SELECTION_METHODS:
        raise _fail(path, f"{key}.method", f"expected one of {', '.join(SELECTION_METHODS)}, "
                                           f"got {method!r}")
    fraction = raw.get("fraction", 0.2)
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or \
            not 0.0 < float(fraction) < 1.0:
        raise _fail(path, f"{key}.fraction", f"expected a number in (0, 1), got {fraction!r}")
    folds = _int(path, f"{key}.folds", raw.get("folds", 5), 2)
    seed = raw.get("seed")
    if seed is not None:
        seed = _int(path, f"{key}.seed", seed, 0)
    search = raw.get("search", "grid")
    if search not in SELECTION_SEARCHES:
        raise _fail(path, f"{key}.search", f"expected one of {', '.join(SELECTION_SEARCHES)}, "
                                           f"got {search!r}")
    staged = raw.get("staged")
    if staged is not None and (not isinstance(staged, str) or not staged):
        raise _fail(path, f"{key}.staged", f"expected a grid parameter name, got {staged!r}")
    warm = raw.get("warm_start", False)
    if not isinstance(warm, bool):
        raise _fail(path, f"{key}.warm_start", f"expected true or false, got {warm!r}")
    if warm and (method != "split" or search != "grid" or staged is not None):
        raise _fail(path, f"{key}.warm_start", "a warm-started path needs method = "
                                               "\"split\" and neither staged nor an "
                                               "ordered search")
    return Selection(metric=raw["metric"], method=method, fraction=float(fraction),
                     folds=folds, seed=seed, search=search, staged=staged, warm_start=warm)


def _none(value: Any) -> Any:
    """TOML has no null: the text ``"none"``/``"null"`` is ``None`` for a parameter, as
    in the CLI's ``--param NAME=none`` (:func:`mlw.params.parse_value`)."""
    if isinstance(value, str) and value.strip().lower() in ("none", "null"):
        return None
    return value


def _decode(path: str | None, where: str, value: Any) -> str | dict[str, str] | None:
    """A ``decode`` entry: a decoder name (or ``"matched"``), or a table of metric =
    decoder name."""
    if value is None or isinstance(value, str):
        return _none(value)
    if isinstance(value, dict) and value and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return dict(value)
    raise _fail(path, where, "expected a decoder name, \"matched\", or a table of "
                             "metric = decoder name")


def _learner(path: str | None, key: str, raw: Any, default_threshold: str | None,
             default_decode: Any = None) -> LearnerEntry:
    where = f"learners.{key}"
    if not isinstance(raw, dict):
        raise _fail(path, where, "expected a table ([learners.NAME] with learner = ...)")
    _unknown_keys(path, where, raw, _LEARNER_KEYS)
    name = raw.get("learner", key)
    if not isinstance(name, str) or not name:
        raise _fail(path, f"{where}.learner", f"expected a learner name, got {name!r}")
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise _fail(path, f"{where}.params", "expected a table of parameter = value")
    grid = raw.get("grid", {})
    if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
        raise _fail(path, f"{where}.grid", "expected a table of parameter = [values, ...] "
                                           "with at least one value each")
    select = _selection(path, f"{where}.select", raw.get("select"))
    if grid and select is None:
        raise _fail(path, where, "a grid needs select = {metric = ...} (how to choose)")
    if select is not None and not grid:
        raise _fail(path, f"{where}.select", "there is no grid to select from")
    if select is not None and select.staged is not None:
        values = grid.get(select.staged)
        if values is None:
            raise _fail(path, f"{where}.select.staged", f"{select.staged!r} is not a "
                                                        f"parameter of the grid")
        if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values):
            raise _fail(path, f"{where}.grid.{select.staged}", "a staged parameter takes "
                                                               "positive integers")
        if select.search == "ordered":
            raise _fail(path, f"{where}.select", "staged and search = \"ordered\" do not "
                                                 "combine")
    if select is not None and select.search == "ordered" and len(grid) != 1:
        raise _fail(path, f"{where}.select.search", "an ordered search walks a grid of "
                                                    f"one parameter, this one has {len(grid)}")
    stages = raw.get("stages", False)
    if isinstance(stages, list):
        if not stages or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0
                                 for s in stages):
            raise _fail(path, f"{where}.stages", "expected true or a list of positive integers")
        stages = tuple(stages)
    elif not isinstance(stages, bool):
        raise _fail(path, f"{where}.stages", "expected true or a list of positive integers")
    threshold = raw.get("threshold", default_threshold)
    if threshold is not None and not isinstance(threshold, str):
        raise _fail(path, f"{where}.threshold", "expected a thresholding strategy name")
    threshold = _none(threshold)  # "none": the learner as it is, whatever the default
    label = raw.get("label")
    if label is not None and not isinstance(label, str):
        raise _fail(path, f"{where}.label", "expected text")
    metrics = raw.get("metrics")
    if metrics is not None and (not isinstance(metrics, list) or not metrics or
                                not all(isinstance(m, str) for m in metrics)):
        raise _fail(path, f"{where}.metrics", "expected a non-empty list of metric names")
    attributes = raw.get("attributes", [])
    if not isinstance(attributes, list) or not all(
            isinstance(a, str) and a.isidentifier() for a in attributes):
        raise _fail(path, f"{where}.attributes", "expected a list of attribute names "
                                                 "such as [\"C_\"]")
    decode = _decode(path, f"{where}.decode", raw.get("decode", default_decode))
    return LearnerEntry(key=key, learner=name,
                        params={k: _none(v) for k, v in params.items()}, threshold=threshold,
                        grid={k: [_none(x) for x in v] for k, v in grid.items()},
                        select=select,
                        stages=stages, label=label,
                        metrics=tuple(metrics) if metrics else None,
                        attributes=tuple(attributes), decode=decode)


def _dataset(path: str | None, index: int, raw: Any, evaluation: str, folds: int
             ) -> DatasetEntry:
    where = f"experiment.datasets[{index}]"
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        raise _fail(path, where, "expected a dataset name or a table {name = ...}")
    _unknown_keys(path, where, raw, _DATASET_KEYS)
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _fail(path, f"{where}.name", "expected a dataset name")
    source = raw.get("source", name)
    if not isinstance(source, str) or not source.strip():
        raise _fail(path, f"{where}.source", "expected a dataset name or path")
    ev = raw.get("evaluation", evaluation)
    if ev not in EVALUATIONS:
        raise _fail(path, f"{where}.evaluation",
                    f"expected one of {', '.join(EVALUATIONS)}, got {ev!r}")
    k = _int(path, f"{where}.folds", raw.get("folds", folds), 2)
    test = raw.get("test")
    if test is not None and not isinstance(test, str):
        raise _fail(path, f"{where}.test", "expected a file name or path")
    train_rows = raw.get("train_rows")
    if train_rows is not None:
        train_rows = _int(path, f"{where}.train_rows", train_rows, 1)
    if (test is not None or train_rows is not None) and ev == "cv":
        raise _fail(path, where, "test and train_rows define a hold-out; set "
                                 "evaluation = \"holdout\"")
    return DatasetEntry(name=name, source=source, evaluation=ev, folds=k, test=test,
                        train_rows=train_rows)


def parse_config(data: Mapping[str, Any], *, path: str | None = None,
                 base: Path | None = None) -> Experiment:
    """An :class:`Experiment` from a parsed TOML document (``base``: the folder relative
    ``data_path`` entries are taken from, the config file's)."""
    _unknown_keys(path, "top level", data, {"experiment", "learners"})
    exp = data.get("experiment", {})
    if not isinstance(exp, dict):
        raise _fail(path, "experiment", "expected a table [experiment]")
    _unknown_keys(path, "experiment", exp, _EXPERIMENT_KEYS)
    name = exp.get("name") or (Path(path).stem if path else "experiment")
    seed = _int(path, "experiment.seed", exp.get("seed", DEFAULT_SEED), 0)
    metrics = exp.get("metrics")
    if metrics is not None and (not isinstance(metrics, list) or not metrics or
                                not all(isinstance(m, str) for m in metrics)):
        raise _fail(path, "experiment.metrics", "expected a non-empty list of metric names")
    evaluation = exp.get("evaluation", "cv")
    if evaluation not in EVALUATIONS:
        raise _fail(path, "experiment.evaluation",
                    f"expected one of {', '.join(EVALUATIONS)}, got {evaluation!r}")
    folds = _int(path, "experiment.folds", exp.get("folds", DEFAULT_CV), 2)
    threshold = exp.get("threshold")
    if threshold is not None and not isinstance(threshold, str):
        raise _fail(path, "experiment.threshold", "expected a thresholding strategy name")
    data_path = exp.get("data_path", [])
    if isinstance(data_path, str):
        data_path = [data_path]
    if not isinstance(data_path, list) or not all(isinstance(p, str) for p in data_path):
        raise _fail(path, "experiment.data_path", "expected a list of folders")
    folders = tuple(str((base / p) if base is not None and not Path(p).is_absolute() else p)
                    for p in data_path)
    raw_datasets = exp.get("datasets", [])
    if not isinstance(raw_datasets, list) or not raw_datasets:
        raise _fail(path, "experiment.datasets", "expected a non-empty list of datasets")
    datasets = tuple(_dataset(path, i, d, evaluation, folds)
                     for i, d in enumerate(raw_datasets))
    names = [d.name for d in datasets]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise _fail(path, "experiment.datasets", f"dataset {dup!r} is listed twice")
    raw_learners = data.get("learners", {})
    if not isinstance(raw_learners, dict) or not raw_learners:
        raise _fail(path, "learners", "expected at least one [learners.NAME] table")
    decode = _decode(path, "experiment.decode", exp.get("decode"))
    learners = tuple(_learner(path, k, v, threshold, decode)
                     for k, v in raw_learners.items())
    control = exp.get("control")
    if control is not None and control not in raw_learners:
        raise _fail(path, "experiment.control", f"{control!r} is not a learner of this "
                                                f"config ({', '.join(raw_learners)})")
    for key in ("description", "paper"):
        if not isinstance(exp.get(key, ""), str):
            raise _fail(path, f"experiment.{key}", "expected text")
    return Experiment(name=str(name), learners=learners, datasets=datasets,
                      metrics=tuple(metrics) if metrics else None, seed=seed,
                      description=exp.get("description", ""), paper=exp.get("paper", ""),
                      control=control, data_path=folders, path=path)


def load_config(path: str | os.PathLike[str]) -> Experiment:
    """Read and parse an experiment config (TOML); see ``docs/guide/bench-and-report.md``.
    Raises :class:`ConfigError` (a ``ValueError``) naming the file and key."""
    p = Path(require_text(str(path), "the config path"))
    if not p.is_file():
        what = not_a_file(p)
        if what is not None:
            raise ValueError(f"config {p} {what}; give a TOML file")
        raise FileNotFoundError(f"config {p}: no such file")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from None
    return parse_config(data, path=str(p), base=p.resolve().parent)


def experiment_from_options(*, learners: Sequence[str], datasets: Sequence[str],
                            folds: int | None = None, metrics: Sequence[str] | None = None,
                            seed: int | None = None, name: str = "bench") -> Experiment:
    """The experiment of ``mlw bench --learners ... --datasets ...`` without a config:
    every learner spec (``name`` or ``name:key=value,...``) on every dataset by
    ``folds``-fold CV over all its rows (``None``: the defaults, 10 folds and seed 0)."""
    if not learners:
        raise ValueError("no learners given")
    if not datasets:
        raise ValueError("no datasets given")
    entries = tuple(learner_from_spec(s) for s in learners)
    keys = [e.key for e in entries]
    if len(set(keys)) != len(keys):
        raise ValueError(f"learner {next(k for k in keys if keys.count(k) > 1)!r} is given twice")
    folds = DEFAULT_CV if folds is None else folds
    seed = DEFAULT_SEED if seed is None else seed
    ds = tuple(DatasetEntry(name=_dataset_label(d), source=d, evaluation="cv", folds=folds)
               for d in datasets)
    labels = [d.name for d in ds]
    if len(set(labels)) != len(labels):
        raise ValueError(f"dataset {next(n for n in labels if labels.count(n) > 1)!r} is "
                         f"given twice")
    return Experiment(name=name, learners=entries, datasets=ds,
                      metrics=tuple(metrics) if metrics else None, seed=seed)


# --- checks --------------------------------------------------------------------------------
def resolve_dataset_source(source: str, data_path: Sequence[str]) -> str:
    """The source to load: ``$MLW_DATA_PATH`` folders first, then the config's
    ``data_path`` folders (``DIR/NAME`` with ``NAME-train.arff``/``NAME.arff``), then
    ``source`` as given (a bundled name, a path, a generator spec)."""
    if Spec.name_of(source) is not None:
        return source
    if Path(source).expanduser().exists() or os.sep in source or "/" in source:
        return source
    folders = [f for f in os.environ.get(DATA_PATH_ENV, "").split(os.pathsep) if f]
    folders += list(data_path)
    for folder in folders:
        candidate = str(Path(folder).expanduser() / source)
        if any(c.is_file() for split in ("train", "test")
               for c in data_path_candidates(candidate, split)):
            return candidate
    return source


def check_dataset(entry: DatasetEntry, data_path: Sequence[str]) -> str:
    """The resolved source of ``entry``; raises :class:`mlw.DatasetNotFoundError` when
    nothing answers to it (without loading it)."""
    source = resolve_dataset_source(entry.source, data_path)
    if parse_generator_spec(source) is not None:
        return source
    try:
        resolve_source(source, "train")
    except DatasetNotFoundError:
        where = (f" (looked in $MLW_DATA_PATH and data_path: {', '.join(data_path)})"
                 if data_path else "")
        raise DatasetNotFoundError(f"dataset {entry.name!r}: nothing answers to "
                                   f"{entry.source!r}{where}") from None
    if entry.test is not None:
        resolve_source(resolve_dataset_source(entry.test, data_path), "test")
    return source


def entry_learner(entry: LearnerEntry, spec: LearnerSpec, seed: int,
                  point: Mapping[str, Any] | None = None) -> Any:
    """The unfitted learner of ``entry`` (its ``params`` and a grid ``point``, seeded),
    built from its registration ``spec`` (:func:`mlw.factory.build_learner`)."""
    return build_learner(spec, seed=seed, params={**entry.params, **(point or {})})


def check_experiment(experiment: Experiment) -> dict[str, str | None]:
    """Every check of :meth:`Experiment.check`, each learner looked up once; returns
    each learner's resolved parameters (:func:`mlw.plan.resolved_params`) by key."""
    pm = get_plugin_manager()
    keys = [e.key for e in experiment.learners]
    if len(set(keys)) != len(keys):
        raise ValueError(f"learner {next(k for k in keys if keys.count(k) > 1)!r} is listed "
                         f"twice")
    resolved: dict[str, str | None] = {}
    for entry in experiment.learners:
        chosen = entry.metrics or experiment.metrics
        metrics = list(chosen) if chosen else None
        spec = pm.learner(entry.learner)
        known = spec.signature_params()
        for group, names in (("params", entry.params), ("grid", entry.grid)):
            unknown = sorted(set(names) - set(known))
            if unknown:
                raise ValueError(f"learner {entry.key!r} ({entry.learner}): {group} names "
                                 f"{unknown[0]!r}, which it does not take (parameters: "
                                 f"{', '.join(known)})")
        # every grid point is built (a bad value fails here, not after hours)
        for point in grid_points(entry.grid) or [{}]:
            prepare_evaluation(entry_learner(entry, spec, experiment.seed, point), metrics,
                               entry.threshold, decode=entry.decode)
        learner = entry_learner(entry, spec, experiment.seed)
        if entry.select is not None:
            prepare_evaluation(learner, [entry.select.metric], entry.threshold)
        resolved[entry.key] = resolved_params(learner)
    for ds in experiment.datasets:
        check_dataset(ds, experiment.data_path)
    if experiment.only_folds is not None:
        most = max(d.folds if d.evaluation != "holdout" else 1 for d in experiment.datasets)
        bad = [f for f in experiment.only_folds if f < 0 or f >= most]
        if bad:
            raise ValueError(f"fold {bad[0]} does not exist (folds are 0..{most - 1})")
    return resolved
