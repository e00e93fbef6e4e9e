"""The ``mlw`` command end to end: the --json contract, tables, exit codes 0/2/1,
--save/predict, and plugin discovery through real entry points (the template plugin).

In-process tests (``CliRunner``) use the fixture plugins; subprocess tests run the
installed command with the real entry points."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

import mlw
from mlw_cli.main import app

CONTRACT_KEYS = {"learner", "params", "dataset", "n_train", "n_test", "n_features", "n_labels",
                 "metrics", "fit_seconds", "predict_seconds"}


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def one_json(stdout: str) -> dict:
    """stdout holds exactly one JSON document (and nothing else)."""
    obj = json.loads(stdout)
    assert stdout.strip().count("\n") == 0
    return obj


# --- plugin discovery through real entry points (subprocess) ----------------------------------
def test_list_plugins_json_shows_the_template_plugin(run_mlw) -> None:
    proc = run_mlw("list-plugins", "--json", console_script=True)
    assert proc.returncode == 0, proc.stderr
    plugins = {p["name"]: p for p in json.loads(proc.stdout)}
    template = plugins["template"]
    assert template["distribution"] == "mlw-plugin-template"
    assert template["status"] == "ok" and template["version"] == "0.1.0"
    assert template["registers"] == {"learner": ["template_centroid"],
                                     "metric": ["cardinality_error"]}
    assert {"mlw.loaders", "mlw.metrics", "mlw.thresholds"} <= set(plugins)
    assert all(p["builtin"] for n, p in plugins.items() if n.startswith("mlw."))


@pytest.mark.parametrize("console_script", [True, False])
def test_the_command_ends_without_finalization_but_with_its_output(run_mlw, console_script):
    """``mlw`` ends with ``os._exit`` once the command is done (Python's
    finalization cost ~0.3 s CPU): the exit code and every byte of output are still
    there, on success and on a usage error."""
    ok = run_mlw("fit", "--learner", "template_centroid", "--json",
                 console_script=console_script)
    assert ok.returncode == 0, ok.stderr
    assert set(json.loads(ok.stdout)["metrics"]) >= {"hamming_loss", "f1_example"}
    bad = run_mlw("fit", "--learner", "nope", "--json", console_script=console_script)
    assert bad.returncode == 2
    assert json.loads(bad.stdout)["error"]["kind"] == "bad_input"
    assert "unknown learner 'nope'" in bad.stderr


def test_fit_with_the_template_learner_prints_the_contract(run_mlw) -> None:
    proc = run_mlw("fit", "--learner", "template_centroid", "--json")
    assert proc.returncode == 0, proc.stderr
    out = one_json(proc.stdout)
    assert CONTRACT_KEYS <= set(out)
    assert (out["learner"], out["dataset"]) == ("template_centroid", "emotions")
    assert (out["n_train"], out["n_test"], out["n_features"], out["n_labels"]) == (391, 202,
                                                                                   72, 6)
    assert out["params"] == {"threshold": "pcut"}
    assert out["metrics"]["f1_micro"] > 0.5  # measured 0.601 on emotions' test split
    assert "cardinality_error" in out["metrics"]  # the template's metric is registered too
    assert out["fit_seconds"] >= 0 and out["predict_seconds"] >= 0
    assert "folds" not in out


def test_fit_br_on_yeast_prints_the_contract(run_mlw, mulan_dir) -> None:
    """The issue's acceptance command, end to end with the real plugins."""
    proc = run_mlw("fit", "--learner", "br", "--data", str(mulan_dir / "yeast-train.arff"),
                   "--test", str(mulan_dir / "yeast-test.arff"), "--json")
    assert proc.returncode == 0, proc.stderr
    out = one_json(proc.stdout)
    assert CONTRACT_KEYS <= set(out)
    assert (out["learner"], out["dataset"], out["n_train"], out["n_test"], out["n_features"],
            out["n_labels"]) == ("br", "yeast-train", 1500, 917, 103, 14)
    assert {"subset_accuracy", "hamming_loss", "accuracy", "f1_example", "f1_micro",
            "f1_macro", "log_loss", "one_error", "coverage", "ranking_loss",
            "average_precision"} <= set(out["metrics"])
    # BR's joint model is the product of its independent marginals (log_proba_of)
    assert out["metrics"]["cll_loss"] > 0
    # measured: hamming 0.204, f1_micro 0.631 (BR + logistic regression, threshold 0.5)
    assert 0.18 < out["metrics"]["hamming_loss"] < 0.23
    assert 0.58 < out["metrics"]["f1_micro"] < 0.68


