"""Fixture plugin that fails to import."""

raise ImportError("mlwtest_import_error needs the package 'not-installed-anywhere'")
