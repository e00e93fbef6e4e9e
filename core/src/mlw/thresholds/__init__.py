"""Thresholding strategies: from per-label scores to 0/1 label sets.

Every strategy is a scikit-learn estimator with ``fit(scores, Y) -> self`` and
``predict(scores) -> Y``; ``predict`` only reads the fitted state. ``scores`` are dense
float arrays or CSR matrices (an absent entry is a score of 0); predictions are dense
``uint8`` for dense scores and CSR ``uint8`` for CSR scores, so sparse stays sparse. The
scores are meant to lie in [0, 1], the range every search covers.

The decision rule, shared by all strategies: label j is predicted for an instance when
its score is ``>= t`` **and positive**. A score of 0 never predicts a label, so an absent
CSR entry and a stored 0 mean the same thing and dense and CSR scores always give the
same predictions.

Registered by the core (see :mod:`mlw._builtin.thresholds`): one threshold for all
(``fixed``, ``pcut``, ``cardinality``, ``one_threshold``; :mod:`.single`), one per label
(``pcut_per_label``, ``scut``, ``fixed_per_label``; :mod:`.per_label`), a number of
labels per instance (``rcut``, ``metalabeler``; :mod:`.per_instance`). Wherever a
strategy is named (``threshold=`` of a learner, ``mlw fit --threshold``) options can
follow the name: ``"fixed:0.3"`` (the first option), ``"one_threshold:metric=f1_example"``,
``"fixed_per_label:thresholds.txt"`` (see :func:`parse_threshold`); the adaptive
top-label rule is ``top_label=auto``. Learners whose method prescribes no decision
default to :data:`DEFAULT_THRESHOLD`. See ``docs/guide/thresholds.md``.
"""

from __future__ import annotations

from mlw.params import Spec
from mlw.thresholds._common import (
    COARSE_GRID,
    DEFAULT_THRESHOLD,
    EMPTY_SET_TOLERANCE,
    FINE_OFFSETS,
    apply_threshold,
    resolve_top_label,
    two_pass_search,
)
from mlw.thresholds.per_instance import MetaLabeler, RCut, top_k
from mlw.thresholds.per_label import (
    FixedPerLabel,
    PCutPerLabel,
    SCut,
    apply_label_thresholds,
    best_fbeta_cut,
)
from mlw.thresholds.single import CardinalityMatching, FixedThreshold, OneThreshold, PCut

__all__ = [
    "COARSE_GRID",
    "DEFAULT_THRESHOLD",
    "EMPTY_SET_TOLERANCE",
    "FINE_OFFSETS",
    "CardinalityMatching",
    "FixedPerLabel",
    "FixedThreshold",
    "MetaLabeler",
    "OneThreshold",
    "PCut",
    "PCutPerLabel",
    "RCut",
    "SCut",
    "apply_label_thresholds",
    "apply_threshold",
    "best_fbeta_cut",
    "parse_threshold",
    "resolve_top_label",
    "top_k",
    "two_pass_search",
]


def parse_threshold(text: str) -> tuple[str, list[str]]:
    """``"name:options"`` -> ``(name, ["key=value", ...])``: the options of a strategy
    named in text (:meth:`mlw.params.Spec.parse`). A single option without ``key=`` is
    the strategy's first parameter (``"fixed:0.3"`` is ``fixed`` with
    ``threshold=0.3``); the caller types the values by the strategy's defaults
    (:meth:`mlw.params.Spec.params`).

    Examples
    --------
    >>> parse_threshold("one_threshold:metric=f1_example")
    ('one_threshold', ['metric=f1_example'])
    >>> parse_threshold("fixed:0.3")
    ('fixed', ['0.3'])
    >>> parse_threshold("pcut")
    ('pcut', [])
    """
    spec = Spec.parse(text, "threshold")
    return spec.name, list(spec.items)
