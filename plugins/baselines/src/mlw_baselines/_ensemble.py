"""What the ensembles (RAkEL, ECC, EPCC) share: fitting members in parallel and
drawing their training samples."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from joblib import Parallel, delayed

from mlw.validation import check_param


def parallel_map(n_jobs: int | None, function: Callable[..., Any],
                 arguments: Sequence[tuple[Any, ...]]) -> list[Any]:
    """``[function(*args) for args in arguments]``, in parallel processes by joblib
    unless ``n_jobs`` is ``None`` or 1 (then in this process, without joblib)."""
    if n_jobs in (None, 1):
        return [function(*args) for args in arguments]
    return list(Parallel(n_jobs=n_jobs)(delayed(function)(*args) for args in arguments))


def sample_rows(n: int, bootstrap: bool, max_samples: float,
                rng: np.random.Generator) -> np.ndarray:
    """Row indices of one member's training sample (sorted).

    ``bootstrap=True``: ``round(max_samples * n)`` rows drawn with replacement (bagging;
    1.0 is Breiman's bootstrap); ``False``: that many distinct rows (subsampling).
    At least one row is drawn.
    """
    size = max(1, int(round(float(max_samples) * n)))
    if bootstrap:
        rows = rng.integers(0, n, size=size)
    else:
        rows = rng.choice(n, size=min(size, n), replace=False)
    return np.sort(rows).astype(np.int64)


def check_sampling(bootstrap: Any, max_samples: Any) -> None:
    check_param("bootstrap", bootstrap, bool)
    check_param("max_samples", max_samples, float, low=0, low_open=True,
                high=None if bootstrap else 1)
