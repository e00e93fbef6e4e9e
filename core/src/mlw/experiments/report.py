"""``mlw report``: Markdown and a self-contained HTML page from fold-level results, with
per-metric tables in the papers' layout (datasets as rows, learners as columns, mean ±
standard deviation over folds, the rank in parentheses, the best in bold, the average
rank as the last row, the paired t-test markers against a control), the Friedman test
and Nemenyi critical difference under each table, CD diagrams and staged curves as PNG.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mlw.experiments.stats import (
    CONTROL_BETTER,
    CONTROL_WORSE,
    MetricSummary,
    learner_labels,
    metrics_of,
)
from mlw.experiments.store import read_results
from mlw.files import atomic_write
from mlw.plugins import get_plugin_manager
from mlw.validation import require_text

#: the CD diagrams and staged curves show at most this many metrics per figure
STAGE_METRICS = 6


def _fmt(value: float) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) >= 100:
        return f"{value:.1f}"
    if abs(value) >= 10:
        return f"{value:.2f}"
    return f"{value:.3f}"


@dataclass
class Section:
    """The report of one experiment."""

    experiment: str
    summaries: list[MetricSummary]
    figures: dict[str, Path] = field(default_factory=dict)  # name -> file
    timing: MetricSummary | None = None
    chosen: dict[tuple[str, str], str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    cells: int = 0
    cpu_seconds: float = 0.0
    hosts: list[str] = field(default_factory=list)
    versions: str = ""


def _cell_text(s: MetricSummary, i: int, j: int) -> tuple[str, bool]:
    """The text of a table cell and whether it is the row's best."""
    m = s.mean[i, j]
    if not math.isfinite(m):
        return "-", False
    text = _fmt(m)
    if s.n_folds[i, j] > 1:
        text += f" ± {_fmt(s.sd[i, j])}"
    if math.isfinite(s.ranks[i, j]):
        r = s.ranks[i, j]
        text += f" ({r:g})" if r == int(r) else f" ({r:.1f})"
    text += s.markers[i][j] if s.markers else ""
    row = s.mean[i]
    finite = row[np.isfinite(row)]
    best = finite.size > 0 and np.isclose(m, finite.max() if s.higher_is_better
                                          else finite.min(), rtol=0, atol=1e-12)
    return text, bool(best)


def _p(value: float) -> str:
    return "p < 0.001" if value < 1e-3 else f"p = {value:.3g}"


def _num(value: float) -> str:
    return "∞" if math.isinf(value) else f"{value:.2f}"


def _stats_lines(s: MetricSummary) -> list[str]:
    lines = []
    if s.friedman is not None:
        f = s.friedman
        verdict = "significant" if f.iman_davenport_p < s.alpha else "not significant"
        lines.append(
            f"Friedman over {f.n_datasets} datasets: χ²_F = {_num(f.statistic)} "
            f"({_p(f.p_value)}), Iman-Davenport F_F = {_num(f.iman_davenport)} "
            f"({_p(f.iman_davenport_p)}): {verdict} at α = {s.alpha:g}; "
            f"Nemenyi CD = {s.cd:.2f}.")
        if f.n_datasets <= 10 or len(s.learners) <= 5:
            # Demsar (2006), Sec. 3.2.2: the chi-square approximation holds for N > 10
            # and k > 5; with fewer, the verdict is indicative only
            lines.append(f"Few datasets or learners (N = {f.n_datasets}, k = "
                         f"{len(s.learners)}): the tests' approximations need N > 10 and "
                         f"k > 5 (Demšar 2006), so read the verdict as indicative.")
    elif len(s.learners) >= 2:
        lines.append("Friedman test: needs at least two datasets with every learner.")
    if s.control is not None and s.win_tie_loss:
        lines.append(
            f"Markers: {CONTROL_BETTER} {s.control} significantly better, "
            f"{CONTROL_WORSE} significantly worse (paired t-test over folds, "
            f"α = {s.alpha:g}).")
    return lines


