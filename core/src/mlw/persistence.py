"""Saving and loading fitted models: versioned, checksummed, and safe to load.

A model file is::

    MLWMODEL\\n                      magic line
    <header length>\\n               decimal byte length of the JSON header
    <JSON header>                    format, versions, learner and its class, checksum, ...
    <payload>                        the model, pickled (protocol 5)

What loading guarantees (:func:`load_model`):

- **Integrity.** The header carries ``sha256``, the SHA-256 of the header itself (as
  canonical JSON, without that field) followed by the payload, and ``payload_bytes``. A
  changed, truncated or extended file is refused before anything is unpickled. The
  checksum detects damage and editing; it does not say who wrote the file.
- **No code but declared model state.** The payload is unpickled by an allow-listing
  unpickler: the only classes and functions it may name are those mlw declares
  (:data:`CORE_MODEL_TYPES`: numpy arrays, dtypes and random generators, scipy sparse
  matrices), the registered thresholding strategies, the class of the learner the header
  names, and the types that learner's plugin declares as its model state
  (``LearnerSpec.model_types``). Anything else in the file (``os.system``,
  ``subprocess.Popen``, ``builtins.eval``, ``functools.partial``, any other class) is
  refused with :class:`UntrustedModelError` before it is looked up, so a planted
  ``__reduce__`` payload never runs. ``trusted=[...]`` adds types for one call (a model
  whose ``base_estimator`` is a scikit-learn classifier its plugin does not declare).
- **The right learner.** The unpickled object must be an instance of the class the
  header names, which must be the class registered under the header's learner name.
- **Compatible versions.** A different major version of ``mlw-core`` or of the
  learner's plugin distribution, or that plugin missing: :class:`ModelVersionError`; a
  minor or patch difference: :class:`ModelVersionWarning`.

What it does not guarantee: the *values* inside the model are not validated beyond the
structure of sparse matrices; a deliberately crafted file can still make a model
predict nonsense or exhaust memory while loading (reported as :class:`ModelFileError`).

Why an allow-listing unpickler rather than ``skops.io``: pickle reaches code only
through one method, ``Unpickler.find_class``; restricting it to a closed set of types is
a small mechanism that can be read in one sitting, keeps every model that pickles today
loadable (Cython trees of scikit-learn, numba-friendly arrays, plugins' own classes)
and adds no dependency, while skops reimplements object reconstruction for a large
schema of node types (and had several trusted-type bypasses fixed in 2024-2025).

Every write goes through :func:`mlw.files.atomic_write`: nothing half-written is ever
left under the destination name.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import io
import json
import os
import pickle
import pickletools
import time
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from mlw.files import atomic_write, not_a_file
from mlw.jsonsafe import to_jsonable
from mlw.plugins import CORE_DISTRIBUTION, get_plugin_manager

__all__ = [
    "CORE_MODEL_TYPES",
    "ModelFileError",
    "ModelTrustWarning",
    "ModelVersionError",
    "ModelVersionWarning",
    "UntrustedModelError",
    "atomic_write",
    "learner_name_of",
    "load_model",
    "read_header",
    "save_model",
    "untrusted_types",
]

MAGIC = b"MLWMODEL\n"
FORMAT_VERSION = 2
PICKLE_PROTOCOL = 5
#: A header larger than this is not one we wrote.
MAX_HEADER_BYTES = 64 << 20

#: The types mlw itself declares as model state: what numpy arrays, dtypes, scalars and
#: random generators and scipy sparse matrices pickle into (protocol 5), and the core's
#: own model-state classes. Each entry is an import path ``"module:qualname"``; how
#: pickle names it is read from the object.
CORE_MODEL_TYPES: tuple[str, ...] = (
    "builtins:complex",
    "builtins:slice",
    "mlw.neighbors:NeighborIndex",
    "collections:OrderedDict",
    "numpy:ndarray",
    "numpy:dtype",
    "numpy._core.multiarray:_reconstruct",
    "numpy._core.multiarray:scalar",
    "numpy._core.numeric:_frombuffer",
    "numpy.random._pickle:__generator_ctor",
    "numpy.random._pickle:__bit_generator_ctor",
    "numpy.random._pickle:__randomstate_ctor",
    "numpy.random:Generator",
    "numpy.random:RandomState",
    "numpy.random:SeedSequence",
    "numpy.random.bit_generator:__pyx_unpickle_SeedSequence",
    "numpy.random:MT19937",
    "numpy.random:PCG64",
    "numpy.random:PCG64DXSM",
    "numpy.random:Philox",
    "numpy.random:SFC64",
    "scipy.sparse:csr_matrix",
    "scipy.sparse:csc_matrix",
    "scipy.sparse:coo_matrix",
    "scipy.sparse:csr_array",
    "scipy.sparse:csc_array",
    "scipy.sparse:coo_array",
)

#: The core's learners that wrap another learner (held as ``estimator_``), by the class
#: text a header records, with the types they hold besides it. A model file of one is
#: trusted for these and for what the wrapped learner's registration trusts; the header
#: names the wrapped learner as ``wrapped_learner``.
CORE_WRAPPERS: dict[str, tuple[str, ...]] = {
    "mlw.conformal.ConformalLabelSets": ("mlw.conformal:ConformalLabelSets",),
    "mlw.conformal.ConformalRecall": ("mlw.conformal:ConformalRecall",),
    "mlw.calibration.CalibratedLearner": ("mlw.calibration:CalibratedLearner",
                                          "sklearn.isotonic:IsotonicRegression",
                                          "sklearn.linear_model:LogisticRegression"),
}


class ModelFileError(ValueError):
    """The file is not an mlw model file, or it is truncated, changed or corrupt."""

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None) -> None:
        super().__init__(message)
        self.path = None if path is None else str(path)


class ModelVersionError(ModelFileError):
    """The model was saved under an incompatible mlw or plugin version."""


class UntrustedModelError(ModelFileError):
    """The payload names classes or functions that nobody declared as model state."""

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None,
                 types: Iterable[str] = ()) -> None:
        super().__init__(message, path)
        self.types = list(types)


class ModelVersionWarning(UserWarning):
    """The model was saved under another minor or patch version of mlw or its plugin."""


class ModelTrustWarning(UserWarning):
    """A saved model holds types its learner does not declare: loading it will need
    ``trusted=[...]``."""


# -- type keys ---------------------------------------------------------------------------

Key = tuple[str, str]


def _split(name: str) -> Key:
    """``"pkg.mod:Outer.Inner"`` or ``"pkg.mod.Name"`` -> ``("pkg.mod", "Outer.Inner")``."""
    if ":" in name:
        module, _, qual = name.partition(":")
    else:
        module, _, qual = name.rpartition(".")
    return module, qual


def _key_text(key: Key) -> str:
    return f"{key[0]}.{key[1]}"


def _aliases(key: Key) -> set[Key]:
    """numpy 1.x pickles say ``numpy.core.X`` where numpy 2 says ``numpy._core.X``."""
    module, name = key
    out = {key}
    if module.startswith("numpy._core."):
        out.add(("numpy.core." + module[len("numpy._core."):], name))
    elif module.startswith("numpy.core."):
        out.add(("numpy._core." + module[len("numpy.core."):], name))
    return out


def _resolve(target: str) -> Any:
    module, qual = _split(target)
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def _pickled_key(obj: Any) -> Key | None:
    """How pickle refers to ``obj`` (a class or function), read from pickling it."""
    try:
        data = pickle.dumps(obj, protocol=PICKLE_PROTOCOL)
    except Exception:
        return None
    refs = _globals_in(data)
    return refs[0] if len(refs) == 1 else None


def _keys_of(declared: Any) -> set[Key]:
    """Keys of a declaration: an import string (its text, and how pickle names the
    object it resolves to) or a class/function object."""
    keys: set[Key] = set()
    if isinstance(declared, str):
        keys.add(_split(declared))
        try:
            obj = _resolve(declared)
        except Exception:  # not importable here: the text alone
            obj = None
    else:
        obj = declared
    if obj is not None:
        module, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if isinstance(module, str) and isinstance(qual, str):
            keys.add((module, qual))
        pickled = _pickled_key(obj)
        if pickled is not None:
            keys.add(pickled)
    out: set[Key] = set()
    for k in keys:
        out |= _aliases(k)
    return out


def _factory_class(spec: Any) -> type | None:
    """The class a learner or threshold registration builds (imports it)."""
    try:
        if hasattr(spec, "learner_class"):
            return spec.learner_class()
        factory = spec.load()
    except Exception:
        return None
    return factory if inspect.isclass(factory) else None


class _Trust:
    """The (module, name) pairs a model may name. Declarations given as import paths
    are matched by their text first and imported only when a reference is not found
    (``"sklearn.linear_model:LogisticRegression"`` pickles as
    ``sklearn.linear_model._logistic.LogisticRegression``), so checking a model imports
    no plugin it does not use."""

    def __init__(self, declarations: Iterable[Any]) -> None:
        self._keys: set[Key] = set()
        self._pending: list[Any] = []
        for declared in declarations:
            if isinstance(declared, str):
                self._keys |= _aliases(_split(declared))
                self._pending.append(declared)
            elif declared is not None:
                self._keys |= _keys_of(declared)

    def __contains__(self, key: object) -> bool:
        if key in self._keys:
            return True
        while self._pending:
            self._keys |= _keys_of(self._pending.pop())
            if key in self._keys:
                return True
        return False


def _learner_spec(name: str | None, plugin: str | None = None) -> Any:
    """The registration of learner ``name`` (by ``plugin`` when given), or None."""
    if name is None:
        return None
    pm = get_plugin_manager()
    if plugin and ":" not in name:
        try:
            return pm.learner(f"{plugin}:{name}")
        except LookupError:
            pass
    try:
        return pm.learner(name)
    except LookupError:
        return None


def _trusted(spec: Any, trusted: Iterable[Any] = ()) -> _Trust:
    """Everything a model of the registered learner ``spec`` may name: the core's
    model types, the registered thresholding strategies, the learner's class and the
    types its plugin declares, and ``trusted``."""
    pm = get_plugin_manager()
    declarations: list[Any] = list(CORE_MODEL_TYPES)
    declarations += [t.factory if isinstance(t.factory, str) else _factory_class(t)
                     for t in pm.thresholds().values()]
    if spec is not None:
        declarations.append(spec.factory if isinstance(spec.factory, str)
                            else _factory_class(spec))
        declarations += list(getattr(spec, "model_types", ()) or ())
    declarations += list(trusted)
    return _Trust(declarations)


# -- reading the globals a pickle names, without running it ------------------------------

_STRING_OPS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "STRING",
               "BINSTRING", "SHORT_BINSTRING"}
_GET_OPS = {"GET", "BINGET", "LONG_BINGET"}
_PUT_OPS = {"PUT", "BINPUT", "LONG_BINPUT"}


def _globals_in(data: bytes | memoryview) -> list[Key]:
    """The (module, name) pairs a pickle refers to, in order, found by reading its
    opcodes (nothing is imported or called). A reference whose strings cannot be
    followed statically is reported as ``("?", "?")``; the restricted unpickler refuses
    it anyway when it is reached."""
    out: list[Key] = []
    seen: set[Key] = set()
    memo: dict[int, Any] = {}
    prev: Any = None
    top: Any = None
    stream = io.BytesIO(data) if isinstance(data, memoryview) else data
    for op, arg, _ in pickletools.genops(stream):
        name = op.name
        if name in _STRING_OPS:
            prev, top = top, arg
        elif name == "MEMOIZE":
            memo[len(memo)] = top
        elif name in _PUT_OPS:
            memo[int(arg)] = top
        elif name in _GET_OPS:
            prev, top = top, memo.get(int(arg))
        elif name in ("GLOBAL", "INST"):
            module, _, qual = str(arg).partition(" ")
            key = (module, qual)
            if key not in seen:
                seen.add(key)
                out.append(key)
            prev, top = top, ("global", key)
        elif name == "STACK_GLOBAL":
            key = (prev, top) if isinstance(prev, str) and isinstance(top, str) else ("?", "?")
            if key not in seen:
                seen.add(key)
                out.append(key)
            prev, top = None, ("global", key)
        elif name in ("EXT1", "EXT2", "EXT4"):
            key = ("?", f"extension {arg}")
            if key not in seen:
                seen.add(key)
                out.append(key)
            prev, top = top, None
        elif name in ("FRAME", "PROTO", "STOP", "MARK"):
            continue
        else:
            prev, top = top, None
    return out


class _RestrictedUnpickler(pickle.Unpickler):
    """Looks up only the allowed (module, name) pairs; refuses everything else before
    importing anything."""

    def __init__(self, file: IO[bytes], allowed: _Trust, path: Path) -> None:
        super().__init__(file)
        self._allowed = allowed
        self._path = path

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in self._allowed:
            raise UntrustedModelError(
                f"{self._path}: the model names {module}.{name}, which is not declared as "
                f"model state by mlw or the learner's plugin; refused without loading it",
                self._path, [f"{module}.{name}"])
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("persistent references are not allowed in a model file")


def untrusted_types(model_or_payload: Any, *, learner: str | None = None,
                    trusted: Iterable[Any] = ()) -> list[str]:
    """The types a model (or a pickle payload) names that loading it as ``learner``
    would refuse: what a plugin must add to ``LearnerSpec.model_types``.

    ``learner`` defaults to the registered name of the model's class.

    Examples
    --------
    >>> import numpy as np
    >>> untrusted_types({"w": np.zeros(3)})
    []
    """
    if isinstance(model_or_payload, (bytes, bytearray, memoryview)):
        payload = bytes(model_or_payload)
    else:
        payload = pickle.dumps(model_or_payload, protocol=PICKLE_PROTOCOL)
        if learner is None:
            learner = learner_name_of(model_or_payload)
    allowed = _trusted(_learner_spec(learner), trusted)
    return [_key_text(k) for k in _globals_in(payload) if k not in allowed]


# -- saving ------------------------------------------------------------------------------


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


def _canonical(header: dict[str, Any]) -> bytes:
    body = {k: v for k, v in header.items() if k != "sha256"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def _digest(header: dict[str, Any], payload: bytes | memoryview) -> str:
    h = hashlib.sha256(_canonical(header))
    h.update(b"\n")
    h.update(payload)
    return h.hexdigest()


def save_model(model: Any, path: str | os.PathLike[str], *,
               metadata: dict[str, Any] | None = None) -> Path:
    """Save a fitted model to ``path`` atomically, with a versioned, checksummed header.

    Parameters
    ----------
    model : a fitted learner (anything picklable)
    path : destination file (its folder must exist)
    metadata : JSON-serialisable extras stored in the header (the CLI records the
        dataset name, the label and feature names and the training data's encoding)

    Returns
    -------
    The path written.

    Warns
    -----
    ModelTrustWarning
        The model holds types that neither mlw nor its learner's plugin declares as
        model state, so :func:`load_model` will need them in ``trusted=``.

    Examples
    --------
    >>> import tempfile, pathlib, mlw
    >>> train = mlw.load_dataset("emotions")
    >>> model = mlw.get_learner("br").fit(train.X, train.Y)
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> save_model(model, folder / "br.mlw", metadata={"dataset": "emotions"}).name
    'br.mlw'
    >>> read_header(folder / "br.mlw")["learner"], read_header(folder / "br.mlw")["metadata"]
    ('br', {'dataset': 'emotions'})
    >>> bool((load_model(folder / "br.mlw").predict(train.X) == model.predict(train.X)).all())
    True
    >>> import shutil; shutil.rmtree(folder)
    """
    if str(path) == "":
        raise ValueError("cannot save a model to an empty path")
    pm = get_plugin_manager()
    name = learner_name_of(model)
    owner = pm.owner("learner", name) if name else None
    params = model.get_params(deep=False) if hasattr(model, "get_params") else {}
    target = Path(path)
    with atomic_write(target, "wb") as fh:
        buffer = io.BytesIO()
        pickle.dump(model, buffer, protocol=PICKLE_PROTOCOL)
        payload = buffer.getvalue()
        del buffer
        refs = _globals_in(payload)
        cls_text = f"{type(model).__module__}.{type(model).__qualname__}"
        wrapped = (learner_name_of(model.estimator_)
                   if cls_text in CORE_WRAPPERS and hasattr(model, "estimator_") else None)
        allowed = _trusted(_learner_spec(name or wrapped), CORE_WRAPPERS.get(cls_text, ()))
        types = [_key_text(k) for k in refs]
        missing = [_key_text(k) for k in refs if k not in allowed]
        header: dict[str, Any] = {
            "format": FORMAT_VERSION,
            "mlw_version": pm.versions()[CORE_DISTRIBUTION],
            "plugins": pm.versions(),
            "learner": name,
            "learner_class": cls_text,
            "learner_distribution": owner.distribution if owner else None,
            "learner_plugin": owner.name if owner else None,
            "params": to_jsonable(params),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "metadata": to_jsonable(metadata or {}),
            "payload": f"pickle protocol {PICKLE_PROTOCOL}",
            "payload_bytes": len(payload),
            "types": types,
        }
        if wrapped is not None:
            header["wrapped_learner"] = wrapped
        header["sha256"] = _digest(header, payload)
        blob = json.dumps(header, sort_keys=True).encode("utf-8")
        fh.write(MAGIC)
        fh.write(str(len(blob)).encode("ascii") + b"\n")
        fh.write(blob)
        fh.write(payload)
        del payload
    if missing:
        who = f"learner {name!r}" if name else f"{type(model).__qualname__} (not a registered " \
                                                f"learner)"
        warnings.warn(f"{target}: the model holds {', '.join(missing)}, which neither mlw nor "
                      f"{who} declares as model state; load it with "
                      f"mlw.load_model(path, trusted={missing!r}) if you trust it",
                      ModelTrustWarning, stacklevel=2)
    return target


# -- loading -----------------------------------------------------------------------------


def _read_header(fh: IO[bytes], path: Path) -> dict[str, Any]:
    if fh.read(len(MAGIC)) != MAGIC:
        raise ModelFileError(f"{path}: not an mlw model file (no MLWMODEL header)", path)
    line = fh.readline(32)
    try:
        size = int(line.decode("ascii").strip())
        if not 0 < size <= MAX_HEADER_BYTES:
            raise ValueError(f"header length {size}")
        raw = fh.read(size)
        if len(raw) != size:
            raise ValueError("the file ends inside the header")
        header = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        msg = " ".join(str(exc).split())[:200]
        raise ModelFileError(f"{path}: corrupt model header ({msg})", path) from None
    if not isinstance(header, dict):
        raise ModelFileError(f"{path}: corrupt model header (not a JSON object)", path)
    fmt = header.get("format")
    if fmt == 1:
        raise ModelVersionError(
            f"{path}: written by an earlier mlw (model format 1: no checksum, unrestricted "
            f"pickle), which cannot be loaded safely; fit and save the model again", path)
    if fmt != FORMAT_VERSION:
        raise ModelFileError(f"{path}: unsupported model file format {fmt!r}", path)
    for field, kinds in (("learner", (str, type(None))), ("learner_class", (str,)),
                         ("learner_distribution", (str, type(None))), ("sha256", (str,)),
                         ("payload_bytes", (int,)), ("plugins", (dict,)),
                         ("metadata", (dict,))):
        if not isinstance(header.get(field), kinds) or isinstance(header.get(field), bool):
            raise ModelFileError(f"{path}: corrupt model header ({field!r} is missing or has "
                                 f"the wrong type)", path)
    return header


def read_header(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON header of a model file, without unpickling the model (not verified:
    :func:`load_model` checks it against its checksum)."""
    p = Path(path)
    with open(p, "rb") as fh:
        return _read_header(fh, p)


def _major_minor(version: Any) -> tuple[str, str] | None:
    if not version or not isinstance(version, str):
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
                f"(version {saved}), which is not installed or not loaded", path)
        now = current[dist_name]
        s, c = _major_minor(saved), _major_minor(now)
        if s is None or c is None or s == c:
            continue
        if s[0] != c[0]:
            raise ModelVersionError(
                f"{path}: saved with {dist_name} {saved}, but {now} is installed (a different "
                f"major version); refit the model or install {dist_name}=={saved}", path)
        warnings.warn(f"{path}: saved with {dist_name} {saved}, loading under {now}",
                      ModelVersionWarning, stacklevel=3)


