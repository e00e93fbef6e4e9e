"""The learner-output contract check (mlw._guard.check_outputs) on every dtype a
learner may return: the cheap min/max paths must reject exactly what the entry-wise
check rejected."""
import numpy as np
import pytest
import scipy.sparse as sp

from mlw._guard import check_outputs
from mlw.registry import PluginError


class _Model:
    pass


def _check(**kw):
    check_outputs(_Model(), 3, 2, **kw)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int64, np.uint8, np.float64,
                                   np.float32])
def test_zero_one_predictions_pass(dtype):
    Y = np.array([[0, 1], [1, 1], [0, 0]], dtype=dtype)
    _check(Y_pred=Y)
    _check(Y_pred=sp.csr_matrix(Y))


@pytest.mark.parametrize("Y", [np.array([[0, 2], [1, 1], [0, 0]], dtype=np.int8),
                               np.array([[0, -1], [1, 1], [0, 0]], dtype=np.int64),
                               np.array([[0, 0.5], [1, 1], [0, 0]]),
                               np.array([[0, np.nan], [1, 1], [0, 0]])])
def test_other_predictions_fail(Y):
    with pytest.raises(PluginError, match="values other than 0 and 1"):
        _check(Y_pred=Y)


@pytest.mark.parametrize("bad, message", [(np.nan, "NaN scores"),
                                          (1.5, r"outside \[0, 1\] \(0..1.5\)"),
                                          (-np.inf, "outside"), (np.inf, "outside")])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_bad_scores_fail(bad, message, dtype):
    S = np.array([[0, 0.2], [1, 0.7], [0.1, 0.4]], dtype=dtype)
    _check(scores=S)
    S[1, 0] = bad
    with pytest.raises(PluginError, match=message):
        _check(scores=S)


def test_empty_outputs_pass():
    check_outputs(_Model(), 0, 2, Y_pred=np.zeros((0, 2), dtype=np.int8),
                  scores=np.zeros((0, 2)))
