"""``mlw bench`` and ``mlw report`` end to end: options, configs and overrides, reruns,
exit codes, the report's files (self-contained HTML, real PNGs), and the paper configs'
smoke runs."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from mlw_cli.main import app

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT / "examples" / "papers"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_bench_json_summary_and_rerun(tmp_path) -> None:
    out = tmp_path / "r.parquet"
    args = ("bench", "--learners", "br,template_centroid", "--datasets", "emotions",
            "--cv", "3", "--metrics", "f1_micro,hamming_loss", "--out", str(out), "--json")
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["cells"], summary["ran"], summary["skipped"]) == (6, 6, 0)
    table = summary["metrics"]["hamming_loss"]
    assert table["learners"] == ["br", "template_centroid"] and table["datasets"] == ["emotions"]
    assert len(table["average_ranks"]) == 2
    again = json.loads(invoke(*args).stdout)
    assert (again["ran"], again["skipped"]) == (0, 6)


def test_bench_tables_and_parameters_in_learner_specs(tmp_path) -> None:
    out = tmp_path / "r.parquet"
    result = invoke("bench", "--learners",
                    "br:threshold=pcut,base_estimator=logistic_regression,cc",
                    "--datasets", "emotions", "--cv", "2", "--metrics", "f1_micro",
                    "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "f1_micro (higher is better)" in result.stdout
    assert "average rank" in result.stdout
    from mlw.experiments import read_results

    df = read_results(out)
    assert sorted(set(df["learner"].to_list())) == [
        "br:threshold=pcut,base_estimator=logistic_regression", "cc"]
    assert set(df.filter(df["learner_name"] == "br")["decision"].to_list()) == {
        "threshold pcut"}


@pytest.mark.parametrize(("args", "message"), [
    (("--datasets", "emotions"), "give --learners and --datasets, or --config"),
    (("--learners", "nosuch", "--datasets", "emotions"), "nosuch"),
    (("--learners", "br", "--datasets", "no_such_dataset"), "no_such_dataset"),
    (("--learners", "br", "--datasets", "emotions", "--metrics", "nosuch"), "nosuch"),
    (("--learners", "br", "--datasets", "emotions", "--executor", "spark"), "spark"),
    (("--learners", "br", "--datasets", "emotions", "--scheduler", "tcp://x:1"),
     "dask executor"),
    (("--learners", "br", "--datasets", "emotions", "--jobs", "0"), "jobs"),
    (("--learners", "br", "--datasets", "emotions", "--folds", "x"), "--folds"),
])
def test_bench_bad_input_exits_2_with_one_line(tmp_path, args, message) -> None:
    result = invoke("bench", *args, "--out", str(tmp_path / "r.parquet"))
    assert result.exit_code == 2
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert lines[-1].startswith("error:") and message in lines[-1]
    assert not (tmp_path / "r.parquet").exists()


def test_bench_config_errors_name_the_file(tmp_path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[experiment]\ndatasets = ['emotions']\n[learners.br]\nparms = {}\n")
    result = invoke("bench", "--config", str(config), "--out", str(tmp_path / "r.parquet"))
    assert result.exit_code == 2
    assert f"error: {config}: learners.br: unknown key 'parms'" in result.stderr


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.external: list[str] = []
        self.images: list[str] = []
        self.tables = 0

    def handle_starttag(self, tag, attrs) -> None:
        attrs = dict(attrs)
        if tag == "table":
            self.tables += 1
        for key in ("src", "href"):
            value = attrs.get(key)
            if value and not value.startswith(("data:", "#")):
                self.external.append(value)
        if tag == "img":
            self.images.append(attrs["src"])


def test_report_writes_markdown_self_contained_html_and_figures(tmp_path, datasets_dir) -> None:
    out = tmp_path / "r.parquet"
    result = invoke("bench", "--learners", "br,cc,template_centroid", "--datasets",
                    f"emotions,{datasets_dir / 'mulan' / 'flags'}",
                    "--cv", "3", "--metrics", "f1_micro,hamming_loss", "--out", str(out))
    assert result.exit_code == 0, result.output
    report = tmp_path / "report"
    result = invoke("report", str(out), "--out", str(report), "--control", "cc")
    assert result.exit_code == 0, result.output
    md = (report / "report.md").read_text()
    assert "### f1_micro (higher is better)" in md and "average rank" in md
    assert "win/tie/loss of cc" in md and "Nemenyi CD" in md
    assert re.search(r"\| flags \| .*\(\d(\.\d)?\)", md)
    assert "![critical difference diagram, f1_micro](cd-f1_micro.png)" in md
    page = _Page()
    page.feed((report / "report.html").read_text())
    assert page.external == [] and page.tables >= 4
    # a critical difference diagram per metric, a reliability diagram per dataset
    assert len(page.images) == 4
    assert (report / "reliability-emotions.png").read_bytes().startswith(b"\x89PNG")
    assert "### Reliability diagram: emotions" in md
    for src in page.images:
        data = base64.b64decode(src.split(",", 1)[1])
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert (report / "cd-hamming_loss.png").read_bytes().startswith(b"\x89PNG")
    # reports refuse to overwrite their input, and name unknown metrics
    assert invoke("report", str(out), "--out", str(out)).exit_code == 2
    bad = invoke("report", str(out), "--out", str(report), "--metrics", "nosuch")
    assert bad.exit_code == 2 and "nosuch" in bad.stderr
    missing = invoke("report", str(tmp_path / "none.parquet"), "--out", str(report))
    assert missing.exit_code == 2 and "no such results file" in missing.stderr
    # fit times are CPU seconds; a store written before fit_cpu_seconds existed says wall
    assert "### Fit CPU seconds (mean over folds)" in md
    old = tmp_path / "old.parquet"
    pl.read_parquet(out).drop("fit_cpu_seconds").write_parquet(old)
    assert invoke("report", str(old), "--out", str(tmp_path / "old")).exit_code == 0
    old_md = (tmp_path / "old" / "report.md").read_text()
    assert "### Fit seconds (wall clock, mean over folds)" in old_md
    assert "Fit CPU seconds" not in old_md


def test_a_learner_scored_on_some_metrics_does_not_empty_the_others(tmp_path, datasets_dir
                                                                    ) -> None:
    """A learner with its own ``metrics`` (lacovac.toml's joint mode: exact match only)
    appears in those metrics' tables only; the other metrics keep their ranks and CD
    diagrams (it used to leave no dataset complete for them)."""
    from mlw.experiments import parse_config, run_experiment, write_report

    mulan = datasets_dir / "mulan"
    exp = parse_config({"experiment": {"name": "partial", "folds": 2, "data_path": [str(mulan)],
                                       "metrics": ["f1_micro", "hamming_loss"],
                                       "datasets": ["flags", "emotions"]},
                        "learners": {"br": {}, "centroid": {"learner": "template_centroid"},
                                     "only_f1": {"learner": "template_centroid",
                                                 "metrics": ["f1_micro"]}}})
    out = tmp_path / "r.parquet"
    run_experiment(exp, out)
    write_report(out, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    hamming = md.split("### hamming_loss")[1].split("###")[0]
    assert "only_f1" not in hamming and "average rank" in hamming
    # two datasets, two learners: Demsar's rule of thumb (N > 10, k > 5) is stated
    assert "N = 2, k = 2" in hamming and "indicative" in hamming
    assert (tmp_path / "report" / "cd-hamming_loss.png").is_file()
    overview = md.split("### Average ranks")[1].split("###")[0]
    assert re.search(r"\| only_f1 \| \d\.\d\d \| - \|", overview), overview


def test_learners_sharing_a_label_keep_their_own_figures(tmp_path) -> None:
    """Two learner keys with one label (mctbn.toml: ``mc`` and ``mc_feature`` are both
    "MC") used to share one row of the average ranks (the second's ranks shown as the
    first's), one entry of the selected parameters, one stage figure: each is now shown
    as "label (key)"."""
    from mlw.experiments import parse_config, run_experiment, write_report

    exp = parse_config({"experiment": {"name": "twins", "folds": 2,
                                       "metrics": ["f1_micro"], "datasets": ["emotions"]},
                        "learners": {"br": {"label": "BR"},
                                     "a": {"learner": "template_centroid", "label": "NC",
                                           "params": {"threshold": "pcut"}},
                                     "b": {"learner": "template_centroid", "label": "NC",
                                           "params": {"threshold": "rcut"}}}})
    out = tmp_path / "r.parquet"
    df = run_experiment(exp, out).results
    write_report(out, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    overview = md.split("### Average ranks")[1].split("###")[0]
    table = md.split("### f1_micro")[1].split("###")[0]
    assert "| dataset | BR | NC (a) | NC (b) |" in table
    mean = {k: df.filter(pl.col("learner") == k)["metric_f1_micro"].mean() for k in "ab"}
    assert mean["a"] != mean["b"]
    for key in "ab":
        assert f"{mean[key]:.3f}" in table.split("NC (b) |")[1]
        assert re.search(rf"\| NC \({key}\) \| \d\.\d\d \|", overview), overview


def test_help_imports_no_polars_dask_or_matplotlib() -> None:
    # the command ends with os._exit once its atexit handlers have run (mlw_cli.main.run),
    # so the modules are listed from an atexit handler, flushed before the process ends
    code = ("import atexit, runpy, sys; sys.argv = ['mlw', '--help']\n"
            "atexit.register(lambda: print(sorted(m for m in ('polars', 'dask', "
            "'distributed', 'matplotlib', 'numpy') if m in sys.modules), flush=True))\n"
            "runpy.run_module('mlw_cli', run_name='__main__')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stderr


SMOKE = {
    # flags is in no paper config but lacovac's: added as a 10-fold CV entry, fold 0 run
    "lacovac": ["--datasets", "flags", "--folds", "0"],
    # LCIF and LCIF2 search 2 x 2,475 configurations by 10-fold CV (minutes even on
    # flags): the smoke check runs the config's two kNN learners, whose searches are small
    "lcif": ["--datasets", "flags", "--folds", "0", "--learners", "instance_knn,feature_knn"],
    "xdcc": ["--datasets", "flags", "--folds", "0"],
    "mctbn": ["--datasets", "flags", "--folds", "0", "--learners", "mc,ctbn,br"],
    "ssvm": ["--datasets", "L10-00-none", "--learners", "struct_f1,br_svm"],
}


@pytest.mark.parametrize("paper", sorted(SMOKE))
def test_paper_configs_run_end_to_end_on_one_fold(tmp_path, paper) -> None:
    """A smoke check of the paper configs: their learners on one small dataset, one fold
    of the protocol (the full runs are on the method pages, docs/methods/)."""
    out = tmp_path / f"{paper}.parquet"
    result = invoke("bench", "--config", str(PAPERS / f"{paper}.toml"), *SMOKE[paper],
                    "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["ran"] >= 2 and summary["errors"] == []
    report = invoke("report", str(out), "--out", str(tmp_path / "report"))
    assert report.exit_code == 0, report.output


def test_every_paper_config_is_valid() -> None:
    from mlw.experiments import enumerate_cells, load_config

    for path in sorted(PAPERS.glob("*.toml")):
        experiment = load_config(path)
        experiment.check()
        assert enumerate_cells(experiment), path
