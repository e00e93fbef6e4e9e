"""The repository speaks to users, not about how it was made: no "session N" or
"issue N", no times of day, dates or load averages of a run, no run names, in the
documentation, the READMEs, the shipped sources (docstrings, comments, CLI output), the
benchmarks, the examples, or the names of tests. A figure names its data, the command
that reproduces it and the machine class instead; git history keeps the rest."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: (what, pattern): each a kind of process chatter
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (what, re.compile(pattern, re.IGNORECASE)) for what, pattern in (
        ("a session", r"\bsessions? \d+|\b(?:this|last|next|previous|earlier|later|"
                      r"same|one|that) session\b"),
        ("an issue number", r"\bissues? #?\d+|\bissue-\d+|\bissue_\d+"),
        ("a time of day", r"\b(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?\s*"
                          r"(?:(?:[-–]|to)\s*(?:[01]?\d|2[0-3]):[0-5]\d\s*)?UTC\b"
                          r"|\b(?:[01]?\d|2[0-3]):[0-5]\d\s*[-–]\s*(?:[01]?\d|2[0-3]):"
                          r"[0-5]\d\b"),
        ("a date of a run", r"\b20\d\d-[01]\d-[0-3]\d\b"),
        ("a load average", r"\bload(?: average)?(?: of| was| at)? (?:~|about )?\d"
                           r"|\bat (?:a )?load\b|\bloads? \d+(?:\.\d+)?\s*[-–]"),
        ("a run or helper name", r"\bresults_[a-z]+\d+\b|(?-i:\b(?:mctbn|ssvm)\d+\b)"
                                 r"|\bother helpers\b|\bhelpers' jobs\b"),
    ))

#: what is checked: tracked text files of these parts of the tree
SCOPES = ("*.md", "docs/**", "core/src/**", "cli/src/**", "plugins/*/src/**",
          "benchmarks/**", "examples/**", "mkdocs.yml", ".ci/run")
TEXT = (".md", ".py", ".toml", ".yml", ".txt", ".cfg", "")


def _tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", "--", *patterns], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.split()
    return sorted(ROOT / p for p in set(out) if Path(p).suffix in TEXT and (ROOT / p).is_file())


def _findings(path: Path) -> list[str]:
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for what, pattern in PATTERNS:
            match = pattern.search(line)
            if match:
                found.append(f"{path.relative_to(ROOT)}:{number}: {what}: {match.group(0)!r}")
    return found


def test_the_scanned_tree_is_not_empty() -> None:
    files = _tracked(*SCOPES)
    assert any(p.name == "README.md" for p in files) and any(p.suffix == ".py" for p in files)


@pytest.mark.parametrize("scope", SCOPES)
def test_no_process_chatter(scope) -> None:
    findings = [f for path in _tracked(scope) for f in _findings(path)]
    assert not findings, "process chatter:\n" + "\n".join(findings)


def test_no_process_chatter_in_the_tests() -> None:
    """Test docstrings and comments too (a date may be test data there)."""
    patterns = [(what, rx) for what, rx in PATTERNS if what != "a date of a run"]
    findings = [
        f"{path.relative_to(ROOT)}:{number}: {what}: {m.group(0)!r}"
        for path in _tracked("tests/**", "core/tests/**", "plugins/*/tests/**",
                             "examples/*/tests/**")
        if path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for what, rx in patterns if (m := rx.search(line))]
    assert not findings, "process chatter:\n" + "\n".join(findings)


def test_no_test_is_named_after_an_issue_or_a_session() -> None:
    names = re.compile(r"^\s*def (test_\w*(?:issue|session|regression)_?\d\w*)",
                       re.MULTILINE | re.IGNORECASE)
    found = [f"{path.relative_to(ROOT)}: {m.group(1)}"
             for path in _tracked("*test_*.py") for m in names.finditer(path.read_text())]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("text, what", [
    ("measured in session 11", "a session"), ("issue 19's fix", "an issue number"),
    ("2026-11-23 04:52-05:16 UTC", "a time of day"), ("at 06:05 UTC", "a time of day"),
    ("on 2026-11-23", "a date of a run"), ("load 0.8 on a shared machine", "a load average"),
    ("load average 3-22", "a load average"), ("results_mctbn7/", "a run or helper name"),
])
def test_each_pattern_catches_its_kind(text, what) -> None:
    assert dict(PATTERNS)[what].search(text), (what, text)


@pytest.mark.parametrize("text", [
    "a 2-core x86_64 VM", "k in 1..29 step 2", "Python 3.10", "ratio 1:2",
    "`mlw bench --jobs 2`", "a first Python session", "loaded 2 files", "LCIF2",
])
def test_ordinary_text_passes(text) -> None:
    assert not any(p.search(text) for _, p in PATTERNS), text
