"""Dataset loading (placeholder API; the loaders are being written)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mlw.dataset import Dataset


def load_dataset(source: str | Path, *, split: str = "train", format: str | None = None,
                 **options: Any) -> Dataset:
    raise NotImplementedError
