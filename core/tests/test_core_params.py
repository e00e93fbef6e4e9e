"""``--param key=value``: typed by the default of the learner's parameter."""

from __future__ import annotations

import pytest

from mlw.params import parse_params, parse_value

KNOWN = {"k": 10, "alpha": 1.0, "top_label": True, "threshold": "pcut", "order": None,
         "layers": [1, 2], "shape": (1, 2), "options": {}, "base": object()}


@pytest.mark.parametrize("key, text, expected", [
    ("k", "25", 25), ("k", "0.5", 0.5), ("alpha", "1e-3", 1e-3), ("alpha", "3", 3.0),
    ("top_label", "false", False), ("top_label", "YES", True), ("top_label", "1", True),
    ("top_label", "Auto", "auto"), ("auto_top_label", "false", False),
    ("auto_top_label", "auto", "auto"), ("threshold", "cardinality", "cardinality"),
    ("threshold", "12", "12"),
    ("order", "[3, 1, 2]", [3, 1, 2]), ("order", "random", "random"), ("order", "7", 7),
    ("order", "true", True), ("layers", "[4, 5]", [4, 5]), ("shape", "[3, 4]", (3, 4)),
    ("options", '{"a": 1}', {"a": 1}), ("base", "decision_tree", "decision_tree"),
    ("k", "none", None), ("alpha", "null", None), ("threshold", "None", None),
])
def test_values_follow_the_type_of_the_default(key, text, expected) -> None:
    # a top_label whose default is "auto" (a joint learner's, cardinality's) is a bool too
    name, default = ("top_label", "auto") if key == "auto_top_label" else (key, KNOWN[key])
    value = parse_value(name, text, default)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("key, text, message", [
    ("k", "ten", "k=ten: expected an integer"),
    ("alpha", "x", "alpha=x: expected a number"),
    ("top_label", "maybe", "top_label=maybe: expected true, false or auto"),
    ("layers", "4,5", "layers=4,5: expected a JSON list such as [1, 2]"),
])
def test_bad_values_are_one_line_errors(key, text, message) -> None:
    with pytest.raises(ValueError) as exc:
        parse_value(key, text, KNOWN[key])
    assert str(exc.value) == message


def test_parse_params_names_the_unknown_key_with_suggestions() -> None:
    assert parse_params("learner 'x'", KNOWN, ["k=3", "threshold = fixed".replace(" ", "")]) == {
        "k": 3, "threshold": "fixed"}
    with pytest.raises(ValueError, match=r"learner 'x' has no parameter 'alpah'; did you mean "
                                         r"'alpha'\? \(parameters: k, alpha, "):
        parse_params("learner 'x'", KNOWN, ["alpah=2"])
    with pytest.raises(ValueError, match="learner 'x': expected key=value, got 'k'"):
        parse_params("learner 'x'", KNOWN, ["k"])
    with pytest.raises(ValueError, match="learner 'x': parameter k is given twice"):
        parse_params("learner 'x'", KNOWN, ["k=1", "k=2"])
    assert parse_params("learner 'x'", KNOWN, ["threshold=a=b"]) == {"threshold": "a=b"}


def test_nested_base_parameters_collect_into_the_params_dict() -> None:
    from mlw.params import parse_params

    known = {"base_estimator": None, "base_params": None, "k": 1}
    got = parse_params("learner 'x'", known, ["base__C=10", "base__penalty=l1",
                                              "base__fit_intercept=false", "k=3"])
    assert got == {"base_params": {"C": 10, "penalty": "l1", "fit_intercept": False}, "k": 3}
    with pytest.raises(ValueError, match="given twice"):
        parse_params("learner 'x'", known, ["base__C=1", "base__C=2"])
    with pytest.raises(ValueError, match="either whole or"):
        parse_params("learner 'x'", known, ['base_params={"C": 1}', "base__tol=2"])
    with pytest.raises(ValueError, match="has no parameter 'other__C'"):
        parse_params("learner 'x'", known, ["other__C=1"])
