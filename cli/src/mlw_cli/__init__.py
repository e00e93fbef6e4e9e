"""mlw-cli: the ``mlw`` command (``mlw_cli.main.app``)."""

__version__ = "0.1.0"
