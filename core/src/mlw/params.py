"""Parsing ``key=value`` parameters from text (the CLI's ``--param``, experiment
configs, generated-dataset specs such as ``synthetic:labels=25``) by the type of the
parameter's default."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
#: Bool parameters that also take ``"auto"`` (the thresholding strategies' adaptive
#: top-label rule, ``"cardinality:top_label=auto"``).
AUTO_BOOL_PARAMS = frozenset({"top_label"})


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_value(key: str, text: str, default: Any) -> Any:
    """Convert ``text`` to the type of ``default``.

    ``none``/``null`` give ``None`` for any parameter. A bool default takes
    true/false/yes/no/on/off/1/0; an int default takes an integer (or a float, for
    parameters such as ``C=1`` that accept both); a float default a number; a list,
    tuple or dict default a JSON value; a ``None`` default (or any other object) a JSON
    value if ``text`` is one, else the text itself; a str default the text as is.
    ``top_label`` (:data:`AUTO_BOOL_PARAMS`) also takes ``auto``, and is such a bool
    when its default is ``"auto"`` too (``--param top_label=false`` is ``False``).
    """
    if text.strip().lower() in ("none", "null"):
        return None
    if isinstance(default, bool) or (key in AUTO_BOOL_PARAMS and default == "auto"):
        low = text.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        if low == "auto" and key in AUTO_BOOL_PARAMS:
            return "auto"
        raise ValueError(f"{key}={text}: expected true, false or auto"
                         if key in AUTO_BOOL_PARAMS else f"{key}={text}: expected true or false")
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            pass
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{key}={text}: expected an integer") from None
    if isinstance(default, float):
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{key}={text}: expected a number") from None
    if isinstance(default, str):
        return text
    if isinstance(default, (list, tuple, dict)):
        try:
            value = json.loads(text)
        except ValueError:
            raise ValueError(f"{key}={text}: expected a JSON "
                             f"{type(default).__name__} such as [1, 2]") from None
        return tuple(value) if isinstance(default, tuple) and isinstance(value, list) else value
    return _json_or_text(text)


def parse_params(owner: str, known: Mapping[str, Any], items: Iterable[str]) -> dict[str, Any]:
    """``["k=10", "threshold=pcut"]`` -> ``{"k": 10, "threshold": "pcut"}``, typed by the
    defaults in ``known``; an unknown or repeated key is a ``ValueError`` naming it and
    ``owner`` (``"learner 'br'"``, ``"generator 'synthetic'"``).

    Nested parameters: ``PREFIX__name=value`` sets ``name`` in the dict parameter
    ``PREFIX_params`` when ``known`` has one (``base__C=10`` -> ``base_params={"C":
    10}``: the base classifier's parameters of the baseline learners); the value is
    read as JSON if it is JSON (``10``, ``true``, ``[1, 2]``), else as text.

    Examples
    --------
    >>> parse_params("learner 'br'", {"base_estimator": None, "base_params": None},
    ...              ["base_estimator=sklearn.svm.LinearSVC", "base__C=10"])
    {'base_estimator': 'sklearn.svm.LinearSVC', 'base_params': {'C': 10}}
    """
    out: dict[str, Any] = {}
    whole: set[str] = set()
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"{owner}: expected key=value, got {item!r}")
        prefix, nested, inner = key.partition("__")
        if nested and f"{prefix}_params" in known and key not in known:
            if not inner.isidentifier():
                raise ValueError(f"{owner}: {key!r} names no parameter after "
                                 f"{prefix}__")
            group = out.setdefault(f"{prefix}_params", {})
            if f"{prefix}_params" in whole or not isinstance(group, dict):
                raise ValueError(f"{owner}: give {prefix}_params either whole or as "
                                 f"{prefix}__name=value items, not both")
            if inner in group:
                raise ValueError(f"{owner}: parameter {key} is given twice")
            group[inner] = parse_value(key, text, None)
            continue
        if key not in known:
            close = difflib.get_close_matches(key, list(known), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise ValueError(f"{owner} has no parameter {key!r}{hint} "
                             f"(parameters: {', '.join(known) or 'none'})")
        if key in out:
            what = f"parameter {key} is given twice" if not isinstance(out[key], dict) or \
                not key.endswith("_params") else (f"give {key} either whole or as "
                                                  f"{key[:-len('_params')]}__name=value "
                                                  f"items, not both")
            raise ValueError(f"{owner}: {what}")
        out[key] = parse_value(key, text, known[key])
        whole.add(key)
    return out


_SPEC_ITEM = re.compile(r",(?=\s*[A-Za-z_]\w*\s*=)")


def split_spec(text: str) -> list[str]:
    """``"labels=25,noise=bernoulli:0.05,sizes=[1,2]"`` -> the ``key=value`` items
    (a comma starts a new item only where ``key=`` follows, so values may hold commas).

    Examples
    --------
    >>> split_spec("labels=25,noise=bernoulli:0.05,sizes=[1,2]")
    ['labels=25', 'noise=bernoulli:0.05', 'sizes=[1,2]']
    """
    return [item.strip() for item in _SPEC_ITEM.split(text) if item.strip()]


@dataclass(frozen=True)
class Spec:
    """A registered thing named in text with its options: ``"NAME"`` or
    ``"NAME:key=value,key=value"`` (a learner ``"br:threshold=pcut"``, a thresholding
    strategy ``"one_threshold:metric=f1_example"``, a generator
    ``"synthetic:labels=25"``). ``kind`` (``"learner"``, ``"threshold"``,
    ``"generator"``) names it in messages. A threshold also takes one option without
    ``key=``, its first parameter (``"fixed:0.3"``). :meth:`parse` is the one reader of
    this syntax; :meth:`params` types the options by the registered defaults.

    Examples
    --------
    >>> Spec.parse("br:threshold=pcut,base__C=10", "learner")
    Spec(kind='learner', name='br', items=('threshold=pcut', 'base__C=10'))
    >>> Spec.parse("fixed:0.3", "threshold").params({"threshold": 0.5})
    {'threshold': 0.3}
    """

    kind: str
    name: str
    items: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str, kind: str) -> Spec:
        """Split ``text`` into the name and its ``key=value`` items (a comma starts a
        new item only where ``key=`` follows, see :func:`split_spec`). An empty name,
        or nothing after the ``:``, is a ``ValueError`` quoting ``text``."""
        name, colon, rest = text.partition(":")
        name = name.strip()
        if not name:
            raise ValueError(f"{kind} spec {text!r} has no {kind} name")
        if not colon:
            return cls(kind, name)
        if not rest.strip():
            raise ValueError(f"{kind} {text!r}: nothing after ':'")
        if kind == "threshold" and "=" not in rest.split(",")[0]:
            return cls(kind, name, (rest.strip(),))  # "fixed:0.3": the first option
        return cls(kind, name, tuple(split_spec(rest)))

    @staticmethod
    def name_of(text: str) -> str | None:
        """The NAME of ``text`` when it is written as a spec ``NAME:...`` (an
        identifier before the colon, and ``text`` not an existing file), else ``None``:
        how a dataset source is told apart from a file or a dataset name before asking
        whether a generator of that name is registered.

        >>> Spec.name_of("synthetic:labels=25"), Spec.name_of("emotions")
        ('synthetic', None)
        """
        name, colon, _ = text.partition(":")
        if not colon or not name.isidentifier() or Path(text).exists():
            return None
        return name

    def params(self, known: Mapping[str, Any]) -> dict[str, Any]:
        """The options typed by the defaults in ``known`` (:func:`parse_params`); a
        threshold's single option without ``key=`` is its first parameter."""
        owner = f"{self.kind} {self.name!r}"
        items = list(self.items)
        if self.kind == "threshold" and len(items) == 1 and "=" not in items[0]:
            if not known:
                raise ValueError(f"{owner} takes no options, got "
                                 f"{self.name + ':' + items[0]!r}")
            items = [f"{next(iter(known))}={items[0]}"]
        return parse_params(owner, known, items)

    def __str__(self) -> str:
        return self.name if not self.items else f"{self.name}:{','.join(self.items)}"
