"""Where the benchmark scripts find the shared public data: ``../shared`` beside the
clone, or the folder ``MLW_SHARED_DATASETS`` names (as the tests do). Not a script."""

from __future__ import annotations

import os
from pathlib import Path

#: The repository's root.
ROOT = Path(__file__).resolve().parents[1]
#: The real public datasets (see ../shared/datasets/README.md for their quirks).
SHARED_DATASETS = Path(os.environ.get("MLW_SHARED_DATASETS", ROOT.parent / "shared" / "datasets"))
#: The Mulan-format sets (emotions, yeast, scene, ...).
MULAN = SHARED_DATASETS / "mulan"
#: The method papers, beside the datasets.
PAPERS = SHARED_DATASETS.parent / "papers"
