"""Presenting experiments (``mlw bench``, ``mlw report``): the progress display and the
final tables. Every decision is the core's (``mlw.experiments``)."""

from __future__ import annotations

import math
import os
import re
import time
from typing import Any

from mlw_cli.output import eprint, err

_ITEM = re.compile(r",(?!\s*[A-Za-z_]\w*\s*=)")


def split_list(text: str | None, what: str) -> list[str] | None:
    """``"br,cc:k=3,x=1,lcif"`` -> ``["br", "cc:k=3,x=1", "lcif"]``: commas separate
    items except where ``key=`` follows (a learner's parameters)."""
    if text is None:
        return None
    items = [t.strip() for t in _ITEM.split(text) if t.strip()]
    if not items:
        raise ValueError(f"{what} is empty")
    return items


def parse_folds(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        folds = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise ValueError(f"--folds {text}: expected fold numbers such as 0,1") from None
    if not folds or min(folds) < 0:
        raise ValueError(f"--folds {text}: expected fold numbers >= 0")
    return folds


class BenchProgress:
    """A rich progress bar on stderr (cells done / total, elapsed, ETA, the cells
    running), or off a terminal one plain line per finished cell."""

    def __init__(self, live: bool) -> None:
        self.live = live
        self.bar: Any = None
        self.task: Any = None
        self.running: list[str] = []
        self.done = 0
        self.total = 0
        self.t0 = time.perf_counter()

    def __enter__(self) -> BenchProgress:
        return self

    def _start_bar(self) -> None:
        """The bar starts with the run (not before: worker processes are forked first,
        while this process has no display thread)."""
        if self.live and self.bar is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            console = Console(stderr=True, force_terminal=True) if \
                os.environ.get("MLW_PROGRESS") else err()
            self.bar = Progress(TextColumn("cells"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), TextColumn("ETA"),
                                TimeRemainingColumn(), TextColumn("{task.description}"),
                                console=console, transient=False)
            self.bar.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def begin(self, total: int, done: int) -> None:
        self.total, self.done = total, done
        if done:
            eprint(f"{done} of {total} cells are already in the results: skipped")
        self._start_bar()
        if self.bar is not None:
            self.task = self.bar.add_task("", total=total, completed=done)

    def _describe(self) -> str:
        if not self.running:
            return ""
        more = f" (+{len(self.running) - 1} more)" if len(self.running) > 1 else ""
        return f"running: {self.running[-1]}{more}"

    def started(self, cell: Any) -> None:
        self.running.append(cell.describe())
        if self.bar is not None:
            self.bar.update(self.task, description=self._describe())

    def finished(self, cell: Any, record: dict[str, Any]) -> None:
        text = cell.describe()
        if text in self.running:
            self.running.remove(text)
        self.done += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=self._describe())
            if record.get("status") != "ok":
                self.bar.console.print(f"[red]failed[/]: {text}: {record.get('error')}",
                                       markup=True, highlight=False)
            return
        status = "ok" if record.get("status") == "ok" else f"FAILED: {record.get('error')}"
        wall = record.get("wall_seconds")
        secs = f" {wall:.1f} s" if isinstance(wall, float) else ""
        eprint(f"[{self.done}/{self.total}] {text}:{secs} {status}")


def _fmt(value: float) -> str:
    if not math.isfinite(value):
        return "-"
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3f}" if abs(value) < 10 \
        else f"{value:.2f}"


def summary_tables(df: Any, metrics: list[str] | None) -> list[Any]:
    """Per metric, a rich table: datasets x learners, mean ± sd over folds (rank), and
    the average ranks (computed by ``mlw.experiments.summary_table``)."""
    from rich.table import Table

    from mlw.experiments.stats import metrics_of, summary_table

    names = metrics or metrics_of(df)
    tables = []
    for metric in names:
        if f"metric_{metric}" not in df.columns:
            continue
        s = summary_table(df, metric)
        if not s.learners:
            continue
        arrow = "higher is better" if s.higher_is_better else "lower is better"
        t = Table(title=f"{metric} ({arrow}): mean ± sd over folds (rank)",
                  title_justify="left")
        t.add_column("dataset")
        for label in s.labels:
            t.add_column(label, justify="right")
        for i, ds in enumerate(s.datasets):
            row = []
            for j in range(len(s.learners)):
                m = s.mean[i, j]
                text = _fmt(m)
                if s.n_folds[i, j] > 1:
                    text += f" ± {_fmt(s.sd[i, j])}"
                if math.isfinite(s.ranks[i, j]):
                    text += f" ({s.ranks[i, j]:g})"
                row.append(text)
            t.add_row(ds, *row)
        if s.avg_ranks is not None:
            t.add_row("average rank", *[f"{r:.2f}" for r in s.avg_ranks], style="bold")
        if s.friedman is not None and s.cd is not None:
            t.caption = (f"Friedman p = {s.friedman.iman_davenport_p:.3g} (Iman-Davenport), "
                         f"Nemenyi CD = {s.cd:.2f} at α = {s.alpha:g}")
            t.caption_justify = "left"
        tables.append(t)
    return tables
