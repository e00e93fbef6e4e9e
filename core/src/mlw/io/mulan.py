"""Mulan label files: ``NAME.xml`` lists the attributes of ``NAME-train.arff`` (and
``NAME-test.arff``) that are labels, in the order the label columns take.

Nested ``<label>`` elements (Mulan's label hierarchies) are read in document order;
every one of them is a label column.

The XML is parsed with ``defusedxml``, which refuses entity declarations and external
references (billion laughs, quadratic blow-up, external entities) whatever the expat
version of the running Python: a label file needs none of them, and ``xml.etree`` on its
own is safe against them only with expat 2.4.1 or later.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import defusedxml
import defusedxml.ElementTree as SafeET

from mlw.files import atomic_write
from mlw.io._common import DataFormatError, strip_compression
from mlw.io._limits import LimitError, get_limits

#: A Mulan label file lists names: even 10 million labels fit in this.
_MAX_XML_BYTES = 1 << 30

_SPLIT_SUFFIX = re.compile(r"[-_](train|test|training|testing|validation|valid|val)$",
                           re.IGNORECASE)


def read_label_xml(path: str | Path) -> list[str]:
    """The label names of a Mulan XML file, in the file's order.

    Raises ``ValueError`` naming the file (and line) for malformed XML, no labels, a
    label without a name or a label named twice.
    """
    path = Path(path)
    lim = get_limits()
    size = path.stat().st_size
    if size > min(lim.max_memory, _MAX_XML_BYTES):
        raise LimitError(path, None, f"a label file of {size:,} bytes is too large (at most "
                                     f"{min(lim.max_memory, _MAX_XML_BYTES):,})")
    try:
        root = SafeET.parse(path).getroot()
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        raise DataFormatError(path, line, f"malformed XML ({exc})") from None
    except defusedxml.DTDForbidden:
        raise DataFormatError(path, None, "a document type declaration is not allowed in a "
                                          "label file") from None
    except defusedxml.EntitiesForbidden as exc:
        raise DataFormatError(path, None, f"entity declarations are not allowed in a label "
                                          f"file (entity {exc.name!r})") from None
    except defusedxml.ExternalReferenceForbidden:
        raise DataFormatError(path, None, "external references are not allowed in a label "
                                          "file") from None
    except defusedxml.DefusedXmlException as exc:  # pragma: no cover - any other refusal
        raise DataFormatError(path, None, f"unsafe XML refused ({exc})") from None
    except RecursionError:
        raise DataFormatError(path, None, "XML nested too deeply") from None
    except (LookupError, UnicodeError, ValueError) as exc:  # e.g. an unknown encoding
        msg = " ".join(str(exc).split())[:80]
        raise DataFormatError(path, None, f"malformed XML ({type(exc).__name__}: {msg})") \
            from None
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
