"""The ``mlw`` command: list plugins and datasets, fit and evaluate learners, predict,
generate datasets. A thin layer: every decision is the core's (``mlw.plan_evaluation``
builds the plan ``mlw fit`` runs with ``mlw.run_plan``, ``mlw bench`` runs
``mlw.experiments.run_experiment``, ``mlw predict`` ``mlw.predict_file``); this module
parses options and presents results.

Contract (``docs/guide/cli.md``): ``--json`` prints exactly one JSON document on stdout;
tables go to stdout only without ``--json``; progress, notes and warnings go to stderr.
Exit codes: 0 ok, 2 usage or bad input (one line on stderr), 1 internal failure.
Start-up stays cheap: numpy, scikit-learn, numba and rich's tables are imported inside
the commands that use them, so ``mlw --help`` imports none of them.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

import mlw
from mlw.files import check_output_path
from mlw.io.bundled import BUNDLED, DEFAULT_DATA
from mlw_cli.help import FastHelpGroup, complete, registry_help
from mlw_cli.output import (
    eprint,
    err,
    escape_markup,
    handle_errors,
    print_json,
    results,
    stdout_console,
)

app = typer.Typer(
    cls=FastHelpGroup,
    name="mlw",
    help="mlw: a workbench for multi-label classification.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version_callback(value: bool) -> None:
    if value:
        versions = mlw.plugins.get_plugin_manager().versions()
        typer.echo(" ".join(f"{k} {v}" for k, v in versions.items()))
        raise typer.Exit(0)


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", callback=_version_callback,
                                          is_eager=True,
                                          help="Show mlw and plugin versions.")] = False,
) -> None:
    """mlw: a workbench for multi-label classification."""


def _table(title: str | None = None, columns: tuple[str, ...] = ()) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left") if title else Table()
    for col in columns:
        table.add_column(col, overflow="fold")
    return table


# --- list-plugins ---------------------------------------------------------------------------
def _registers_text(registers: dict[str, list[str]]) -> str:
    return "\n".join(f"{kind}s: {', '.join(names)}" for kind, names in registers.items() if names)


@app.command("list-plugins")
def list_plugins(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
) -> None:
    """Every plugin (built-in and installed): distribution, version, status, registrations."""
    with handle_errors(as_json):
        infos = mlw.list_plugins()
        if as_json:
            print_json([i.as_dict() for i in infos])
            return
        table = _table("mlw plugins", ("plugin", "distribution", "version", "status",
                                       "registers"))
        for i in infos:
            status = {"ok": "[green]ok[/]", "broken": "[red]broken[/]",
                      "disabled": "[yellow]disabled[/]"}[i.status]
            what = _registers_text(i.as_dict()["registers"]) or "-"
            if i.error:
                what = f"{what}\n[red]{escape_markup(i.error)}[/]" if what != "-" else \
                    f"[red]{escape_markup(i.error)}[/]"
            table.add_row(escape_markup(i.name), escape_markup(i.distribution or "-"),
                          escape_markup(i.version or "-"), status, what)
        stdout_console().print(table)


# --- learners ------------------------------------------------------------------------------------
def _learner_dict(name: str, spec: Any, *, listing: bool = False) -> dict[str, Any]:
    """A learner's description, tags and parameters (reading them imports its class). In
    a listing, a learner whose plugin is broken is shown with its ``error`` instead of
    failing the whole listing."""
    out = {"name": name, "description": spec.description, "plugin": _owner("learner", name)}
    try:
        out["tags"] = spec.tags.as_list()
        out["params"] = [{"name": p.name, "default": p.default, "doc": p.doc}
                         for p in spec.params]
    except mlw.PluginError as exc:
        if not listing:
            raise
        out.update(tags=[], params=[], error=" ".join(str(exc).split()))
    return out


@app.command("learners")
def learners(
    name: Annotated[str | None, typer.Argument(help="Show one learner's parameters.",
                                               autocompletion=complete("learner"))] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Registered learners, or one learner's parameters with defaults and documentation."""
    with handle_errors(as_json):
        pm = mlw.plugins.get_plugin_manager()
        if name is not None:
            info = _learner_dict(name, pm.learner(name))
            if as_json:
                print_json(info)
                return
            out = stdout_console()
            out.print(f"{name}: {info['description']}", markup=False)
            out.print(f"plugin: {info['plugin']}; tags: {', '.join(info['tags']) or '-'}",
                      markup=False)
            t = _table(None, ("parameter", "default", "description"))
            for p in info["params"]:
                t.add_row(p["name"], escape_markup(repr(p["default"])),
                          escape_markup(p["doc"] or ""))
            out.print(t)
            return
        rows = [_learner_dict(n, s, listing=True) for n, s in sorted(pm.learners().items())]
        if as_json:
            print_json(rows)
            return
        t = _table("learners (details: mlw learners NAME)",
                   ("learner", "plugin", "tags", "description"))
        for r in rows:
            what = escape_markup(r["description"])
            if "error" in r:
                what += f"\n[red]broken: {escape_markup(r['error'])}[/]"
            t.add_row(r["name"], escape_markup(r["plugin"] or "-"), ", ".join(r["tags"]), what)
        stdout_console().print(t)


