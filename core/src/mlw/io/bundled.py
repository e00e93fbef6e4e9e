"""Datasets shipped inside the ``mlw`` package (no download needed).

Only ``emotions`` (Trohidis et al., 2008; the Mulan distribution) is bundled: small
(593 songs), dense, and enough for ``mlw fit --learner X`` to run out of the box.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

#: The dataset used when none is named (``mlw fit``, :func:`mlw.plan_data`).
DEFAULT_DATA = "emotions"

#: name -> metadata. ``shape`` is (instances, features, labels) per split; a test checks
#: it against the files.
BUNDLED: dict[str, dict[str, Any]] = {
    "emotions": {
        "description": "music clips tagged with the emotions they evoke (Mulan emotions; "
                       "72 rhythmic and timbre features, 6 labels)",
        "files": {"train": "emotions-train.arff", "test": "emotions-test.arff"},
        "xml": "emotions.xml",
        "shape": {"train": (391, 72, 6), "test": (202, 72, 6)},
        "source": "http://mulan.sourceforge.net/datasets-mlc.html",
    },
}


def data_dir() -> Path:
    """The folder holding the bundled files inside the installed package."""
    return Path(str(resources.files("mlw") / "data"))


def bundled_datasets() -> list[dict[str, Any]]:
    """The bundled datasets: ``name``, ``splits``, ``shape`` per split, ``description``.

    Examples
    --------
    >>> import mlw.io
    >>> [d["name"] for d in mlw.io.bundled_datasets()]
    ['emotions']
    """
    out = []
    for name, meta in BUNDLED.items():
        out.append({
            "name": name,
            "splits": list(meta["files"]),
            "shape": {s: list(v) for s, v in meta["shape"].items()},
            "n_features": meta["shape"]["train"][1],
            "n_labels": meta["shape"]["train"][2],
            "description": meta["description"],
            "source": meta["source"],
        })
    return out


def bundled_path(name: str, split: str) -> tuple[Path, Path] | None:
    """(data file, label XML) of a bundled dataset split, or None for an unknown name."""
    meta = BUNDLED.get(name.lower())
    if meta is None:
        return None
    files = meta["files"]
    if split not in files:
        raise ValueError(f"bundled dataset {name!r} has no split {split!r} "
                         f"(splits: {', '.join(files)})")
    d = data_dir()
    return d / files[split], d / meta["xml"]
