"""The command's trust rules: outputs never overwrite inputs, --json
errors are one JSON object, a plugin's own bug is exit 1 naming it, plugin output never
reaches stdout, SIGTERM is handled like Ctrl-C, usage errors are one line, and
mlw predict works on data without labels, aligned with the training data."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import sys

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

import mlw
from mlw_cli.main import app


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def one_json(stdout: str) -> dict:
    assert stdout.strip().count("\n") == 0, stdout
    return json.loads(stdout)


# -- outputs never overwrite inputs ------------------------------------------------------


def test_save_over_the_data_file_is_refused_before_fitting(install_plugins, tmp_path,
                                                           mulan_dir) -> None:
    install_plugins(good="mlwtest_good")
    data = tmp_path / "emotions-train.arff"
    data.write_bytes((mulan_dir / "emotions-train.arff").read_bytes())
    (tmp_path / "emotions.xml").write_bytes((mulan_dir / "emotions.xml").read_bytes())
    before = data.read_bytes()
    for target in (data, tmp_path / "emotions.xml"):
        result = invoke("fit", "-l", "fixture_prior", "--data", str(data), "--cv", "2",
                        "--save", str(target), "--json")
        assert result.exit_code == 2
        error = one_json(result.stdout)["error"]
        assert error["kind"] == "bad_input"
        assert f"--save {target} is the --data file {target}: refusing to overwrite an input" \
            in error["message"]
    assert data.read_bytes() == before


def test_predict_out_over_an_input_is_refused(install_plugins, tmp_path, mulan_dir) -> None:
    install_plugins(good="mlwtest_good")
    model = tmp_path / "m.mlw"
    assert invoke("fit", "-l", "fixture_prior", "--save", str(model), "-m",
                  "hamming_loss").exit_code == 0
    data = tmp_path / "new.arff"
    data.write_bytes((mulan_dir / "emotions-test.arff").read_bytes())
    saved = model.read_bytes()
    for target in (model, data, tmp_path / "." / "new.arff"):
        result = invoke("predict", "--model", str(model), "--data", str(data), "--out",
                        str(target))
        assert result.exit_code == 2, result.stderr
        assert "refusing to overwrite an input" in result.stderr
    assert model.read_bytes() == saved
    result = invoke("predict", "--model", str(model), "--data", str(data), "--out", "")
    assert (result.exit_code, result.stderr) == (2, "error: --out: the path is empty\n")


@pytest.mark.parametrize("args, message", [
    (["--save", ""], "error: --save: the path is empty"),
    (["--data", ""], "error: the dataset name or path is empty"),
])
def test_empty_paths_are_errors_never_defaults(install_plugins, args, message) -> None:
    install_plugins(good="mlwtest_good")
    result = invoke("fit", "-l", "fixture_prior", *args, "--json")
    assert result.exit_code == 2 and result.stderr == message + "\n"
    assert one_json(result.stdout)["error"]["message"] == message[len("error: "):]


# -- --json errors and usage errors ------------------------------------------------------


def test_json_error_names_the_file_and_line(install_plugins, tmp_path) -> None:
    install_plugins(good="mlwtest_good")
    bad = tmp_path / "bad.arff"
    bad.write_text("@relation 'r: -C -1'\n@attribute x numeric\n@attribute y {0,1}\n@data\n"
                   "1,0\nzz,1\n")
    result = invoke("fit", "-l", "fixture_prior", "--data", str(bad), "--json")
    assert result.exit_code == 2
    assert one_json(result.stdout) == {"error": {
        "kind": "bad_input", "file": str(bad), "line": 6,
        "message": "bad.arff:6: cannot parse 'zz' as a number (numeric attribute 'x')"}}


@pytest.mark.parametrize("args, message", [
    (["fit", "-l", "br", "--cv", "abc"], "error: mlw fit: Invalid value for '--cv'"),
    (["fit"], "error: mlw fit: Missing option '--learner'"),
    (["fit", "-l", "br", "--no-such-option"], "error: mlw fit: No such option: --no-such-option"),
    (["predict", "--model"], "error: Option '--model' requires an argument."),
])
def test_usage_errors_are_one_line_exit_2(args, message) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1
    assert result.stdout == ""
    with_json = invoke(*args, "--json")
    assert one_json(with_json.stdout)["error"]["kind"] == "usage"


def test_list_plugins_json_error_is_one_object(install_plugins, monkeypatch) -> None:
    install_plugins(good="mlwtest_good")
    monkeypatch.setattr(mlw.plugins.PluginManager, "plugins",
                        lambda self: (_ for _ in ()).throw(RuntimeError("boom")))
    result = invoke("list-plugins", "--json")
    assert result.exit_code == 1
    assert one_json(result.stdout)["error"]["kind"] == "internal"


# -- a plugin's own bug --------------------------------------------------------------------


@pytest.mark.parametrize("learner, expected", [
    ("buggy_fit", "failed in fit: ZeroDivisionError: division by zero in the plugin"),
    ("buggy_exit", "called sys.exit(3) in fit"),
    ("buggy_shape", "broke the learner contract in predict: predict_proba returned shape "
                    "(202, 7), expected (202, 6)"),
    ("buggy_nan", "broke the learner contract in predict: predict_proba returned NaN scores"),
])
def test_a_plugins_bug_is_exit_1_naming_the_plugin(install_plugins, learner, expected) -> None:
    install_plugins(buggy="mlwtest_buggy")
    result = invoke("fit", "-l", learner, "--json")
    assert result.exit_code == 1, result.stderr
    error = one_json(result.stdout)["error"]
    assert error["kind"] == "plugin"
    assert error["message"].startswith(f"learner {learner!r} (plugin 'buggy', mlw-buggy) "
                                       f"{expected}")
    assert result.stderr.startswith("plugin error: ")


def test_a_plugins_loader_generator_metric_or_threshold_bug_is_exit_1_naming_it(
        install_plugins, tmp_path) -> None:
    install_plugins(buggy="mlwtest_buggy")
    data = tmp_path / "d.buggy"
    data.write_text("anything")
    for spec, expected in (
            (str(data), "loader 'buggy_format' (plugin 'buggy', mlw-buggy) called "
                        f"sys.exit('cannot read {data}') in load"),
            ("buggy_gen:n=5", "generator 'buggy_gen' (plugin 'buggy', mlw-buggy) failed in "
                              "generate: KeyError: 'columns'")):
        result = invoke("fit", "-l", "buggy_fit", "--data", spec, "--json")
        assert result.exit_code == 1, result.stderr
        error = one_json(result.stdout)["error"]
        assert error["kind"] == "plugin" and error["message"].startswith(expected), error
    with pytest.raises(mlw.PluginError, match="generator 'buggy_gen' .* failed in generate"):
        mlw.generate_dataset("buggy_gen")
    install_plugins(good="mlwtest_good", buggy="mlwtest_buggy")
    result = invoke("fit", "-l", "fixture_prior", "-m", "hamming_loss,buggy_metric", "--json")
    assert result.exit_code == 1, result.stderr
    assert one_json(result.stdout)["error"]["message"].startswith(
        "metric 'buggy_metric' (plugin 'buggy', mlw-buggy) failed in compute: "
        "ZeroDivisionError: division by zero")
    # a plugin's thresholding strategy is named as itself, not as the learner it runs in
    for strategy, step, exc in (("buggy_thr_fit", "fit", "ZeroDivisionError"),
                                ("buggy_thr_predict", "predict", "IndexError")):
        result = invoke("fit", "-l", "fixture_prior", "--threshold", strategy, "-m",
                        "hamming_loss", "--json")
        assert result.exit_code == 1, result.stderr
        assert one_json(result.stdout)["error"]["message"].startswith(
            f"threshold {strategy!r} (plugin 'buggy', mlw-buggy) failed in {step}: {exc}")


def test_a_plugin_rejecting_its_input_is_bad_input(install_plugins) -> None:
    install_plugins(buggy="mlwtest_buggy")
    result = invoke("fit", "-l", "buggy_input")
    assert (result.exit_code, result.stderr) == (
        2, "error: buggy_input needs at least 10000 rows\n")


def test_plugin_prints_never_reach_stdout(install_plugins) -> None:
    install_plugins(noisy="mlwtest_noisy")
    mlw.plugins.reset_plugin_manager()
    sys.modules.pop("mlwtest_noisy", None)  # imported again inside the command
    result = invoke("list-plugins", "--json")
    assert result.exit_code == 0
    names = [p["name"] for p in one_json(result.stdout)]
    assert "noisy" in names
    assert "noisy plugin says hello" in result.stderr
    assert "noisy plugin registers" in result.stderr


def test_what_a_learner_prints_never_reaches_stdout(install_plugins, tmp_path) -> None:
    """A plugin printing while it fits, predicts or has its module imported on first
    use corrupts neither ``--json`` nor the predictions CSV: it goes to stderr."""
    install_plugins(noisy="mlwtest_noisy")
    model = tmp_path / "m.mlw"
    result = invoke("fit", "-l", "noisy_chatty", "-m", "hamming_loss", "--save", str(model),
                    "--json")
    assert result.exit_code == 0, result.stderr
    assert one_json(result.stdout)["learner"] == "noisy_chatty"
    assert "chatty: fitting" in result.stderr and "chatty: predicting" in result.stderr
    predicted = invoke("predict", "--model", str(model), "--data", "emotions")
    assert predicted.exit_code == 0, predicted.stderr
    rows = list(csv.reader(io.StringIO(predicted.stdout)))
    assert len(rows) == 203 and all(set(r) <= {"0", "1"} for r in rows[1:])
    assert "chatty: predicting" in predicted.stderr
    lazy = invoke("fit", "-l", "noisy_lazy", "-m", "hamming_loss", "--json")
    assert lazy.exit_code == 0, lazy.stderr
    one_json(lazy.stdout)
    assert "noisy model module imported" in lazy.stderr


def test_what_a_learner_prints_in_bench_workers_never_reaches_stdout(install_plugins, tmp_path,
                                                                    capfd) -> None:
    """Worker processes (``--jobs 2``) write to the real file descriptors: their stdout
    is stderr too."""
    install_plugins(noisy="mlwtest_noisy")
    result = invoke("bench", "--learners", "noisy_chatty", "--datasets", "emotions", "--cv",
                    "2", "--metrics", "hamming_loss", "--jobs", "2", "--out",
                    str(tmp_path / "r.parquet"), "--json")
    assert result.exit_code == 0, result.stderr
    one_json(result.stdout)
    out, err = capfd.readouterr()
    assert "chatty" not in out and "chatty: fitting" in err


def test_sys_exit_in_a_plugins_import_is_named_never_exits_mlw(install_plugins) -> None:
    install_plugins(good="mlwtest_good", quits="mlwtest_exit_at_import",
                    noisy="mlwtest_noisy")
    listed = invoke("list-plugins", "--json")
    assert listed.exit_code == 0, listed.stderr
    quits = next(p for p in one_json(listed.stdout) if p["name"] == "quits")
    assert quits["status"] == "broken"
    assert quits["error"] == ("import failed: SystemExit('mlwtest_exit_at_import refuses to "
                              "load') (it called sys.exit)")
    assert invoke("fit", "-l", "fixture_prior", "-m", "hamming_loss").exit_code == 0
    # the listing shows the learner whose module exits as broken, and lists the others
    rows = {r["name"]: r for r in one_json(invoke("learners", "--json").stdout)}
    assert "cannot import 'mlwtest_exit_at_import:Nothing'" in rows["noisy_lazy_exit"]["error"]
    assert "error" not in rows["fixture_prior"] and rows["noisy_lazy"]["params"]
    table = invoke("learners")
    assert table.exit_code == 0 and "broken: learner 'noisy_lazy_exit'" in table.stdout
    lazy = invoke("fit", "-l", "noisy_lazy_exit", "--json")  # its module exits on first use
    assert lazy.exit_code == 1, lazy.stderr
    error = one_json(lazy.stdout)["error"]
    assert error["kind"] == "plugin"
    assert error["message"] == (
        "learner 'noisy_lazy_exit' of plugin 'noisy': cannot import "
        "'mlwtest_exit_at_import:Nothing' (SystemExit('mlwtest_exit_at_import refuses to "
        "load') (it called sys.exit))")


def test_slow_plugin_is_named_with_how_to_disable_it(install_plugins, monkeypatch) -> None:
    monkeypatch.setenv("MLW_SLOW_PLUGIN_SECONDS", "0.05")
    monkeypatch.setenv("MLWTEST_NOISY_SLEEP", "0.1")
    install_plugins(noisy="mlwtest_noisy")
    mlw.plugins.reset_plugin_manager()
    sys.modules.pop("mlwtest_noisy", None)
    result = invoke("learners", "--json")
    assert result.exit_code == 0
    one_json(result.stdout)
    # The import sleeps 0.1 s; on a loaded machine it can take seconds, so no digits pinned.
    assert re.search(r"warning: SlowPluginWarning: plugin 'noisy' \(mlw-noisy\) took \d+\.\d+ s",
                     result.stderr), result.stderr
    assert "disable it with MLW_DISABLE_PLUGINS=noisy" in result.stderr


def test_hijacked_name_is_refused_until_the_user_chooses(install_plugins) -> None:
    install_plugins(keep_real=True, aaa="mlwtest_hijack")
    result = invoke("fit", "-l", "br", "--json")
    assert result.exit_code == 2
    assert one_json(result.stdout)["error"]["message"] == (
        "learner 'br' is registered by both plugin 'aaa' (mlw-aaa) and plugin 'baselines' "
        "(mlw-baselines); choose one: 'aaa:br' or 'baselines:br'")
    chosen = invoke("fit", "-l", "baselines:br", "-p", "base_estimator=decision_tree", "-m",
                    "hamming_loss", "--json")
    assert chosen.exit_code == 0, chosen.stderr
    assert one_json(chosen.stdout)["learner"] == "baselines:br"
    assert invoke("fit", "-l", "cc", "-p", "base_estimator=decision_tree", "-m",
                  "hamming_loss").exit_code == 0


# -- SIGTERM -------------------------------------------------------------------------------


class _TermLearner(mlw.MultiLabelLearner):
    """Receives SIGTERM while the model is being saved (pickling it)."""

    def __init__(self, threshold: str = "fixed") -> None:
        self.threshold = threshold

    def _fit(self, X, Y):
        self.p_ = np.asarray(Y).mean(axis=0)

    def _predict_proba(self, X):
        return np.tile(self.p_, (X.shape[0], 1))

    def __getstate__(self):
        os.kill(os.getpid(), signal.SIGTERM)
        return dict(self.__dict__)


class _TermPlugin:
    @staticmethod
    @mlw.hookimpl
    def mlw_register_learners(register):
        register(mlw.LearnerSpec("term_freq", _TermLearner, "SIGTERM while saving"))


def test_sigterm_while_saving_exits_143_and_leaves_nothing(install_plugins, tmp_path) -> None:
    pm = install_plugins(good="mlwtest_good")
    pm.register(_TermPlugin(), name="term")
    target = tmp_path / "m.mlw"
    target.write_bytes(b"the previous model")
    result = invoke("fit", "-l", "term_freq", "-m", "hamming_loss", "--save", str(target),
                    "--json")
    assert result.exit_code == 143
    assert result.stderr.endswith("error: terminated (SIGTERM)\n")
    assert one_json(result.stdout)["error"]["kind"] == "interrupted"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.mlw"]
    assert target.read_bytes() == b"the previous model"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored


# -- predicting data without labels ------------------------------------------------------


@pytest.fixture
def saved_model(install_plugins, tmp_path):
    install_plugins(keep_real=True)
    model = tmp_path / "br.mlw"
    result = invoke("fit", "-l", "br", "-p", "base_estimator=decision_tree", "-m",
                    "hamming_loss", "--save", str(model))
    assert result.exit_code == 0, result.stderr
    return model


def _predict(model, data) -> list[list[str]]:
    result = invoke("predict", "--model", str(model), "--data", str(data))
    assert result.exit_code == 0, result.stderr
    return list(csv.reader(io.StringIO(result.stdout)))


def test_predict_on_data_without_labels(saved_model, tmp_path, mulan_dir) -> None:
    expected = _predict(saved_model, mulan_dir / "emotions-test.arff")
    test = mlw.load_dataset(mulan_dir / "emotions-test.arff")
    # an ARFF with the features only (no label attributes, no XML)
    lines = (mulan_dir / "emotions-test.arff").read_text().splitlines()
    head = [ln for ln in lines if ln.lower().startswith("@attribute")][:72]
    rows = [",".join(repr(float(v)) for v in r) for r in np.asarray(test.X)]
    unlabelled = tmp_path / "new.arff"
    unlabelled.write_text("@relation new\n" + "\n".join(head) + "\n@data\n" + "\n".join(rows)
                          + "\n")
    assert _predict(saved_model, unlabelled) == expected
    # a CSV with the training features, in another column order
    frame = pl.DataFrame({n: np.asarray(test.X)[:, j]
                          for j, n in enumerate(test.feature_names)})
    frame = frame.select(list(reversed(frame.columns)))
    new_csv = tmp_path / "new.csv"
    frame.write_csv(new_csv)
    assert _predict(saved_model, new_csv) == expected


def test_predict_names_a_missing_feature(saved_model, tmp_path) -> None:
    new_csv = tmp_path / "few.csv"
    pl.DataFrame({"a": [1.0, 2.0]}).write_csv(new_csv)
    result = invoke("predict", "--model", str(saved_model), "--data", str(new_csv))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: few: column 'Mean_Acc1298_Mean_Mem40_Centroid' of "
                                    "the training data is missing")


def test_bench_out_over_its_config_is_refused(tmp_path) -> None:
    config = tmp_path / "exp.toml"
    config.write_text("[experiment]\nlearners = ['br']\ndatasets = ['emotions']\n")
    before = config.read_bytes()
    result = invoke("bench", "--config", str(config), "--out", str(config), "--json")
    assert result.exit_code == 2
    assert "refusing to overwrite an input" in one_json(result.stdout)["error"]["message"]
    assert config.read_bytes() == before


def test_what_native_code_writes_to_fd_1_never_reaches_stdout(capfd, monkeypatch) -> None:
    """While a command runs, file descriptor 1 is stderr too (a C or Rust library, a child
    process writing to fd 1), and the results still reach stdout. (capfd: fd level;
    sys.stdout is made fd 1's stream, as in a terminal, which CliRunner's is not.)"""
    import subprocess

    from mlw_cli.output import handle_errors, print_json

    monkeypatch.setattr(sys, "stdout", open(1, "w", closefd=False))  # noqa: SIM115
    with handle_errors(as_json=True):
        os.write(1, b"native noise\n")
        subprocess.run(["echo", "child noise"], check=True)
        print("python noise")
        print_json({"learner": "x"})
    out, err = capfd.readouterr()
    assert one_json(out) == {"learner": "x"}
    assert err == "native noise\nchild noise\npython noise\n"
    os.write(1, b"after\n")                      # fd 1 is stdout again
    assert capfd.readouterr().out == "after\n"
