"""The ``mlw`` command: list plugins and datasets, fit and evaluate learners, predict.

Contract (``docs/cli.md``): ``--json`` prints exactly one JSON document on stdout;
tables go to stdout only without ``--json``; progress, notes and warnings go to stderr.
Exit codes: 0 ok, 2 usage or bad input (one line on stderr), 1 internal failure.
"""

from __future__ import annotations

import contextlib
import csv
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import scipy.sparse as sp
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

import mlw
from mlw_cli.data import DEFAULT_DATA, bundled_datasets, resolve
from mlw_cli.output import (
    eprint,
    err,
    escape_markup,
    handle_errors,
    print_json,
    stdout_console,
)
from mlw_cli.params import parse_params

app = typer.Typer(
    name="mlw",
    help="mlw: a workbench for multi-label classification.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
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


# --- list-plugins ---------------------------------------------------------------------------
def _registers_text(registers: dict[str, list[str]]) -> str:
    return "\n".join(f"{kind}s: {', '.join(names)}" for kind, names in registers.items() if names)


@app.command("list-plugins")
def list_plugins(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
) -> None:
    """Every plugin (built-in and installed): distribution, version, status, registrations."""
    with handle_errors():
        infos = mlw.list_plugins()
        if as_json:
            print_json([i.as_dict() for i in infos])
            return
        table = Table(title="mlw plugins", title_justify="left")
        for col in ("plugin", "distribution", "version", "status", "registers"):
            table.add_column(col, overflow="fold")
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
def _learner_dict(name: str, spec: Any) -> dict[str, Any]:
    return {"name": name, "description": spec.description, "plugin": _owner("learner", name),
            "tags": spec.tags.as_list(),
            "params": [{"name": p.name, "default": p.default, "doc": p.doc}
                       for p in spec.params]}


@app.command("learners")
def learners(
    name: Annotated[str | None, typer.Argument(help="Show one learner's parameters.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Registered learners, or one learner's parameters with defaults and documentation."""
    with handle_errors():
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
            t = Table()
            for col in ("parameter", "default", "description"):
                t.add_column(col, overflow="fold")
            for p in info["params"]:
                t.add_row(p["name"], escape_markup(repr(p["default"])),
                          escape_markup(p["doc"] or ""))
            out.print(t)
            return
        rows = [_learner_dict(n, s) for n, s in sorted(pm.learners().items())]
        if as_json:
            print_json(rows)
            return
        t = Table(title="learners (details: mlw learners NAME)", title_justify="left")
        for col in ("learner", "plugin", "tags", "description"):
            t.add_column(col, overflow="fold")
        for r in rows:
            t.add_row(r["name"], escape_markup(r["plugin"] or "-"), ", ".join(r["tags"]),
                      escape_markup(r["description"]))
        stdout_console().print(t)


# --- datasets ------------------------------------------------------------------------------------
@app.command("datasets")
def datasets(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object.")] = False,
) -> None:
    """Bundled datasets, and the registered loaders (file formats) and generators."""
    with handle_errors():
        bundled = bundled_datasets()
        loaders: list[dict[str, Any]] = [
            {"name": s.name, "suffixes": list(s.suffixes), "description": s.description,
             "plugin": _owner("loader", s.name)} for s in mlw.list_loaders().values()]
        generators: list[dict[str, Any]] = [{"name": s.name, "description": s.description,
                       "params": dict(s.param_docs), "plugin": _owner("generator", s.name)}
                      for s in mlw.list_generators().values()]
        if as_json:
            print_json({"bundled": bundled, "loaders": loaders, "generators": generators})
            return
        out = stdout_console()
        t = Table(title="bundled datasets (use with --data NAME)", title_justify="left")
        keys: list[str] = []
        for b in bundled:
            keys += [k for k in b if k not in keys and not isinstance(b[k], (dict, list))]
        for k in keys or ["name"]:
            t.add_column(k)
        for b in bundled:
            t.add_row(*[escape_markup(str(b.get(k, ""))) for k in keys])
        out.print(t)
        t = Table(title="loaders (file formats)", title_justify="left")
        for col in ("name", "suffixes", "plugin", "description"):
            t.add_column(col, overflow="fold")
        for d in loaders:
            t.add_row(d["name"], " ".join(d["suffixes"]), escape_markup(d["plugin"] or "-"),
                      escape_markup(d["description"]))
        out.print(t)
        t = Table(title="generators (synthetic datasets)", title_justify="left")
        for col in ("name", "plugin", "description"):
            t.add_column(col, overflow="fold")
        for d in generators:
            t.add_row(d["name"], escape_markup(d["plugin"] or "-"), escape_markup(d["description"]))
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
    pm = mlw.plugins.get_plugin_manager()
    for name in names:
        pm.metric(name)  # unknown -> UnknownNameError with suggestions
    return names


def _check_metric_needs(name: str, estimator: Any, metric_names: list[str] | None) -> None:
    """A requested metric the learner cannot feed is bad input, said before fitting."""
    if not metric_names:
        return
    pm = mlw.plugins.get_plugin_manager()
    scores = pm.learner(name).tags.predicts_scores
    for metric in metric_names:
        needs = pm.metric(metric).needs
        if needs == "scores" and not scores:
            raise ValueError(f"metric {metric!r} needs per-label scores, which learner "
                             f"{name!r} does not predict")
        if needs == "joint" and not hasattr(estimator, "log_proba_of"):
            raise ValueError(f"metric {metric!r} needs log P(y|x) (log_proba_of), which "
                             f"learner {name!r} does not have")


def _build_learner(name: str, raw_params: list[str], threshold: str | None,
                   seed: int) -> tuple[Any, dict[str, Any], str | None]:
    """The learner, its parameters, and the strategy that scores its label sets in the
    evaluation when it is not the learner's own (``--threshold`` on a joint learner)."""
    pm = mlw.plugins.get_plugin_manager()
    spec = pm.learner(name)
    known = spec.signature_params()
    params = parse_params(name, known, raw_params)
    evaluation_threshold = None
    if threshold is not None:
        pm.threshold(threshold)  # unknown -> suggestions
        if "threshold" in known:
            if "threshold" in params:
                raise ValueError("give the threshold either with --threshold or with "
                                 "--param threshold=..., not both")
            params["threshold"] = threshold
        elif spec.tags.predicts_scores:
            # a joint learner keeps its own decision (and saved model); the evaluation
            # scores the strategy applied to its marginals, as MEKA's Pcut does
            evaluation_threshold = threshold
        else:
            raise ValueError(f"learner {name!r} makes its own joint decision and predicts "
                             f"no label scores, so --threshold does not apply")
    elif isinstance(params.get("threshold"), str):
        pm.threshold(params["threshold"])
    for seed_param in ("random_state", "seed"):
        if seed_param in known and seed_param not in params:
            params[seed_param] = seed
    return mlw.get_learner(name, **params), params, evaluation_threshold


@contextlib.contextmanager
def _fold_progress(enabled: bool) -> Iterator[Any]:
    """A rich progress bar over CV folds on stderr; yields the ``progress`` callback."""
    if not enabled:
        yield None
        return
    columns = (TextColumn("cross-validation"), BarColumn(), MofNCompleteColumn(),
               TextColumn("folds"), TimeElapsedColumn())
    console = Console(stderr=True, force_terminal=True) if os.environ.get("MLW_PROGRESS") \
        else err
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("cv", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield progress


def _metrics_table(result: Any) -> Table:
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
            values = [f.metrics.get(name, np.nan) for f in result.folds]
            row.append(f"{float(np.std(values)):.4f}")
        table.add_row(*row, better)
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


@app.command("fit")
def fit(
    learner: Annotated[str, typer.Option("--learner", "-l", help="Registered learner name.")],
    data: Annotated[str, typer.Option("--data", "-d",
                                      help="Bundled dataset name or a file.")] = DEFAULT_DATA,
    test: Annotated[str | None, typer.Option("--test", "-t",
                                             help="Test file: hold-out evaluation.")] = None,
    cv: Annotated[int | None, typer.Option("--cv", help="K-fold cross-validation "
                                           "(iterative stratification).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the CV folds and of the "
                                      "learner's random_state/seed.")] = 0,
    param: Annotated[list[str] | None, typer.Option("--param", "-p",
                                                    help="Learner parameter key=value "
                                                    "(repeatable).")] = None,
    threshold: Annotated[str | None, typer.Option("--threshold",
                                                  help="Thresholding strategy.")] = None,
    metrics: Annotated[str | None, typer.Option("--metrics", "-m",
                                                help="Comma-separated metric names.")] = None,
    save: Annotated[Path | None, typer.Option("--save", help="Write the fitted model "
                                              "to this file.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    show_model: Annotated[bool, typer.Option("--show-model", help="Print the fitted "
                                             "model's text form (learners with "
                                             "to_text()).")] = False,
) -> None:
    """Fit a learner and evaluate it (hold-out or cross-validation)."""
    from mlw.model_selection import cross_validate, holdout

    with handle_errors():
        estimator, _, eval_threshold = _build_learner(learner, list(param or []),
                                                      threshold, seed)
        metric_names = _metric_names(metrics)
        _check_metric_needs(learner, estimator, metric_names)
        if eval_threshold is not None:
            eprint(f"note: {learner!r} makes its own joint decision; the label-set metrics "
                   f"score threshold {eval_threshold!r} on its marginals instead")
        if save is not None and not save.parent.is_dir():
            raise FileNotFoundError(f"--save {save}: folder {save.parent} does not exist")
        plan = resolve(data, test, cv)
        if plan.note:
            eprint(f"note: {plan.note}")
        if plan.kind == "cv":
            assert plan.k is not None
            show = err.is_terminal or bool(os.environ.get("MLW_PROGRESS"))
            with _fold_progress(show) as cb:
                result = cross_validate(estimator, plan.train, k=plan.k, seed=seed,
                                        metrics=metric_names, progress=cb,
                                        threshold=eval_threshold)
            n_train, n_test = result.n_train, result.n_test
        else:
            assert plan.test is not None
            with err.status(f"fitting {learner} on {plan.train.name}"):
                result = holdout(estimator, plan.train, plan.test, metric_names,
                                 threshold=eval_threshold)
            n_train, n_test = plan.train.n_instances, plan.test.n_instances

        model = result.model
        if model is None and (save is not None or show_model):
            from sklearn.base import clone

            with err.status(f"fitting {learner} on all of {plan.train.name}"):
                model = clone(estimator).fit(plan.train.X, plan.train.Y)
        if save is not None:
            from mlw.persistence import save_model

            save_model(model, save, metadata={
                "dataset": plan.dataset, "label_names": list(plan.train.label_names),
                "feature_names": list(plan.train.feature_names),
                "n_train": plan.train.n_instances})
            eprint(f"saved the model to {save}")

        text = None
        if show_model:
            if hasattr(model, "to_text"):
                text = _model_text(model, plan.train)
            else:
                eprint(f"note: learner {learner!r} has no text form (no to_text())")

        if as_json:
            obj: dict[str, Any] = {
                "learner": learner,
                "params": estimator.get_params(deep=False),
                "dataset": plan.dataset,
                "n_train": n_train,
                "n_test": n_test,
                "n_features": plan.train.n_features,
                "n_labels": plan.train.n_labels,
                "metrics": result.metrics,
                "fit_seconds": result.fit_seconds,
                "predict_seconds": result.predict_seconds,
                "evaluation": "holdout" if plan.kind == "holdout" else f"{plan.k}-fold cv",
                "seed": seed,
            }
            if eval_threshold is not None:
                obj["evaluation_threshold"] = eval_threshold
            if plan.kind == "cv":
                obj["folds"] = [f.as_dict() for f in result.folds]
            if text is not None:
                eprint(text)
            print_json(obj)
            return

        out = stdout_console()
        if plan.kind == "cv":
            how = f"{plan.k}-fold cross-validation (seed {seed})"
        else:
            how = f"train {plan.train.name}, test {plan.test.name}" if plan.test else ""
        title = f"{learner} on {plan.dataset}: {how}"
        caption = (f"{n_train} train / {n_test} test instances per fold, "
                   if plan.kind == "cv" else f"{n_train} train / {n_test} test instances, ")
        caption += (f"{plan.train.n_features} features, {plan.train.n_labels} labels; "
                    f"fit {result.fit_seconds:.2f} s, predict {result.predict_seconds:.2f} s"
                    + (" (fold means)" if plan.kind == "cv" else ""))
        out.print(title, markup=False)
        out.print(_metrics_table(result))
        out.print(caption, markup=False)
        if text is not None:
            sys.stdout.write(text.rstrip("\n") + "\n")  # as is: never re-wrapped


# --- predict -------------------------------------------------------------------------------------
def _write_predictions(fh: Any, Y_pred: Any, label_names: list[str]) -> None:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(label_names)
    if sp.issparse(Y_pred):
        Y_pred = sp.csr_matrix(Y_pred)
        L = Y_pred.shape[1]
        for i in range(Y_pred.shape[0]):
            row = np.zeros(L, dtype=np.uint8)
            row[Y_pred.indices[Y_pred.indptr[i]:Y_pred.indptr[i + 1]]] = 1
            writer.writerow(row.tolist())
    else:
        for row in np.asarray(Y_pred, dtype=np.uint8):
            writer.writerow(row.tolist())


@app.command("predict")
def predict(
    model: Annotated[Path, typer.Option("--model", help="A model file written by "
                                        "mlw fit --save.")],
    data: Annotated[str, typer.Option("--data", "-d", help="Data file to predict (or a "
                                      "bundled dataset: its test split).")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the predictions "
                                             "(CSV) here instead of stdout.")] = None,
) -> None:
    """Predict label sets with a saved model: CSV, one column per label (0/1)."""
    from mlw.persistence import load_model, read_header

    with handle_errors():
        header = read_header(model)
        fitted = load_model(model)
        if out is not None and not out.parent.is_dir():
            raise FileNotFoundError(f"--out {out}: folder {out.parent} does not exist")
        bundled = {b.get("name") for b in bundled_datasets()}
        if data in bundled and not Path(data).exists():
            ds = mlw.load_dataset(data, split="test")
        else:
            if not Path(data).exists():
                raise FileNotFoundError(f"--data {data}: no such file")
            ds = mlw.load_dataset(data)
        meta = header.get("metadata", {})
        n_features = getattr(fitted, "n_features_in_", None)
        if n_features is not None and ds.n_features != n_features:
            raise ValueError(f"{data} has {ds.n_features} features but the model was fitted "
                             f"on {n_features}")
        saved_features = meta.get("feature_names")
        if saved_features and list(saved_features) != list(ds.feature_names):
            eprint(f"warning: the feature names of {data} differ from the training data's")
        Y_pred = fitted.predict(ds.X)
        label_names = list(meta.get("label_names") or
                           [f"label_{j}" for j in range(Y_pred.shape[1])])
        if len(label_names) != Y_pred.shape[1]:
            label_names = [f"label_{j}" for j in range(Y_pred.shape[1])]
        if out is None:
            _write_predictions(sys.stdout, Y_pred, label_names)
            sys.stdout.flush()
        else:
            from mlw._atomic import atomic_write

            with atomic_write(out, "w", encoding="utf-8") as fh:
                _write_predictions(fh, Y_pred, label_names)
            card = float(Y_pred.sum()) / max(Y_pred.shape[0], 1)
            eprint(f"wrote {Y_pred.shape[0]} predictions ({card:.3f} labels per instance) "
                   f"to {out}")


def run() -> None:  # pragma: no cover - console entry point alternative
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