def _direction(s: MetricSummary) -> str:
    return "higher is better" if s.higher_is_better else "lower is better"


# --- Markdown ------------------------------------------------------------------------------
def _md_table(s: MetricSummary, *, ranked: bool = True) -> list[str]:
    head = "| dataset | " + " | ".join(s.labels) + " |"
    lines = [head, "|---" * (len(s.labels) + 1) + "|"]
    for i, ds in enumerate(s.datasets):
        cells = []
        for j in range(len(s.learners)):
            text, best = _cell_text(s, i, j)
            cells.append(f"**{text}**" if best and ranked else text)
        lines.append(f"| {ds} | " + " | ".join(cells) + " |")
    if ranked and s.avg_ranks is not None:
        lines.append("| average rank | " + " | ".join(f"{r:.2f}" for r in s.avg_ranks) + " |")
    if ranked and s.win_tie_loss:
        row = [("-" if x == s.control else "{}/{}/{}".format(*s.win_tie_loss[x]))
               for x in s.learners]
        lines.append(f"| win/tie/loss of {s.control} | " + " | ".join(row) + " |")
    return lines


def _overview(sections_summaries: list[MetricSummary]) -> tuple[list[str], list[list[str]]]:
    """Average ranks per learner (rows) and metric (columns), with their mean."""
    if not sections_summaries:
        return [], []
    # the metrics' learner lists can differ (a learner scored on some metrics only)
    learners = list(dict.fromkeys(name for s in sections_summaries for name in s.labels))
    header = ["learner"] + [s.metric for s in sections_summaries] + ["mean"]
    rows = []
    for name in learners:
        vals = [s.avg_ranks[s.labels.index(name)]
                if s.avg_ranks is not None and name in s.labels else math.nan
                for s in sections_summaries]
        finite = [v for v in vals if math.isfinite(v)]
        rows.append([name] + [f"{v:.2f}" if math.isfinite(v) else "-" for v in vals] +
                    [f"{np.mean(finite):.2f}" if finite else "-"])
    return header, rows


def render_markdown(sections: list[Section], title: str) -> str:
    out = [f"# {title}", ""]
    for sec in sections:
        if len(sections) > 1:
            out += [f"## Experiment `{sec.experiment}`", ""]
        out.append(f"{sec.cells} cells, {sec.cpu_seconds / 60:.1f} CPU minutes in the cells; "
                   f"hosts: {', '.join(sec.hosts) or '-'}; versions: {sec.versions or '-'}.")
        out.append("")
        header, rows = _overview(sec.summaries)
        if rows:
            out += ["### Average ranks", ""]
            out.append("| " + " | ".join(header) + " |")
            out.append("|---" * len(header) + "|")
            out += ["| " + " | ".join(r) + " |" for r in rows]
            out.append("")
        for s in sec.summaries:
            out += [f"### {s.metric} ({_direction(s)})", ""]
            out += _md_table(s)
            out.append("")
            out += _stats_lines(s)
            fig = sec.figures.get(f"cd-{s.metric}")
            if fig is not None:
                out += ["", f"![critical difference diagram, {s.metric}]({fig.name})"]
            out.append("")
        if sec.timing is not None:
            out += [f"### {_timing_title(sec.timing)}", ""]
            out += _md_table(sec.timing, ranked=False)
            out.append("")
        if sec.chosen:
            out += ["### Selected parameters", "",
                    "| learner | dataset | chosen (per fold) |", "|---|---|---|"]
            out += [f"| {ln} | {ds} | `{txt}` |" for (ln, ds), txt in sec.chosen.items()]
            out.append("")
        for name, fig in sec.figures.items():
            if name.startswith("stages-"):
                out += [f"### Staged results: {name.removeprefix('stages-')}", "",
                        f"![staged results]({fig.name})", ""]
            elif name.startswith("reliability-"):
                out += [f"### Reliability diagram: {name.removeprefix('reliability-')}", "",
                        f"![reliability diagram]({fig.name})", ""]
        if sec.errors:
            out += ["### Cells that failed", ""] + [f"- {e}" for e in sec.errors] + [""]
    return "\n".join(out).rstrip() + "\n"


