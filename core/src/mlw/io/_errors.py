"""The errors and warnings of reading data files (re-exported by :mod:`mlw.io`): one
module every reader and the limits import, so none of them imports another for them."""

from __future__ import annotations

from pathlib import Path

__all__ = ["DataFormatError", "DatasetWarning"]


class DatasetWarning(UserWarning):
    """Something a loader changed or dropped (recorded in ``Dataset.provenance`` too)."""


class DataFormatError(ValueError):
    """A malformed data file. The message is one line: ``file:line: reason``."""

    def __init__(self, path: str | Path, line: int | None, reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{Path(path).name}:{line}" if line is not None else f"{Path(path).name}"
        super().__init__(f"{where}: {reason}")