# --- datasets ------------------------------------------------------------------------------------
@app.command("datasets")
def datasets(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object.")] = False,
) -> None:
    """Bundled datasets, and the registered loaders (file formats) and generators."""
    with handle_errors(as_json):
        bundled = mlw.io.bundled_datasets()
        loaders: list[dict[str, Any]] = [
            {"name": s.name, "suffixes": list(s.suffixes), "description": s.description,
             "plugin": _owner("loader", s.name)} for s in mlw.list_loaders().values()]
        generators: list[dict[str, Any]] = [
            {"name": s.name, "description": s.description, "plugin": _owner("generator", s.name),
             "params": {p.name: p.doc for p in s.params}}
            for s in mlw.list_generators().values()]
        if as_json:
            print_json({"bundled": bundled, "loaders": loaders, "generators": generators})
            return
        out = stdout_console()
        t = _table("bundled datasets (use with --data NAME)")
        keys: list[str] = []
        for b in bundled:
            keys += [k for k in b if k not in keys and not isinstance(b[k], (dict, list))]
        for k in keys or ["name"]:
            t.add_column(k)
        for b in bundled:
            t.add_row(*[escape_markup(str(b.get(k, ""))) for k in keys])
        out.print(t)
        t = _table("loaders (file formats)", ("name", "suffixes", "plugin", "description"))
        for d in loaders:
            t.add_row(d["name"], " ".join(d["suffixes"]), escape_markup(d["plugin"] or "-"),
                      escape_markup(d["description"]))
        out.print(t)
        t = _table("generators (synthetic datasets: --data NAME:key=value,... or mlw "
                   "generate)", ("name", "plugin", "parameters", "description"))
        for d in generators:
            t.add_row(d["name"], escape_markup(d["plugin"] or "-"),
                      escape_markup(", ".join(d["params"]) or "-"),
                      escape_markup(d["description"]))
        out.print(t)


def _owner(kind: str, name: str) -> str | None:
    info = mlw.plugins.get_plugin_manager().owner(kind, name)
    return info.name if info else None


# --- fit -----------------------------------------------------------------------------------------
def _metric_names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise ValueError("--metrics is empty; give names such as hamming_loss,f1_micro")
    return names


@contextlib.contextmanager
def _fold_progress(enabled: bool) -> Iterator[Any]:
    """A rich progress bar over CV folds on stderr; yields the ``progress`` callback."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (TextColumn("cross-validation"), BarColumn(), MofNCompleteColumn(),
               TextColumn("folds"), TimeElapsedColumn())
    console = Console(stderr=True, force_terminal=True) if os.environ.get("MLW_PROGRESS") \
        else err()
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("cv", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield progress


def _metrics_table(result: Any) -> Any:
    from rich.table import Table

    specs = mlw.list_metrics()
    cv = result.kind == "cv"
    table = Table()
    table.add_column("metric")
    table.add_column("mean" if cv else "value", justify="right")
    if cv:
        table.add_column("std", justify="right")
    table.add_column("better")
    for name, value in result.metrics.items():
        spec = specs.get(name)
        better = "" if spec is None else ("higher" if spec.greater_is_better else "lower")
        row = [name, f"{value:.4f}"]
        if cv:
            values = [f.metrics.get(name, float("nan")) for f in result.folds]
            mean = sum(values) / len(values)
            row.append(f"{(sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5:.4f}")
        table.add_row(*row, better)
    return table


def _per_label_table(result: Any) -> Any:
    """Each label's row of ``result.per_label`` (fold means with ``--cv``)."""
    from rich.table import Table

    frame = result.per_label
    cv = result.kind == "cv"
    table = Table(title="per label" + (" (fold means)" if cv else ""), title_justify="left")
    for column in frame.columns:
        table.add_column(column, justify="left" if column == "label" else "right")
    for row in frame.iter_rows():
        cells = [escape_markup(str(row[0]))]
        for column, value in zip(frame.columns[1:], row[1:], strict=True):
            if value is None or value != value:
                cells.append("-")
            elif column in ("support", "predicted") and not cv:
                cells.append(f"{int(value)}")
            else:
                cells.append(f"{value:.4f}" if column not in ("support", "predicted")
                             else f"{value:.1f}")
        table.add_row(*cells)
    return table