def test_disabled_template_is_listed_as_disabled_and_unknown_to_fit(run_mlw) -> None:
    env = {"MLW_DISABLE_PLUGINS": "template"}
    proc = run_mlw("list-plugins", "--json", env=env)
    template = next(p for p in json.loads(proc.stdout) if p["name"] == "template")
    assert (template["status"], template["error"]) == ("disabled",
                                                       "disabled by MLW_DISABLE_PLUGINS")
    proc = run_mlw("fit", "--learner", "template_centroid", env=env)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown learner 'template_centroid'")
    assert proc.stdout == ""


# --- the fit contract (in-process, fixture plugins) -----------------------------------------
def test_fit_holdout_on_mulan_files(install_plugins, mulan_dir) -> None:
    install_plugins(good="mlwtest_good")
    result = invoke("fit", "--learner", "fixture_prior", "--data",
                    str(mulan_dir / "yeast-train.arff"), "--test",
                    str(mulan_dir / "yeast-test.arff"), "--json", "-m", "hamming_loss,f1_micro")
    assert result.exit_code == 0, result.stderr
    out = one_json(result.stdout)
    assert (out["dataset"], out["n_train"], out["n_test"], out["n_features"],
            out["n_labels"]) == ("yeast-train", 1500, 917, 103, 14)
    assert list(out["metrics"]) == ["hamming_loss", "f1_micro"]
    # the prior at 0.5 predicts exactly the labels present in more than half the rows
    tr = mlw.load_dataset(mulan_dir / "yeast-train.arff")
    te = mlw.load_dataset(mulan_dir / "yeast-test.arff")
    model = mlw.get_learner("fixture_prior").fit(tr.X, tr.Y)
    assert out["metrics"]["hamming_loss"] == pytest.approx(
        mlw.evaluate(te.Y, model.predict(te.X), metrics=["hamming_loss"])["hamming_loss"])


def test_fit_cv_reports_fold_means_and_each_fold(install_plugins) -> None:
    install_plugins(good="mlwtest_good")
    result = invoke("fit", "-l", "fixture_prior", "--cv", "4", "--seed", "3", "--json",
                    "--param", "smoothing=2")
    assert result.exit_code == 0, result.stderr
    out = one_json(result.stdout)
    assert CONTRACT_KEYS | {"folds"} <= set(out)
    assert out["params"] == {"threshold": "fixed", "smoothing": 2.0}
    assert len(out["folds"]) == 4 and out["evaluation"] == "4-fold cv" and out["seed"] == 3
    for name, value in out["metrics"].items():
        assert value == pytest.approx(np.mean([f["metrics"][name] for f in out["folds"]]))
    # CV on the bundled dataset runs over its train and test splits joined (593 rows)
    assert sum(f["n_test"] for f in out["folds"]) == 593
    assert {f["fold"] for f in out["folds"]} == {0, 1, 2, 3}


def test_cv_progress_bar_goes_to_stderr(install_plugins, monkeypatch) -> None:
    install_plugins(good="mlwtest_good")
    monkeypatch.setenv("MLW_PROGRESS", "1")  # draw it although stderr is not a terminal
    result = invoke("fit", "-l", "fixture_prior", "--cv", "3", "--json", "-m", "hamming_loss")
    assert result.exit_code == 0
    assert "cross-validation" in result.stderr and "3/3" in result.stderr
    assert len(one_json(result.stdout)["folds"]) == 3


def test_fit_on_a_named_split_uses_train_and_test(install_plugins, mulan_dir) -> None:
    """``--data DIR/yeast`` finds yeast-train.arff and yeast-test.arff (and yeast.xml)."""
    install_plugins(good="mlwtest_good")
    result = invoke("fit", "-l", "fixture_prior", "--data", str(mulan_dir / "yeast"),
                    "--json", "-m", "hamming_loss")
    assert result.exit_code == 0, result.stderr
    out = one_json(result.stdout)
    assert (out["dataset"], out["n_train"], out["n_test"], out["evaluation"]) == (
        "yeast", 1500, 917, "holdout")
    # medical has one file only: 10-fold CV over it, with a note
    result = invoke("fit", "-l", "fixture_prior", "--data", str(mulan_dir / "medical"),
                    "--json", "-m", "hamming_loss")
    assert result.exit_code == 0, result.stderr
    assert one_json(result.stdout)["evaluation"] == "10-fold cv"
    assert "note: medical has no test split: 10-fold cross-validation" in result.stderr


