"""A structural check of a Parquet file before polars decodes it.

polars' Parquet reader trusts the counts and sizes a file declares: a data page whose
header says ``num_values = -64`` makes it reserve a bitmap of about 2.3e18 bytes, and
Rust *aborts* the whole process on a failed allocation (SIGABRT: no exception, no
message, nothing Python can catch). So before polars reads, this module walks the
file's metadata with a small Thrift compact-protocol reader and checks every declared
count and size against the file and against each other:

* the footer: ``PAR1`` at both ends, a footer length inside the file, the row counts
  of the file and its row groups not negative and adding up;
* every column chunk: its metadata present (not in another file), its byte range
  inside the file's data, its value count not negative;
* every page header in each chunk: sizes not negative, the page inside its chunk, the
  value (and null, row, level-length) counts not negative and the data pages' values
  adding up to the chunk's, a dictionary's values fitting in its bytes; the
  uncompressed size of a page and 8 bytes a value of a chunk within ``max_memory``.

It costs a walk over the page headers (memory-mapped, no data read). It catches the
class of corruption found by fuzzing (declared counts that the decoder allocates for);
it cannot prove the encoded data itself well formed, which polars still decodes.
"""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import Any

from mlw.io._common import DataFormatError
from mlw.io._limits import check_memory, get_limits

_MAGIC = b"PAR1"
_MAX_DEPTH = 32


class _Bad(Exception):
    """Malformed Thrift (turned into a DataFormatError by the caller)."""