def _model_text(model: Any, data: Any) -> str:
    """``model.to_text()``, given the dataset's feature and label names when it takes
    ``feature_names`` / ``label_names`` keywords."""
    import inspect

    try:
        accepted = set(inspect.signature(model.to_text).parameters)
    except (TypeError, ValueError):
        accepted = set()
    kwargs = {k: list(v) for k, v in (("feature_names", data.feature_names),
                                      ("label_names", data.label_names)) if k in accepted}
    return str(model.to_text(**kwargs))


_Learner = Annotated[str, typer.Option(
    "--learner", "-l", help="Registered learner name (parameters: mlw learners NAME).",
    autocompletion=complete("learner"))]
_Data = Annotated[str, typer.Option(
    "--data", "-d", help="A bundled dataset (" + ", ".join(sorted(BUNDLED)) + "), DIR/NAME "
    "of a NAME-train/-test.arff pair, a data file (ARFF, XC, CSV, Parquet), or a generator "
    "spec NAME:key=value,...")]
_Test = Annotated[str | None, typer.Option("--test", "-t",
                                           help="Test file: hold-out evaluation.")]
_Cv = Annotated[int | None, typer.Option(
    "--cv", help="K-fold cross-validation (iterative stratification), K >= 2; a file "
    "without --test gets 10.")]
_Seed = Annotated[int, typer.Option(
    "--seed", help="Seed of the CV folds and of the learner's random_state/seed.")]
_Labels = Annotated[str | None, typer.Option(
    "--labels", metavar="NAME,...", help="The label columns by name, in order (CSV, "
    "Parquet, or ARFF to override its XML or -C).")]
_NLabels = Annotated[int | None, typer.Option(
    "--n-labels", metavar="N", help="The label columns by count: the first N, or with -N "
    "the last N (MEKA's -C).")]
_Param = Annotated[list[str] | None, typer.Option(
    "--param", "-p", metavar="KEY=VALUE", help="Learner parameter (repeatable); "
    "base__NAME=VALUE sets a parameter of the base classifier.")]
_Threshold = Annotated[str | None, typer.Option(
    "--threshold", metavar="NAME[:OPTIONS]", help="Thresholding strategy (default: the "
    "learner's).", autocompletion=complete("threshold"))]
_Decode = Annotated[str | None, typer.Option(
    "--decode", metavar="NAME|matched|METRIC=NAME,...", help="Score label-set metrics on "
    "the label sets a decoder computes for them from the fitted learner: one decoder for "
    "all (f1, subset, hamming, jaccard; options as f1:beta=2), 'matched' (each metric the "
    "decoder of its measure), or per metric (f1_example=f1,subset_accuracy=subset).",
    autocompletion=complete("decoder"))]
_Conformal = Annotated[str | None, typer.Option(
    "--conformal", metavar="MEASURE:TARGET[:METHOD]", help="Label sets whose recall or "
    "precision is guaranteed: the learner fitted on 70% of the training rows, its scores "
    "cut at one threshold chosen on the rest. recall:0.9 (conformal risk control: "
    "expected recall >= 0.9 on exchangeable data; recall:0.9:ltt with probability 0.9), "
    "precision:0.9 (Learn-then-Test, with probability 0.9); prints the value achieved on "
    "the test set next to TARGET.")]
_Metrics = Annotated[str | None, typer.Option(
    "--metrics", "-m", metavar="A,B,...", help="Metrics to compute, comma-separated "
    "(default: all the learner's outputs allow).",
    autocompletion=complete("metric", comma_separated=True))]
_PerLabel = Annotated[bool, typer.Option(
    "--per-label", help="Also each label's precision, recall, F1, specificity, AUC and "
    "average precision (table and JSON).")]
_Out = Annotated[str | None, typer.Option(
    "--out", "-o", metavar="FILE", help="Write the fold-level results (one row per fold) "
    "to a .parquet or .csv file.")]
