"""Fixture plugin used only while blocked by MLW_DISABLE_PLUGINS: importing it fails,
so a test that sees it as 'disabled' (not 'broken') proves it was never imported."""

raise RuntimeError("mlwtest_blocked was imported although MLW_DISABLE_PLUGINS blocks it")
