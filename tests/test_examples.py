"""The runnable scripts in examples/ run and give sensible numbers."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quickstart_runs(capsys) -> None:
    scores = _load("quickstart").main("br")
    assert set(scores) == {"hamming_loss", "f1_micro", "f1_example", "average_precision"}
    assert 0.5 < scores["f1_micro"] < 0.75  # BR on emotions: measured 0.604
    out = capsys.readouterr().out
    assert "5-fold CV (iterative stratification)" in out and "saved and reloaded br" in out


def test_custom_learner_is_beaten_by_br() -> None:
    results = _load("custom_learner").main()
    assert results["prior"]["f1_micro"] < results["br"]["f1_micro"]
    assert results["prior"]["hamming_loss"] > results["br"]["hamming_loss"]


def test_every_example_script_is_run_by_a_test() -> None:
    """A new script in examples/ needs its test here, so that it runs in CI."""
    tested = {"quickstart", "custom_learner"}
    assert {p.stem for p in EXAMPLES.glob("*.py")} == tested