_Save = Annotated[str | None, typer.Option("--save", help="Write the fitted model to "
                                           "this file.")]
_TopK = Annotated[int | None, typer.Option(
    "--top-k", metavar="K", help="Also rank each test instance's K best labels and report "
    "the metrics at k up to K (precision_at_1, ndcg_at_3, psprecision_at_5, ...).")]
_Json = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
_ShowModel = Annotated[bool, typer.Option(
    "--show-model", help="Print the fitted model's text form (learners with to_text()).")]


@app.command("fit", cls=registry_help(learner="learner", threshold="threshold",
                                       metrics="metric", decode="decoder"))
def fit(learner: _Learner, data: _Data = DEFAULT_DATA, test: _Test = None, cv: _Cv = None,
        seed: _Seed = 0, labels: _Labels = None, n_labels: _NLabels = None,
        param: _Param = None, threshold: _Threshold = None, metrics: _Metrics = None,
        per_label: _PerLabel = False, out: _Out = None, save: _Save = None,
        as_json: _Json = False, show_model: _ShowModel = False, decode: _Decode = None,
        conformal: _Conformal = None, top_k: _TopK = None) -> None:
    """Fit a learner and evaluate it (hold-out or cross-validation)."""
    with handle_errors(as_json):
        from mlw.jit import compile_notice, compile_timer
        from mlw.results import RESULT_SUFFIXES, per_label_path

        for path, option, inputs in ((save, "--save", {}), (out, "--out", {
                f"the --data file {data}": data, f"the --test file {test}": test})):
            if path is not None:  # an empty or input path fails before loading anything
                check_output_path(path, inputs, option=option,
                                  suffixes=RESULT_SUFFIXES if option == "--out" else ())
        plan = mlw.plan_evaluation(learner, params=param or [], threshold=threshold,
                                   metrics=_metric_names(metrics), data=data, test=test,
                                   cv=cv, seed=seed, labels=labels, n_labels=n_labels,
                                   per_label=per_label, isolate=True, decode=decode,
                                   conformal=conformal, top_k=top_k)
        if plan.evaluation_threshold is not None:
            eprint(f"note: {learner!r} makes its own joint decision; the label-set metrics "
                   f"score threshold {threshold!r} on its marginals instead")
        inputs = _input_files(data=plan.data.train, test=plan.data.test)
        for path in (save, out, out and per_label_path(out)):
            if path is not None:  # before fitting: never destroy an input
                check_output_path(path, inputs, option="--save" if path == save else "--out")
        if plan.data.note:
            eprint(f"note: {plan.data.note}")
        show = err().is_terminal or bool(os.environ.get("MLW_PROGRESS"))
        with compile_timer(on_start=lambda: eprint(compile_notice())), \
                _fold_progress(show and plan.data.kind == "cv") as progress, \
                _fit_status(plan, show and plan.data.kind == "holdout"):
            result = mlw.run_plan(plan, progress=progress,
                                  refit=save is not None or show_model)
        if out is not None:
            _write_results(out, data, threshold, plan, result)
        _report_fit(plan, result, seed=seed, save=save, show_model=show_model,
                    as_json=as_json)


@contextlib.contextmanager
def _fit_status(plan: Any, enabled: bool) -> Iterator[None]:
    """A spinner on stderr while a hold-out fits."""
    if not enabled:
        yield
        return
    with err().status(f"fitting {plan.name} on {plan.data.train.name}"):
        yield


def _input_files(**datasets: Any) -> dict[str, str]:
    """``{"the --data file (PATH)": PATH, ...}``: the files the datasets were read from."""
    from mlw.io import source_files

    out: dict[str, str] = {}
    for option, ds in datasets.items():
        if ds is not None:
            for f in source_files(ds.provenance):
                out.setdefault(f"the --{option} file {f}", f)
    return out


def _write_results(out: str, data: str, threshold: str | None, plan: Any,
                   result: Any) -> None:
    """The fold-level records (and per-label records, beside them) of ``--out``."""
    from mlw.jsonsafe import dumps
    from mlw.results import per_label_path, write_records

    context = {"learner": plan.name, "dataset": plan.data.dataset, "source": data,
               "threshold": threshold,
               "params": dumps(plan.learner.get_params(deep=False), sort_keys=True),
               "n_features": plan.data.train.n_features,
               "n_labels": plan.data.train.n_labels}
    written = [write_records(result.records(**context), out)]
    rows = result.per_label_records(learner=plan.name, dataset=plan.data.dataset)
    if rows:
        written.append(write_records(rows, per_label_path(out)))
    eprint(f"wrote {', '.join(str(p) for p in written)}")


