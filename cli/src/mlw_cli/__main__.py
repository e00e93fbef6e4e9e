"""``python -m mlw_cli`` runs the ``mlw`` command."""

from mlw_cli.main import run

run()
