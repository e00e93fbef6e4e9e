"""Experiment configs: parsing, the checks made before any fit, overrides, cells."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import mlw
from mlw.experiments import ConfigError, enumerate_cells, load_config, parse_config

CONFIG = """
[experiment]
name = "demo"
seed = 3
metrics = ["f1_micro", "hamming_loss"]
threshold = "pcut"
data_path = ["{mulan}"]
folds = 5
datasets = ["flags", {{name = "yeast", evaluation = "holdout"}}, "emotions"]

[learners.br_tree]
learner = "br"
params = {{base_estimator = "decision_tree"}}
label = "BR (tree)"

[learners.cc]
threshold = "fixed"
grid = {{base_estimator = ["logistic_regression", "decision_tree"]}}
select = {{metric = "f1_micro", method = "validation", fraction = 0.25}}
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_a_config_is_parsed_checked_and_enumerated(tmp_path, mulan_dir) -> None:
    exp = load_config(_write(tmp_path, CONFIG.format(mulan=mulan_dir)))
    assert exp.name == "demo" and exp.seed == 3
    assert [e.key for e in exp.learners] == ["br_tree", "cc"]
    assert exp.learner("br_tree").threshold == "pcut"       # the experiment's default
    assert exp.learner("cc").threshold == "fixed"           # its own
    assert exp.learner("br_tree").display == "BR (tree)"
    assert exp.learner("cc").select.fraction == 0.25
    exp.check()
    cells = enumerate_cells(exp)
    # flags: 5 folds, yeast: its train/test split, emotions: 5 folds; two learners each
    assert len(cells) == 2 * (5 + 1 + 5)
    assert [c.dataset.name for c in cells[:10]] == ["flags"] * 10  # datasets outermost
    yeast = [c for c in cells if c.dataset.name == "yeast"]
    assert {c.evaluation for c in yeast} == {"holdout"} and {c.n_folds for c in yeast} == {1}
    assert yeast[0].source == str(mulan_dir / "yeast")
    assert len({c.cell_id for c in cells}) == len(cells)
    again = enumerate_cells(load_config(_write(tmp_path, CONFIG.format(mulan=mulan_dir))))
    assert [c.cell_id for c in again] == [c.cell_id for c in cells]  # ids are stable


def test_none_in_params_and_grids_is_none(tmp_path, mulan_dir) -> None:
    """TOML has no null: "none" sets a parameter to None, as --param NAME=none does (the
    paper configs give CC and XDCC their own decisions with threshold = "none")."""
    text = CONFIG.format(mulan=mulan_dir).replace(
        'params = {{base_estimator = "decision_tree"}}'.replace("{{", "{").replace("}}", "}"),
        'params = {base_estimator = "decision_tree", threshold = "none"}')
    text = text.replace('grid = {base_estimator = ["logistic_regression", "decision_tree"]}',
                        'grid = {threshold = ["null", "pcut"]}')
    exp = load_config(_write(tmp_path, text))
    assert exp.learner("br_tree").params == {"base_estimator": "decision_tree",
                                             "threshold": None}
    assert exp.learner("cc").grid == {"threshold": [None, "pcut"]}


def test_overrides_select_and_reduce(tmp_path, mulan_dir) -> None:
    exp = load_config(_write(tmp_path, CONFIG.format(mulan=mulan_dir)))
    small = exp.with_overrides(learners=["cc"], datasets=["flags"], folds=3, only_folds=[0])
    cells = enumerate_cells(small)
    assert [(c.learner.key, c.dataset.name, c.fold, c.n_folds) for c in cells] == [
        ("cc", "flags", 0, 3)]
    # a learner or dataset the config lacks is added
    more = exp.with_overrides(learners=["br:threshold=cardinality"], datasets=["emotions"])
    assert more.learners[0].learner == "br" and more.learners[0].threshold == "cardinality"
    # changing a parameter changes the cell ids (so a rerun does not take old results)
    changed = parse_config({"experiment": {"datasets": ["emotions"]},
                            "learners": {"br": {"params": {"base_estimator": "logistic"}}}})
    plain = parse_config({"experiment": {"datasets": ["emotions"]}, "learners": {"br": {}}})
    assert enumerate_cells(changed)[0].cell_id != enumerate_cells(plain)[0].cell_id


