"""`mlw report` without the ``report`` extra: one clear line naming what to install,
exit 2, and no output folder created (an empty folder used to be left behind)."""

from __future__ import annotations

import sys

from typer.testing import CliRunner

from mlw_cli.main import app


def test_report_without_matplotlib_names_the_extra_and_creates_nothing(
        tmp_path, monkeypatch) -> None:
    results = tmp_path / "r.parquet"
    results.write_bytes(b"not read: the extra is checked first")
    out = tmp_path / "report"
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    result = CliRunner().invoke(app, ["report", str(results), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "pip install 'mlw-core[report]'" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.parquet"]
