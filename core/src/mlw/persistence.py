"""Saving and loading fitted models, and atomic file writes.

A model file is::

    MLWMODEL\\n                      magic line
    <header length>\\n               decimal byte length of the JSON header
    <JSON header>                    format, mlw and plugin versions, learner, params, ...
    <pickle of the model>

The header is readable without unpickling anything (:func:`read_header`), so
:func:`load_model` can refuse a file written under an incompatible mlw or learner
plugin *before* running any of its code:

- a different **major** version of ``mlw`` or of the distribution that registers the
  model's learner, or that distribution missing: :class:`ModelVersionError`;
- a different minor or patch version: :class:`ModelVersionWarning` and the model loads.

Every write goes to a temporary file in the destination folder, is flushed and
``fsync``-ed, then moved over the destination with ``os.replace``: an interrupted or
crashed write (Ctrl-C, an exception while pickling, a killed process) never leaves a
half-written file under the destination name, and an existing file stays intact.

.. warning:: A model file is a pickle: load only files you trust.
"""

from __future__ import annotations

import json
import os
import pickle
import time
import warnings
from pathlib import Path
from typing import IO, Any

from mlw._atomic import atomic_write
from mlw.jsonsafe import to_jsonable
from mlw.plugins import CORE_DISTRIBUTION, get_plugin_manager

__all__ = [
    "ModelFileError",
    "ModelVersionError",
    "ModelVersionWarning",
    "atomic_write",
    "learner_name_of",
    "load_model",
    "read_header",
    "save_model",
]

MAGIC = b"MLWMODEL\n"
FORMAT_VERSION = 1


class ModelFileError(ValueError):
    """The file is not an mlw model file, or it is truncated or corrupt."""


class ModelVersionError(ModelFileError):
    """The model was saved under an incompatible mlw or plugin version."""


class ModelVersionWarning(UserWarning):
    """The model was saved under another minor or patch version of mlw or its plugin."""


def learner_name_of(model: Any) -> str | None:
    """The registered learner name whose factory is ``type(model)``, if any."""
    cls = type(model)
    specs = get_plugin_manager().learners()
    for name, spec in specs.items():  # without importing any other plugin's learners
        if spec.factory is cls or spec.factory == f"{cls.__module__}:{cls.__qualname__}":
            return name
    top = cls.__module__.split(".")[0]
    for name, spec in specs.items():  # a path through a re-export of the same package
        if isinstance(spec.factory, str) and spec.factory.split(".")[0].split(":")[0] == top:
            if spec.load() is cls:
                return name
    return None


def save_model(model: Any, path: str | os.PathLike[str], *,
               metadata: dict[str, Any] | None = None) -> Path:
    """Save a fitted model to ``path`` atomically, with a versioned header.

    Parameters
    ----------
    model : a fitted learner (anything picklable)
    path : destination file (its folder must exist)
    metadata : JSON-serialisable extras stored in the header (the CLI records the
        dataset name, label and feature names)

    Returns
    -------
    The path written.

    Examples
    --------
    >>> import pathlib, tempfile, numpy as np, mlw
    >>> X, Y = np.eye(4), np.array([[1, 0], [0, 1], [1, 0], [0, 1]])
    >>> model = mlw.get_learner("br").fit(X, Y)
    >>> path = save_model(model, pathlib.Path(tempfile.mkdtemp()) / "br.mlw",
    ...                   metadata={"dataset": "toy"})
    >>> load_model(path).predict(X).shape
    (4, 2)
    """
    pm = get_plugin_manager()
    name = learner_name_of(model)
    owner = pm.owner("learner", name) if name else None
    params = model.get_params(deep=False) if hasattr(model, "get_params") else {}
    header = {
        "format": FORMAT_VERSION,
        "mlw_version": pm.versions()[CORE_DISTRIBUTION],
        "plugins": pm.versions(),
        "learner": name,
        "learner_class": f"{type(model).__module__}.{type(model).__qualname__}",
        "learner_distribution": owner.distribution if owner else None,
        "params": to_jsonable(params),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "metadata": to_jsonable(metadata or {}),
    }
    blob = json.dumps(header, sort_keys=True).encode("utf-8")
    target = Path(path)
    with atomic_write(target, "wb") as fh:
        fh.write(MAGIC)
        fh.write(str(len(blob)).encode("ascii") + b"\n")
        fh.write(blob)
        pickle.dump(model, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return target


def _read_header(fh: IO[bytes], path: Path) -> dict[str, Any]:
    if fh.read(len(MAGIC)) != MAGIC:
        raise ModelFileError(f"{path}: not an mlw model file (no MLWMODEL header)")
    line = fh.readline(32)
    try:
        size = int(line.decode("ascii").strip())
        header = json.loads(fh.read(size).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{path}: corrupt model header ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT_VERSION:
        raise ModelFileError(f"{path}: unsupported model file format "
                             f"{header.get('format') if isinstance(header, dict) else header!r}")
    return header


def read_header(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON header of a model file, without unpickling the model."""
    p = Path(path)
    with open(p, "rb") as fh:
        return _read_header(fh, p)


def _major_minor(version: str | None) -> tuple[str, str] | None:
    if not version:
        return None
    parts = version.split("+")[0].split(".")
    return parts[0], ".".join(parts[:3])


def check_versions(header: dict[str, Any], path: Path) -> None:
    """Refuse (major version change, plugin missing) or warn (minor/patch change)."""
    pm = get_plugin_manager()
    current = pm.versions()
    needed: dict[str, str | None] = {CORE_DISTRIBUTION: header.get("mlw_version")}
    dist = header.get("learner_distribution")
    if dist and dist not in (CORE_DISTRIBUTION, "mlw"):
        needed[dist] = header.get("plugins", {}).get(dist)
    for dist_name, saved in needed.items():
        if dist_name not in current:
            raise ModelVersionError(
                f"{path}: the model needs the plugin distribution {dist_name!r} "
                f"(version {saved}), which is not installed or not loaded")
        now = current[dist_name]
        s, c = _major_minor(saved), _major_minor(now)
        if s is None or c is None or s == c:
            continue
        if s[0] != c[0]:
            raise ModelVersionError(
                f"{path}: saved with {dist_name} {saved}, but {now} is installed (a different "
                f"major version); refit the model or install {dist_name}=={saved}")
        warnings.warn(f"{path}: saved with {dist_name} {saved}, loading under {now}",
                      ModelVersionWarning, stacklevel=3)


def load_model(path: str | os.PathLike[str], *, check: bool = True) -> Any:
    """Load a model saved by :func:`save_model`.

    The header is checked first (see the module documentation): a major version change
    of mlw or of the learner's plugin, or that plugin missing, raises
    :class:`ModelVersionError`; a minor or patch change warns with
    :class:`ModelVersionWarning`. ``check=False`` skips the version check (at your own
    risk). The file is a pickle: load only files you trust.

    Use :func:`read_header` for the header (versions, learner, metadata).
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"model file not found: {p}")
    with open(p, "rb") as fh:
        header = _read_header(fh, p)
        if check:
            check_versions(header, p)
        try:
            model = pickle.load(fh)
        except (EOFError, pickle.UnpicklingError) as exc:
            raise ModelFileError(f"{p}: truncated or corrupt model data ({exc})") from None
        except (ImportError, AttributeError) as exc:
            raise ModelVersionError(
                f"{p}: the model needs code that is not installed or has changed "
                f"({type(exc).__name__}: {exc}); saved with {header.get('plugins')}") from None
    return model