def test_fit_on_a_single_file_defaults_to_10_fold_cv(install_plugins, mulan_dir) -> None:
    install_plugins(good="mlwtest_good")
    result = invoke("fit", "-l", "fixture_prior", "--data",
                    str(mulan_dir / "emotions-train.arff"), "--json", "-m", "hamming_loss")
    assert result.exit_code == 0
    assert len(one_json(result.stdout)["folds"]) == 10
    assert "note: no test set or number of folds given: 10-fold cross-validation" in result.stderr


def test_fit_table_goes_to_stdout_without_json(install_plugins) -> None:
    install_plugins(good="mlwtest_good")
    result = invoke("fit", "-l", "fixture_prior", "-m", "hamming_loss,f1_micro")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == ("fixture_prior on emotions: train emotions-train, test emotions-test")
    assert any(line.split()[1:3] == ["hamming_loss", "0.3218"] or
               ("hamming_loss" in line and "lower" in line) for line in lines)
    assert lines[-2].startswith("391 train / 202 test instances, 72 features, 6 labels")
    # the times on a line of their own: wall clock, the fit's CPU seconds, predict
    assert re.fullmatch(r"fit \d+\.\d\d s \(\d+\.\d\d s CPU\), predict \d+\.\d\d s.*",
                        lines[-1]), lines[-1]


def test_threshold_option_sets_the_learner_parameter(install_plugins) -> None:
    install_plugins(good="mlwtest_good")
    result = invoke("fit", "-l", "fixture_prior", "--threshold", "cardinality", "--json",
                    "-m", "hamming_loss")
    assert result.exit_code == 0, result.stderr
    assert one_json(result.stdout)["params"]["threshold"] == "cardinality"


def test_threshold_option_on_a_joint_learner_scores_its_marginals(install_plugins) -> None:
    pm = install_plugins(good="mlwtest_good")
    pm.register(_ExtraPlugin(), name="extra")
    own = invoke("fit", "-l", "fixture_joint", "--json", "-m", "f1_micro", "--cv", "3")
    assert own.exit_code == 0, own.stderr
    assert one_json(own.stdout)["metrics"]["f1_micro"] == 0.0  # the empty set
    result = invoke("fit", "-l", "fixture_joint", "--threshold", "pcut", "--json",
                    "-m", "f1_micro", "--cv", "3")
    assert result.exit_code == 0, result.stderr
    out = one_json(result.stdout)
    assert out["evaluation_threshold"] == "pcut" and "threshold" not in out["params"]
    assert out["metrics"]["f1_micro"] > 0.0
    assert "score threshold 'pcut' on its marginals" in result.stderr
    bare = invoke("fit", "-l", "fixture_joint_bare", "--threshold", "pcut", "--json")
    assert bare.exit_code == 2 and one_json(bare.stdout)["error"]["kind"] == "bad_input"
    assert bare.stderr == ("error: learner 'fixture_joint_bare' makes its own joint decision "
                           "and predicts no label scores, so a threshold does not apply\n")


class _ExtraPlugin:
    """In-process extras: a learner that crashes and one with a text form."""

    @staticmethod
    @mlw.hookimpl
    def mlw_register_learners(register):
        from mlwtest_good import PriorLearner

        class Crashing(PriorLearner):
            def _fit(self, X, Y):
                raise RuntimeError("bug inside the learner")

        class KeyErroring(PriorLearner):
            def _fit(self, X, Y):
                return {}["missing"]

        class Explained(PriorLearner):
            def to_text(self, label_names=None):
                names = label_names or [f"y{j}" for j in range(len(self.prior_))]
                pairs = zip(names, self.prior_, strict=True)
                return "prior: " + " ".join(f"{n}={p:.2f}" for n, p in pairs)

        class JointPrior(PriorLearner):
            """Its own joint decision (the empty set), and the prior as marginals."""

            _joint_prediction = True

            def __init__(self, smoothing: float = 0.0) -> None:
                self.smoothing = smoothing

            def _predict(self, X):
                return np.zeros((X.shape[0], self.prior_.shape[0]), dtype=np.uint8)

        class JointNoScores(JointPrior):
            # no scores: the base class's unimplemented _predict_proba
            _predict_proba = mlw.MultiLabelLearner._predict_proba

        register(mlw.LearnerSpec("fixture_joint", JointPrior, "joint, with marginals"))
        register(mlw.LearnerSpec("fixture_joint_bare", JointNoScores, "joint, no scores"))
        register(mlw.LearnerSpec("fixture_crash", Crashing, "raises in fit"))
        register(mlw.LearnerSpec("fixture_keyerror", KeyErroring, "a KeyError bug in fit"))
        register(mlw.LearnerSpec("fixture_text", Explained, "has to_text"))


