"""Fixture plugin: learners whose process dies while fitting, as a crash in a plugin's
native code does: ``dies_segv`` sends itself SIGSEGV, ``dies_exit`` calls
``os._exit(7)``; ``dies_predict`` dies (SIGSEGV) in ``predict_proba``, after a
successful fit. Installed for child processes too by the ``dying_plugin`` fixture
(``tests/plugins/installed`` holds its distribution's metadata)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any

import numpy as np

import mlw


def _die(how: str) -> None:
    if how == "exit":
        os._exit(7)
    os.kill(os.getpid(), signal.SIGSEGV)


class DiesInFit(mlw.MultiLabelLearner):
    """Dies in fit (``how``: ``segv`` or ``exit``)."""

    def __init__(self, how: str = "segv", threshold: str = "fixed") -> None:
        self.how = how
        self.threshold = threshold

    def _fit(self, X: Any, Y: Any) -> None:
        _die(self.how)

    def _predict_proba(self, X: Any) -> np.ndarray:  # pragma: no cover - never fitted
        return np.zeros((X.shape[0], 1))


class DiesInPredict(DiesInFit):
    def _fit(self, X: Any, Y: Any) -> None:
        self.L_ = Y.shape[1]

    def _predict_proba(self, X: Any) -> np.ndarray:
        _die(self.how)
        return np.zeros((X.shape[0], self.L_))  # pragma: no cover


class DiesWithExit(DiesInFit):
    def __init__(self, how: str = "exit", threshold: str = "fixed") -> None:
        super().__init__(how=how, threshold=threshold)


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec("dies_segv", DiesInFit, "fixture: SIGSEGV in fit"))
    register(mlw.LearnerSpec("dies_exit", DiesWithExit, "fixture: os._exit(7) in fit"))
    register(mlw.LearnerSpec("dies_predict", DiesInPredict,
                             "fixture: SIGSEGV in predict_proba"))
