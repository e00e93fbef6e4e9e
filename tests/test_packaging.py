"""The distributions install from wheels, alone, the way a user installs a plugin from
the package index: a plugin's requirement on the core must resolve to *our* core
(``mlw-core``; the name ``mlw`` on the index belongs to another project)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: every distribution of the workspace: the core, the command, each method plugin
OURS = [ROOT / "core", ROOT / "cli",
        *sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml"))]


def _run(*args: str | Path, **kwargs) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    assert out.returncode == 0, f"{' '.join(map(str, args))} failed:\n{out.stdout}\n{out.stderr}"
    return out


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory) -> Path:
    """Wheels of every distribution of the workspace, built from this checkout, plus the
    third-party wheels the plugin installed below needs (from pip's cache or the
    index), in one folder."""
    house = tmp_path_factory.mktemp("wheelhouse")
    for path in OURS:
        _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
             "-q", "-w", house, path)
    built = sorted(p.name.split("-")[0] for p in house.glob("*.whl"))
    expected = sorted(["mlw_core", "mlw_cli"]
                      + [f"mlw_{p.name}" for p in OURS[2:]])
    assert built == expected, built
    # the third-party requirements, so that the install below needs no index
    _run(sys.executable, "-m", "pip", "download", "-q", "--find-links", house, "-d", house,
         "mlw-lcif", "mlw-cli", timeout=900)
    return house


def test_a_plugin_alone_installs_from_local_wheels_and_finds_our_core(wheelhouse,
                                                                      tmp_path) -> None:
    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / "python"
    _run(python, "-m", "pip", "install", "-q", "--no-index", "--find-links", wheelhouse,
         "mlw-lcif", "mlw-cli", timeout=900)
    dists = json.loads(_run(python, "-m", "pip", "list", "--format", "json").stdout)
    names = {d["name"].lower() for d in dists}
    assert {"mlw-core", "mlw-cli", "mlw-lcif"} <= names
    assert "mlw" not in names  # the unrelated project of that name
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MLW_DISABLE_PLUGINS")}
    listing = json.loads(_run(bindir / "mlw", "list-plugins", "--json", env=clean,
                              cwd=tmp_path).stdout)
    by_name = {p["name"]: p for p in listing}
    assert by_name["lcif"]["status"] == "ok", by_name["lcif"]
    assert by_name["lcif"]["distribution"] == "mlw-lcif"
    assert by_name["mlw.loaders"]["distribution"] == "mlw-core"
    assert "baselines" not in by_name  # only what was installed
