"""The header of an ARFF file: ``@relation``, ``@attribute`` declarations, ``@data``.

Names may be quoted with ``'`` or ``"`` and use Weka's backslash escapes; unquoted names
are taken as written (backslashes included). Keywords are case-insensitive; ``%``
comment lines and blank lines are skipped. Every error names the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mlw.io._common import DataFormatError, decode
from mlw.io._limits import check_columns, get_limits

_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "%": "%", "n": "\n", "t": "\t", "r": "\r"}


@dataclass
class Attribute:
    """One ``@attribute`` of an ARFF header."""

    name: str
    kind: str  # "numeric" | "nominal" | "string" | "date"
    values: list[str] = field(default_factory=list)
    line: int = 0


@dataclass
class ArffHeader:
    relation: str
    attributes: list[Attribute]
    data_offset: int  # byte offset of the first line after @data
    data_line: int  # its line number (1-based)
    relation_line: int = 1


def unquote(token: str) -> str:
    """Weka's unquoting of a quoted name: strip the quotes, resolve backslash escapes.

    Only ``\\\\ \\' \\" \\% \\n \\t \\r`` are escapes; any other backslash is kept.
    """
    body = token[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body) and body[i + 1] in _ESCAPES:
            out.append(_ESCAPES[body[i + 1]])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _quoted_end(s: str, i: int) -> int:
    """Index of the quote closing the one at ``s[i]`` (backslash escapes), or -1."""
    q = s[i]
    j = i + 1
    while j < len(s):
        if s[j] == "\\":
            j += 2
            continue
        if s[j] == q:
            return j
        j += 1
    return -1


def _name_token(s: str, i: int, path: Path, line: int) -> tuple[str, int]:
    """A (possibly quoted) name starting at or after ``s[i]``; returns (name, next index)."""
    while i < len(s) and s[i] in " \t":
        i += 1
    if i >= len(s):
        raise DataFormatError(path, line, "expected a name")
    if s[i] in "'\"":
        j = _quoted_end(s, i)
        if j < 0:
            raise DataFormatError(path, line, f"unterminated quoted name {s[i:i + 40]!r}")
        return unquote(s[i:j + 1]), j + 1
    j = i
    while j < len(s) and s[j] not in " \t{":
        j += 1
    return s[i:j], j


def _nominal_values(spec: str, path: Path, line: int) -> list[str]:
    """``{a, 'b c', d}`` -> ['a', 'b c', 'd']."""
    body_start = spec.index("{") + 1
    values: list[str] = []
    i = body_start
    n = len(spec)
    while True:
        while i < n and spec[i] in " \t":
            i += 1
        if i >= n:
            raise DataFormatError(path, line, "nominal value list has no closing '}'")
        if spec[i] == "}":
            if values:
                raise DataFormatError(path, line, "empty value before '}' in a nominal list")
            break
        if spec[i] in "'\"":
            j = _quoted_end(spec, i)
            if j < 0:
                raise DataFormatError(path, line, "unterminated quoted nominal value")
            values.append(unquote(spec[i:j + 1]))
            i = j + 1
        else:
            j = i
            while j < n and spec[j] not in ",}":
                j += 1
            v = spec[i:j].strip()
            if not v:
                raise DataFormatError(path, line, "empty value in a nominal value list")
            values.append(v)
            i = j
        while i < n and spec[i] in " \t":
            i += 1
        if i < n and spec[i] == ",":
            i += 1
            continue
        if i < n and spec[i] == "}":
            if spec[i + 1:].strip():
                after = spec[i + 1:i + 40]
                raise DataFormatError(path, line,
                                      f"unexpected text after a nominal list: {after!r}")
            break
        raise DataFormatError(path, line, "nominal value list has no closing '}'")
    if not values:
        raise DataFormatError(path, line, "nominal attribute with no values '{}'")
    if len(set(values)) != len(values):
        dup = next(v for v in values if values.count(v) > 1)
        raise DataFormatError(path, line, f"nominal value {dup!r} is declared twice")
    return values


def parse_header(raw: bytes, path: Path) -> ArffHeader:
    """Read the ARFF header up to ``@data``."""
    relation: str | None = None
    relation_line = 1
    attributes: list[Attribute] = []
    names: set[str] = set()
    pos = 3 if raw.startswith(b"\xef\xbb\xbf") else 0  # a UTF-8 byte-order mark
    line = 0
    n = len(raw)
    max_columns = get_limits().max_columns
    while pos < n:
        eol = raw.find(b"\n", pos)
        if eol < 0:
            eol = n
        line += 1
        text = decode(raw[pos:eol]).strip()
        pos = eol + 1
        if not text or text.startswith("%"):
            continue
        low = text[:10].lower()
        if low.startswith("@relation"):
            rest = text[len("@relation"):]
            relation, _ = _name_token(rest, 0, path, line) if rest.strip() else ("", 0)
            relation_line = line
        elif low.startswith("@attribute"):
            if relation is None:
                raise DataFormatError(path, line, "@attribute before @relation")
            name, j = _name_token(text, len("@attribute"), path, line)
            spec = text[j:].strip()
            if not spec:
                raise DataFormatError(path, line, f"attribute {name!r} has no type")
            if name in names:
                raise DataFormatError(path, line, f"attribute {name!r} is declared twice")
            if len(attributes) >= max_columns:
                check_columns(path, len(attributes) + 1, "the header declares attributes", line)
            names.add(name)
            if spec.startswith("{"):
                attributes.append(Attribute(name, "nominal", _nominal_values(spec, path, line),
                                            line))
                continue
            word = spec.split()[0].lower()
            if word in ("numeric", "real", "integer"):
                attributes.append(Attribute(name, "numeric", line=line))
            elif word == "string":
                attributes.append(Attribute(name, "string", line=line))
            elif word == "date":
                attributes.append(Attribute(name, "date", line=line))
            elif word == "relational":
                raise DataFormatError(path, line, "relational attributes are not supported")
            else:
                raise DataFormatError(path, line,
                                      f"unknown type {spec.split()[0]!r} of attribute {name!r}")
        elif low.startswith("@data"):
            if relation is None:
                raise DataFormatError(path, line, "@data before @relation")
            if not attributes:
                raise DataFormatError(path, line, "no @attribute declarations before @data")
            return ArffHeader(relation, attributes, min(pos, n), line + 1, relation_line)
        elif low.startswith("@end"):
            continue
        else:
            what = "file does not start with @relation" if relation is None else \
                f"unexpected header line {text[:40]!r}"
            raise DataFormatError(path, line, f"not an ARFF header: {what}")
    raise DataFormatError(path, line, "no @data section")
