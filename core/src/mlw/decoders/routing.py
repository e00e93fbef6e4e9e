"""Which decoder decides the label sets each metric is scored on.

An evaluation may decode for the measure: one decoder for every label-set metric
(``"f1"``), the decoder registered for each metric's measure (``"matched"``: ``f1``
for ``f1_example``, ``subset`` for ``subset_accuracy``, ``hamming`` for
``hamming_loss``, ``jaccard`` for ``accuracy``; any other metric keeps the learner's
own label sets), or a choice per metric (``{"f1_example": "f1", "subset_accuracy":
"subset"}``, on the command line ``f1_example=f1,subset_accuracy=subset``). Score and
joint metrics never depend on a decoder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mlw.decoders import make_decoder
from mlw.plugins import get_plugin_manager

#: The choice that gives each metric the decoder registered for its measure.
MATCHED = "matched"


def parse_decode(choice: Any) -> Any:
    """A decode choice from text: ``"matched"``, a decoder (``"f1"``, ``"f1:beta=2"``)
    or ``"metric=decoder,..."`` (a mapping); anything else is returned as is."""
    if not isinstance(choice, str):
        return choice
    text = choice.strip()
    if not text:
        raise ValueError("--decode: empty; name a decoder, 'matched', or metric=decoder pairs")
    head = text.split(",")[0]
    if "=" in head and ":" not in head.split("=")[0]:
        out: dict[str, str] = {}
        for item in text.split(","):
            metric, eq, dec = item.partition("=")
            if not eq or not metric.strip() or not dec.strip():
                raise ValueError(f"--decode {choice!r}: expected metric=decoder pairs "
                                 f"separated by commas")
            out[metric.strip()] = dec.strip()
        return out
    return text


def resolve_decoders(choice: Any, metrics: Sequence[str] | None, learner: Any = None
                     ) -> dict[str, Any]:
    """``{metric: decoder}`` for the label-set metrics of ``metrics`` (every registered
    one when ``None``) that a decoder decides under ``choice`` (see the module). Checks
    every name (:class:`mlw.UnknownNameError`), that a per-metric choice names
    label-set metrics, and, given the unfitted ``learner``, that every decoder can
    decode it (:class:`mlw.decoders.DecoderError`). Metrics not in the mapping are
    scored on the learner's own label sets. One decoder object serves every metric it
    decides, so it decodes once."""
    if choice is None:
        return {}
    pm = get_plugin_manager()
    specs = pm.metrics()
    names = list(metrics) if metrics is not None else list(specs)
    label_metrics = [m for m in names if pm.metric(m).needs == "labels"]
    choice = parse_decode(choice)
    out: dict[str, Any] = {}
    if isinstance(choice, Mapping):
        made: dict[str, Any] = {}
        for metric, dec in choice.items():
            if pm.metric(metric).needs != "labels":
                raise ValueError(f"decoder for {metric!r}: only label-set metrics are "
                                 f"decoded ({metric!r} needs {pm.metric(metric).needs})")
            key = dec if isinstance(dec, str) else id(dec)
            made.setdefault(key, make_decoder(dec))
            if metric in label_metrics or metrics is None:
                out[metric] = made[key]
    elif choice == MATCHED:
        by_measure: dict[str, Any] = {}
        for name, spec in pm.decoders().items():
            if spec.measure and spec.measure not in by_measure:
                by_measure[spec.measure] = name
        made = {}
        for metric in label_metrics:
            if metric in by_measure:
                dec = by_measure[metric]
                made.setdefault(dec, make_decoder(dec))
                out[metric] = made[dec]
    else:
        decoder = make_decoder(choice)
        out = {metric: decoder for metric in label_metrics}
    if learner is not None:
        for decoder in {id(d): d for d in out.values()}.values():
            route = getattr(decoder, "route", None)
            if callable(route):
                route(learner)
    return out


def describe(decoders: Mapping[str, Any]) -> str:
    """The decoders in words for reports: ``"f1 for f1_example; subset for
    subset_accuracy"`` (or one name when one decoder decides every metric)."""
    if not decoders:
        return ""
    groups: dict[int, tuple[Any, list[str]]] = {}
    for metric, dec in decoders.items():
        groups.setdefault(id(dec), (dec, []))[1].append(metric)
    parts = [f"{_name(dec)} for {', '.join(ms)}" for dec, ms in groups.values()]
    return "; ".join(parts)


def _name(decoder: Any) -> str:
    for name, spec in get_plugin_manager().decoders().items():
        factory = spec.factory
        cls = factory if not isinstance(factory, str) else None
        if cls is None:
            module, _, attr = factory.partition(":")
            if type(decoder).__module__ == module and type(decoder).__qualname__ == attr:
                return name
        elif isinstance(decoder, cls):
            return name
    return type(decoder).__name__


def decoded_label_sets(model: Any, X: Any, decoders: Mapping[str, Any]
                       ) -> dict[str, Any]:
    """``{metric: label sets}`` of the decoders, each decoder run once on ``X``."""
    labels: dict[int, Any] = {}
    out = {}
    for metric, dec in decoders.items():
        if id(dec) not in labels:
            labels[id(dec)] = dec.decode(model, X)
        out[metric] = labels[id(dec)]
    return out
