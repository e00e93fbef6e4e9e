"""Shared helpers of the loaders: decompression, names, one-line errors, warnings."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re
import zlib
from pathlib import Path
from typing import IO, cast

from mlw.io import _limits  # RATIO_FLOOR read at each call (tests lower it)
from mlw.io._errors import DataFormatError as DataFormatError  # re-exported
from mlw.io._errors import DatasetWarning as DatasetWarning  # re-exported
from mlw.io._limits import LimitError, get_limits, human_bytes

COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz")


def strip_compression(path: Path) -> tuple[Path, str | None]:
    """``yeast.arff.bz2`` -> (``yeast.arff``, ``"bz2"``)."""
    suffix = path.suffix.lower()
    if suffix in COMPRESSION_SUFFIXES:
        return path.with_suffix(""), suffix[1:]
    return path, None


def open_binary(path: Path) -> IO[bytes]:
    """A binary stream of the file, decompressed when it ends in .gz/.bz2/.xz."""
    _, comp = strip_compression(path)
    if comp == "gz":
        return cast(IO[bytes], gzip.open(path, "rb"))
    if comp == "bz2":
        return cast(IO[bytes], bz2.open(path, "rb"))
    if comp == "xz":
        return cast(IO[bytes], lzma.open(path, "rb"))
    return open(path, "rb")


_READ_CHUNK = 16 << 20


def check_expansion(path: Path, total: int, compressed: int, *, in_memory: bool) -> None:
    """Refuse a compressed file that decompresses beyond the limits (a decompression
    bomb) and, when the text is held in memory, beyond ``max_memory``."""
    lim = get_limits()
    if in_memory and total > lim.max_memory:
        raise LimitError(path, None, f"the decompressed text is larger than "
                                     f"{human_bytes(lim.max_memory)} "
                                     f"({lim.advice('max_memory')})")
    if total > _limits.RATIO_FLOOR and total > lim.max_ratio * max(compressed, 1):
        raise LimitError(path, None, f"decompresses to more than {lim.max_ratio:g} times its "
                                     f"size ({human_bytes(total)} so far from "
                                     f"{human_bytes(compressed)}): a decompression bomb? "
                                     f"({lim.advice('max_ratio')})")


def read_bytes(path: Path) -> bytes:
    """The whole (decompressed) content of the file, within the loader limits
    (:mod:`mlw.io._limits`: ``max_memory``, and ``max_ratio`` for compressed files)."""
    _, comp = strip_compression(path)
    size = path.stat().st_size
    try:
        if comp is None:
            lim = get_limits()
            if size > lim.max_memory:
                raise LimitError(path, None, f"the file ({human_bytes(size)}) is larger than "
                                             f"{human_bytes(lim.max_memory)} "
                                             f"({lim.advice('max_memory')})")
            with open(path, "rb") as fh:
                return fh.read()
        parts: list[bytes] = []
        total = 0
        with open_binary(path) as fh:
            while True:
                block = fh.read(_READ_CHUNK)
                if not block:
                    break
                total += len(block)
                check_expansion(path, total, size, in_memory=True)
                parts.append(block)
        return b"".join(parts)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        if isinstance(exc, (FileNotFoundError, IsADirectoryError, PermissionError)):
            raise
        raise DataFormatError(path, None, f"cannot read the file ({exc})") from None


def read_head(path: Path, n: int = 4096) -> bytes:
    """The first ``n`` decompressed bytes (for sniffing)."""
    try:
        with open_binary(path) as fh:
            return fh.read(n)
    except (OSError, EOFError, lzma.LZMAError, zlib.error):
        return b""


def base_name(path: Path) -> str:
    """``/x/yeast-train.arff.bz2`` -> ``yeast-train``."""
    p, _ = strip_compression(path)
    return p.stem if p.suffix else p.name


def decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def text_stream(path: Path) -> io.TextIOWrapper:
    return io.TextIOWrapper(open_binary(path), encoding="utf-8", errors="replace")


_NUMBER_CHARS = re.compile(rb"[-+0-9.eE]+")


def number_token(text: bytes | memoryview, offset: int) -> bytes:
    """The number starting at byte ``offset`` (for error messages)."""
    m = _NUMBER_CHARS.match(text, offset)
    return m.group() if m else b""


def parse_fallback_numbers(text: bytes | memoryview, offsets: list[int]) -> list[float]:
    """``float`` of the numbers starting at ``offsets`` (the kernels validated them)."""
    match = _NUMBER_CHARS.match
    out = []
    for o in offsets:
        m = match(text, o)
        if m is None:  # pragma: no cover - the kernel checked the syntax
            raise ValueError(f"no number at byte {o}")
        out.append(float(m.group()))
    return out


def source_files(provenance: object) -> list[str]:
    """The files a dataset was read from (``path`` and ``xml`` of its provenance, and of
    the parts of a joined dataset), for refusing to overwrite them."""
    out: list[str] = []
    stack = [provenance]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in ("path", "xml"):
                value = item.get(key)
                if isinstance(value, str) and value and value not in out:
                    out.append(value)
            stack.extend(v for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend(item)
    return out
