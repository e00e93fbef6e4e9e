"""``mlw.load_dataset``: resolve a bundled name or a path, pick the registered loader."""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlw._guard import plugin_call
from mlw.dataset import Dataset
from mlw.files import not_a_file
from mlw.io._common import read_head, strip_compression
from mlw.io._limits import memory_guard
from mlw.io.bundled import BUNDLED, bundled_path
from mlw.params import Spec
from mlw.plugins import get_plugin_manager
from mlw.registry import LoaderSpec
from mlw.validation import require_text

#: Colon-separated folders searched for ``NAME-<split>.arff`` / ``NAME.arff`` when a
#: source is neither a bundled name nor an existing path.
DATA_PATH_ENV = "MLW_DATA_PATH"

_SEARCH_SUFFIXES = (".arff", ".arff.gz", ".arff.bz2")


class DatasetNotFoundError(FileNotFoundError):
    """No dataset answers to a name or path: not bundled, not a file, not found as
    ``NAME-<split>.arff`` nor in ``$MLW_DATA_PATH``, not a generator spec."""


def data_path_candidates(source: str, split: str) -> list[Path]:
    """The files a name stands for, in the order tried: ``NAME-<split>`` and ``NAME``
    with each ARFF suffix, beside it and (for a bare name) in ``$MLW_DATA_PATH``."""
    base = Path(source).expanduser()
    stems = [f"{base}-{split}", str(base)]
    out = [Path(s + suf) for s in stems for suf in _SEARCH_SUFFIXES]
    if not base.is_absolute() and os.sep not in source and "/" not in source:
        for folder in filter(None, os.environ.get(DATA_PATH_ENV, "").split(os.pathsep)):
            d = Path(folder).expanduser()
            out.extend(d / (s + suf) for s in (f"{source}-{split}", source)
                       for suf in _SEARCH_SUFFIXES)
    return out


def resolve_source(source: str | Path, split: str = "train") -> tuple[Path, dict[str, Any]]:
    """The file a source names, and loader defaults (the bundled XML, a dataset name)."""
    if isinstance(source, str) and "/" not in source and os.sep not in source:
        found = bundled_path(source, split) if source.lower() in BUNDLED else None
        if found is not None:
            data, xml = found
            return data, {"xml": xml, "name": f"{source.lower()}-{split}"}
    path = Path(source).expanduser()
    if path.is_file():
        return path, {}
    what = not_a_file(path)
    if what is not None:
        raise ValueError(f"{path} {what}; give a data file")
    for c in data_path_candidates(str(source), split):
        if c.is_file():
            return c, {}
    known = ", ".join(sorted(BUNDLED))
    raise DatasetNotFoundError(f"no dataset {str(source)!r}: not a bundled dataset ({known}), "
                            f"not a file, and not found as NAME-{split}.arff or NAME.arff "
                            f"(also searched ${DATA_PATH_ENV})")


def choose_loader(path: Path, format: str | None = None) -> LoaderSpec:
    """The loader for ``path``: by ``format``, then suffix, then sniffing."""
    pm = get_plugin_manager()
    if format is not None:
        return pm.loader(format)
    loaders = pm.loaders()
    plain, _ = strip_compression(path)
    suffix = plain.suffix.lower()
    if suffix:
        for spec in loaders.values():
            if suffix in spec.suffixes:
                return spec
    head = read_head(path)
    for spec in loaders.values():
        if spec.sniff is not None:
            try:
                if spec.sniff(head):
                    return spec
            except Exception:  # a broken sniffer must not hide the others
                continue
    names = ", ".join(sorted(loaders)) or "none"
    raise ValueError(f"{path.name}: cannot tell the file format (suffix {suffix or 'none'!r} "
                     f"is not claimed and the content is not recognised); pass format= "
                     f"(one of: {names})")


def _check_options(spec: LoaderSpec, options: dict[str, Any]) -> None:
    params = inspect.signature(spec.load).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    unknown = sorted(set(options) - set(params))
    if unknown:
        takes = ", ".join(n for n, p in params.items()
                          if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
                          and n not in ("path", "source")) or "none"
        raise ValueError(f"loader {spec.name!r} does not take option "
                         f"{', '.join(map(repr, unknown))} (options: {takes})")


#: Splits a generated dataset may have, in the order ``split="all"`` joins them.
GENERATED_SPLIT_ORDER = ("train", "validation", "test")
_GENERATED: dict[str, Any] = {}  # a few recent generated datasets, by spec
_GENERATED_KEEP = 8


def parse_generator_spec(source: str) -> tuple[str, dict[str, Any]] | None:
    """``"NAME:key=value,key=value"`` -> ``(NAME, params)`` when ``NAME`` is a registered
    generator (values typed by the generator's defaults, see :mod:`mlw.params`), else
    ``None``. ``seed=S`` among the params seeds the generator (default 0)."""
    name = Spec.name_of(source)
    if name is None:
        return None
    generators = get_plugin_manager().generators()
    if name not in generators:
        return None
    spec = Spec.parse(source, "generator")
    return name, spec.params({"seed": 0, **generators[name].signature_params()})


def has_test_split(source: str | Path) -> bool:
    """Whether ``source`` has a test part apart from its training part: a generator
    whose datasets include a ``test`` split, or a name (bundled, ``DIR/NAME``, in
    ``$MLW_DATA_PATH``) whose train and test splits are different files. A file given
    by its path has none (its one file answers for both splits). The one rule for
    "does this source have a test split" (``mlw fit``, ``mlw bench``, ``split="all"``).
    """
    if isinstance(source, str):
        generated = parse_generator_spec(source)
        if generated is not None:
            out = _generated(*generated)
            return not isinstance(out, Dataset) and "test" in out
    try:
        train, _ = resolve_source(source, "train")
        test, _ = resolve_source(source, "test")
    except DatasetNotFoundError:
        return False
    return train.resolve() != test.resolve()


