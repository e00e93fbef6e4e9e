"""Telling a plugin's own bug from bad input, where the core calls a learner.

The contract (``docs/writing-plugins.md``): a learner rejects bad input with a
``ValueError`` naming the problem (exit 2 in the CLI). Anything else escaping its
``fit``/``predict`` (an ``IndexError``, a ``ZeroDivisionError``, ``SystemExit``), and
outputs that break the learner contract (label sets or scores of the wrong shape, NaN
scores, scores outside [0, 1]), are the plugin's own defect: a
:class:`mlw.PluginError` naming the learner and its plugin (exit 1).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.persistence import learner_name_of
from mlw.plugins import UnknownNameError, get_plugin_manager
from mlw.registry import PluginError

#: Exceptions that pass through unchanged: bad input by the contract, interruptions,
#: and errors that already say what went wrong.
_PASS = (ValueError, KeyboardInterrupt, MemoryError, PluginError)
#: Rounding slack of "scores in [0, 1]".
_TOLERANCE = 1e-9


def _who(model: Any) -> str:
    """``learner 'br' (plugin 'baselines', mlw-baselines)`` or the class name."""
    try:
        name = learner_name_of(model)
    except Exception:  # pragma: no cover - a broken registry must not hide the bug
        name = None
    if name is None:
        return f"learner {type(model).__module__}.{type(model).__qualname__}"
    owner = get_plugin_manager().owner("learner", name)
    if owner is None:  # pragma: no cover - a registered name has an owner
        return f"learner {name!r}"
    dist = f", {owner.distribution}" if owner.distribution else ""
    return f"learner {name!r} (plugin {owner.name!r}{dist})"


@contextlib.contextmanager
def learner_call(model: Any, step: str) -> Iterator[None]:
    """Around ``model.fit``/``predict``...: an exception that is not bad input, or
    ``SystemExit``, becomes a :class:`PluginError` naming the learner and its plugin."""
    try:
        yield
    except _PASS:
        raise
    except UnknownNameError:
        raise
    except SystemExit as exc:
        raise PluginError(f"{_who(model)} called sys.exit({exc.code!r}) in {step}: a bug in "
                          f"the plugin (report it to its authors)") from None
    except Exception as exc:
        msg = " ".join(str(exc).split())[:300]
        raise PluginError(f"{_who(model)} failed in {step}: {type(exc).__name__}: {msg} (a bug "
                          f"in the plugin: report it to its authors; MLW_DEBUG=1 shows the "
                          f"traceback)") from exc


@contextlib.contextmanager
def plugin_call(kind: str, name: str, step: str) -> Iterator[None]:
    """Around a call into what an installed plugin registered besides learners (a
    loader, a generator): as :func:`learner_call`, anything but bad input (a
    ``ValueError``, a missing or unreadable file), or ``SystemExit``, becomes a
    :class:`PluginError` naming ``kind 'name' (plugin ...)``. mlw's own registrations
    pass through unchanged (their bugs are mlw's)."""
    owner = get_plugin_manager().owner(kind, name)
    if owner is None or owner.builtin:
        yield
        return
    dist = f", {owner.distribution}" if owner.distribution else ""
    who = f"{kind} {name!r} (plugin {owner.name!r}{dist})"
    try:
        yield
    except (*_PASS, OSError, UnknownNameError):
        raise
    except SystemExit as exc:
        raise PluginError(f"{who} called sys.exit({exc.code!r}) in {step}: a bug in the "
                          f"plugin (report it to its authors)") from None
    except Exception as exc:
        msg = " ".join(str(exc).split())[:300]
        raise PluginError(f"{who} failed in {step}: {type(exc).__name__}: {msg} (a bug in the "
                          f"plugin: report it to its authors; MLW_DEBUG=1 shows the "
                          f"traceback)") from exc


def _threshold_name(strategy: Any) -> str | None:
    """The name a thresholding strategy object's class is registered under, if any."""
    cls = type(strategy)
    path = f"{cls.__module__}:{cls.__qualname__}"
    for name, spec in get_plugin_manager().thresholds().items():
        if spec.factory is cls or spec.factory == path:
            return name
    return None


@contextlib.contextmanager
def threshold_call(strategy: Any, step: str) -> Iterator[None]:
    """:func:`plugin_call` around a thresholding strategy's ``fit``/``predict``: a
    plugin's strategy failing is named as itself, not as the learner it runs inside."""
    name = _threshold_name(strategy)
    if name is None:
        yield
        return
    with plugin_call("threshold", name, step):
        yield


def _zero_one(values: np.ndarray) -> bool:
    """Whether every entry of the non-empty ``values`` is 0 or 1: for integer and boolean
    dtypes the min and max tell it (no temporary array: ``np.isin`` took 2 ms on a
    bibtex-sized prediction), other dtypes are compared entry by entry."""
    if values.dtype.kind in "biu":
        return bool(values.min() >= 0 and values.max() <= 1)
    return bool(((values == 0) | (values == 1)).all())


def check_outputs(model: Any, n: int, n_labels: int | None, *, Y_pred: Any = None,
                  scores: Any = None, log_proba: Any = None, step: str = "predict") -> None:
    """The learner contract on outputs: label sets and scores of shape ``(n, L)``, 0/1
    labels, finite scores in [0, 1], ``log_proba`` of shape ``(n,)`` without NaN."""

    def fail(what: str) -> None:
        raise PluginError(f"{_who(model)} broke the learner contract in {step}: {what} (a bug "
                          f"in the plugin: report it to its authors)")

    def shape_of(A: Any) -> tuple[int, ...]:
        return tuple(getattr(A, "shape", np.shape(A)))

    for what, A in (("predict", Y_pred), ("predict_proba", scores)):
        if A is None:
            continue
        shape = shape_of(A)
        expected = (n, n_labels) if n_labels is not None else None
        if len(shape) != 2 or shape[0] != n or (expected is not None and shape != expected):
            want = f"({n}, {n_labels})" if n_labels is not None else f"({n}, L)"
            fail(f"{what} returned shape {shape}, expected {want}")
        values = A.data if sp.issparse(A) else np.asarray(A)
        if not values.size:
            continue
        if what == "predict":
            if not _zero_one(values):
                fail("predict returned values other than 0 and 1")
        else:
            # min and max carry a NaN through: two passes, no temporary array
            lo, hi = float(np.min(values)), float(np.max(values))
            if np.isnan(lo) or np.isnan(hi):
                fail("predict_proba returned NaN scores")
            if lo < -_TOLERANCE or hi > 1 + _TOLERANCE:
                fail(f"predict_proba returned scores outside [0, 1] ({lo:g}..{hi:g})")
    if log_proba is not None:
        lp = np.asarray(log_proba, dtype=np.float64)
        if lp.shape != (n,):
            fail(f"log_proba_of returned shape {lp.shape}, expected ({n},)")
        if np.isnan(lp).any():
            fail("log_proba_of returned NaN")