def _report_fit(plan: Any, result: Any, *, seed: int, save: str | None, show_model: bool,
                as_json: bool) -> None:
    """Save the model and print what ``mlw fit`` computed: JSON or tables."""
    model, data, learner = result.model, plan.data, plan.name
    if save is not None:
        mlw.save_model(model, save, metadata={
            "dataset": data.dataset, "label_names": list(data.train.label_names),
            "feature_names": list(data.train.feature_names),
            "reference": mlw.io.reference_of(data.train),
            "n_train": data.train.n_instances})
        eprint(f"saved the model to {save}")
    text = None
    if show_model:
        if hasattr(model, "to_text"):
            text = _model_text(model, data.train)
        else:
            eprint(f"note: learner {learner!r} has no text form (no to_text())")
    if as_json:
        record = result.as_dict()
        obj: dict[str, Any] = {
            "learner": learner, "params": plan.learner.get_params(deep=False),
            "dataset": data.dataset, "n_train": record.pop("n_train"),
            "n_test": record.pop("n_test"), "n_features": data.train.n_features,
            "n_labels": data.train.n_labels, "metrics": record.pop("metrics"),
            "fit_seconds": record.pop("fit_seconds"),
            "fit_cpu_seconds": record.pop("fit_cpu_seconds"),
            "predict_seconds": record.pop("predict_seconds"), **record,
            "seed": seed, "threshold": plan.decision,
        }
        if plan.evaluation_threshold is not None:
            obj["evaluation_threshold"] = plan.evaluation_threshold
        if plan.conformal is not None:
            obj["conformal"] = _conformal_record(plan.conformal, result)
        if text is not None:
            eprint(text)
        print_json(obj)
        return
    out = stdout_console()
    if data.kind == "cv":
        how = f"{data.k}-fold cross-validation (seed {result.seed})"
        caption = f"{result.n_train} train / {result.n_test} test instances per fold, "
    else:
        how = f"train {data.train.name}, test {data.test.name}"
        caption = f"{result.n_train} train / {result.n_test} test instances, "
    caption += (f"{data.train.n_features} features, {data.train.n_labels} labels; label "
                f"sets: {plan.decision}")
    timing = f"fit {result.fit_seconds:.2f} s"
    if result.fit_cpu_seconds is not None:
        timing += f" ({result.fit_cpu_seconds:.2f} s CPU)"
    timing += f", predict {result.predict_seconds:.2f} s"
    if data.kind == "cv":
        timing += " (fold means)"
    if result.compile_seconds > 0.05:
        timing += f"; compiling kernels took {result.compile_seconds:.1f} s (first use)"
    out.print(f"{learner} on {data.dataset}: {how}", markup=False)
    out.print(_metrics_table(result))
    if result.per_label is not None:
        out.print(_per_label_table(result))
    out.print(caption, markup=False)
    if plan.conformal is not None:
        goal = plan.conformal
        how = (f"{goal.method}, guaranteed {goal.guarantee}"
               if getattr(result.model, "certified_", True) else
               f"{goal.method}: no cut-off certified on the calibration rows, so no guarantee "
               f"and every set is empty")
        out.print(f"conformal {goal.control}: achieved {goal.achieved(result.metrics):.4f} "
                  f"on the test {'folds (mean)' if data.kind == 'cv' else 'set'}, target "
                  f"{goal.target:g} ({how})", markup=False)
    out.print(timing, markup=False)
    if text is not None:
        results().write(text.rstrip("\n") + "\n")  # as is: never re-wrapped


def _conformal_record(goal: Any, result: Any) -> dict[str, Any]:
    """The JSON of ``--conformal``: ``{"target_recall", "achieved_recall", "method",
    "certified"}`` (or ``target_precision``, ``achieved_precision``); ``certified`` is
    False when no cut-off was certified (every set empty), None for cross-validation
    folds, whose models are not kept."""
    return {f"target_{goal.control}": goal.target,
            f"achieved_{goal.control}": goal.achieved(result.metrics),
            "method": goal.method,
            "certified": (None if result.model is None
                          else bool(getattr(result.model, "certified_", True)))}


