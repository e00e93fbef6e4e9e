"""Fixture plugin implementing a misspelled hook (mlw_register_learner, no 's')."""

from __future__ import annotations

from typing import Any

import mlw


@mlw.hookimpl
def mlw_register_learner(register: Any) -> None:
    raise AssertionError("never called: the hook does not exist")
