"""``mlw.warmup``: compile the kernels ahead of the first real run, piece by
piece, reporting progress and errors without stopping."""

from __future__ import annotations

import pytest

import mlw
from mlw.warmup import WarmupResult, warmup, warmup_steps


def test_warmup_runs_every_piece_and_reports_progress() -> None:
    seen: list[tuple[str, bool]] = []
    results = warmup(["br"], progress=lambda name, r: seen.append((name, r is None)))
    assert [r.name for r in results] == ["loaders", "metrics", "thresholds", "br"]
    assert all(r.error is None for r in results), [r.error for r in results]
    assert all(r.cpu_seconds >= 0 and r.compile_seconds >= 0 for r in results)
    assert seen == [(n, before) for n in ("loaders", "metrics", "thresholds", "br")
                    for before in (True, False)]
    assert set(results[0].as_dict()) == {"name", "seconds", "cpu_seconds",
                                         "compile_seconds", "error"}


def test_unknown_learner_fails_before_anything_runs() -> None:
    with pytest.raises(mlw.UnknownNameError):
        warmup_steps(["no_such_learner"])


def test_a_failing_piece_is_reported_and_the_others_go_on(monkeypatch) -> None:
    import mlw.warmup as module

    def broken(*args: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(module, "_loaders", broken)
    results = warmup(["br"])
    assert results[0].error == "RuntimeError: boom"
    assert isinstance(results[-1], WarmupResult) and results[-1].error is None