# --- HTML ----------------------------------------------------------------------------------
_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:72em;
color:#222;padding:0 1em}
h1{font-size:1.6em}h2{font-size:1.3em;margin-top:2em}h3{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em;display:block;max-width:100%;
overflow-x:auto}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
thead th{background:#f2f2f2}tr.avg td{background:#fafafa;font-weight:600}
td.best{font-weight:700;background:#eef6ee}
p.note{color:#555;font-size:.9em;margin:.2em 0}img{max-width:100%;margin:.4em 0}
code{font-size:.85em}
"""


def _html_table(s: MetricSummary, *, ranked: bool = True) -> str:
    parts = ["<table><thead><tr><th>dataset</th>"]
    parts += [f"<th>{html.escape(x)}</th>" for x in s.labels]
    parts.append("</tr></thead><tbody>")
    for i, ds in enumerate(s.datasets):
        parts.append(f"<tr><td>{html.escape(ds)}</td>")
        for j in range(len(s.learners)):
            text, best = _cell_text(s, i, j)
            cls = ' class="best"' if best and ranked else ""
            parts.append(f"<td{cls}>{html.escape(text)}</td>")
        parts.append("</tr>")
    if ranked and s.avg_ranks is not None:
        parts.append('<tr class="avg"><td>average rank</td>' +
                     "".join(f"<td>{r:.2f}</td>" for r in s.avg_ranks) + "</tr>")
    if ranked and s.win_tie_loss:
        row = [("-" if x == s.control else "{}/{}/{}".format(*s.win_tie_loss[x]))
               for x in s.learners]
        parts.append(f'<tr class="avg"><td>win/tie/loss of {html.escape(str(s.control))}'
                     f"</td>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def render_html(sections: list[Section], title: str) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{html.escape(title)}</title>", f"<style>{_CSS}</style></head><body>",
           f"<h1>{html.escape(title)}</h1>"]
    for sec in sections:
        if len(sections) > 1:
            out.append(f"<h2>Experiment <code>{html.escape(sec.experiment)}</code></h2>")
        out.append(f'<p class="note">{sec.cells} cells, {sec.cpu_seconds / 60:.1f} CPU '
                   f"minutes in the cells; hosts: {html.escape(', '.join(sec.hosts) or '-')}; "
                   f"versions: {html.escape(sec.versions or '-')}.</p>")
        header, rows = _overview(sec.summaries)
        if rows:
            out.append("<h3>Average ranks</h3><table><thead><tr>" +
                       "".join(f"<th>{html.escape(h)}</th>" for h in header) +
                       "</tr></thead><tbody>" +
                       "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) +
                               "</tr>" for r in rows) + "</tbody></table>")
        for s in sec.summaries:
            out.append(f'<h3 id="{html.escape(s.metric)}">{html.escape(s.metric)} '
                       f"({_direction(s)})</h3>")
            out.append(_html_table(s))
            out += [f'<p class="note">{html.escape(line)}</p>' for line in _stats_lines(s)]
            fig = sec.figures.get(f"cd-{s.metric}")
            if fig is not None:
                out.append(_img(fig, f"critical difference diagram, {s.metric}"))
        if sec.timing is not None:
            out.append(f"<h3>{html.escape(_timing_title(sec.timing))}</h3>")
            out.append(_html_table(sec.timing, ranked=False))
        if sec.chosen:
            out.append("<h3>Selected parameters</h3><table><thead><tr><th>learner</th>"
                       "<th>dataset</th><th>chosen (per fold)</th></tr></thead><tbody>")
            out += [f"<tr><td>{html.escape(ln)}</td><td>{html.escape(ds)}</td>"
                    f"<td><code>{html.escape(t)}</code></td></tr>"
                    for (ln, ds), t in sec.chosen.items()]
            out.append("</tbody></table>")
        for name, fig in sec.figures.items():
            if name.startswith("stages-"):
                out.append(f"<h3>Staged results: {html.escape(name.removeprefix('stages-'))}"
                           f"</h3>")
                out.append(_img(fig, f"staged results {name}"))
            elif name.startswith("reliability-"):
                out.append(f"<h3>Reliability diagram: "
                           f"{html.escape(name.removeprefix('reliability-'))}</h3>")
                out.append(_img(fig, f"reliability diagram {name}"))
        if sec.errors:
            out.append("<h3>Cells that failed</h3><ul>" +
                       "".join(f"<li>{html.escape(e)}</li>" for e in sec.errors) + "</ul>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# --- assembling ------------------------------------------------------------------------------
def fit_time_column(df: Any) -> str:
    """The column that ranks learners by training cost: ``fit_cpu_seconds`` (process
    CPU, compiling excluded) when every row of ``df`` has it, else ``fit_seconds``
    (wall clock, which grows with the load: the only time a store written before
    ``fit_cpu_seconds`` existed has)."""
    if "fit_cpu_seconds" in df.columns and df["fit_cpu_seconds"].null_count() == 0:
        return "fit_cpu_seconds"
    return "fit_seconds"


def _timing_title(timing: MetricSummary) -> str:
    if timing.metric == "fit_cpu_seconds":
        return "Fit CPU seconds (mean over folds)"
    return "Fit seconds (wall clock, mean over folds)"


def _timing_summary(df: Any, learners: list[str], datasets: list[str]) -> MetricSummary | None:
    """Each learner's mean fit time per dataset: process CPU seconds when every cell
    recorded them (stores written before ``fit_cpu_seconds`` existed have wall clock
    only, which grows with the machine's load)."""
    import polars as pl

    ok = df.filter(pl.col("status") == "ok")
    if ok.height == 0:
        return None
    column = fit_time_column(ok)
    shape = (len(datasets), len(learners))
    mean, sd = np.full(shape, np.nan), np.full(shape, np.nan)
    counts = np.zeros(shape, dtype=int)
    for (ds, ln), group in ok.group_by(["dataset", "learner"]):
        if ds in datasets and ln in learners:
            v = group[column].drop_nulls().to_numpy()
            if v.size:
                i, j = datasets.index(ds), learners.index(ln)
                mean[i, j] = float(v.mean())
                sd[i, j] = float(v.std(ddof=1)) if v.size > 1 else 0.0
                counts[i, j] = v.size
    labels = learner_labels(df)
    return MetricSummary(column, False, datasets, learners,
                         [labels.get(x, x) for x in learners], mean, sd, counts,
                         np.full(shape, np.nan), None, [], None, None, 0.05, None,
                         [["" for _ in learners] for _ in datasets], {})


def _chosen(df: Any, label: dict[str, str]) -> dict[tuple[str, str], str]:
    """Each (shown label, dataset)'s chosen parameters, fold by fold."""
    import polars as pl

    out: dict[tuple[str, str], str] = {}
    if "chosen_params" not in df.columns:
        return out
    rows = df.filter((pl.col("status") == "ok") & pl.col("chosen_params").is_not_null())
    for (ln, ds), group in rows.sort("fold").group_by(["learner", "dataset"],
                                                      maintain_order=True):
        out[(label[str(ln)], str(ds))] = "; ".join(group["chosen_params"].to_list())
    return out


def _stage_curves(df: Any, learner: str, metrics: Sequence[str]
                  ) -> dict[str, dict[str, list[tuple[int, float]]]]:
    import polars as pl

    rows = df.filter((pl.col("status") == "ok") & (pl.col("learner") == learner) &
                     pl.col("stages").is_not_null())
    acc: dict[str, dict[str, dict[int, list[float]]]] = {}
    for ds, text in rows.select(["dataset", "stages"]).iter_rows():
        for st in json.loads(text):
            for metric, value in st["metrics"].items():
                if value is None:
                    continue
                acc.setdefault(metric, {}).setdefault(ds, {}).setdefault(
                    int(st["stage"]), []).append(float(value))
    order = [m for m in metrics if m in acc] + [m for m in acc if m not in metrics]
    return {m: {ds: sorted((s, float(np.mean(v))) for s, v in per.items())
                for ds, per in acc[m].items()} for m in order[:STAGE_METRICS]}


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


def _reliability(ok: Any, shown: dict[str, str]) -> dict[str, dict[str, Any]]:
    """``{dataset: {learner label: reliability table}}``: each learner's test-score
    reliability tables (recorded per cell, pooled over labels) summed over its folds,
    for the datasets where a learner recorded one."""
    import numpy as np

    if "reliability" not in ok.columns:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for r in ok.filter(ok["reliability"].is_not_null()).iter_rows(named=True):
        table = np.asarray(json.loads(r["reliability"]), dtype=float)
        per = out.setdefault(r["dataset"], {})
        label = shown.get(r["learner"], r["learner"])
        per[label] = per[label] + table if label in per else table
    return out


def build_sections(df: Any, out_dir: Path, *, metrics: Sequence[str] | None = None,
                   control: str | None = None, alpha: float = 0.05,
                   figures: bool = True) -> list[Section]:
    import polars as pl

    from mlw.experiments.stats import summary_table
    known = get_plugin_manager().metrics()
    sections = []
    experiments = list(dict.fromkeys(df["experiment"].to_list())) if df.height else []
    for name in experiments:
        part = df.filter(pl.col("experiment") == name)
        ok = part.filter(pl.col("status") == "ok")
        learners = list(dict.fromkeys(ok["learner"].to_list()))
        datasets = list(dict.fromkeys(ok["dataset"].to_list()))
        have = [m for m in metrics_of(part) if m in known and
                ok.height and ok[f"metric_{m}"].drop_nulls().len() > 0]
        chosen_metrics = [m for m in (metrics or have) if m in have]
        missing = [m for m in (metrics or []) if m not in have]
        if missing:
            raise ValueError(f"experiment {name!r} has no results for metric "
                             f"{missing[0]!r} (it has: {', '.join(have) or 'none'})")
        own = [c for c in part["control"].to_list() if c] if "control" in part.columns else []
        chosen_control = control or (own[-1] if own else None)
        # a learner scored on some metrics only (a config's per-learner ``metrics``, as
        # LaCovaC's joint mode, exact match only) is left out of the other metrics'
        # tables: kept, it would leave no dataset complete and so no ranks, Friedman
        # test or CD diagram for them
        summaries = [summary_table(part, m, learners=[
                         ln for ln in learners
                         if ok.filter(pl.col("learner") == ln)[f"metric_{m}"].drop_nulls().len()],
                                   datasets=datasets, control=chosen_control, alpha=alpha)
                     for m in chosen_metrics]
        sec = Section(experiment=str(name), summaries=summaries)
        sec.timing = _timing_summary(part, learners, datasets)
        shown = learner_labels(part)
        sec.chosen = _chosen(part, shown)
        sec.errors = [f"{shown[r['learner']]} on {r['dataset']}, fold {r['fold']}: "
                      f"{r['error']}"
                      for r in part.filter(pl.col("status") != "ok").iter_rows(named=True)]
        sec.cells = part.height
        sec.cpu_seconds = float(part["cpu_seconds"].drop_nulls().sum()) \
            if "cpu_seconds" in part.columns else 0.0
        sec.hosts = sorted({h for h in part["host"].to_list() if h}) \
            if "host" in part.columns else []
        versions = [v for v in part["versions"].to_list() if v] \
            if "versions" in part.columns else []
        if versions:
            sec.versions = ", ".join(f"{k} {v}" for k, v in json.loads(versions[-1]).items())
        if figures:
            from mlw.experiments.plots import cd_diagram, reliability_diagram, staged_curves

            prefix = _safe(str(name)) + "-" if len(experiments) > 1 else ""
            for s in summaries:
                if s.avg_ranks is not None and len(s.learners) >= 2 and s.cd is not None:
                    path = out_dir / f"{prefix}cd-{_safe(s.metric)}.png"
                    with atomic_write(path, "wb") as fh:
                        cd_diagram(s.labels, s.avg_ranks, s.cd, fh,
                                   title=f"{s.metric}: Nemenyi CD at α = {alpha:g}, "
                                         f"{len(s.ranked_datasets)} datasets")
                    sec.figures[f"cd-{s.metric}"] = path
            if "stages" in part.columns:
                staged = ok.filter(pl.col("stages").is_not_null())
                for learner in dict.fromkeys(staged["learner"].to_list()):
                    curves = _stage_curves(part, learner, chosen_metrics)
                    if not curves:
                        continue
                    label = shown[learner]
                    path = out_dir / f"{prefix}stages-{_safe(learner)}.png"
                    with atomic_write(path, "wb") as fh:
                        staged_curves(curves, fh, title=f"{label}: metric after each stage "
                                                        f"(mean over folds)")
                    sec.figures[f"stages-{label}"] = path
            for dataset, tables in _reliability(ok, shown).items():
                path = out_dir / f"{prefix}reliability-{_safe(dataset)}.png"
                with atomic_write(path, "wb") as fh:
                    reliability_diagram(tables, fh, title=f"{dataset}: reliability of the "
                                                          f"scores, pooled over labels and "
                                                          f"folds")
                sec.figures[f"reliability-{dataset}"] = path
        sections.append(sec)
    return sections


def write_report(results: str | os.PathLike[str] | Any, out_dir: str | os.PathLike[str], *,
                 metrics: Sequence[str] | None = None, control: str | None = None,
                 alpha: float = 0.05, title: str | None = None,
                 figures: bool = True) -> list[Path]:
    """Write ``report.md``, ``report.html`` (self-contained: figures embedded) and the
    figures (``cd-METRIC.png``, ``stages-LEARNER.png``, ``reliability-DATASET.png``: the
    learners' test scores pooled over labels and folds) into ``out_dir`` (created when
    its parent exists); returns the files written. ``results`` is a results file (see
    :func:`mlw.experiments.read_results`) or a polars DataFrame of records."""
    out = Path(require_text(str(out_dir), "the report folder"))
    if figures:  # before anything is read or written: no empty folder left behind
        from mlw.experiments.plots import require_matplotlib

        require_matplotlib()
    if isinstance(results, (str, os.PathLike)):
        src = Path(results)
        if src.resolve() == out.resolve():
            raise ValueError("the report folder would overwrite the results file")
        df = read_results(src)
        default_title = f"Results: {src.name}"
    else:
        df = results
        default_title = "Results"
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} exists and is not a folder")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"cannot write {out}: folder {out.parent} does not exist")
    if df.height == 0:
        raise ValueError("there are no results to report")
    out.mkdir(exist_ok=True)
    sections = build_sections(df, out, metrics=metrics, control=control, alpha=alpha,
                              figures=figures)
    name = title or default_title
    written = [fig for sec in sections for fig in sec.figures.values()]
    md, page = out / "report.md", out / "report.html"
    with atomic_write(md, "w", encoding="utf-8") as fh:
        fh.write(render_markdown(sections, name))
    with atomic_write(page, "w", encoding="utf-8") as fh:
        fh.write(render_html(sections, name))
    return [md, page, *written]
