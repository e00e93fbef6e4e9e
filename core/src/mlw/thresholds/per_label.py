"""Strategies with one threshold per label: ``pcut_per_label`` (MEKA's PCutL), ``scut``
(Yang 2001) and ``fixed_per_label`` (thresholds given by the user)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.thresholds._common import Scores, _check_training, _Strategy
from mlw.validation import check_param, check_scores, check_Y


def apply_label_thresholds(S: Scores, t: np.ndarray) -> Any:
    """Predict label j where its score is ``>= t[j]`` and positive (the shared decision
    rule, with a threshold per label); CSR in, CSR out."""
    if sp.issparse(S):
        mask = (S.data >= t[S.indices]) & (S.data > 0)
        rows = np.repeat(np.arange(S.shape[0]), np.diff(S.indptr))
        counts = np.bincount(rows[mask], minlength=S.shape[0])
        indptr = np.zeros(S.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return sp.csr_matrix((np.ones(int(mask.sum()), dtype=np.uint8), S.indices[mask],
                              indptr), shape=S.shape)
    return ((S >= t[None, :]) & (S > 0)).astype(np.uint8)


def _columns_sorted(S: Scores) -> list[np.ndarray]:
    """Each label's positive scores, sorted in decreasing order."""
    C = sp.csc_matrix(S) if sp.issparse(S) else None
    out = []
    for j in range(S.shape[1]):
        col = C.data[C.indptr[j]:C.indptr[j + 1]] if C is not None else S[:, j]
        out.append(-np.sort(-col[col > 0]))
    return out


class PCutPerLabel(_Strategy):
    """PCut per label (MEKA's PCutL): on the scored set, label j is predicted for the
    ``round(f_j * n)`` instances with the largest positive scores (with every score tied
    with the last of them), where ``f_j`` is the label's training frequency.

    Like :class:`~mlw.thresholds.PCut` the thresholds depend on the scored set, so
    ``predict`` computes them (:meth:`cuts`) and stores nothing.
    """

    needs_training_scores = False

    def fit(self, scores: Scores | None = None, Y: Any = None) -> PCutPerLabel:
        if Y is None:
            raise ValueError("pcut_per_label needs the training label matrix Y")
        Y = check_Y(Y)
        if Y.shape[0] == 0 or Y.shape[1] == 0:
            raise ValueError(f"pcut_per_label cannot learn frequencies from a label matrix "
                             f"of shape {Y.shape}")
        self.frequency_ = np.asarray(Y.sum(axis=0), dtype=np.float64).ravel() / Y.shape[0]
        return self

    def cuts(self, scores: Scores) -> np.ndarray:
        """Each label's threshold on this scored set (``inf``: nothing predicted)."""
        if not hasattr(self, "frequency_"):
            raise ValueError("PCutPerLabel is not fitted: call fit(scores, Y) first")
        S = check_scores(scores, n_labels=self.frequency_.size)
        k = np.floor(self.frequency_ * S.shape[0] + 0.5).astype(np.int64)  # half up
        out = np.full(S.shape[1], np.inf)
        for j, col in enumerate(_columns_sorted(S)):
            if k[j] > 0 and col.size:
                out[j] = col[min(k[j], col.size) - 1]
        return out

    def predict(self, scores: Scores) -> Any:
        S = check_scores(scores)
        return apply_label_thresholds(S, self.cuts(S))