# --- predict -------------------------------------------------------------------------------------
@app.command("predict")
def predict(
    model: Annotated[str, typer.Option("--model", help="A model file written by "
                                       "mlw fit --save.")],
    data: Annotated[str, typer.Option("--data", "-d", help="Data file to predict (or a "
                                      "bundled dataset: its test split); label columns "
                                      "are optional.")],
    out: Annotated[str | None, typer.Option("--out", "-o", help="Write the predictions "
                                            "(CSV) here instead of stdout.")] = None,
    trust: Annotated[list[str] | None, typer.Option("--trust", help="A class the model may "
                                                    "hold beyond what its plugin declares, "
                                                    "as module:Class (repeatable; only for "
                                                    "files you trust).")] = None,
    top_k: Annotated[int | None, typer.Option("--top-k", help="Write each instance's K "
                                              "best-scored labels, best first, instead of "
                                              "label sets: CSV label_1,score_1,...")] = None,
) -> None:
    """Predict label sets with a saved model: CSV, one column per label (0/1); with
    --top-k K, ranked lists of labels and their scores."""
    with handle_errors():
        if not model.strip():
            raise ValueError("--model: the path is empty")
        if out is not None:
            check_output_path(out, {f"the --model file {model}": model,
                                    f"the --data file {data}": data}, option="--out")
        if top_k is not None and top_k < 1:
            raise ValueError(f"--top-k must be a positive integer, got {top_k}")
        predictions = mlw.predict_file(model, data, trusted=list(trust or []), top_k=top_k)
        if out is not None:
            check_output_path(out, _input_files(data=predictions.dataset), option="--out")
        for note in predictions.notes:
            eprint(f"warning: {note}")
        if out is None:
            mlw.write_predictions(predictions, results())
            results().flush()
        else:
            mlw.write_predictions(predictions, out)
            what = "ranked" if predictions.topk is not None else "per instance"
            eprint(f"wrote {predictions.n_instances} predictions ({predictions.cardinality:.3f} "
                   f"labels {what}) to {out}")


# --- generate ------------------------------------------------------------------------------------
@app.command("generate", context_settings={"allow_extra_args": True,
                                           "ignore_unknown_options": True})
def generate(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Registered generator (see mlw datasets).",
                                        autocompletion=complete("generator"))],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write the Mulan files "
                                      "(NAME-<split>.arff and NAME.xml) into.")],
    seed: Annotated[int, typer.Option("--seed", help="Seed: the same seed gives the same "
                                      "files.")] = 0,
    param: Annotated[list[str] | None, typer.Option("--param", "-p",
                                                    help="Generator parameter key=value "
                                                    "(repeatable); --key value works "
                                                    "too.")] = None,
) -> None:
    """Generate a synthetic dataset and write it as Mulan files."""
    with handle_errors():
        from mlw.params import parse_params

        items = list(param or [])
        extra = list(ctx.args)
        while extra:
            flag = extra.pop(0)
            if not flag.startswith("--") or len(flag) < 3:
                raise ValueError(f"unexpected argument {flag!r}; give parameters as "
                                 f"--param key=value or --key value")
            key, eq, value = flag[2:].partition("=")
            if not eq:
                if not extra:
                    raise ValueError(f"{flag} needs a value")
                value = extra.pop(0)
            items.append(f"{key.replace('-', '_')}={value}")
        spec = mlw.plugins.get_plugin_manager().generator(name)
        params = parse_params(f"generator {name!r}", spec.signature_params(), items)
        splits = mlw.generate_dataset(name, seed=seed, **params)
        written = mlw.io.write_mulan_splits(splits, out, name)
        eprint(f"wrote {', '.join(str(p) for p in written)}")


