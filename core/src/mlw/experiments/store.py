"""The results store: fold-level records in Parquet (through polars), appended as cells
finish, safe against crashes, Ctrl-C and ``kill -9``.

Layout, for ``--out results.parquet``:

- ``results.parquet``: every record of the finished runs, one Parquet file (what
  ``polars.read_parquet`` and ``mlw report`` read);
- ``results.parquet.parts/``: one small Parquet file per cell finished since the last
  compaction, each written atomically (a temporary file beside it, fsync, rename), so a
  part is either whole or absent; a killed run leaves its finished cells here;
- ``results.parquet.lock``: held (``flock``) while a run writes, so two runs cannot
  interleave; removed when the run ends (a killed run leaves it, unlocked: the next
  run takes it).

Compaction (at the end of every run, and every ``COMPACT_EVERY`` parts) writes the
main file anew, atomically, with its old records and the parts, then deletes those
parts: a crash at any moment leaves either the old or the new main file, and the
parts it may still hold twice are merged by ``cell_id`` when read. Reading never trusts
a file name alone: temporary files (``.*.tmp``) are ignored, and a part that cannot be
read is reported and skipped, never deleted.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mlw.files import atomic_write, check_output_path, not_a_file
from mlw.io.tabular import read_parquet_frame
from mlw.results import SCHEMA as SCHEMA  # the record columns, re-exported
from mlw.results import records_frame  # one typed-record writer for mlw fit --out and the store

COMPACT_EVERY = 500



class StoreLockedError(RuntimeError):
    """Another run is writing to the same results."""


class ResultStore:
    """Fold-level results under ``path`` (see the module docstring)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        p = check_output_path(path, option="the results file")
        self.path = p
        self.parts = p.with_name(p.name + ".parts")
        self.lock_path = p.with_name(p.name + ".lock")
        self._lock_fd: int | None = None
        self._since_compaction = 0

    def files(self) -> list[Path]:
        """The results file and the folder of parts, which may hold records."""
        return [self.path, self.parts]

    # --- locking ------------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self) -> Iterator[ResultStore]:
        """Hold the store's lock (released by the kernel if the process dies). The lock
        file is removed on the way out, while still held: a run that opened it in the
        meantime finds, once it gets the lock, that the file is no longer the one at
        the path, and takes the lock anew on a fresh file."""
        while True:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise StoreLockedError(f"{self.path} is being written by another run "
                                       f"(lock {self.lock_path})") from None
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.lock_path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # removed by the run that held it: lock the new file
        self._lock_fd = fd
        try:
            yield self
        finally:
            self._lock_fd = None
            with contextlib.suppress(OSError):
                os.unlink(self.lock_path)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    # --- writing ------------------------------------------------------------------------
    def append(self, record: dict[str, Any]) -> Path:
        """Write one record as a part file, atomically; compacts every
        ``COMPACT_EVERY`` parts."""
        self.parts.mkdir(exist_ok=True)
        target = self.parts / f"{record['cell_id']}-{uuid.uuid4().hex[:8]}.parquet"
        frame = records_frame([record])
        with atomic_write(target, "wb") as fh:
            frame.write_parquet(fh, statistics=False)
        self._since_compaction += 1
        if self._since_compaction >= COMPACT_EVERY:
            self.compact()
        return target

    def _part_files(self) -> list[Path]:
        if not self.parts.is_dir():
            return []
        return sorted(p for p in self.parts.glob("*.parquet") if not p.name.startswith("."))

    def clean_temporary(self) -> int:
        """Remove temporary files a killed writer left (only while holding the lock).

        Unlike :func:`mlw.files.sweep_stale_temporaries`, which must guess from a pid and
        an age whether another process is still writing, the lock proves no writer is
        alive: every temporary here is stale, whoever made it."""
        removed = 0
        for folder, pattern in ((self.parts, ".*.tmp"), (self.path.parent,
                                                         f".{self.path.name}.*.tmp")):
            if folder.is_dir():
                for p in folder.glob(pattern):
                    with contextlib.suppress(OSError):
                        p.unlink()
                        removed += 1
        return removed

    def compact(self) -> None:
        """Fold the parts into the main file (atomically), then delete them."""
        parts = self._part_files()
        if not parts:
            return
        frames, used = self._read_parts(parts)
        main = self._read_main()
        if main is not None:
            frames.insert(0, main)
        if not frames:
            return
        merged = dedupe(concat(frames))
        with atomic_write(self.path, "wb") as fh:
            merged.write_parquet(fh)
        for p in used:
            with contextlib.suppress(OSError):
                p.unlink()
        with contextlib.suppress(OSError):
            self.parts.rmdir()  # only when empty
        self._since_compaction = 0

    # --- reading ------------------------------------------------------------------------
    def _read_main(self) -> Any:
        if not self.path.exists():
            return None
        try:
            return read_parquet_frame(self.path, survive_abort=False)
        except (ValueError, OSError) as exc:  # DataFormatError is a ValueError
            raise ValueError(f"{self.path} is not a readable Parquet file ({exc}); it is "
                             f"left as it is: move it away to start anew") from None

    def _read_parts(self, parts: list[Path]) -> tuple[list[Any], list[Path]]:
        frames, used = [], []
        for p in parts:
            try:
                frames.append(read_parquet_frame(p, survive_abort=False))
                used.append(p)
            except (ValueError, OSError) as exc:  # pragma: no cover (atomic writes)
                warnings.warn(f"skipping unreadable result part {p} ({exc})", stacklevel=2)
        return frames, used

    def read(self) -> Any:
        """Every record (main file and parts), one per ``cell_id``; an empty frame when
        there are none."""
        frames, _ = self._read_parts(self._part_files())
        main = self._read_main()
        if main is not None:
            frames.insert(0, main)
        if not frames:
            return records_frame([])
        return dedupe(concat(frames))

    def done(self) -> dict[str, str | None]:
        """The cells that finished without error, each with the resolved parameters its
        learner was fitted with (``None`` in records written before they were kept)."""
        import polars as pl

        df = self.read()
        if df.height == 0:
            return {}
        ok = df.filter(pl.col("status") == "ok")
        params = ok["resolved_params"].to_list() if "resolved_params" in ok.columns \
            else [None] * ok.height
        return dict(zip(ok["cell_id"].to_list(), params, strict=True))

    def done_ids(self) -> set[str]:
        """The cells that finished without error."""
        return set(self.done())


def concat(frames: list[Any]) -> Any:
    import polars as pl

    return pl.concat(frames, how="diagonal_relaxed")


def dedupe(df: Any) -> Any:
    """One record per cell: a successful one when there is one, the latest otherwise."""
    import polars as pl

    if df.height == 0:
        return df
    ranked = df.with_columns((pl.col("status") == "ok").cast(pl.Int8).alias("_ok"))
    ranked = ranked.sort(["_ok", "finished"], nulls_last=False)
    return ranked.unique(subset=["cell_id"], keep="last", maintain_order=True).drop("_ok")


def read_results(path: str | os.PathLike[str]) -> Any:
    """Every record of a results file written by ``mlw bench`` (including the parts of
    an interrupted run) as a polars DataFrame, one row per cell."""
    p = Path(path)
    what = not_a_file(p)
    if what is not None:  # a FIFO would be read for ever
        raise ValueError(f"{p} {what}; give the results file")
    store = ResultStore(p)
    if not p.exists() and not store.parts.is_dir():
        raise FileNotFoundError(f"{p}: no such results file")
    return store.read()
