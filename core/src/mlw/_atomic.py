"""Former home of :mod:`mlw.files` (kept so code written against it still imports)."""

from mlw.files import (  # noqa: F401
    STALE_SECONDS,
    Terminated,
    _raise_terminated,
    atomic_write,
    check_output_path,
    sigterm_as_interrupt,
    sweep_stale_temporaries,
)