def _generated(name: str, params: dict[str, Any]) -> Any:
    key = f"{name}:{sorted(params.items())!r}"
    if key not in _GENERATED:
        if len(_GENERATED) >= _GENERATED_KEEP:
            _GENERATED.pop(next(iter(_GENERATED)))
        options = dict(params)
        seed = options.pop("seed", 0)
        with plugin_call("generator", name, "generate"):
            _GENERATED[key] = get_plugin_manager().generator(name).load()(seed=seed,
                                                                            **options)
    return _GENERATED[key]


def _generated_split(source: str, name: str, params: dict[str, Any], split: str) -> Dataset:
    out = _generated(name, params)
    if isinstance(out, Dataset):
        if split in ("train", "all"):
            return out
        raise DatasetNotFoundError(f"{source}: generator {name!r} makes one dataset, "
                                   f"without a {split!r} split")
    if split == "all":
        parts = [out[s] for s in GENERATED_SPLIT_ORDER if s in out]
        parts += [d for s, d in out.items() if s not in GENERATED_SPLIT_ORDER]
        return Dataset.concat(parts, name=name)
    if split not in out:
        raise DatasetNotFoundError(f"{source}: generator {name!r} has no split {split!r} "
                                   f"(splits: {', '.join(out)})")
    result: Dataset = out[split]
    return result


def load_dataset(source: str | Path, *, split: str = "train", format: str | None = None,
                 xml: str | Path | bool | None = None, n_labels: int | None = None,
                 label_columns: Sequence[str] | None = None, **options: Any) -> Dataset:
    """Load a multi-label dataset from a bundled name or a file.

    Parameters
    ----------
    source : str or Path
        A bundled dataset name (``"emotions"``, see :func:`mlw.io.bundled_datasets`) or a
        path. A path that does not exist is also tried as ``<source>-<split>.arff`` and
        ``<source>.arff`` (also ``.gz``/``.bz2``), and a bare name is searched in the
        folders of ``$MLW_DATA_PATH``.
    split : str
        ``"train"`` or ``"test"`` part of a bundled (or searched) dataset, or ``"all"``
        for both joined (train rows first). Ignored for a path to an existing file. A
        generated dataset (``"NAME:key=value,..."`` naming a registered generator,
        e.g. ``"synthetic:labels=25,cardinality=3,seed=1"``) has the generator's splits
        (often ``"train"``, ``"validation"``, ``"test"``).
    format : str, optional
        A registered loader name (``"arff"``, ``"xc"``, ``"csv"``, ``"parquet"``, or a
        plugin's). By default the loader is chosen by suffix (``.gz``/``.bz2`` stripped),
        then by sniffing the first bytes.
    xml : path or bool, optional
        Mulan label file (ARFF only). By default ``NAME.xml`` beside ``NAME-train.arff``
        is used when it exists; ``False`` ignores it.
    n_labels : int, optional
        Number of label columns: the first ``N``, or with ``-N`` the last ``N`` (MEKA's
        ``-C`` convention). For ARFF it overrides the XML and the relation name.
    label_columns : list of str, optional
        Names of the label columns, in order (ARFF, CSV, Parquet).
    **options
        Passed to the loader (e.g. ``sparse=False`` for ARFF).

    Returns
    -------
    Dataset
        ``X`` float64 (ndarray, or CSR for sparse files), ``Y`` uint8 (ndarray or CSR),
        names, and ``provenance`` (path, format, how labels were chosen, drops).

    Raises
    ------
    FileNotFoundError
        Nothing found for ``source``.
    ValueError
        A malformed file; the one-line message names the file, line and reason.

    Examples
    --------
    >>> import mlw
    >>> ds = mlw.load_dataset("emotions")
    >>> ds.X.shape, ds.Y.shape
    ((391, 72), (391, 6))
    >>> mlw.load_dataset("emotions", split="test").n_instances
    202
    """
    if isinstance(source, str):
        require_text(source, "the dataset name or path")
    if isinstance(source, str):
        generated = parse_generator_spec(source)
        if generated is not None:
            return _generated_split(source, *generated, split)
    if split == "all":
        return _load_all(source, format=format, xml=xml, n_labels=n_labels,
                         label_columns=label_columns, **options)
    path, defaults = resolve_source(source, split)
    spec = choose_loader(path, format)
    kwargs: dict[str, Any] = {}
    if spec.name == "arff":
        kwargs.update(defaults)
    for key, value in (("xml", xml), ("n_labels", n_labels), ("label_columns", label_columns)):
        if value is not None:
            kwargs[key] = value
    kwargs.update(options)
    _check_options(spec, kwargs)
    # a plugin's loader too: MemoryError -> LimitError (exit 2); its own bug -> PluginError
    with memory_guard(path), plugin_call("loader", spec.name, "load"):
        return spec.load(path, **kwargs)


def _load_all(source: str | Path, **kwargs: Any) -> Dataset:
    """Every row a source has: its train and test splits joined (train rows first) when
    it has both (:func:`has_test_split`), else the one file."""
    train = load_dataset(source, split="train", **kwargs)
    if not has_test_split(source):
        return train
    test = load_dataset(source, split="test", **kwargs)
    name = Path(str(source)).name if not isinstance(source, str) or "/" in source else source
    return Dataset.concat([train, test], name=name)