def test_a_plugins_own_bug_exits_1_naming_the_plugin(install_plugins) -> None:
    pm = install_plugins(good="mlwtest_good")
    pm.register(_ExtraPlugin(), name="extra")
    result = invoke("fit", "-l", "fixture_crash", "--json")
    assert result.exit_code == 1
    message = ("learner 'fixture_crash' (plugin 'extra') failed in fit: RuntimeError: bug "
               "inside the learner (a bug in the plugin: report it to its authors; "
               "MLW_DEBUG=1 shows the traceback)")
    assert result.stderr == f"plugin error: {message}\n"
    assert one_json(result.stdout) == {"error": {"kind": "plugin", "message": message,
                                                 "file": None, "line": None}}
    # a KeyError inside a learner is a bug too, not bad input
    result = invoke("fit", "-l", "fixture_keyerror", "--json")
    assert result.exit_code == 1 and result.stderr.startswith(
        "plugin error: learner 'fixture_keyerror' (plugin 'extra') failed in fit: KeyError")


def test_show_model_prints_the_text_form(install_plugins) -> None:
    pm = install_plugins(good="mlwtest_good")
    pm.register(_ExtraPlugin(), name="extra")
    result = invoke("fit", "-l", "fixture_text", "--show-model", "-m", "hamming_loss")
    assert result.exit_code == 0
    # to_text gets the dataset's label names because it accepts label_names
    assert result.stdout.splitlines()[-1].startswith("prior: amazed-suprised=0.")
    result = invoke("fit", "-l", "fixture_prior", "--show-model", "-m", "hamming_loss")
    assert "note: learner 'fixture_prior' has no text form" in result.stderr
    with_json = invoke("fit", "-l", "fixture_text", "--show-model", "--json", "-m",
                       "hamming_loss")
    one_json(with_json.stdout)  # the text goes to stderr, the JSON stays alone
    assert "prior: amazed-suprised=0." in with_json.stderr


@pytest.mark.parametrize("args, message", [
    (["-l", "fixture_pior"], "error: unknown learner 'fixture_pior'; did you mean "
                             "'fixture_prior'?"),
    (["-l", "fixture_prior", "--param", "smoothng=1"],
     "error: learner 'fixture_prior' has no parameter 'smoothng'; did you mean 'smoothing'?"),
    (["-l", "fixture_prior", "--param", "smoothing=lots"],
     "error: smoothing=lots: expected a number"),
    (["-l", "fixture_prior", "--threshold", "pcutt"],
     "error: unknown threshold 'pcutt'; did you mean 'pcut'"),
    (["-l", "fixture_prior", "-m", "hamming,f1_micro"], "error: unknown metric 'hamming'"),
    (["-l", "fixture_prior", "--cv", "3", "--test", "x.arff"],
     "error: give either a test set (hold-out) or a number of folds (cross-validation), not both"),
    (["-l", "fixture_prior", "--cv", "1"],
     "error: the number of folds must be an integer of at least 2, got 1"),
    (["-l", "fixture_prior", "-m", "hamming_loss,cll_loss"],
     "error: metric 'cll_loss' needs log P(y|x) (log_proba_of), which learner "
     "'fixture_prior' does not have"),
    (["-l", "fixture_prior", "--data", "nosuch"],
     "error: nosuch: no such file or dataset (bundled: emotions; a name NAME is also "
     "looked up as NAME-train.arff/NAME-test.arff and in $MLW_DATA_PATH; "
     "NAME:key=value,... names a generator)"),
    (["-l", "fixture_prior", "--data", ""], "error: the dataset name or path is empty"),
    (["-l", "fixture_prior", "--data", "missing/file.arff"],
     "error: missing/file.arff: no such file or dataset"),
    (["-l", "fixture_prior", "--data", "emotions", "--test", "missing.arff"],
     "error: test set missing.arff: no such file"),
    (["-l", "fixture_prior", "--save", "no/such/dir/m.mlw"],
     "error: --save no/such/dir/m.mlw: folder no/such/dir does not exist"),
])
def test_bad_input_exits_2_with_one_line(install_plugins, args, message) -> None:
    install_plugins(good="mlwtest_good")
    result = invoke("fit", *args, "--json")
    assert result.exit_code == 2
    error = one_json(result.stdout)["error"]  # --json > out.json stays valid JSON
    assert error["kind"] == "bad_input" and result.stderr == f"error: {error['message']}\n"
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == 1


