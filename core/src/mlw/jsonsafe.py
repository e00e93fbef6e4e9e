"""The one JSON encoding of mlw's records (``--json`` output, model-file headers,
experiment results): plain JSON that any parser reads.

Conventions: non-finite floats (NaN, inf) become ``null`` (JSON has no NaN, and
``null`` is what JSON.stringify, polars and most tools write); numpy scalars and arrays
become Python numbers and lists; tuples become lists; dict keys become strings; any
other object becomes its ``repr``.
"""

from __future__ import annotations

import json
import math
from typing import Any


def to_jsonable(value: Any) -> Any:
    """A JSON-safe copy of ``value`` (see the module's conventions).

    Examples
    --------
    >>> to_jsonable({"a": float("nan"), "b": (1, 2.5), 3: "x"})
    {'a': None, 'b': [1, 2.5], '3': 'x'}
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    kind = type(value).__module__
    if kind == "numpy":  # numpy scalars and arrays, without importing numpy here
        if getattr(value, "shape", None) == ():
            return to_jsonable(value.item())
        if hasattr(value, "tolist"):
            return to_jsonable(value.tolist())
    return repr(value)


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` of :func:`to_jsonable` (strict: never writes NaN)."""
    return json.dumps(to_jsonable(value), allow_nan=False, **kwargs)
