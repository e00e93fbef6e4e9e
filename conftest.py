"""Repository-wide pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

# Two cores, several processes: a multi-threaded BLAS makes small logistic-regression
# fits 10-100x slower under contention. The suite runs BLAS on one thread: the variables
# cover libraries loaded from now on, threadpool_limits those already loaded.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# The fixture plugins import scikit-learn when they are imported, which a loaded machine
# can stretch past the slow-import warning's few seconds: an extra stderr line in tests
# that compare stderr. The warning's own test sets a small threshold.
os.environ.setdefault("MLW_SLOW_PLUGIN_SECONDS", "600")

import numpy  # noqa: E402,F401
import pytest  # noqa: E402
import scipy.linalg  # noqa: E402,F401
from threadpoolctl import threadpool_limits  # noqa: E402

threadpool_limits(1)

ROOT = Path(__file__).resolve().parent
#: The real public datasets, read-only, beside the repository (see ../shared/datasets/).
SHARED_DATASETS = Path(os.environ.get("MLW_SHARED_DATASETS", ROOT.parent / "shared" / "datasets"))


@pytest.fixture(scope="session")
def datasets_dir() -> Path:
    """``../shared/datasets``; a missing folder is an error, never a silent skip."""
    if not (SHARED_DATASETS / "mulan").is_dir():
        pytest.fail(f"the shared datasets are missing: {SHARED_DATASETS} (set MLW_SHARED_DATASETS)")
    return SHARED_DATASETS


@pytest.fixture(scope="session")
def mulan_dir(datasets_dir: Path) -> Path:
    return datasets_dir / "mulan"


@pytest.fixture(scope="session")
def meka_dir(datasets_dir: Path) -> Path:
    return datasets_dir / "meka"


@pytest.fixture
def fresh_plugins():
    """A fresh process-wide plugin manager for the test, reset again afterwards."""
    from mlw.plugins import get_plugin_manager, reset_plugin_manager

    reset_plugin_manager()
    yield get_plugin_manager()
    reset_plugin_manager()
