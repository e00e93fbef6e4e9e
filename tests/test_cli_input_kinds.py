"""Inputs that are not what they seem: a device, a FIFO, a folder, a symbolic link loop,
a file with no rows, nested Parquet columns, a CSV header too wide to parse. Each gets
exit 2 and one line on stderr saying what the thing is (or, for nested columns, a
warning and the column dropped), never "no such file", a traceback, a hang or a silent
wrong answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mlw_cli.main import app


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner(env=env).invoke(app, list(args), catch_exceptions=False)


def one_line_error(result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, \
        result.stderr
    return result.stderr[len("error: "):-1]


def _special(tmp_path: Path, kind: str) -> Path:
    p = tmp_path / kind
    if kind == "zero":
        return Path("/dev/zero")
    if kind == "link_to_zero":
        p.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "link_loop":
        p.symlink_to(tmp_path / "link_loop2")
        (tmp_path / "link_loop2").symlink_to(p)
    elif kind == "link_to_null":
        p.symlink_to("/dev/null")
    elif kind == "folder":
        p.mkdir()
    elif kind == "dangling":
        p.symlink_to(tmp_path / "gone.arff")
    return p


SPECIAL = {
    "zero": "is a character device; give a data file",
    "link_to_zero": "is a character device (a symbolic link to /dev/zero)",
    "fifo": "is a named pipe (FIFO); give a data file",
    "link_loop": "is a symbolic link loop; give a data file",
    "link_to_null": "is a character device (a symbolic link to /dev/null)",
    "folder": "is a folder; give a data file",
    "dangling": "is a symbolic link to {tmp}/gone.arff, which does not exist",
}


@pytest.mark.parametrize("kind", sorted(SPECIAL))
@pytest.mark.parametrize("option", ["--data", "--test"])
def test_a_path_that_is_no_regular_file_says_what_it_is(tmp_path, kind, option) -> None:
    """These were "no such file or dataset" (each exists); reading a device or a FIFO
    must not even be tried (it would never end)."""
    path = _special(tmp_path, kind)
    data = ["--data", str(path)] if option == "--data" else ["--test", str(path)]
    result = invoke("fit", "-l", "br", *data, "--n-labels", "-1", "-m", "hamming_loss")
    message = one_line_error(result)
    assert message == f"{path} {SPECIAL[kind].format(tmp=tmp_path)}" or \
        message.startswith(f"{path} {SPECIAL[kind].format(tmp=tmp_path)}"), message


def test_a_folder_given_as_model_file_is_named_a_folder(tmp_path) -> None:
    result = invoke("predict", "--model", ".", "--data", "emotions")
    assert one_line_error(result) == "model file . is a folder, not a model file"
    fifo = tmp_path / "model.mlw"
    os.mkfifo(fifo)
    result = invoke("predict", "--model", str(fifo), "--data", "emotions")
    assert one_line_error(result) == f"model file {fifo} is a named pipe (FIFO), not a " \
                                     f"model file"


def test_an_arff_file_without_rows_says_so(tmp_path) -> None:
    """It was "n_splits=3 is larger than the number of instances (0)"."""
    p = tmp_path / "empty.arff"
    p.write_text("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n")
    result = invoke("fit", "-l", "br", "--data", str(p), "--n-labels", "-1", "--cv", "3")
    assert one_line_error(result) == "empty.arff: has no data rows (its data section is " \
                                     "empty)"
    csv = tmp_path / "empty.csv"
    csv.write_text("a,y\n")
    result = invoke("fit", "-l", "br", "--data", str(csv), "--n-labels", "-1")
    assert one_line_error(result) == "empty.csv: has no data rows (its data section is " \
                                     "empty)"


def _nested_parquet(path: Path, text_first: bool) -> dict[str, np.ndarray]:
    import polars as pl

    rng = np.random.default_rng(0)
    n = 40
    columns: dict[str, object] = {}
    if text_first:
        columns["colour"] = ["red", "blue"] * (n // 2)
    columns["tags"] = [["a", "b"][: i % 3] for i in range(n)]
    columns["point"] = [{"x": float(i), "y": -float(i)} for i in range(n)]
    columns["size"] = rng.random(n)
    for j in range(3):
        columns[f"y{j}"] = (rng.random(n) < 0.5).astype(np.int64)
    pl.DataFrame(columns).write_parquet(path)
    return {"size": np.asarray(columns["size"])}


@pytest.mark.parametrize("text_first", [False, True])
def test_nested_parquet_columns_are_dropped_with_a_warning_never_read_as_another(
        tmp_path, text_first) -> None:
    """A list column first was ``internal error: UnboundLocalError``; after a text
    column, the nested column was silently encoded with the text column's values."""
    import mlw

    p = tmp_path / "d.parquet"
    values = _nested_parquet(p, text_first)
    with pytest.warns(mlw.io.DatasetWarning, match=r"dropped column 'tags': unsupported "
                                                   r"nested column type List\(String\)"):
        ds = mlw.load_dataset(p, n_labels=-3)
    expected = (["colour"] if text_first else []) + ["size"]
    assert ds.feature_names == expected
    np.testing.assert_array_equal(ds.X[:, expected.index("size")], values["size"])
    encodings = {e["name"]: e["encoding"] for e in ds.provenance["schema"]}
    assert encodings["tags"] == encodings["point"] == "dropped"
    result = invoke("fit", "-l", "br", "--data", str(p), "--n-labels", "-3", "--cv", "3",
                    "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["n_features"] == len(expected)
    assert "dropped column 'point': unsupported nested column type Struct(" in result.stderr


def test_a_csv_header_too_wide_to_parse_is_refused_before_polars_sees_it(tmp_path) -> None:
    """Polars aborts the process when an allocation fails (a 12-million-column header
    under a 4 GB limit): exit 134 and nothing to read. Its per-column cost is checked
    against max_memory first."""
    p = tmp_path / "wide.csv"
    n = 3000
    p.write_text(",".join(f"c{i}" for i in range(n)) + "\n" + ",".join("1" * n) + "\n")
    result = invoke("fit", "-l", "br", "--data", str(p), "--n-labels", "-1",
                    env={"MLW_MAX_MEMORY": "2M"})
    message = one_line_error(result)
    assert message.startswith("wide.csv: parsing a header of 3,000 columns would need "
                              "about 2.93 MiB of memory (limit max_memory=2 MiB"), message


def test_what_native_code_writes_before_aborting_reaches_stderr(tmp_path) -> None:
    """fd 2 was a temporary file while polars ran: a library's last words before it
    aborted the process ("memory allocation of N bytes failed") died with it."""
    code = ("import os, sys\n"
            "from mlw.io.tabular import rust_panic_text_dropped\n"
            "with rust_panic_text_dropped():\n"
            "    os.write(2, b'memory allocation of 768000000 bytes failed\\n')\n"
            "    os.abort()\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == -6
    assert "memory allocation of 768000000 bytes failed" in result.stderr


@pytest.mark.parametrize(("name", "command"), [
    ("m.mlw", ("fit", "-l", "br", "-m", "hamming_loss", "--save", "{p}")),
    ("r.csv", ("fit", "-l", "br", "-m", "hamming_loss", "--out", "{p}")),
    ("r.parquet", ("bench", "--learners", "br", "--datasets", "emotions", "--cv", "2",
                   "--out", "{p}")),
])
def test_an_output_that_is_a_fifo_is_refused_and_left_alone(tmp_path, name,
                                                            command) -> None:
    """The atomic rename replaced it with a regular file (as root, ``--out /dev/null``
    would have replaced the device node)."""
    import stat

    p = tmp_path / name
    os.mkfifo(p)
    result = invoke(*[a.format(p=p) for a in command])
    assert result.exit_code == 2, result.stderr
    assert "is a named pipe (FIFO)" in result.stderr and result.stderr.count("\n") == 1
    assert stat.S_ISFIFO(os.lstat(p).st_mode)
    assert sorted(x.name for x in tmp_path.iterdir()) == [name]


def test_atomic_write_never_renames_over_a_device_or_fifo(tmp_path) -> None:
    import stat

    from mlw.files import atomic_write

    p = tmp_path / "fifo"
    os.mkfifo(p)
    with pytest.raises(ValueError, match="is a named pipe"), atomic_write(p, "w") as fh:
        fh.write("x")
    assert stat.S_ISFIFO(os.lstat(p).st_mode)
    with pytest.raises(ValueError, match="is a character device"), \
            atomic_write("/dev/null", "w") as fh:
        fh.write("x")


@pytest.mark.parametrize("command", [("bench", "--config", "{p}", "--out", "{o}"),
                                     ("report", "{p}", "--out", "{o}")])
def test_a_fifo_given_as_config_or_results_is_named_never_read(tmp_path, command) -> None:
    """``mlw report FIFO`` waited for ever for a writer."""
    p = tmp_path / "in"
    os.mkfifo(p)
    result = invoke(*[a.format(p=p, o=tmp_path / "o.parquet") for a in command])
    assert one_line_error(result).startswith(f"{'config ' if command[0] == 'bench' else ''}"
                                             f"{p} is a named pipe (FIFO)")
