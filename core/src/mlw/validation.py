"""Input validation shared by datasets, learners, metrics and thresholds.

Every check raises ``ValueError`` with one line that names the problem. Nothing here
densifies sparse input.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp


def _as_csr(M: Any, dtype: Any) -> sp.csr_matrix:
    M = sp.csr_matrix(M, dtype=dtype) if not (sp.issparse(M) and M.format == "csr") else M
    if M.dtype != dtype:
        M = M.astype(dtype)
    if not M.has_canonical_format:
        M = M.copy()
        M.sum_duplicates()  # also sorts indices
    return M


def _surely_finite(values: np.ndarray) -> bool:
    """True when every value is finite, proved by one pass without a temporary: a NaN or
    an infinity makes the sum NaN or infinite. False means "check each value": a sum
    that is not finite may also be an overflow of finite values."""
    if not values.size:
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(values.sum()))


def check_X(X: Any, *, allow_nan: bool = False, what: str = "X",
            n_features: int | None = None) -> np.ndarray | sp.csr_matrix:
    """Features as a C-contiguous float64 array or a canonical float64 CSR matrix.

    Raises ``ValueError`` for a non-2-D input, infinities, NaN (unless ``allow_nan``),
    or a column count other than ``n_features``.
    """
    if sp.issparse(X):
        X = _as_csr(X, np.float64)
        values = X.data
    else:
        try:
            X = np.ascontiguousarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{what}: cannot be read as a numeric matrix ({exc})") from None
        if X.ndim != 2:
            raise ValueError(f"{what}: expected a 2-D matrix (n_instances, n_features), "
                             f"got shape {X.shape}")
        values = X
    if not _surely_finite(values):
        if np.isinf(values).any():
            raise ValueError(f"{what}: contains infinite values")
        if not allow_nan and np.isnan(values).any():
            raise ValueError(f"{what}: contains NaN (missing values); this learner does not "
                             f"accept them")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{what}: has {X.shape[1]} features, but the model was fitted with "
                         f"{n_features}")
    return X


def check_Y(Y: Any, *, n_rows: int | None = None, what: str = "Y",
            n_labels: int | None = None) -> np.ndarray | sp.csr_matrix:
    """A 0/1 label matrix as dense uint8 or canonical uint8 CSR (sparse stays sparse)."""
    if sp.issparse(Y):
        Y = sp.csr_matrix(Y) if Y.format != "csr" else Y
        values = Y.data
        if values.size and not np.isin(values, (0, 1)).all():
            raise ValueError(f"{what}: label matrix must hold only 0 and 1")
        Y = _as_csr(Y, np.uint8)
        Y.eliminate_zeros()
    else:
        arr = np.asarray(Y)
        if arr.ndim == 1:
            raise ValueError(f"{what}: expected a 2-D label matrix (n_instances, n_labels), got "
                             f"a 1-D array; use Y.reshape(-1, 1) for a single label")
        if arr.ndim != 2:
            raise ValueError(f"{what}: expected a 2-D label matrix, got shape {arr.shape}")
        if arr.dtype.kind == "f" and np.isnan(arr).any():
            raise ValueError(f"{what}: label matrix contains NaN")
        if arr.dtype == np.bool_:
            Y = arr.astype(np.uint8)
        else:
            if arr.size and not np.isin(arr, (0, 1)).all():
                raise ValueError(f"{what}: label matrix must hold only 0 and 1")
            Y = np.ascontiguousarray(arr, dtype=np.uint8)
    if n_rows is not None and Y.shape[0] != n_rows:
        raise ValueError(f"{what}: has {Y.shape[0]} rows but X has {n_rows}")
    if n_labels is not None and Y.shape[1] != n_labels:
        raise ValueError(f"{what}: has {Y.shape[1]} labels, expected {n_labels}")
    return Y


def check_scores(S: Any, *, what: str = "scores",
                 n_labels: int | None = None) -> np.ndarray | sp.csr_matrix:
    """Per-label scores as float64 (dense, or CSR with absent = 0); no NaN allowed."""
    if sp.issparse(S):
        S = _as_csr(S, np.float64)
        values = S.data
    else:
        S = np.ascontiguousarray(S, dtype=np.float64)
        if S.ndim != 2:
            raise ValueError(f"{what}: expected a 2-D matrix, got shape {S.shape}")
        values = S
    if not _surely_finite(values) and not np.isfinite(values).all():
        raise ValueError(f"{what}: contains NaN or infinite values")
    if n_labels is not None and S.shape[1] != n_labels:
        raise ValueError(f"{what}: has {S.shape[1]} labels, expected {n_labels}")
    return S


def check_same_shape(A: Any, B: Any, what_a: str, what_b: str) -> None:
    if A.shape != B.shape:
        raise ValueError(f"{what_a} has shape {A.shape} but {what_b} has shape {B.shape}")


_KIND_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def check_param(name: str, value: Any, kind: type = float, *, low: float | None = None,
                high: float | None = None, low_open: bool = False, high_open: bool = False,
                choices: Any = None, allow_none: bool = False) -> Any:
    """Check one scalar parameter of a learner or strategy; return it as ``kind``.

    The one check every estimator uses for its scalar parameters (called in ``fit``,
    as scikit-learn's conventions want), so every message reads the same way:
    ``parameter 'k' must be an integer >= 1, got 0``.

    Parameters
    ----------
    name : the parameter's name, as the user writes it
    value : the value given
    kind : ``int`` (bools refused), ``float`` (ints accepted), ``bool`` or ``str``
    low, high : bounds, inclusive unless ``low_open`` / ``high_open``
    choices : the allowed values (for strings: matched exactly)
    allow_none : ``None`` is a valid value (returned as is)

    Examples
    --------
    >>> check_param("k", 3, int, low=1)
    3
    >>> check_param("lam", 1, float, low=0, high=1)
    1.0
    >>> check_param("k", 0, int, low=1)
    Traceback (most recent call last):
    ...
    ValueError: parameter 'k' must be an integer >= 1, got 0
    """
    if value is None and allow_none:
        return None
    what = _KIND_NAMES.get(kind, kind.__name__)
    bounds = []
    if low is not None:
        bounds.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        bounds.append(f"{'<' if high_open else '<='} {high:g}")
    if choices is not None:
        bounds.append("one of " + ", ".join(repr(c) for c in choices))
    expected = what + (" " + " and ".join(bounds) if bounds else "")
    if allow_none:
        expected += " or None"
    message = f"parameter {name!r} must be {expected}, got {value!r}"
    is_integer = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if kind is int:
        if not is_integer:
            raise ValueError(message)
        value = int(value)
    elif kind is float:
        if not (is_integer or isinstance(value, (float, np.floating))) or value != value:
            raise ValueError(message)
        value = float(value)
    elif kind is bool:
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(message)
        value = bool(value)
    elif not isinstance(value, kind):
        raise ValueError(message)
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(message)
    if high is not None and (value > high or (high_open and value == high)):
        raise ValueError(message)
    if choices is not None and value not in choices:
        raise ValueError(message)
    return value


def dense_labels(Y: Any) -> np.ndarray:
    """A label matrix as a dense C-contiguous uint8 array (for methods that need one:
    a chain's label columns, a label powerset's rows). Only call it where the dense
    ``n x L`` matrix is what the method works on."""
    if sp.issparse(Y):
        return np.ascontiguousarray(Y.toarray(), dtype=np.uint8)
    return np.ascontiguousarray(Y, dtype=np.uint8)


def require_text(text: str, what: str) -> str:
    """``text``, or ``ValueError("<what> is empty")`` when it is empty or blank: the one
    empty-name check of names and paths given by users (a dataset, a test set, a
    config; never silently the default)."""
    if not text.strip():
        raise ValueError(f"{what} is empty")
    return text


def check_folds(k: Any, what: str = "the number of folds") -> int:
    """``k`` as an int, or a ``ValueError`` naming ``what`` when it is not an integer
    of at least 2."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"{what} must be an integer of at least 2, got {k!r}")
    return int(k)
