"""Mulan label files: ``NAME.xml`` lists the attributes of ``NAME-train.arff`` (and
``NAME-test.arff``) that are labels, in the order the label columns take.

Nested ``<label>`` elements (Mulan's label hierarchies) are read in document order;
every one of them is a label column.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from mlw._atomic import atomic_write
from mlw.io._common import DataFormatError, strip_compression

_SPLIT_SUFFIX = re.compile(r"[-_](train|test|training|testing)$", re.IGNORECASE)


def read_label_xml(path: str | Path) -> list[str]:
    """The label names of a Mulan XML file, in the file's order.

    Raises ``ValueError`` naming the file (and line) for malformed XML, no labels, a
    label without a name or a label named twice.
    """
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        raise DataFormatError(path, line, f"malformed XML ({exc})") from None
    names: list[str] = []
    for el in root.iter():
        if el.tag == "label" or el.tag.endswith("}label"):
            name = el.get("name")
            if not name:
                raise DataFormatError(path, None, "a <label> element has no name attribute")
            if name in names:
                raise DataFormatError(path, None, f"label {name!r} is listed twice")
            names.append(name)
    if not names:
        raise DataFormatError(path, None, "no <label> elements: not a Mulan label file")
    return names


def find_label_xml(data_path: str | Path) -> Path | None:
    """The Mulan XML beside a data file: ``yeast-train.arff`` -> ``yeast.xml``.

    Looks for ``<stem>.xml`` first (``medical.arff`` -> ``medical.xml``), then the stem
    without a ``-train``/``-test`` suffix. Compression endings are ignored.
    """
    p, _ = strip_compression(Path(data_path))
    stem = p.stem
    candidates = [p.with_name(stem + ".xml")]
    stripped = _SPLIT_SUFFIX.sub("", stem)
    if stripped != stem:
        candidates.append(p.with_name(stripped + ".xml"))
    for c in candidates:
        if c.is_file():
            return c
    return None


def write_label_xml(path: str | Path, label_names: list[str]) -> None:
    """Write a Mulan label file listing ``label_names`` in order."""
    root = ET.Element("labels", xmlns="http://mulan.sourceforge.net/labels")
    for name in label_names:
        ET.SubElement(root, "label", name=name)
    tree = ET.ElementTree(root)
    with atomic_write(path, "wb") as fh:
        tree.write(fh, encoding="utf-8", xml_declaration=True)
