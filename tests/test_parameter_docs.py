"""One source per fact: every parameter of every registered learner and generator is
documented in its docstring (numpydoc ``Parameters``), which ``mlw learners NAME``, the
command's help and the documentation site read."""

from __future__ import annotations

import pytest

import mlw
from mlw.docstrings import parameter_docs, parse_parameters


@pytest.mark.parametrize("name", sorted(mlw.list_learners()))
def test_every_learner_parameter_is_documented_in_its_docstring(name) -> None:
    spec = mlw.list_learners()[name]
    undocumented = [p.name for p in spec.params if not p.doc.strip()]
    assert not undocumented, (f"learner {name!r} ({spec.learner_class().__qualname__}): "
                              f"no docstring entry for {undocumented}")


@pytest.mark.parametrize("name", sorted(mlw.list_generators()))
def test_every_generator_parameter_is_documented_in_its_docstring(name) -> None:
    spec = mlw.list_generators()[name]
    undocumented = [p.name for p in spec.params if not p.doc.strip()]
    assert not undocumented, f"generator {name!r}: no docstring entry for {undocumented}"


def test_a_subclass_inherits_and_overrides_its_bases_parameter_docs() -> None:
    class Base:
        """Base.

        Parameters
        ----------
        k : int
            Neighbours.
        lam : float
            Old text.
        """

    class Child(Base):
        """Child.

        Parameters
        ----------
        lam : float
            New text,
            on two lines.
        """

    assert parameter_docs(Child) == {"k": "Neighbours.", "lam": "New text, on two lines."}


def test_parser_reads_grouped_names_and_stops_at_the_next_section() -> None:
    doc = """Summary.

    Parameters
    ----------
    a, b : int
        Sizes.
    flag
        A bare name.

    Returns
    -------
    out : int
        Not a parameter.
    """
    assert parse_parameters(doc) == {"a": "Sizes.", "b": "Sizes.", "flag": "A bare name."}


def test_the_cli_shows_the_docstring_text() -> None:
    from typer.testing import CliRunner

    from mlw_cli.main import app

    result = CliRunner().invoke(app, ["learners", "lcif", "--json"])
    assert result.exit_code == 0, result.output
    import json

    params = {p["name"]: p["doc"] for p in json.loads(result.stdout)["params"]}
    from mlw_lcif.model import LCIF

    assert params == {k: v for k, v in parameter_docs(LCIF).items() if k in params}
    assert params["lam"].startswith("Weight of the instance part")
