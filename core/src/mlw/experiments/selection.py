"""Inner model selection: choose a learner's parameters from a grid inside one outer
training part, with the same fit-and-score step as every other evaluation
(:func:`mlw.model_selection.fit_and_evaluate`), so a selection is nothing but more
cells' worth of the one mechanism."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mlw.dataset import Dataset


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
    from mlw.model_selection import cv_splits

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


def select_params(entry: Any, train: Dataset, seed: int, validation: Dataset | None = None
                  ) -> tuple[dict[str, Any], list[dict]]:
    """The grid point of ``entry`` (a :class:`LearnerEntry` with ``grid`` and
    ``select``) with the best ``select.metric`` on ``train``'s inner split(s) (or on
    ``validation``, the dataset's own split, for ``method="split"``), and the score of
    every point (``[{"params", "score"}]``, in grid order)."""
    from mlw.experiments.config import build_learner
    from mlw.model_selection import fit_and_evaluate, prepare_evaluation
    from mlw.plugins import get_plugin_manager

    selection = entry.select
    higher = get_plugin_manager().metric(selection.metric).greater_is_better
    splits = _splits(train, selection, seed, validation)
    trail: list[dict[str, Any]] = []
    best: tuple[float, dict[str, Any]] | None = None
    for point in grid_points(entry.grid):
        setup = prepare_evaluation(build_learner(entry, seed, point), [selection.metric],
                                   entry.threshold)
        values = []
        for fit_part, val_part in splits:
            result, _ = fit_and_evaluate(setup, fit_part, val_part)
            values.append(result.metrics[selection.metric])
        score = float(np.mean(values))
        trail.append({"params": point, "score": score})
        if math.isnan(score):
            continue
        key = score if higher else -score
        if best is None or key > best[0]:
            best = (key, point)
    if best is None:
        raise ValueError(f"learner {entry.key!r}: every grid point scored NaN on "
                         f"{selection.metric}")
    return dict(best[1]), trail
