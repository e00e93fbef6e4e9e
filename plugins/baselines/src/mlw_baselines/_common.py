"""Helpers shared by the baseline learners: label matrices, chain features, orders."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from mlw.validation import check_Y, dense_labels

__all__ = ["chain_features", "dense_labels", "log_sigmoid", "resolve_order",
           "single_blas_thread", "validate_joint_query"]


def chain_features(X: Any, prefix: np.ndarray) -> Any:
    """``[X, prefix]``: the input of a chain link. CSR ``X`` stays CSR (the label columns
    are appended as a sparse block, never by densifying ``X``)."""
    if prefix.shape[1] == 0:
        return X
    if sp.issparse(X):
        return sp.hstack([X, sp.csr_matrix(prefix.astype(np.float64))], format="csr")
    return np.hstack([X, prefix.astype(np.float64)])


def resolve_order(order: Any, n_labels: int, random_state: Any) -> np.ndarray:
    """The chain order as a permutation of ``range(n_labels)``.

    ``None`` is the labels' own order, ``"random"`` a permutation drawn from
    ``numpy.random.default_rng(random_state)``, a sequence (or a comma-separated string
    such as ``"2,0,1"``) is used as given.
    """
    if order is None:
        return np.arange(n_labels, dtype=np.int64)
    if isinstance(order, str):
        if order == "random":
            return np.random.default_rng(random_state).permutation(n_labels).astype(np.int64)
        try:  # "2,0,1" from the CLI (--param order=2,0,1)
            order = [int(tok) for tok in order.replace(" ", "").split(",")]
        except ValueError:
            raise ValueError(f"order must be None, 'random' or a permutation of the label "
                             f"indices, got {order!r}") from None
    if not isinstance(order, (Sequence, np.ndarray)):
        raise ValueError(f"order must be None, 'random' or a sequence, got {order!r}")
    arr = np.asarray(order)
    if arr.ndim != 1 or arr.dtype.kind not in "iu" and not (
            arr.dtype.kind == "O" and all(isinstance(v, (int, np.integer)) for v in arr)):
        raise ValueError(f"order must be a sequence of label indices, got {order!r}")
    arr = arr.astype(np.int64)
    if arr.size != n_labels or not np.array_equal(np.sort(arr), np.arange(n_labels)):
        raise ValueError(f"order must be a permutation of 0..{n_labels - 1} "
                         f"({n_labels} labels), got {list(arr)}")
    return arr


def validate_joint_query(learner: Any, X: Any, Y: Any) -> tuple[Any, np.ndarray]:
    """Validated ``(X, dense Y)`` for ``log_proba_of``."""
    check_is_fitted(learner, "n_labels_")
    X = learner._validate_X(X, reset=False)
    Y = check_Y(Y, n_rows=X.shape[0], n_labels=learner.n_labels_)
    return X, dense_labels(Y)


def log_sigmoid(z: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -z)


F = TypeVar("F", bound=Callable[..., Any])


def single_blas_thread(method: F) -> F:
    """Run ``method`` with BLAS limited to one thread.

    The baselines fit many small models (n x d products with d in the hundreds), where
    a multi-threaded BLAS gains nothing and, on a busy machine, loses badly: spinning
    OpenBLAS threads made one multinomial logistic regression on emotions take 18 s
    instead of 0.2 s. Parallelism comes from ``n_jobs`` (one model per worker) instead.
    """

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with threadpool_limits(limits=1, user_api="blas"):
            return method(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
