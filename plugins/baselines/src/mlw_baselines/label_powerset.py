"""Label powerset: every distinct label set of the training data is one class of a
multi-class classifier."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from mlw import MultiLabelLearner
from mlw_baselines._base_estimator import (
    LOG_PROBA_FLOOR,
    PROBA_FLOOR,
    check_weighted_base,
    fit_multiclass,
    proba_classes,
    resolve_base_estimator,
)
from mlw_baselines._common import dense_labels, single_blas_thread, validate_joint_query


class LabelPowerset(MultiLabelLearner):
    """Label powerset (LP): a multi-class classifier over the label sets seen in
    training.

    ``predict`` is the label set of the most probable class (LP's joint decision: it
    can only predict label sets seen in training). ``predict_proba`` gives the marginals
    of the predicted class distribution, ``P(y_j = 1 | x) = sum_k P(k | x) [j in S_k]``.
    ``log_proba_of(X, Y)`` is ``log P(class of Y | x)``, floored at ``log(1e-12)``
    (``PROBA_FLOOR``); a label set never seen in training has no class and gets the
    floor itself, ``log(1e-12) ≈ -27.63``.

    The base classifier must handle several classes (logistic regression is
    multinomial; a margin classifier without ``predict_proba`` is scored by the softmax
    of its ``decision_function``). With a single distinct label set in training, LP
    predicts it with probability 1.

    Parameters
    ----------
    base_estimator : None, str or scikit-learn classifier
        ``None`` is MaxAbsScaler + logistic regression (lbfgs, C=1, max_iter=1000); strings are the
        shortcuts of :data:`mlw_baselines.SHORTCUTS`; an object is cloned.
    base_params : dict or None
        Parameters of the base classifier, set on it with ``set_params``
        (``{"C": 10}``; on a pipeline shortcut, names its last step lacks go to
        the classifier); ``--param base__C=10`` on the command line.
    random_state : int or None
        Seed of the randomised shortcut classifiers.

    Attributes
    ----------
    label_sets_ : ndarray of uint8, shape (n_classes, n_labels)
        The distinct training label sets (lexicographic order); class ``k`` is row ``k``.
    class_counts_ : ndarray of int
        Training instances per class.
    estimator_ : fitted classifier (or ``ConstantModel`` for a single class)

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_baselines import LabelPowerset
    >>> X = np.array([[0.0], [0.1], [1.0], [1.1]])
    >>> Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
    >>> lp = LabelPowerset().fit(X, Y)
    >>> lp.label_sets_.tolist(), lp.predict([[1.2]]).tolist()
    ([[0, 1], [1, 0]], [[0, 1]])
    """

    _joint_prediction: ClassVar[bool] = True

    def __init__(self, *, base_estimator: Any = None, base_params: dict | None = None,
                 random_state: int | None = 0) -> None:
        self.base_estimator = base_estimator
        self.base_params = base_params
        self.random_state = random_state

    @single_blas_thread
    def _fit(self, X: Any, Y: Any, sample_weight: np.ndarray | None = None) -> None:
        template = resolve_base_estimator(self.base_estimator, self.random_state,
                                          self.base_params)
        if sample_weight is not None:
            check_weighted_base(template)
        Yd = dense_labels(Y)
        sets, classes, counts = np.unique(Yd, axis=0, return_inverse=True,
                                          return_counts=True)
        self.label_sets_ = np.ascontiguousarray(sets, dtype=np.uint8)
        self.class_counts_ = counts.astype(np.int64)
        self.estimator_ = fit_multiclass(template, X, np.asarray(classes).ravel(),
                                         sample_weight)
        self._class_index = {row.tobytes(): k for k, row in enumerate(self.label_sets_)}

    @single_blas_thread
    def predict_classes(self, X: Any) -> np.ndarray:
        """P(class k | x), shape (n, n_classes) (columns follow ``label_sets_``)."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "label_sets_")
        return self._class_proba(self._validate_X(X, reset=False))

    def _class_proba(self, X: Any) -> np.ndarray:
        return proba_classes(self.estimator_, X, self.label_sets_.shape[0])

    @single_blas_thread
    def _predict(self, X: Any) -> np.ndarray:
        best = np.argmax(self._class_proba(X), axis=1)
        return self.label_sets_[best].copy()

    @single_blas_thread
    def _predict_proba(self, X: Any) -> np.ndarray:
        return np.ascontiguousarray(self._class_proba(X) @ self.label_sets_.astype(np.float64))

    @single_blas_thread
    def _predict_with_scores(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The most probable label set and the marginals from one classifier pass."""
        P = self._class_proba(X)
        return (self.label_sets_[np.argmax(P, axis=1)].copy(),
                np.ascontiguousarray(P @ self.label_sets_.astype(np.float64)))

    # -- what the decoders use (mlw.decoders) -----------------------------------------------
    def joint_mode(self, X: Any) -> np.ndarray:
        """The most probable label set of each row (LP's own decision), shape (n, L)."""
        P = self.predict_classes(X)
        return self.label_sets_[np.argmax(P, axis=1)].copy()

    def size_marginals(self, X: Any) -> np.ndarray:
        """P(y_j = 1, |y| = s | x) of the class distribution (exact: LP's joint lives on
        the training label sets), shape (n, L, L), entry ``[i, j, s - 1]``."""
        P = self.predict_classes(X)
        sets = self.label_sets_.astype(np.float64)
        sizes = self.label_sets_.sum(axis=1).astype(np.int64)
        L = self.n_labels_
        out = np.zeros((P.shape[0], L, L))
        for size in np.unique(sizes[sizes > 0]):
            pick = sizes == size
            out[:, :, size - 1] = P[:, pick] @ sets[pick]
        return out

    def sample_labels(self, X: Any, *, n_samples: int = 100,
                      random_state: int | None = None) -> np.ndarray:
        """``n_samples`` label vectors per row drawn from the class distribution (each
        draw a training label set, with its probability P(k | x)), uint8 of shape
        (n, n_samples, L), seeded by ``random_state``."""
        from mlw.validation import check_param

        check_param("n_samples", n_samples, int, low=1)
        P = self.predict_classes(X)
        rng = np.random.default_rng(random_state)
        cumulative = np.cumsum(P, axis=1)
        cumulative /= cumulative[:, -1:]
        draws = rng.random((P.shape[0], int(n_samples)))
        picks = np.empty(draws.shape, dtype=np.int64)
        for i in range(P.shape[0]):  # first class whose cumulative share exceeds the draw
            picks[i] = np.searchsorted(cumulative[i], draws[i], side="right")
        np.minimum(picks, P.shape[1] - 1, out=picks)
        return self.label_sets_[picks]

    def log_proba_of(self, X: Any, Y: Any) -> np.ndarray:
        """log P(Y | X) of the given label sets, shape (n,) (floored; see class doc)."""
        X, Yd = validate_joint_query(self, X, Y)
        return self._log_proba_of(X, Yd)

    @single_blas_thread
    def _log_proba_of(self, X: Any, Y: Any) -> np.ndarray:
        Yd = dense_labels(Y)
        P = self._class_proba(X)
        out = np.full(Yd.shape[0], LOG_PROBA_FLOOR)
        for i, row in enumerate(Yd):
            k = self._class_index.get(row.tobytes())
            if k is not None:
                out[i] = np.log(max(P[i, k], PROBA_FLOOR))
        return out
