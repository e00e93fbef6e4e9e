"""Plugin discovery and the registry: a small typed façade over pluggy.

The rest of mlw calls the typed methods of :class:`PluginManager` (``learner("xdcc")``,
``metrics()``, ...), never ``pm.hook.x(...)`` directly. Plugins are loaded in this
order: the internal plugins of :data:`DEFAULT_PLUGINS`, then every entry point of the
group ``mlw`` sorted by name. Each plugin's hooks are called one plugin at a time, so a
plugin that fails to import, raises while registering, or registers something
malformed is marked *broken* (with the reason) and its registrations are withdrawn,
while everything else keeps working.

A name two plugins register is *contested*: neither gets it (the order plugins load in
must not decide who answers to ``br``), looking it up is an :class:`AmbiguousNameError`
naming both, and each stays reachable by its qualified name ``plugin:name``
(``baselines:br``); every other name of both plugins keeps working. A plugin cannot
take a name of the core's own (built-in) registrations: the core keeps it, and the
plugin's registration is reachable only by its qualified name. Both cases are listed
as ``conflicts`` of the plugins involved.

Anything a plugin prints while it is imported or registers goes to stderr, so it
cannot corrupt a command's output; a plugin that takes longer than
``MLW_SLOW_PLUGIN_SECONDS`` (default 5) to import is named in a
:class:`SlowPluginWarning` saying how to disable it.

``MLW_DISABLE_PLUGINS`` blocks plugins: a comma-separated list of plugin (entry-point)
or distribution names, or ``*`` (or ``all``) to block every external plugin. A blocked
plugin is not imported at all and shows as ``disabled``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import importlib
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType
from typing import Any, Literal

import pluggy

from mlw import hookspecs
from mlw.registry import (
    KINDS,
    SPEC_TYPES,
    DecoderSpec,
    GeneratorSpec,
    LearnerSpec,
    LoaderSpec,
    MetricSpec,
    PluginError,
    RegistrationError,
    ThresholdSpec,
)

ENTRY_POINT_GROUP = "mlw"
#: The core's distribution name on the package index (the import package is ``mlw``;
#: the name ``mlw`` on the index belongs to an unrelated project).
CORE_DISTRIBUTION = "mlw-core"
DISABLE_ENV = "MLW_DISABLE_PLUGINS"
SLOW_ENV = "MLW_SLOW_PLUGIN_SECONDS"
#: A plugin whose import takes longer than this many seconds is named on stderr.
SLOW_IMPORT_SECONDS = 5.0

#: Internal plugins: registered through the same hooks as third-party ones.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "mlw._builtin.loaders",
    "mlw._builtin.metrics",
    "mlw._builtin.thresholds",
    "mlw._builtin.decoders",
)

_HOOKS: dict[str, str] = {
    "learner": "mlw_register_learners",
    "threshold": "mlw_register_thresholds",
    "decoder": "mlw_register_decoders",
    "metric": "mlw_register_metrics",
    "loader": "mlw_register_loaders",
    "generator": "mlw_register_generators",
}

Status = Literal["ok", "broken", "disabled"]


class UnknownNameError(LookupError):
    """A learner, metric, threshold, decoder, loader or generator name that nobody
    registered."""

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0]) if self.args else ""


class AmbiguousNameError(UnknownNameError):
    """A name two or more plugins register: choose one with ``plugin:name``."""


class SlowPluginWarning(UserWarning):
    """A plugin took long to import (every ``mlw`` command pays for it)."""


@contextlib.contextmanager
def _stdout_to_stderr():
    """What a plugin prints goes to stderr: stdout carries results (``--json``)."""
    if sys.stderr is None:  # pragma: no cover - no stderr to write to
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield


def _slow_seconds() -> float:
    try:
        return float(os.environ.get(SLOW_ENV, SLOW_IMPORT_SECONDS))
    except ValueError:
        return SLOW_IMPORT_SECONDS


@dataclass
class PluginInfo:
    """One plugin as ``mlw list-plugins`` shows it."""

    name: str
    module: str
    distribution: str | None
    version: str | None
    builtin: bool
    status: Status = "ok"
    error: str | None = None
    registers: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in KINDS})
    #: Names this plugin registers that another plugin registers too (one message each).
    conflicts: list[str] = field(default_factory=list)
    #: Seconds its import took (entry-point plugins).
    import_seconds: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "module": self.module,
            "distribution": self.distribution,
            "version": self.version,
            "builtin": self.builtin,
            "status": self.status,
            "error": self.error,
            "registers": {k: list(v) for k, v in self.registers.items() if v},
            "conflicts": list(self.conflicts),
        }


def _mlw_version() -> str:
    try:
        return metadata.version(CORE_DISTRIBUTION)
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def _one_line(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _builtin_name(module: str) -> str:
    """``mlw._builtin.metrics`` -> ``mlw.metrics``."""
    return "mlw." + module.rsplit(".", 1)[1]


def _entry_points() -> list[metadata.EntryPoint]:
    """The installed entry points of the group ``mlw`` (tests replace this)."""
    return list(metadata.entry_points(group=ENTRY_POINT_GROUP))


def _disabled_names() -> set[str]:
    raw = os.environ.get(DISABLE_ENV, "")
    return {p.strip() for p in raw.split(",") if p.strip()}


class PluginManager:
    """Loads plugins and keeps the validated registry of what they registered."""

    def __init__(self, *, entry_points: bool = True) -> None:
        self._pm = pluggy.PluginManager("mlw")
        self._pm.add_hookspecs(hookspecs)
        self._infos: dict[str, PluginInfo] = {}
        self._registry: dict[str, dict[str, Any]] | None = None
        self._owners: dict[tuple[str, str], str] = {}
        self._contested: dict[tuple[str, str], list[str]] = {}
        self._qualified: dict[str, dict[str, Any]] = {k: {} for k in KINDS}
        self._load_errors: dict[str, str] = {}
        self._lock = threading.RLock()
        for modname in DEFAULT_PLUGINS:
            self.register(importlib.import_module(modname), name=_builtin_name(modname),
                          distribution=CORE_DISTRIBUTION, version=_mlw_version(), builtin=True)
        if entry_points:
            self._load_entry_points()

    # -- loading -----------------------------------------------------------------
    def _load_entry_points(self) -> None:
        disabled = _disabled_names()
        block_all = bool(disabled & {"*", "all"})
        for ep in sorted(_entry_points(), key=lambda e: (e.name, e.value)):
            dist = getattr(ep, "dist", None)
            dist_name = dist.metadata["Name"] if dist is not None else None
            version = dist.version if dist is not None else None
            name = ep.name
            if name in self._infos:
                known = self._infos[name]
                if known.module == ep.value and known.distribution == dist_name:
                    continue  # the same distribution seen twice (e.g. editable + wheel)
                name = f"{ep.name}@{dist_name or ep.value}"
                self._infos[name] = PluginInfo(
                    name, ep.value, dist_name, version, builtin=False, status="broken",
                    error=f"entry point name {ep.name!r} is already used by "
                          f"{_describe(known)}")
                self._load_errors[name] = self._infos[name].error or ""
                continue
            if block_all or name in disabled or (dist_name and dist_name in disabled):
                self._infos[name] = PluginInfo(name, ep.value, dist_name, version,
                                               builtin=False, status="disabled",
                                               error=f"disabled by {DISABLE_ENV}")
                continue
            start = time.perf_counter()
            try:
                with _stdout_to_stderr():
                    module = ep.load()
            except BaseException as exc:  # a broken plugin must not break mlw
                if isinstance(exc, KeyboardInterrupt):
                    raise
                what = (f"SystemExit({exc.code!r}) (it called sys.exit)"
                        if isinstance(exc, SystemExit) else _one_line(exc))
                error = f"import failed: {what}"
                self._infos[name] = PluginInfo(name, ep.value, dist_name, version,
                                               builtin=False, status="broken", error=error)
                self._load_errors[name] = error
                continue
            seconds = time.perf_counter() - start
            self.register(module, name=name, distribution=dist_name, version=version)
            self._infos[name].import_seconds = seconds
            if seconds > _slow_seconds():
                warnings.warn(f"plugin {name!r}{f' ({dist_name})' if dist_name else ''} took "
                              f"{seconds:.1f} s to import, which every mlw command pays; if "
                              f"you do not need it, disable it with {DISABLE_ENV}={name}",
                              SlowPluginWarning, stacklevel=2)

    def register(self, plugin: ModuleType | object, *, name: str | None = None,
                 distribution: str | None = None, version: str | None = None,
                 builtin: bool = False) -> str:
        """Register a plugin object (a module or any object with hookimpls).

        Used for entry points, the internal plugins, and by tests to add fixture plugins.
        """
        with self._lock:
            name = name or getattr(plugin, "__name__", None) or repr(plugin)
            if name in self._infos:
                raise RegistrationError(f"a plugin named {name!r} is already registered")
            module = getattr(plugin, "__name__", type(plugin).__name__)
            error: str | None = None
            try:
                self._pm.register(plugin, name=name)
            except Exception as exc:
                error = f"invalid hook implementation: {_one_line(exc)}"
            else:
                unknown = sorted(c.name for c in (self._pm.get_hookcallers(plugin) or [])
                                 if not c.has_spec())
                if unknown:
                    self._pm.unregister(plugin)
                    error = (f"implements unknown hook(s) {', '.join(unknown)} (known: "
                             f"{', '.join(_HOOKS.values())})")
            self._infos[name] = PluginInfo(name, module, distribution, version, builtin)
            if error is not None:
                self._infos[name].status, self._infos[name].error = "broken", error
                self._load_errors[name] = error
            self._registry = None
            return name

    def unregister(self, name: str) -> None:
        with self._lock:
            if self._pm.has_plugin(name):
                self._pm.unregister(name=name)
            self._infos.pop(name, None)
            self._load_errors.pop(name, None)
            self._registry = None

    # -- collecting registrations --------------------------------------------------
    def _collect(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            if self._registry is not None:
                return self._registry
            for info in self._infos.values():
                info.registers = {k: [] for k in KINDS}
                info.conflicts = []
                if info.name in self._load_errors:
                    info.status, info.error = "broken", self._load_errors[info.name]
                elif info.status != "disabled":
                    info.status, info.error = "ok", None
            qualified: dict[str, dict[str, Any]] = {k: {} for k in KINDS}
            claims: dict[tuple[str, str], list[str]] = {}
            # plugin order: builtins first (in DEFAULT_PLUGINS order), then by name
            builtin_order = {_builtin_name(m): n for n, m in enumerate(DEFAULT_PLUGINS)}
            order = sorted(self._infos.values(),
                           key=lambda i: (not i.builtin, builtin_order.get(i.name, 0), i.name))
            for info in order:
                if info.status != "ok" or not self._pm.has_plugin(info.name):
                    continue
                plugin = self._pm.get_plugin(info.name)
                staged: list[tuple[str, str, Any]] = []
                try:
                    with _stdout_to_stderr():
                        for kind, hookname in _HOOKS.items():
                            impl = next((i for i in
                                         getattr(self._pm.hook, hookname).get_hookimpls()
                                         if i.plugin is plugin), None)
                            if impl is None:
                                continue
                            impl.function(register=self._make_register(kind, info, staged))
                except BaseException as exc:  # SystemExit too: a plugin must not exit mlw
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    if info.builtin:  # mlw itself is broken (say, a missing dependency)
                        raise PluginError(f"mlw's own plugin {info.name!r} cannot register: "
                                          f"{_one_line(exc)} (reinstall mlw-core)") from exc
                    info.status = "broken"
                    info.error = (str(exc) if isinstance(exc, RegistrationError)
                                  else f"registration failed: {_one_line(exc)}")
                    info.registers = {k: [] for k in KINDS}
                    continue
                for kind, spec_name, spec in staged:
                    qualified[kind][f"{info.name}:{spec_name}"] = spec
                    claims.setdefault((kind, spec_name), []).append(info.name)
                    info.registers[kind].append(spec_name)
            registry: dict[str, dict[str, Any]] = {k: {} for k in KINDS}
            owners: dict[tuple[str, str], str] = {}
            contested: dict[tuple[str, str], list[str]] = {}
            for (kind, spec_name), holders in claims.items():
                for holder in holders:
                    owners[(kind, f"{holder}:{spec_name}")] = holder
                builtins = [h for h in holders if self._infos[h].builtin]
                if len(holders) == 1 or builtins:
                    keeper = builtins[0] if builtins else holders[0]
                    registry[kind][spec_name] = qualified[kind][f"{keeper}:{spec_name}"]
                    owners[(kind, spec_name)] = keeper
                    for other in holders:
                        if other != keeper:
                            self._infos[other].conflicts.append(
                                f"{kind} {spec_name!r} is registered by both "
                                f"{_describe(self._infos[keeper])} and "
                                f"{_describe(self._infos[other])}; the core keeps the name "
                                f"('{other}:{spec_name}' names this plugin's)")
                    continue
                contested[(kind, spec_name)] = list(holders)
                message = _contested_message(kind, spec_name,
                                             [self._infos[h] for h in holders])
                for holder in holders:
                    self._infos[holder].conflicts.append(message)
            self._qualified = qualified
            self._registry, self._owners, self._contested = registry, owners, contested
            return registry

    @staticmethod
    def _make_register(kind: str, info: PluginInfo,
                       staged: list[tuple[str, str, Any]]) -> Callable[[Any], None]:
        spec_type = SPEC_TYPES[kind]

        def register(spec: Any) -> None:
            if not isinstance(spec, spec_type):
                raise RegistrationError(
                    f"plugin {info.name!r} registered a {type(spec).__name__} where a "
                    f"{spec_type.__name__} was expected"
                )
            checked: Any = spec
            checked.validate()
            if hasattr(checked, "plugin"):  # lazy factories name their plugin in errors
                checked = dataclasses.replace(checked, plugin=info.name)
            if any(k == kind and n == checked.name for k, n, _ in staged):
                raise RegistrationError(f"plugin {info.name!r} registers {kind} "
                                        f"{checked.name!r} twice")
            staged.append((kind, checked.name, checked))

        return register

    # -- typed queries ---------------------------------------------------------------
    def plugins(self) -> list[PluginInfo]:
        self._collect()
        return sorted(self._infos.values(), key=lambda i: (not i.builtin, i.name))

    def owner(self, kind: str, name: str) -> PluginInfo | None:
        """The plugin that answers to ``name`` (plain or ``plugin:name``), if one does."""
        self._collect()
        owner = self._owners.get((kind, name))
        return self._infos[owner] if owner else None

    def contested(self, kind: str) -> dict[str, list[str]]:
        """Names of ``kind`` that several plugins register, and those plugins."""
        self._collect()
        return {n: list(h) for (k, n), h in self._contested.items() if k == kind}

    def _all(self, kind: str) -> dict[str, Any]:
        """Every registration of ``kind`` by the name that reaches it: plain names, and
        ``plugin:name`` for contested ones."""
        table = dict(self._collect()[kind])
        for (k, name), holders in self._contested.items():
            if k == kind:
                for holder in holders:
                    table[f"{holder}:{name}"] = self._qualified[kind][f"{holder}:{name}"]
        return table

    def _one(self, kind: str, name: str) -> Any:
        table = self._collect()[kind]
        if name in table:
            return table[name]
        if ":" in name and name in self._qualified[kind]:
            return self._qualified[kind][name]
        if (kind, name) in self._contested:
            holders = [self._infos[h] for h in self._contested[(kind, name)]]
            raise AmbiguousNameError(_contested_message(kind, name, holders))
        choices = list(self._all(kind))
        close = difflib.get_close_matches(name, choices, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        known = ", ".join(sorted(choices)) or "none"
        raise UnknownNameError(f"unknown {kind} {name!r}{hint} (known: {known})")

    def learners(self) -> dict[str, LearnerSpec]:
        return self._all("learner")

    def learner(self, name: str) -> LearnerSpec:
        return self._one("learner", name)

    def thresholds(self) -> dict[str, ThresholdSpec]:
        return self._all("threshold")

    def threshold(self, name: str) -> ThresholdSpec:
        return self._one("threshold", name)

    def decoders(self) -> dict[str, DecoderSpec]:
        return self._all("decoder")

    def decoder(self, name: str) -> DecoderSpec:
        return self._one("decoder", name)

    def metrics(self) -> dict[str, MetricSpec]:
        return self._all("metric")

    def metric(self, name: str) -> MetricSpec:
        return self._one("metric", name)

    def loaders(self) -> dict[str, LoaderSpec]:
        return self._all("loader")

    def loader(self, name: str) -> LoaderSpec:
        return self._one("loader", name)

    def generators(self) -> dict[str, GeneratorSpec]:
        return self._all("generator")

    def generator(self, name: str) -> GeneratorSpec:
        return self._one("generator", name)

    def versions(self) -> dict[str, str | None]:
        """Distribution versions of mlw and every loaded plugin (recorded in saved models)."""
        out: dict[str, str | None] = {CORE_DISTRIBUTION: _mlw_version()}
        for info in self.plugins():
            if not info.builtin and info.distribution:
                out[info.distribution] = info.version
        return out


def _contested_message(kind: str, name: str, holders: list[PluginInfo]) -> str:
    """``learner 'br' is registered by both plugin 'a' (mlw-a) and plugin 'baselines'
    (mlw-baselines); choose one: 'a:br' or 'baselines:br'``."""
    described = [_describe(h) for h in holders]
    both = (f"both {described[0]} and {described[1]}" if len(described) == 2
            else ", ".join(described[:-1]) + f" and {described[-1]}")
    choices = " or ".join(f"'{h.name}:{name}'" for h in holders)
    return f"{kind} {name!r} is registered by {both}; choose one: {choices}"


def _describe(info: PluginInfo) -> str:
    dist = f" ({info.distribution})" if info.distribution and info.distribution != info.name else ""
    return f"plugin {info.name!r}{dist}"


_manager: PluginManager | None = None
_manager_lock = threading.Lock()


def get_plugin_manager() -> PluginManager:
    """The process-wide plugin manager, built on first use."""
    global _manager
    with _manager_lock:
        if _manager is None:
            _manager = PluginManager()
        return _manager


def reset_plugin_manager() -> None:
    """Forget the process-wide manager (tests; after installing a plugin at run time)."""
    global _manager
    with _manager_lock:
        _manager = None