# --- bench ---------------------------------------------------------------------------------------
@app.command("bench")
def bench(
    out: Annotated[Path, typer.Option("--out", "-o", help="Results file (Parquet); a rerun "
                                      "skips the cells already in it.")],
    config: Annotated[Path | None, typer.Option(
        "--config", "-c",
        help="Experiment config (TOML, see docs/guide/bench-and-report.md).")] = None,
    learners: Annotated[str | None, typer.Option("--learners", "-l", help="Comma-separated "
                                                 "learners (name or name:key=value,...); "
                                                 "with --config, a subset of its learners."
                                                 )] = None,
    datasets: Annotated[str | None, typer.Option("--datasets", "-d", help="Comma-separated "
                                                 "datasets (names, paths, generator specs); "
                                                 "with --config, a subset.")] = None,
    cv: Annotated[int | None, typer.Option("--cv", help="Folds of the cross-validation "
                                           "(default 10, or the config's).")] = None,
    folds: Annotated[str | None, typer.Option("--folds", help="Run only these folds, e.g. "
                                              "0,1 (smoke checks).")] = None,
    metrics: Annotated[str | None, typer.Option("--metrics", "-m", help="Comma-separated "
                                                "metric names.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the folds and the "
                                             "learners (default 0, or the config's).")] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Cells run at once (local worker "
                                      "processes, or LocalCluster workers with dask).")] = 1,
    executor: Annotated[str, typer.Option("--executor", help="local or dask.")] = "local",
    scheduler: Annotated[str | None, typer.Option("--scheduler", help="Dask scheduler "
                                                  "address (tcp://host:8786).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON summary instead "
                                          "of the tables.")] = False,
) -> None:
    """Run an experiment: every (learner, dataset, fold) cell, results to Parquet."""
    with handle_errors(as_json):
        from mlw.experiments import experiment_from_options, load_config, run_experiment
        from mlw_cli.bench import BenchProgress, parse_folds, split_list, summary_tables

        if config is not None:  # the results file may exist (a rerun resumes it)
            check_output_path(out, {f"the --config file {config}": config}, option="--out")

        learner_list = split_list(learners, "--learners")
        dataset_list = split_list(datasets, "--datasets")
        metric_list = _metric_names(metrics)
        if config is not None:
            experiment = load_config(config).with_overrides(
                learners=learner_list, datasets=dataset_list, folds=cv, metrics=metric_list,
                seed=seed)
        else:
            if not learner_list or not dataset_list:
                raise ValueError("give --learners and --datasets, or --config")
            experiment = experiment_from_options(
                learners=learner_list, datasets=dataset_list, folds=cv,
                metrics=metric_list, seed=seed)
        only = parse_folds(folds)
        if only is not None:
            experiment = experiment.with_overrides(only_folds=only)
        live = err().is_terminal or bool(os.environ.get("MLW_PROGRESS"))
        try:
            with BenchProgress(live) as progress:
                summary = run_experiment(experiment, out, executor=executor, jobs=jobs,
                                         scheduler=scheduler, progress=progress)
        except KeyboardInterrupt:
            from mlw.experiments import ResultStore

            kept = [str(p) for p in ResultStore(out).files() if p.exists()]
            if kept:
                eprint(f"interrupted: the finished cells are in {' and '.join(kept)}; run "
                       f"the same command again to continue")
            else:
                eprint("interrupted before any cell finished: nothing was written")
            raise
        stale = (f" ({summary.stale} of them again: recorded when their learner resolved "
                 f"to other parameters)") if summary.stale else ""
        note = (f"{summary.ran} cells run{stale}, {summary.skipped} skipped, "
                f"{len(summary.errors)} failed; {summary.wall_seconds:.1f} s wall, "
                f"{summary.cpu_seconds:.1f} s CPU; results in {out}")
        if as_json:
            from mlw.experiments.stats import metrics_of, summary_table

            df = summary.results
            tables = {}
            for m in (experiment.metrics or metrics_of(df)):
                if f"metric_{m}" in df.columns:
                    s = summary_table(df, m)
                    tables[m] = {"learners": s.learners, "datasets": s.datasets,
                                 "mean": s.mean.tolist(), "sd": s.sd.tolist(),
                                 "average_ranks": None if s.avg_ranks is None
                                 else s.avg_ranks.tolist()}
            print_json({"experiment": experiment.name, "out": str(out),
                        "cells": summary.total, "ran": summary.ran, "stale": summary.stale,
                        "skipped": summary.skipped,
                        "errors": [{"cell": c, "error": e} for c, e in summary.errors],
                        "wall_seconds": summary.wall_seconds,
                        "cpu_seconds": summary.cpu_seconds, "metrics": tables})
        else:
            console = stdout_console()
            for table in summary_tables(summary.results, list(experiment.metrics or []) or
                                        None):
                console.print(table)
        eprint(note)
        if summary.errors:
            for cell, error in summary.errors[:10]:
                eprint(f"failed: {cell}: {error}")
            eprint(f"{len(summary.errors)} cells failed; run the same command again to "
                   f"retry them")
            raise typer.Exit(1)