def best_fbeta_cut(scores: np.ndarray, truth: np.ndarray, beta: float) -> tuple[float, float]:
    """The threshold (a score value) maximising F-beta of ``scores >= t`` against the
    0/1 ``truth`` of one label, and that F-beta. Exact: every distinct positive score is
    tried (predicting nothing, ``t = inf``, scores the convention's value: 1 when the
    label has no positive, else 0). The first (highest) of equally good cuts wins."""
    P = int(np.count_nonzero(truth))
    b2 = beta * beta
    best_t, best = float("inf"), (1.0 if P == 0 else 0.0)
    keep = scores > 0
    s, y = scores[keep], truth[keep] > 0
    if s.size == 0:
        return best_t, best
    order = np.argsort(-s, kind="mergesort")
    s, y = s[order], y[order]
    last = np.r_[np.flatnonzero(np.diff(s) != 0), s.size - 1]  # ends of tie groups
    tp = np.cumsum(y)[last].astype(np.float64)
    predicted = (last + 1).astype(np.float64)
    f = (1 + b2) * tp / (b2 * P + predicted)
    i = int(np.argmax(f))
    if f[i] > best:
        best_t, best = float(s[last[i]]), float(f[i])
    return best_t, best


class SCut(_Strategy):
    """SCut (Yang 2001): each label gets the threshold that maximises its own F-beta on
    the training scores (exact over every distinct score value).

    Parameters
    ----------
    beta : float, default 1.0
        The F-beta tuned (1: F1).

    Notes
    -----
    After ``fit``: ``thresholds_`` (one per label, ``inf`` for a label better never
    predicted) and ``scores_`` (each label's training F-beta there).
    """

    def __init__(self, beta: float = 1.0) -> None:
        self.beta = beta

    def fit(self, scores: Scores, Y: Any) -> SCut:
        if scores is None or Y is None:
            raise ValueError("scut needs training scores and labels")
        beta = check_param("beta", self.beta, float, low=0, low_open=True)
        S, Y = _check_training(scores, Y)
        Sd = S.toarray() if sp.issparse(S) else S
        Yd = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
        found = [best_fbeta_cut(Sd[:, j], Yd[:, j], beta) for j in range(S.shape[1])]
        self.thresholds_ = np.array([t for t, _ in found])
        self.scores_ = np.array([f for _, f in found])
        return self

    def predict(self, scores: Scores) -> Any:
        if not hasattr(self, "thresholds_"):
            raise ValueError("SCut is not fitted: call fit(scores, Y) first")
        S = check_scores(scores, n_labels=self.thresholds_.size)
        return apply_label_thresholds(S, self.thresholds_)


def _read_thresholds(source: Any) -> np.ndarray:
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"threshold file {path}: no such file")
        text = path.read_text(encoding="utf-8").replace(",", " ").split()
        try:
            values = np.array([float(v) for v in text])
        except ValueError:
            raise ValueError(f"threshold file {path}: expected numbers separated by "
                             f"commas, spaces or lines") from None
    else:
        values = np.asarray(source, dtype=np.float64).ravel()
    if values.size == 0 or not np.all((values >= 0) & (values <= 1)):
        raise ValueError("per-label thresholds must be numbers in [0, 1]")
    return values


class FixedPerLabel(_Strategy):
    """One given threshold per label: a sequence of numbers, or the path of a text file
    holding them (separated by commas, spaces or new lines), in label order.

    Parameters
    ----------
    thresholds : sequence of float, or path
    """

    needs_training_scores = False

    def __init__(self, thresholds: Any = None) -> None:
        self.thresholds = thresholds

    def fit(self, scores: Scores | None = None, Y: Any = None) -> FixedPerLabel:
        if self.thresholds is None:
            raise ValueError("fixed_per_label needs thresholds: a list of numbers or the "
                             "path of a file holding them (fixed_per_label:FILE)")
        self.thresholds_ = _read_thresholds(self.thresholds)
        if Y is not None and check_Y(Y).shape[1] != self.thresholds_.size:
            raise ValueError(f"{self.thresholds_.size} per-label thresholds for "
                             f"{check_Y(Y).shape[1]} labels")
        return self

    def predict(self, scores: Scores) -> Any:
        if not hasattr(self, "thresholds_"):
            raise ValueError("FixedPerLabel is not fitted: call fit(scores, Y) first")
        S = check_scores(scores, n_labels=self.thresholds_.size)
        return apply_label_thresholds(S, self.thresholds_)