def _check_learner(header: dict[str, Any], path: Path) -> Any:
    """The registration of the header's learner, whose class must be the header's
    learner class (``None`` for a model of an unregistered class)."""
    name = header["learner"]
    if name is None:
        return None
    plugin = header.get("learner_plugin")
    spec = _learner_spec(name, plugin if isinstance(plugin, str) else None)
    if spec is None:
        raise ModelVersionError(f"{path}: the model is a {name!r} learner, which no installed "
                                f"plugin registers", path)
    cls = _factory_class(spec)
    if cls is None:
        raise ModelVersionError(f"{path}: the code of learner {name!r} cannot be imported "
                                f"(plugin {spec.plugin!r})", path)
    registered = f"{cls.__module__}.{cls.__qualname__}"
    if registered != header["learner_class"]:
        raise ModelFileError(
            f"{path}: the header says learner {name!r} is {header['learner_class']}, but "
            f"{name!r} is {registered} here", path)
    return spec


def _validate_state(model: Any, path: Path) -> None:
    """Sparse matrices anywhere in the model must be structurally valid (kernels index
    with their arrays)."""
    import scipy.sparse as sp

    stack = [model]
    seen: set[int] = set()
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if sp.issparse(obj):
            try:
                obj.check_format(full_check=True) if hasattr(obj, "check_format") else None
            except Exception as exc:
                raise ModelFileError(f"{path}: corrupt model data (an invalid sparse matrix: "
                                     f"{exc})", path) from None
            continue
        if isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif hasattr(obj, "__dict__") and not isinstance(obj, type):
            stack.extend(vars(obj).values())