# --- warmup --------------------------------------------------------------------------------------
@app.command("warmup", cls=registry_help(learner="learner"))
def warmup(
    learner: Annotated[list[str] | None, typer.Option("--learner", "-l", help="Warm up "
                                                      "only this learner (repeatable; "
                                                      "default: every registered one).",
                                                      autocompletion=complete("learner"))
                       ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array of the "
                                          "pieces and their times.")] = False,
    clear: Annotated[bool, typer.Option("--clear", help="Delete every compiled kernel "
                                        "kept in the cache (MLW_CACHE_DIR moves it) "
                                        "instead of compiling.")] = False,
) -> None:
    """Compile the numba kernels of the loaders, metrics, thresholds and learners now
    (once after installing), so the first real run does not spend its first minute
    compiling."""
    with handle_errors(as_json):
        from mlw.jit import clear_cache
        from mlw.warmup import WarmupResult, warmup_steps
        from mlw.warmup import warmup as run_warmup

        if clear:
            if learner:
                raise ValueError("--clear empties the whole kernel cache; it takes no "
                                 "--learner")
            folder, removed = clear_cache()
            if as_json:
                print_json({"cleared": str(folder), "files": removed})
            eprint(f"removed {removed} cached kernel files from {folder}")
            return

        total = len(warmup_steps(learner))  # unknown learner names fail here

        done = [0]

        def progress(name: str, result: WarmupResult | None) -> None:
            if result is None:
                done[0] += 1
                sys.stderr.write(f"[{done[0]}/{total}] {name} ...")
                sys.stderr.flush()
                return
            if result.error:
                eprint(f" failed ({result.error})")
            else:
                eprint(f" {result.cpu_seconds:.1f} s CPU, compiling "
                       f"{result.compile_seconds:.1f} s")

        from mlw.jit import kernels_dir

        eprint(f"compiling kernels into {kernels_dir()}")
        results = run_warmup(learner, progress=progress)
        failed = [r for r in results if r.error]
        if as_json:
            print_json([r.as_dict() for r in results])
        cpu = sum(r.cpu_seconds for r in results)
        eprint(f"warmed up {len(results) - len(failed)} of {len(results)} pieces in "
               f"{cpu:.1f} s CPU; later runs load the compiled kernels from that folder")


# --- report --------------------------------------------------------------------------------------
@app.command("report")
def report(
    results: Annotated[Path, typer.Argument(help="Results file written by mlw bench.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for report.md, "
                                      "report.html and the figures.")],
    metrics: Annotated[str | None, typer.Option("--metrics", "-m", help="Comma-separated "
                                                "metrics to report (default: all).")] = None,
    control: Annotated[str | None, typer.Option("--control", help="Learner the paired "
                                                "t-tests compare against (default: the "
                                                "first).")] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level.")] = 0.05,
    title: Annotated[str | None, typer.Option("--title", help="Title of the report.")] = None,
) -> None:
    """Tables (Markdown, HTML), CD diagrams and staged curves from bench results."""
    with handle_errors():
        from mlw.experiments import write_report

        if not 0.0 < alpha < 1.0:
            raise ValueError(f"--alpha must be in (0, 1), got {alpha}")
        if not str(results).strip() or not results.exists():
            parts = results.with_name(results.name + ".parts")
            if not parts.is_dir():
                raise FileNotFoundError(f"{results}: no such results file")
        files = write_report(results, out, metrics=_metric_names(metrics), control=control,
                             alpha=alpha, title=title)
        eprint(f"wrote {', '.join(str(f) for f in files)}")


def run() -> None:  # pragma: no cover - the console entry point; tests call ``app``
    """The ``mlw`` command (console entry point and ``python -m mlw_cli``).

    When the command is done (a ``SystemExit`` with an exit code), its output flushed
    and the ``atexit`` handlers run, the process ends at once (``os._exit``) instead of
    going through Python's finalization, which tears numba, scikit-learn and scipy down
    module by module: ~0.3 s CPU of every command that imported them, a tenth of a warm
    ``mlw fit --learner xdcc`` (mypy ends its command the same way). An
    internal error's traceback, or another Python thread still running, ends the
    process as usual.
    """
    try:
        app(prog_name="mlw")
    except SystemExit as done:
        code = done.code
        if not (code is None or isinstance(code, int)) or threading.active_count() > 1:
            raise
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        atexit._run_exitfuncs()  # what Python's own exit runs first (logging's flush...)
        os._exit(code or 0)


if __name__ == "__main__":  # pragma: no cover
    app()
