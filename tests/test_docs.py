"""Documentation checks in the manner of datasette's tests/test_docs.py: every hook,
CLI command and option, and public API name is documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main

import mlw
from mlw import hookspecs
from mlw_cli.main import app

DOCS = Path(__file__).resolve().parents[1] / "docs"
HOOKS = sorted(name for name in dir(hookspecs) if name.startswith("mlw_register_"))


def test_hookspecs_module_has_the_six_hooks() -> None:
    assert HOOKS == ["mlw_register_decoders", "mlw_register_generators",
                     "mlw_register_learners",
                     "mlw_register_loaders", "mlw_register_metrics",
                     "mlw_register_thresholds"]


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_has_a_docstring_and_a_section(hook) -> None:
    assert (getattr(hookspecs, hook).__doc__ or "").strip(), f"{hook} has no docstring"
    headings = re.findall(r"^#+ (\S+)\s*$", (DOCS / "writing-plugins.md").read_text(),
                          re.MULTILINE)
    assert hook in headings, f"{hook} has no section in docs/writing-plugins.md"


def _commands() -> dict:
    group = typer.main.get_command(app)
    assert hasattr(group, "commands")
    return dict(group.commands)


@pytest.mark.parametrize("command", sorted(_commands()))
def test_every_cli_command_and_option_is_documented(command) -> None:
    text = (DOCS / "guide" / "cli.md").read_text()
    headings = re.findall(r"^## `mlw ([a-z-]+)", text, re.MULTILINE)
    assert command in headings, f"mlw {command} has no section in docs/guide/cli.md"
    section = text.split(f"## `mlw {command}", 1)[1].split("\n## ", 1)[0]
    for param in _commands()[command].params:
        for opt in getattr(param, "opts", []):
            if opt.startswith("--"):
                assert f"`{opt}" in section, f"mlw {command} {opt} is not in docs/guide/cli.md"


def test_exit_codes_and_json_keys_are_documented() -> None:
    text = (DOCS / "guide" / "cli.md").read_text()
    for key in ("learner", "params", "dataset", "n_train", "n_test", "n_features",
                "n_labels", "metrics", "fit_seconds", "predict_seconds", "folds"):
        assert f'"{key}"' in text, key
    for code in ("0", "1", "2"):
        assert re.search(rf"^\| `?{code}`? \|", text, re.MULTILINE), f"exit code {code}"


def _reference_text() -> str:
    return "\n".join(p.read_text() for p in sorted((DOCS / "reference").glob("*.md")))


@pytest.mark.parametrize("name", sorted(mlw.__all__))
def test_every_public_name_is_in_the_api_reference(name) -> None:
    """Named in the API overview, or rendered from its docstring by a ``::: path.NAME``
    directive of a reference page."""
    text = _reference_text()
    assert (f"`{name}" in text or f"{name}(" in text
            or re.search(rf"^::: [\w.]+\.{name}$", text, re.MULTILINE)), (
        f"mlw.{name} is not documented in docs/reference/")


ROOT = DOCS.parent
PLUGINS = sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists())


@pytest.mark.parametrize("plugin", [p.name for p in PLUGINS])
def test_every_learner_of_the_repository_has_a_parameter_table_on_a_method_page(plugin) -> None:
    """A newcomer finds any learner's parameters in one click: each learner of the
    repository's plugins is rendered (docs/_hooks.py) on its plugin's method page."""
    pages = "\n".join(p.read_text() for p in (DOCS / "methods").glob("*.md"))
    names = [n for n, s in mlw.list_learners().items() if s.plugin == plugin]
    assert names, f"plugin {plugin} registers no learner"
    missing = [n for n in names if f"<!-- parameters: {n} -->" not in pages]
    assert not missing, f"no parameter table on a docs/methods page for {missing}"


@pytest.mark.parametrize("plugin", [p.name for p in PLUGINS])
def test_plugin_readmes_are_short_package_descriptions(plugin) -> None:
    text = (ROOT / "plugins" / plugin / "README.md").read_text()
    assert len(text.splitlines()) < 150, "the method page holds the details"
    assert f"docs/methods/{plugin}.md" in text, "the README links its method page"
