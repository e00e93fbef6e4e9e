"""Fixture plugin that calls sys.exit when imported (it must not exit mlw)."""

import sys

sys.exit("mlwtest_exit_at_import refuses to load")