def load_model(path: str | os.PathLike[str], *, check: bool = True,
               trusted: Iterable[Any] = ()) -> Any:
    """Load a model saved by :func:`save_model`, safely (see the module documentation).

    Parameters
    ----------
    path : the model file
    check : ``False`` skips the version check (never the checksum or the allow-list)
    trusted : extra classes or functions the payload may name, as objects or import
        strings (``"sklearn.svm:SVC"``), for a model holding types its plugin does not
        declare. Only for files you trust.

    Raises
    ------
    FileNotFoundError
        No such file.
    ModelFileError
        Not a model file; truncated, changed or damaged (checksum); a header that does
        not match the payload's learner; corrupt model data.
    UntrustedModelError
        The payload names types nobody declared (a ``ModelFileError``); nothing of it
        was run.
    ModelVersionError
        Incompatible versions, or the learner's plugin or code is not installed.
    """
    p = Path(path)
    if str(path) == "":
        raise ValueError("the model path is empty")
    if not p.is_file():
        what = not_a_file(p)
        if what is not None:
            raise ValueError(f"model file {p} {what}, not a model file")
        raise FileNotFoundError(f"model file not found: {p}")
    with open(p, "rb") as fh:
        header = _read_header(fh, p)
        start = fh.tell()
        size = os.fstat(fh.fileno()).st_size
        expected = header["payload_bytes"]
        if size - start != expected:
            how = ("is truncated" if size - start < expected
                   else "has extra bytes after the model data")
            raise ModelFileError(f"{p}: the file {how} (the header says {expected} bytes of "
                                 f"model data, the file has {size - start})", p)
        try:
            payload = fh.read()
        except MemoryError:
            raise ModelFileError(f"{p}: the model is too large to load", p) from None
    try:
        digest = _digest(header, payload)
    except (ValueError, TypeError):
        digest = None
    if digest != header["sha256"]:
        raise ModelFileError(f"{p}: checksum mismatch: the file was changed or damaged after it "
                             f"was written", p)
    if check:
        check_versions(header, p)
    spec = _check_learner(header, p)
    wrapper_types = CORE_WRAPPERS.get(header["learner_class"], ()) if spec is None else ()
    if wrapper_types:
        wrapped = header.get("wrapped_learner")
        spec = _learner_spec(wrapped if isinstance(wrapped, str) else None)
    allowed = _trusted(spec, [*trusted, *wrapper_types])
    try:
        refs = _globals_in(payload)
    except Exception as exc:
        raise ModelFileError(f"{p}: corrupt model data ({type(exc).__name__}: "
                             f"{' '.join(str(exc).split())[:200]})", p) from None
    refused = [_key_text(k) for k in refs if k not in allowed]
    if refused:
        shown = ", ".join(refused[:4]) + (f" and {len(refused) - 4} more" if len(refused) > 4
                                          else "")
        raise UntrustedModelError(
            f"{p}: refused: the model names {shown}, which mlw and the learner's plugin do not "
            f"declare as model state (nothing was loaded; if you trust the file, pass "
            f"trusted=[...] to mlw.load_model)", p, refused)
    try:
        model = _RestrictedUnpickler(io.BytesIO(payload), allowed, p).load()
    except ModelFileError:
        raise
    except (ImportError, AttributeError) as exc:
        raise ModelVersionError(
            f"{p}: the model needs code that is not installed or has changed "
            f"({type(exc).__name__}: {exc}); saved with {header.get('plugins')}", p) from None
    except (Exception, RecursionError, MemoryError) as exc:
        msg = " ".join(str(exc).split())[:200]
        raise ModelFileError(f"{p}: truncated or corrupt model data ({type(exc).__name__}: "
                             f"{msg})", p) from None
    actual = f"{type(model).__module__}.{type(model).__qualname__}"
    if actual != header["learner_class"]:
        raise ModelFileError(f"{p}: the header says {header['learner_class']}, but the model "
                             f"data holds {actual}", p)
    _validate_state(model, p)
    return model
