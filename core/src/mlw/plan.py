"""The evaluation plan: user input (``mlw fit`` options, an ``mlw bench`` cell, Python
arguments) checked once and turned into one :class:`EvaluationPlan`, before anything
is fitted. :func:`mlw.evaluation.run_plan` (every fold) and
:func:`mlw.evaluation.run_fold` (one fold: a ``mlw bench`` cell) execute it.

A plan holds the learner (built from its registered name, parameters and seed by
:func:`mlw.factory.build_learner`), how its label sets are decided (the threshold
routing of :func:`prepare_evaluation`), the metrics, and the data plan
(:class:`mlw.DataPlan`: the sources, the hold-out or the folds, the test set aligned
with the training columns). What a later option adds to an evaluation (a decoder, a
top-k cut, running folds in a supervised process) is a field here, set by
:func:`prepare_evaluation` and read by the one execution path.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sklearn.base import clone

from mlw.conformal import ConformalLabelSets, ConformalTarget, parse_target
from mlw.decoders.routing import describe, resolve_decoders
from mlw.factory import build_learner
from mlw.io.plan import DEFAULT_SEED, DataPlan, plan_data
from mlw.jsonsafe import to_jsonable
from mlw.learner import make_threshold
from mlw.metrics.at_k import check_k
from mlw.params import Spec
from mlw.persistence import learner_name_of
from mlw.plugins import get_plugin_manager
from mlw.registry import LearnerTags

__all__ = ["EvaluationPlan", "EvaluationSetup", "plan_evaluation", "prepare_evaluation",
           "resolved_params"]


@dataclass
class EvaluationPlan:
    """An evaluation checked before anything is fitted (:func:`prepare_evaluation`,
    :func:`plan_evaluation`).

    Attributes
    ----------
    learner : the unfitted learner to clone per split (with ``threshold`` set when the
        learner takes one)
    metrics : the metric names, or ``None`` for every metric the learner's outputs allow
    evaluation_threshold : the strategy scored on the learner's marginals instead of its
        own joint decision, or ``None``
    decision : how label sets are decided, in words (``"threshold cardinality"``,
        ``"joint"``, ``"joint, top_label=auto"``, ``"pcut on the marginals"``), for
        reports
    per_label : also compute each fold's per-label table
        (:func:`mlw.evaluate` with ``per_label=True``)
    data : what to run on (:class:`mlw.DataPlan`), or ``None`` when the caller hands
        the training and test parts to :func:`mlw.evaluation.fit_and_evaluate` itself
    name : the learner's registered name (``None`` for an object given as is)
    top_k : rank each test instance's ``top_k`` best-scored labels too
        (``predict_topk``) and score the metrics at k on that ranking, with the
        training part's inverse propensities (``None``: no ranking)
    isolate : run each fold of a cross-validation in a supervised child process
        (:func:`mlw.isolation.contained`, what ``mlw fit --cv`` does): a fold whose
        process dies (a crash in native code, ``os._exit``) is a
        :class:`~mlw.PluginError` naming the learner, the fold and how it ended
    decoders : ``{metric: decoder}``: the label-set metrics scored on the label sets a
        decoder computes from the fitted learner (:mod:`mlw.decoders`) instead of its
        own; empty when nothing is decoded
    conformal : what a conformal wrapper guarantees (:class:`mlw.ConformalLabelSets`,
        ``mlw fit --conformal recall:0.9`` or ``precision:0.9``), as a
        :class:`mlw.conformal.ConformalTarget`, or ``None``; its ``achieved(metrics)``
        is the value reached (from ``fnr_example`` or ``precision_example``)
    """

    learner: Any
    metrics: list[str] | None
    evaluation_threshold: Any = None
    decision: str = ""
    per_label: bool = False
    data: DataPlan | None = None
    name: str | None = None
    isolate: bool = False
    decoders: dict[str, Any] = field(default_factory=dict)
    conformal: ConformalTarget | None = None
    top_k: int | None = None


#: The name this class had before plans carried their data; kept for scripts.
EvaluationSetup = EvaluationPlan


def _describe(learner: Any) -> str:
    """``learner 'br'`` for a registered learner, else its class name."""
    name = learner_name_of(learner)
    return f"learner {name!r}" if name else type(learner).__name__


def _strategy_name(choice: Any) -> str:
    return choice if isinstance(choice, str) else repr(choice)


def prepare_evaluation(learner: Any, metrics: Iterable[str] | None = None,
                       threshold: Any = None, *, per_label: bool = False,
                       data: DataPlan | None = None, decode: Any = None,
                       conformal: Any = None, top_k: int | None = None) -> EvaluationPlan:
    """Check an evaluation before any fit, so a mistake costs nothing.

    - every metric name is registered (:class:`mlw.UnknownNameError` with suggestions);
    - every requested metric can be fed: ``"scores"`` metrics need a learner that
      predicts scores, ``"joint"`` ones (``cll_loss``) a learner with ``log_proba_of``
      (``ValueError`` naming both);
    - ``threshold`` (a registered strategy name or a strategy object) decides the label
      sets: a learner with a ``threshold`` parameter gets it (a clone with the
      parameter set); a joint learner keeps its own decision and model, and the
      evaluation scores the strategy, fitted on each training part, on its marginals
      (MEKA's way of scoring a joint learner with Pcut); a joint learner without
      scores cannot take one (``ValueError``).

    ``per_label=True`` asks every fold for its per-label table too; ``data`` is the
    data plan the evaluation runs on (:func:`mlw.evaluation.run_plan`); ``top_k``
    (a positive int, for a learner with scores) ranks each test instance's best
    ``top_k`` labels and adds the metrics at k up to ``top_k`` to the default metrics
    (a metric at k above ``top_k`` asked by name is an error).

    ``decode`` scores label-set metrics on the label sets of a decoder
    (:func:`mlw.decoders.routing.resolve_decoders`: a decoder name such as ``"f1"``,
    ``"matched"`` for the decoder of each metric's measure, or ``{metric: decoder}``);
    each name, and that the learner gives what each decoder needs, is checked here.
    ``conformal`` (``"recall:0.9"``, ``"precision:0.9"``, with an optional method as
    in ``"recall:0.9:ltt"``, or a target recall) wraps the learner in
    :class:`mlw.ConformalLabelSets` with ``alpha = 1 - target`` and adds the metric
    that measures the target (``fnr_example``: the achieved recall is 1 minus it;
    ``precision_example``).

    Examples
    --------
    >>> import mlw
    >>> setup = prepare_evaluation(mlw.get_learner("br"), ["f1_micro"], "pcut")
    >>> setup.learner.threshold, setup.evaluation_threshold, setup.decision
    ('pcut', None, 'threshold pcut')
    """
    pm = get_plugin_manager()
    names = None if metrics is None else list(metrics)
    if names is not None and not names:
        raise ValueError("no metrics given; name at least one, or pass None for all")
    tags = LearnerTags.of(type(learner))
    kind = _describe(learner)
    for name in names or []:
        needs = pm.metric(name).needs
        if needs == "scores" and not tags.predicts_scores:
            raise ValueError(f"metric {name!r} needs per-label scores, which {kind} does "
                             f"not predict")
        if needs == "joint" and not hasattr(learner, "log_proba_of"):
            raise ValueError(f"metric {name!r} needs log P(y|x) (log_proba_of), which "
                             f"{kind} does not have")
    if top_k is not None:
        top_k = check_k(top_k)
        if not tags.predicts_scores:
            raise ValueError(f"--top-k needs per-label scores to rank, which {kind} does "
                             f"not predict")
        for name in names or []:
            at = pm.metric(name).at_k
            if at is not None and at > top_k:
                raise ValueError(f"metric {name!r} needs a ranking of {at} labels; the "
                                 f"top-k asked is {top_k}")
    target = None
    if conformal is not None:
        target = parse_target(conformal)
        if threshold is not None:
            raise ValueError("conformal label sets are cut at their own calibrated "
                             "threshold: give --conformal or --threshold, not both")
        if not tags.predicts_scores:
            raise ValueError(f"conformal label sets need label scores, which {kind} does "
                             f"not predict")
        learner = ConformalLabelSets(learner, control=target.control,
                                     alpha=round(1.0 - target.target, 12),
                                     method=target.method, delta=target.delta)
        tags = LearnerTags.of(type(learner))
        if names is not None and target.metric not in names:
            names.append(target.metric)
    params = learner.get_params(deep=False) if hasattr(learner, "get_params") else {}
    evaluation_threshold = None
    if threshold is not None:
        make_threshold(threshold)  # an unknown name fails here, before any fit
        if "threshold" in params:
            learner = clone(learner).set_params(threshold=threshold)
            params["threshold"] = threshold
        elif tags.predicts_scores:
            evaluation_threshold = threshold
        else:
            raise ValueError(f"{kind} makes its own joint decision and predicts no label "
                             f"scores, so a threshold does not apply")
    if evaluation_threshold is not None:
        decision = f"{_strategy_name(evaluation_threshold)} on the marginals"
    elif params.get("threshold") is not None:  # a joint learner's too, when it is set
        decision = f"threshold {_strategy_name(params['threshold'])}"
    elif tags.joint:  # with the core's top-label rule when the learner takes one
        rule = params.get("top_label", False)
        decision = "joint" if rule is False else f"joint, top_label={rule}"
    else:
        decision = "predict"
    if target is not None:
        decision = f"conformal {target.control} >= {target.target:g} ({target.method})"
    decoders = {}
    if decode is not None:
        decoders = resolve_decoders(decode, names, learner)
        if decoders:
            decision = f"{decision}; decoded: {describe(decoders)}"
    return EvaluationPlan(learner, names, evaluation_threshold, decision, bool(per_label),
                          data, decoders=decoders, conformal=target,
                          top_k=top_k)


def plan_evaluation(learner: str, *, params: Sequence[str] = (), threshold: str | None = None,
                    metrics: Sequence[str] | None = None, data: str | None = None,
                    test: str | None = None, cv: int | None = None,
                    seed: int = DEFAULT_SEED, labels: Sequence[str] | str | None = None,
                    n_labels: int | None = None, per_label: bool = False,
                    isolate: bool = False, decode: str | None = None,
                    conformal: str | None = None, top_k: int | None = None) -> EvaluationPlan:
    """The plan of ``mlw fit`` from its options, every check done before any fit: the
    learner registered as ``learner`` (looked up once) with ``params`` (``key=value``
    texts typed by its defaults), seeded with ``seed``; ``threshold`` and ``metrics``
    as in :func:`prepare_evaluation`; the data plan of :func:`mlw.plan_data`
    (``data``, ``test``, ``cv``, ``labels``, ``n_labels``; folds seeded with ``seed``);
    ``isolate``: see :class:`EvaluationPlan`; ``decode``, ``conformal`` and ``top_k``
    as in :func:`prepare_evaluation`.

    Examples
    --------
    >>> plan = plan_evaluation("br", params=["threshold=pcut"], cv=3)
    >>> plan.decision, plan.data.kind, plan.data.n_folds
    ('threshold pcut', 'cv', 3)
    """
    spec = get_plugin_manager().learner(learner)
    values = Spec("learner", learner, tuple(params)).params(spec.signature_params())
    if threshold is not None and "threshold" in values:
        raise ValueError("give the threshold either with --threshold or with "
                         "--param threshold=..., not both")
    plan = prepare_evaluation(build_learner(spec, seed=seed, params=values), metrics,
                              threshold, per_label=per_label, decode=decode,
                              conformal=conformal, top_k=top_k)
    plan.data = plan_data(data, test=test, cv=cv, labels=labels, n_labels=n_labels,
                          seed=seed)
    plan.name, plan.isolate = learner, isolate
    return plan


def resolved_params(learner: Any) -> str | None:
    """``learner.get_params(deep=False)`` as sorted JSON: what the learner is, its
    defaults included (recorded with every ``mlw bench`` cell, so a rerun sees a
    changed default). ``None`` when that cannot be told apart from one process to the
    next: ``get_params`` fails, or a value prints only as an object at an address."""
    try:
        params = learner.get_params(deep=False)
    except Exception:  # a third-party learner without scikit-learn's protocol
        return None
    text = json.dumps(to_jsonable(params), sort_keys=True, separators=(",", ":"))
    return None if " at 0x" in text else text