def test_malformed_data_file_exits_2_naming_the_file(install_plugins, tmp_path) -> None:
    install_plugins(good="mlwtest_good")
    bad = tmp_path / "bad.arff"
    bad.write_text("@relation 'bad: -C 2'\n@attribute a {0,1}\n@attribute b {0,1}\n"
                   "@attribute x numeric\n@data\n0,1,2.5\n1,0\n")
    result = invoke("fit", "-l", "fixture_prior", "--data", str(bad), "--cv", "2")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "bad.arff" in result.stderr
    assert result.stderr.count("\n") == 1


def test_usage_error_exits_2() -> None:
    result = CliRunner().invoke(app, ["fit"])
    assert result.exit_code == 2
    assert "Missing option '--learner'" in result.output


# --- save and predict ---
def test_save_then_predict_writes_label_csv(install_plugins, tmp_path, mulan_dir) -> None:
    install_plugins(good="mlwtest_good")
    model_path = tmp_path / "prior.mlw"
    result = invoke("fit", "-l", "fixture_prior", "--save", str(model_path), "--json",
                    "-m", "hamming_loss")
    assert result.exit_code == 0 and model_path.exists()
    header = mlw.persistence.read_header(model_path)
    assert header["learner"] == "fixture_prior"
    assert header["metadata"]["dataset"] == "emotions"
    assert header["plugins"]["mlw-good"] == "1.0.0"

    out = tmp_path / "pred.csv"
    result = invoke("predict", "--model", str(model_path), "--data",
                    str(mulan_dir / "emotions-test.arff"), "--out", str(out))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    rows = list(csv.reader(io.StringIO(out.read_text())))
    test = mlw.load_dataset(mulan_dir / "emotions-test.arff")
    assert rows[0] == list(test.label_names)
    model = mlw.persistence.load_model(model_path)
    np.testing.assert_array_equal(np.array(rows[1:], dtype=np.uint8), model.predict(test.X))
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []

    to_stdout = invoke("predict", "--model", str(model_path), "--data",
                       str(mulan_dir / "emotions-test.arff"))
    assert to_stdout.stdout == out.read_text()


def test_predictions_csv_is_the_same_for_sparse_and_dense() -> None:
    import scipy.sparse as sp

    Y = np.array([[1, 0, 1], [0, 0, 0], [0, 1, 0]], dtype=np.uint8)
    ds = mlw.Dataset(np.zeros((3, 1)), Y, ["x"], ["a", "b,c", "d"])
    dense, sparse = io.StringIO(), io.StringIO()
    mlw.write_predictions(mlw.Predictions(Y, ["a", "b,c", "d"], ds), dense)
    mlw.write_predictions(mlw.Predictions(sp.csr_matrix(Y), ["a", "b,c", "d"], ds), sparse)
    assert dense.getvalue() == sparse.getvalue() == 'a,"b,c",d\n1,0,1\n0,0,0\n0,1,0\n'


def test_save_after_cv_fits_on_all_the_data(install_plugins, tmp_path) -> None:
    install_plugins(good="mlwtest_good")
    path = tmp_path / "cv.mlw"
    result = invoke("fit", "-l", "fixture_prior", "--cv", "3", "--save", str(path), "-m",
                    "hamming_loss")
    assert result.exit_code == 0, result.stderr
    assert mlw.read_header(path)["metadata"]["n_train"] == 593  # emotions train + test
    assert mlw.load_model(path).prior_.shape == (6,)


