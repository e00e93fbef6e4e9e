"""``python -m mlw_cli`` runs the ``mlw`` command."""

from mlw_cli.main import app

app(prog_name="mlw")
