"""The extension points of mlw: one hook specification per kind of registration.

Every hook takes a ``register`` callback instead of returning a list, so the core can
validate each registration on its own, name the plugin that made it, and reject a
duplicate with both owners named. Hooks must only *register*: no fitting, downloading
or heavy imports at call time (import the heavy module inside the factory instead).

A plugin is a module (usually ``<package>/plugin.py``) that implements some of these
hooks with :data:`mlw.hookimpl` and is declared in its distribution's metadata::

    [project.entry-points.mlw]
    xdcc = "mlw_xdcc.plugin"

The core's own loaders, metrics, thresholding strategies and decoders are registered through
these same hooks (see :mod:`mlw._builtin`); there is no second path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from mlw.registry import (
        DecoderSpec,
        GeneratorSpec,
        LearnerSpec,
        LoaderSpec,
        MetricSpec,
        ThresholdSpec,
    )

hookspec = pluggy.HookspecMarker("mlw")
hookimpl = pluggy.HookimplMarker("mlw")


@hookspec
def mlw_register_learners(register: Callable[[LearnerSpec], None]) -> None:
    """Register learners (multi-label classifiers).

    Call ``register(LearnerSpec(...))`` once per learner. The spec names the learner
    (a lowercase identifier such as ``"xdcc"``, unique across all plugins), its
    ``factory`` (the import path ``"package.module:Class"`` of a class following
    scikit-learn's estimator conventions, usually a subclass of
    :class:`mlw.MultiLabelLearner`, imported on first use so that registering stays
    cheap; or the class itself) and a one-line ``description``. Each constructor
    parameter is documented once, in the numpydoc ``Parameters`` section of the class
    docstring (inherited along the class hierarchy), where ``mlw learners NAME`` and the
    documentation read it; defaults are read from the factory's signature. What the
    learner can do (:class:`mlw.LearnerTags`: scores, joint
    decision, ``log_proba_of``, sparse input and output, NaN) is read from its class.

    ``model_types`` declares the learner's *model state*: the import paths of every
    class or function besides the learner's own class that a fitted model holds (a
    helper tree class, a scikit-learn estimator it fits inside). Loading a model file
    reconstructs only declared types (the core declares numpy arrays, random
    generators, scipy sparse matrices and the registered thresholding strategies), so a
    planted payload cannot run code; saving a model that holds an undeclared type warns
    (``mlw.persistence.ModelTrustWarning``), and ``mlw.persistence.untrusted_types(model)``
    lists what to add.
    """


@hookspec
def mlw_register_thresholds(register: Callable[[ThresholdSpec], None]) -> None:
    """Register thresholding strategies, which turn label scores into 0/1 label sets.

    Call ``register(ThresholdSpec(name, factory, description))``. ``factory`` (the
    strategy class or its import path ``"package.module:Class"``) builds, from keyword
    options, an object with ``fit(scores, Y) -> self`` (``scores`` are the learner's
    scores on its training data, or ``None`` when the class sets
    ``needs_training_scores = False``) and ``predict(scores) -> Y`` (0/1, dense uint8 or
    CSR like the scores). The core registers ``fixed``, ``pcut``, ``cardinality`` and
    ``one_threshold`` through this hook.
    """


@hookspec
def mlw_register_decoders(register: Callable[[DecoderSpec], None]) -> None:
    """Register decoders, which turn what a fitted learner gives into the label sets
    that are optimal (or near it) for one measure.

    Call ``register(DecoderSpec(name, factory, description, measure))``. ``factory``
    (the decoder class or its import path ``"package.module:Class"``) builds, from
    keyword options, an object with ``decode(learner, X) -> Y`` (0/1, shape (n, L)) and
    ``route(learner) -> str`` (how it decodes for that learner). A decoder reads what
    the learner declares in its :class:`mlw.LearnerTags`: marginals
    (``predict_proba``), ``joint_mode(X)``, ``size_marginals(X)`` (P(y_j = 1, |y| = s))
    and ``sample_labels(X, n_samples=, random_state=)``. Decoders need no training.
    The core registers ``hamming``, ``subset``, ``f1`` and ``jaccard`` through this
    hook.
    """


@hookspec
def mlw_register_metrics(register: Callable[[MetricSpec], None]) -> None:
    """Register evaluation metrics.

    Call ``register(MetricSpec(name, compute, greater_is_better, needs, description))``.
    ``compute(ctx)`` receives an :class:`mlw.metrics.EvalContext` (true and predicted
    label matrices, optional scores and log-probabilities, cached confusion counts) and
    returns a float. ``needs`` is one of ``"labels"`` (a predicted label set),
    ``"scores"`` (per-label scores), or ``"joint"`` (log P(y|x) of the true label
    vectors); :func:`mlw.evaluate` computes a metric only when what it needs is given.
    """


@hookspec
def mlw_register_loaders(register: Callable[[LoaderSpec], None]) -> None:
    """Register dataset loaders (file formats).

    Call ``register(LoaderSpec(name, suffixes, load, sniff, description))``.
    ``suffixes`` are the file endings the loader claims (``".arff"``; compression
    endings ``.gz``/``.bz2`` are stripped before matching), ``sniff(head: bytes) ->
    bool`` optionally recognises a file by its first bytes, and ``load(path,
    **options) -> Dataset`` reads it. :func:`mlw.load_dataset` picks the loader by
    ``format=``, then suffix, then sniffing.
    """


@hookspec
def mlw_register_generators(register: Callable[[GeneratorSpec], None]) -> None:
    """Register synthetic dataset generators.

    Call ``register(GeneratorSpec(name, generate, description))``. ``generate`` (the
    function or its import path ``"package.module:function"``, imported on first use)
    is called as ``generate(*, seed, **params)`` and returns a new dataset, or a dict of
    named splits (for example the synthetic generator of the structured-SVM paper);
    its parameters are documented in its numpydoc docstring. :func:`mlw.generate_dataset`
    calls it by name.
    """
