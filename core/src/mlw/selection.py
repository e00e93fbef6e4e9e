"""Model selection: choose a learner's parameters from a grid inside one outer
training part (an ``mlw bench`` learner's ``grid`` and ``select``), with the same
fit-and-score step as every other evaluation (:func:`mlw.evaluation.fit_and_evaluate`),
so a selection is nothing but more folds' worth of the one mechanism.

The learner of a grid point comes from the caller's ``build(point)`` (the cell's
registration, parameters and seed: :func:`mlw.factory.build_learner`), so a selection
looks no name up."""

from __future__ import annotations

import copy
import inspect
import itertools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from mlw._guard import learner_call
from mlw.dataset import Dataset
from mlw.evaluation import evaluate, evaluate_fitted, fit_and_evaluate, timed
from mlw.jsonsafe import to_jsonable
from mlw.plan import prepare_evaluation
from mlw.plugins import get_plugin_manager
from mlw.splits import cv_splits

#: Builds the unfitted learner of a grid point (the entry's parameters and the point's).
Build = Callable[[Mapping[str, Any]], Any]


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the grid, the first parameter varying slowest (the order in
    which ties are broken). An empty grid has no points."""
    if not grid:
        return []
    keys = list(grid)
    return [dict(zip(keys, values, strict=True))
            for values in itertools.product(*(grid[k] for k in keys))]


def validation_split(n: int, fraction: float, seed: int | None) -> tuple[np.ndarray, np.ndarray]:
    """``(fit_rows, validation_rows)``: a seeded random ``fraction`` of the ``n`` rows
    (at least one, rounded) for validation, the rest for fitting, both sorted (the
    XDCC paper's 80/20 split of the training part)."""
    perm = np.random.default_rng(seed).permutation(n)
    n_val = max(1, int(round(fraction * n)))
    if n_val >= n:
        raise ValueError(f"a validation fraction of {fraction} leaves no rows to fit on "
                         f"({n} rows)")
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def _splits(train: Dataset, selection: Any, seed: int, validation: Dataset | None
            ) -> list[tuple[Dataset, Dataset]]:
    if selection.method == "split":
        if validation is None:
            raise ValueError("select method 'split' needs a dataset with a validation "
                             "split (such as a generator's train/validation/test)")
        return [(train, validation)]
    s = selection.seed if selection.seed is not None else seed
    if selection.method == "validation":
        fit_rows, val_rows = validation_split(train.n_instances, selection.fraction, s)
        return [(train.subset(fit_rows, name=f"{train.name}[fit]"),
                 train.subset(val_rows, name=f"{train.name}[validation]"))]
    return [(a, b) for _, a, b in cv_splits(train, selection.folds, s)]


def select_params(entry: Any, train: Dataset, seed: int, validation: Dataset | None = None,
                  kept: dict[str, Any] | None = None, *, build: Build
                  ) -> tuple[dict[str, Any], list[dict]]:
    """The grid point of ``entry`` (a :class:`LearnerEntry` with ``grid`` and
    ``select``) with the best ``select.metric`` on ``train``'s inner split(s) (or on
    ``validation``, the dataset's own split, for ``method="split"``), and the score of
    every point scored (``[{"params", "score"}]``, in the order scored: every point in
    grid order, or the points an ``ordered`` search visited). A warm-started path puts
    the chosen point's fitted model and its fit seconds in ``kept`` (``"model"``,
    ``"fit_seconds"``, ``"compile_seconds"``, ``"fit_cpu_seconds"``). ``build(point)``
    is the unfitted learner of a grid point."""
    selection = entry.select
    higher = get_plugin_manager().metric(selection.metric).greater_is_better
    splits = _splits(train, selection, seed, validation)
    trail: list[dict[str, Any]] = []

    def score_of(point: dict[str, Any]) -> float:
        setup = prepare_evaluation(build(point), [selection.metric], entry.threshold)
        values = []
        for fit_part, val_part in splits:
            result, _ = fit_and_evaluate(setup, fit_part, val_part)
            values.append(result.metrics[selection.metric])
        score = float(np.mean(values))
        trail.append({"params": point, "score": score})
        return score

    points = grid_points(entry.grid)
    if getattr(selection, "warm_start", False):
        (train_part, val_part), = splits
        chosen, model, timing = _warm_path(entry, build, points, train_part, val_part,
                                           trail, higher)
        if kept is not None:
            kept.update(model=model, fit_seconds=timing[0], compile_seconds=timing[1],
                        fit_cpu_seconds=timing[2])
        return chosen, trail
    if getattr(selection, "staged", None) is not None:
        scored = _staged_scores(entry, build, splits, selection)
        for point in points:  # the trail in grid order, as without stages
            trail.append({"params": point, "score": scored[_point_key(point)]})
        return _best_of(trail, higher, entry), trail
    if getattr(selection, "search", "grid") == "ordered":
        return _ordered_search(entry, points, score_of, higher), trail
    for point in points:
        score_of(point)
    return _best_of(trail, higher, entry), trail


def _best_of(trail: list[dict[str, Any]], higher: bool, entry: Any) -> dict[str, Any]:
    """The params of the best score in ``trail`` (NaN never best; ties: the first)."""
    best: tuple[float, dict[str, Any]] | None = None
    for t in trail:
        if math.isnan(t["score"]):
            continue
        key = t["score"] if higher else -t["score"]
        if best is None or key > best[0]:
            best = (key, t["params"])
    if best is None:
        raise ValueError(f"learner {entry.key!r}: every grid point scored NaN on "
                         f"{entry.select.metric}")
    return dict(best[1])


def _ordered_search(entry: Any, points: list[dict[str, Any]], score_of: Any, higher: bool
                    ) -> dict[str, Any]:
    """The point an ordered line search stops at: from the middle point (the lower
    middle of an even count) towards the better neighbour while the score strictly
    improves; upwards first, downwards only when the first step up did not improve.
    A NaN score never improves."""
    seen: dict[int, float] = {}

    def key(i: int) -> float:
        if i not in seen:
            s = score_of(points[i])
            seen[i] = -math.inf if math.isnan(s) else (s if higher else -s)
        return seen[i]

    i = (len(points) - 1) // 2
    best = key(i)
    for step in (1, -1):
        j, moved = i + step, False
        while 0 <= j < len(points) and key(j) > best:
            best, i, moved = key(j), j, True
            j += step
        if moved:
            break
    if best == -math.inf:
        raise ValueError(f"learner {entry.key!r}: every grid point scored NaN on "
                         f"{entry.select.metric}")
    return dict(points[i])


def _point_key(point: dict[str, Any]) -> str:
    return json.dumps(to_jsonable(point), sort_keys=True)


def _staged_scores(entry: Any, build: Build, splits: list[tuple[Dataset, Dataset]],
                   selection: Any) -> dict[str, float]:
    """Every grid point's score, the ``selection.staged`` parameter read from the stages
    of one fit per combination of the other parameters (at its largest value)."""
    name, metric = selection.staged, selection.metric
    needs = get_plugin_manager().metric(metric).needs
    if needs == "joint":
        raise ValueError(f"learner {entry.key!r}: a staged selection cannot score "
                         f"{metric!r} (it needs log P(y|x), which stages do not give)")
    values = sorted(set(entry.grid[name]))
    others = {k: v for k, v in entry.grid.items() if k != name}
    out: dict[str, float] = {}
    for base in grid_points(others) or [{}]:
        setup = prepare_evaluation(build({**base, name: values[-1]}), [metric],
                                   entry.threshold)
        if setup.evaluation_threshold is not None:
            raise ValueError(f"learner {entry.key!r}: a staged selection needs the "
                             f"learner's own decision (a threshold it takes itself)")
        per_value: dict[int, list[float]] = {v: [] for v in values}
        for fit_part, val_part in splits:
            _, model = fit_and_evaluate(setup, fit_part, val_part)
            method = "staged_predict_proba" if needs == "scores" else "staged_predict"
            if not hasattr(model, method):
                raise ValueError(f"learner {entry.key!r}: {type(model).__name__} has no "
                                 f"{method}, which select.staged needs")
            stages = _stages_at(getattr(model, method), val_part.X, values)
            for v, out_v in zip(values, stages, strict=True):
                Y_pred = out_v if needs == "labels" else None
                S = out_v if needs == "scores" else None
                per_value[v].append(evaluate(val_part.Y, Y_pred, scores=S,
                                             metrics=[metric])[metric])
        for v in values:
            out[_point_key({**base, name: v})] = float(np.mean(per_value[v]))
    return out


def _stages_at(method: Any, X: Any, values: list[int]) -> list[Any]:
    """``method(X, values)`` (one yield per value), or for a method that takes no values
    (``staged_predict(X)``, one yield per stage 1, 2, ...) the yields at ``values``."""
    params = [p for p in inspect.signature(method).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(params) >= 2:
        got = list(method(X, values))
    else:
        wanted, got = set(values), []
        for i, out in enumerate(method(X), start=1):
            if i in wanted:
                got.append(out)
            if i >= values[-1]:
                break
    if len(got) != len(values):
        raise ValueError(f"the learner's stages stop before {values[-1]} "
                         f"({len(got)} of {len(values)} values scored)")
    return got


def _warm_path(entry: Any, build: Build, points: list[dict[str, Any]], train: Dataset,
               validation: Dataset, trail: list[dict[str, Any]], higher: bool
               ) -> tuple[dict[str, Any], Any, tuple[float, float]]:
    """The grid's points fitted in order on one learner (``set_params`` between fits:
    a ``warm_start`` learner continues from the previous solution), each scored on
    ``validation``: the best point (first in grid order on ties), a copy of its fitted
    model, and that fit's (seconds, numba compile seconds)."""
    metric = entry.select.metric
    setup = prepare_evaluation(build(points[0]), [metric], entry.threshold)
    if setup.evaluation_threshold is not None:
        raise ValueError(f"learner {entry.key!r}: a warm-started path needs the learner's "
                         f"own decision (a threshold it takes itself)")
    model = setup.learner
    best: tuple[float, dict[str, Any], Any, tuple[float, float, float]] | None = None
    for point in points:
        model.set_params(**point)

        def fit() -> None:
            with learner_call(model, "fit"):
                model.fit(train.X, train.Y)

        _, seconds, compiling, cpu_seconds = timed(fit)
        score = float(evaluate_fitted(model, validation.X, validation.Y, [metric])[0][metric])
        trail.append({"params": point, "score": score})
        if math.isnan(score):
            continue
        k = score if higher else -score
        if best is None or k > best[0]:
            best = (k, point, copy.deepcopy(model), (seconds, compiling, cpu_seconds))
    if best is None:
        raise ValueError(f"learner {entry.key!r}: every grid point scored NaN on {metric}")
    return dict(best[1]), best[2], best[3]