@pytest.mark.parametrize(("text", "message"), [
    ("[experiment]\ndatasets=['emotions']\nfoo=1\n[learners.br]\n", "unknown key 'foo'"),
    ("[experiment]\ndatasets=[]\n[learners.br]\n", "non-empty list of datasets"),
    ("[experiment]\ndatasets=['emotions']\n", "at least one"),
    ("[experiment]\ndatasets=['emotions']\n[learners.br]\ngrid={threshold=['pcut']}\n",
     "a grid needs select"),
    ("[experiment]\ndatasets=['emotions']\nfolds=1\n[learners.br]\n", "folds"),
    ("[experiment]\ndatasets=['emotions','emotions']\n[learners.br]\n", "listed twice"),
    ("[experiment]\ndatasets=['emotions']\ncontrol='x'\n[learners.br]\n", "not a learner"),
    ("[experiment\n", "not valid TOML"),
])
def test_malformed_configs_name_file_and_key(tmp_path, text, message) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(("learners", "message"), [
    ({"br": {"params": {"nope": 1}}}, "params names 'nope'"),
    ({"nosuch": {}}, "nosuch"),
    ({"br": {"threshold": "nosuch"}}, "nosuch"),
    ({"template_centroid": {"threshold": "pcut"}}, None),
])
def test_checks_before_any_fit(learners, message) -> None:
    exp = parse_config({"experiment": {"datasets": ["emotions"], "metrics": ["f1_micro"]},
                        "learners": learners})
    if message is None:
        exp.check()
        return
    with pytest.raises((ValueError, mlw.UnknownNameError), match=message):
        exp.check()


def test_missing_dataset_and_metric_needs_fail_before_fitting() -> None:
    exp = parse_config({"experiment": {"datasets": ["no_such_set"]}, "learners": {"br": {}}})
    with pytest.raises(FileNotFoundError, match="no_such_set"):
        exp.check()
    exp = parse_config({"experiment": {"datasets": ["emotions"], "metrics": ["cll_loss"]},
                        "learners": {"template_centroid": {}}})
    with pytest.raises(ValueError, match="cll_loss"):
        exp.check()


def test_mlw_data_path_comes_first(tmp_path, mulan_dir, monkeypatch) -> None:
    monkeypatch.setenv("MLW_DATA_PATH", str(mulan_dir))
    exp = parse_config({"experiment": {"datasets": ["flags"], "data_path": ["/nowhere"]},
                        "learners": {"br": {}}})
    assert enumerate_cells(exp)[0].source == str(mulan_dir / "flags")


def test_ordered_search_walks_from_the_middle_towards_the_better_side() -> None:
    """select.search = "ordered": start at the middle point, climb while strictly better,
    downwards only when the first step up did not improve; NaN never improves."""
    from types import SimpleNamespace

    from mlw.selection import _ordered_search

    points = [{"C": c} for c in (0.01, 0.1, 1.0, 10.0, 100.0)]
    entry = SimpleNamespace(key="br", select=SimpleNamespace(metric="m"))

    def walk(scores, higher=True):
        visited = []

        def score_of(point):
            visited.append(point["C"])
            return scores[point["C"]]
        return _ordered_search(entry, points, score_of, higher)["C"], visited

    up = {0.01: 0, 0.1: 1, 1.0: 2, 10.0: 3, 100.0: 2.5}
    assert walk(up) == (10.0, [1.0, 10.0, 100.0])
    down = {0.01: 3, 0.1: 4, 1.0: 2, 10.0: 1, 100.0: 9}  # 100 is never reached
    assert walk(down) == (0.1, [1.0, 10.0, 0.1, 0.01])
    assert walk(down, higher=False) == (10.0, [1.0, 10.0, 100.0])
    flat = dict.fromkeys(up, 1.0)  # ties do not move
    assert walk(flat) == (1.0, [1.0, 10.0, 0.1])
    assert walk({**up, 10.0: float("nan")}) == (1.0, [1.0, 10.0, 0.1])
    with pytest.raises(ValueError, match="NaN"):
        walk(dict.fromkeys(up, float("nan")))
    def config(search):
        return {"experiment": {"datasets": ["emotions"]},
                "learners": {"br": {"grid": {"threshold": ["pcut"], "k": [1]},
                                    "select": {"metric": "f1_micro", "search": search}}}}
    with pytest.raises(ConfigError, match="one parameter"):
        parse_config(config("ordered"), path="x.toml")
    with pytest.raises(ConfigError, match="search"):
        parse_config(config("random"), path="x.toml")