class _Reader:
    """The Thrift compact protocol, enough to read Parquet's structs into dicts of
    ``{field id: value}`` (structs -> dicts, lists and sets -> lists; strings, doubles
    and maps skipped). ``buf`` is a bytes object: reading past it is "truncated"."""

    def __init__(self, buf: bytes, pos: int = 0) -> None:
        self.buf, self.pos = buf, pos

    def varint(self) -> int:
        buf, pos = self.buf, self.pos
        b = buf[pos]
        pos += 1
        result, shift = b & 0x7F, 7
        while b & 0x80:
            b = buf[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if shift > 70:
                raise _Bad("a number too long")
        self.pos = pos
        return result

    def skip(self, n: int) -> None:
        if self.pos + n > len(self.buf):
            raise _Bad("a length beyond the metadata")
        self.pos += n

    def value(self, ttype: int, depth: int) -> Any:
        if 4 <= ttype <= 6:                      # i16, i32, i64: zigzag varints
            n = self.varint()
            return (n >> 1) ^ -(n & 1)
        if ttype == 8:                           # binary: not needed, skipped
            self.skip(self.varint())
            return None
        if ttype == 12:
            return self.struct(depth + 1)
        if ttype in (1, 2):                      # bool in a field header
            return ttype == 1
        if ttype == 3:
            self.skip(1)
            return self.buf[self.pos - 1]
        if ttype == 7:
            self.skip(8)
            return None
        if ttype in (9, 10):
            head = self.buf[self.pos]
            self.pos += 1
            size, etype = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            if size > len(self.buf) - self.pos:  # every element takes a byte at least
                raise _Bad("a list longer than the metadata")
            if etype in (1, 2):                  # bools in a list are one byte each
                self.skip(size)
                return None
            return [self.value(etype, depth + 1) for _ in range(size)]
        if ttype == 11:
            size = self.varint()
            if size:
                if 2 * size > len(self.buf) - self.pos:
                    raise _Bad("a map longer than the metadata")
                kv = self.buf[self.pos]
                self.pos += 1
                for _ in range(size):
                    self.value(kv >> 4, depth + 1)
                    self.value(kv & 0x0F, depth + 1)
            return None
        raise _Bad(f"unknown Thrift type {ttype}")

    def struct(self, depth: int = 0) -> dict[int, Any]:
        if depth > _MAX_DEPTH:
            raise _Bad("structs nested too deep")
        fields: dict[int, Any] = {}
        last = 0
        buf = self.buf
        while True:
            head = buf[self.pos]
            self.pos += 1
            if head == 0:
                return fields
            delta, ttype = head >> 4, head & 0x0F
            if delta:
                fid = last + delta
            else:
                n = self.varint()
                fid = (n >> 1) ^ -(n & 1)
            fields[fid] = self.value(ttype, depth)
            last = fid


def _parse(buf: bytes) -> tuple[dict[int, Any], int]:
    """The struct at the start of ``buf`` and its length in bytes."""
    reader = _Reader(buf)
    try:
        return reader.struct(), reader.pos
    except IndexError:
        raise _Bad("truncated metadata") from None


def _int(d: dict[int, Any], fid: int, what: str, default: int | None = None) -> int:
    v = d.get(fid, default)
    if not isinstance(v, int) or isinstance(v, bool):
        raise _Bad(f"{what} is missing")
    if v < 0:
        raise _Bad(f"{what} is negative ({v})")
    return v


def check_parquet(path: str | Path) -> None:
    """Raise :class:`DataFormatError` naming the first declared count or size that
    cannot be right (see the module docstring); return when the structure is sound."""
    path = Path(path)
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        if size < 12:
            raise DataFormatError(path, None, f"not a Parquet file ({size} bytes)")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            try:
                _check(path, buf, size)
            except _Bad as exc:
                raise DataFormatError(path, None, f"corrupt Parquet metadata: {exc}") \
                    from None


def _check(path: Path, buf: Any, size: int) -> None:
    if buf[:4] != _MAGIC or buf[size - 4:size] != _MAGIC:
        raise _Bad("no PAR1 magic at both ends")
    footer_len = int.from_bytes(buf[size - 8:size - 4], "little")
    data_end = size - 8 - footer_len
    if data_end < 4:
        raise _Bad(f"the footer length ({footer_len:,} bytes) is beyond the file "
                   f"({size:,} bytes)")
    meta, _ = _parse(bytes(buf[data_end:size - 8]))
    n_rows = _int(meta, 3, "the file's row count")
    groups = meta.get(4) or []
    if not isinstance(groups, list):
        raise _Bad("row groups are not a list")
    total, max_memory = 0, get_limits().max_memory
    for g, group in enumerate(groups):
        if not isinstance(group, dict):
            raise _Bad(f"row group {g} is not a struct")
        total += _int(group, 3, f"row group {g}'s row count")
        for c, chunk in enumerate(group.get(1) or []):
            where = f"row group {g}, column {c}"
            if not isinstance(chunk, dict) or not isinstance(chunk.get(3), dict):
                raise _Bad(f"{where}: no column metadata (data in another file?)")
            _check_chunk(path, buf, chunk[3], data_end, max_memory, where)
    if total != n_rows:
        raise _Bad(f"the row groups hold {total:,} rows, the footer says {n_rows:,}")


def _check_chunk(path: Path, buf: Any, md: dict[int, Any], data_end: int, max_memory: int,
                 where: str) -> None:
    n_values = _int(md, 5, f"{where}: the value count")
    length = _int(md, 7, f"{where}: the compressed size")
    start = _int(md, 9, f"{where}: the data page offset")
    dictionary = md.get(11)
    if isinstance(dictionary, int) and 0 < dictionary < start:
        start = dictionary
    end = start + length
    if start < 4 or end > data_end:
        raise _Bad(f"{where}: bytes {start:,}-{end:,} are outside the file's data "
                   f"(4-{data_end:,})")
    if 8 * n_values > max_memory:
        check_memory(path, 8.0 * n_values, f"{where}: {n_values:,} values")
    pos, seen = start, 0
    while pos < end:
        window = min(end - pos, 512)             # a page header is rarely longer
        while True:
            try:
                page, n = _parse(bytes(buf[pos:pos + window]))
                break
            except _Bad:
                if window >= end - pos:
                    raise
                window = min(end - pos, window * 8)
        pos += n
        kind = _int(page, 1, f"{where}: the page type")
        raw = _int(page, 2, f"{where}: a page's uncompressed size")
        stored = _int(page, 3, f"{where}: a page's compressed size")
        pos += stored
        if pos > end:
            raise _Bad(f"{where}: a page of {stored:,} bytes runs past its column chunk")
        if raw > max_memory:
            check_memory(path, raw, f"{where}: a page of {raw:,} bytes")
        header = page.get({0: 5, 2: 7, 3: 8}.get(kind, -1))
        if not isinstance(header, dict):
            continue                              # index pages, unknown kinds: not decoded
        count = _int(header, 1, f"{where}: a page's value count")
        if kind == 3:                             # data page v2
            for fid, what in ((2, "null count"), (3, "row count"),
                              (5, "definition levels' length"),
                              (6, "repetition levels' length")):
                if _int(header, fid, f"{where}: a page's {what}", 0) > \
                        (stored if fid > 4 else count):
                    raise _Bad(f"{where}: a page's {what} exceeds the page")
        if kind == 2:                             # dictionary: 1 bit a value at least
            if count > 8 * raw + 8:
                raise _Bad(f"{where}: a dictionary of {count:,} values in {raw:,} bytes")
        else:
            seen += count
            if seen > n_values:
                raise _Bad(f"{where}: the pages hold more than the chunk's "
                           f"{n_values:,} values")
    if seen != n_values:
        raise _Bad(f"{where}: the pages hold {seen:,} values, the chunk says {n_values:,}")