def test_predict_rejects_bad_inputs(install_plugins, tmp_path, mulan_dir) -> None:
    install_plugins(good="mlwtest_good")
    model_path = tmp_path / "prior.mlw"
    invoke("fit", "-l", "fixture_prior", "--save", str(model_path), "-m", "hamming_loss")
    result = invoke("predict", "--model", str(model_path), "--data",
                    str(mulan_dir / "yeast-test.arff"))
    assert result.exit_code == 2
    assert result.stderr == ("error: yeast-test: column 'Mean_Acc1298_Mean_Mem40_Centroid' of "
                             "the training data is missing\n")
    not_model = tmp_path / "x.mlw"
    not_model.write_text("hello")
    result = invoke("predict", "--model", str(not_model), "--data",
                    str(mulan_dir / "emotions-test.arff"))
    assert (result.exit_code, result.stderr) == (
        2, f"error: {not_model}: not an mlw model file (no MLWMODEL header)\n")
    # a model whose plugin is gone is refused clearly
    install_plugins()
    result = invoke("predict", "--model", str(model_path), "--data",
                    str(mulan_dir / "emotions-test.arff"))
    assert result.exit_code == 2
    assert "needs the plugin distribution 'mlw-good' (version 1.0.0)" in result.stderr


# --- datasets and version ---
def test_datasets_json_lists_bundled_loaders_and_generators(install_plugins) -> None:
    install_plugins(good="mlwtest_good")
    result = invoke("datasets", "--json")
    assert result.exit_code == 0
    out = one_json(result.stdout)
    assert set(out) == {"bundled", "loaders", "generators"}
    assert "emotions" in [b["name"] for b in out["bundled"]]
    loaders = {d["name"]: d for d in out["loaders"]}
    assert ".arff" in loaders["arff"]["suffixes"] and loaders["arff"]["plugin"] == "mlw.loaders"
    assert loaders["fixture_format"]["plugin"] == "good"
    assert [g["name"] for g in out["generators"]] == ["fixture_blobs"]
    table = invoke("datasets")
    assert "emotions" in table.stdout and "fixture_blobs" in table.stdout


def test_learners_lists_and_describes(install_plugins) -> None:
    install_plugins(good="mlwtest_good")
    rows = one_json(invoke("learners", "--json").stdout)
    assert [r["name"] for r in rows] == ["fixture_prior"]
    one = one_json(invoke("learners", "fixture_prior", "--json").stdout)
    assert one["plugin"] == "good" and "predicts_scores" in one["tags"]
    # read from the numpydoc Parameters section of the class docstring
    assert one["params"] == [{"name": "threshold", "default": "fixed", "doc": "Strategy."},
                             {"name": "smoothing", "default": 0.0,
                              "doc": "Laplace smoothing."}]
    table = invoke("learners", "fixture_prior")
    assert "smoothing" in table.stdout and "Laplace smoothing" in table.stdout
    unknown = invoke("learners", "fixture_pior")
    assert unknown.exit_code == 2 and "did you mean 'fixture_prior'" in unknown.stderr


def test_version_lists_mlw_and_plugins(install_plugins) -> None:
    install_plugins(good="mlwtest_good")
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith("mlw-core 0.1.0") and "mlw-good 1.0.0" in result.stdout


def test_broken_plugins_are_listed_with_the_reason(install_plugins) -> None:
    install_plugins(good="mlwtest_good", bad="mlwtest_import_error",
                    zz_dup="mlwtest_duplicate")
    result = invoke("list-plugins", "--json")
    status = {p["name"]: (p["status"], p["error"]) for p in one_json(result.stdout)}
    assert status["good"] == ("ok", None)
    assert status["bad"][0] == "broken" and "ImportError" in status["bad"][1]
    conflicts = {p["name"]: p["conflicts"] for p in one_json(result.stdout)}
    assert status["zz_dup"] == ("ok", None)
    assert conflicts["zz_dup"] == ["learner 'fixture_prior' is registered by both plugin "
                                   "'good' (mlw-good) and plugin 'zz_dup' (mlw-zz_dup); "
                                   "choose one: 'good:fixture_prior' or 'zz_dup:fixture_prior'"]
    table = invoke("list-plugins")
    assert table.exit_code == 0
    assert "broken" in table.stdout and "not-installed-anywhere" in table.stdout


def test_json_has_no_nan(install_plugins, tmp_path) -> None:
    """A metric that is NaN (undefined) is written as null: the output stays valid JSON."""
    install_plugins(good="mlwtest_good")
    result = invoke("fit", "-l", "fixture_prior", "--json")
    assert "NaN" not in result.stdout
    json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"JSON constant {c}"))

