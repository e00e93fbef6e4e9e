"""Probabilistic classifier chains (Dembczyński, Cheng and Hüllermeier, 2010): the
chain as a joint model P(y | x) = prod_j P(y_j | x, y_<j), with Bayes-optimal
inference for subset accuracy (the joint mode) and exact marginals."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlw.jit import kernel_seed
from mlw.thresholds import DEFAULT_THRESHOLD
from mlw_baselines import _inference, _kernels
from mlw_baselines._common import single_blas_thread
from mlw_baselines.classifier_chain import ChainModel


class JointChainInference:
    """What PCC and EPCC give the decoders of :mod:`mlw.decoders`, for a mixture of
    chains (PCC is a mixture of one): the joint mode, exact size marginals
    P(y_j = 1, |y| = s) up to ``max_exact_labels`` labels, and draws from the joint.
    A class using it defines ``_linear_mixture(X)`` (the kernels' ``(A, W, orders)``,
    or ``None`` without linear links), ``_mixture_oracles(X)`` and ``predict_joint``."""

    inference_: str
    n_labels_: int

    def _linear_mixture(self, X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        raise NotImplementedError  # pragma: no cover

    def _mixture_oracles(self, X: Any) -> tuple[list[_inference.Oracle], np.ndarray]:
        raise NotImplementedError  # pragma: no cover

    def _checked_X(self, X: Any) -> Any:
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "n_labels_")
        return self._validate_X(X, reset=False)  # type: ignore[attr-defined]

    def joint_mode(self, X: Any) -> np.ndarray:
        """The most probable label vector of each row, shape (n, L): exact up to
        ``max_exact_labels`` labels, the best vector of the final beam(s) above."""
        return self.predict_joint(X)[1]  # type: ignore[attr-defined]

    @single_blas_thread
    def size_marginals(self, X: Any) -> np.ndarray | None:
        """P(y_j = 1, |y| = s | x) by exact inference, shape (n, L, L) (entry
        ``[i, j, s - 1]``); ``None`` above ``max_exact_labels`` labels, where the
        inference is beam search."""
        X = self._checked_X(X)
        if self.inference_ != "exact":
            return None
        n, L = X.shape[0], self.n_labels_
        linear = self._linear_mixture(X)
        if linear is not None:
            return _kernels.mixture_size_marginals_linear(*linear)
        oracles, orders = self._mixture_oracles(X)
        return _inference.mixture_size_marginals(oracles, orders, n, L)

    @single_blas_thread
    def sample_labels(self, X: Any, *, n_samples: int = 100,
                      random_state: int | None = None) -> np.ndarray:
        """``n_samples`` label vectors per row drawn from the joint P(y | x) (ancestral
        sampling along the chain; for an ensemble, a chain chosen uniformly per draw),
        uint8 of shape (n, n_samples, L), seeded by ``random_state``."""
        from mlw.validation import check_param

        check_param("n_samples", n_samples, int, low=1)
        X = self._checked_X(X)
        seed = kernel_seed(random_state)
        linear = self._linear_mixture(X)
        if linear is not None:
            return _kernels.mixture_sample_linear(*linear, int(n_samples), seed)
        oracles, orders = self._mixture_oracles(X)
        return _inference.mixture_sample(oracles, orders, X.shape[0], self.n_labels_,
                                         int(n_samples), np.random.default_rng(seed))


class ProbabilisticClassifierChain(JointChainInference, ChainModel):
    """Probabilistic classifier chain (PCC).

    Trained exactly like a classifier chain; the difference is inference.

    - ``n_labels <= max_exact_labels`` (default 15): exact inference, enumerating all
      ``2**L`` label vectors (depth first, sharing prefixes). ``predict`` is the joint
      mode (the most probable label vector, the risk minimiser of subset 0/1 loss),
      ``predict_proba`` the exact marginals P(y_j = 1 | x).
    - above: beam search (Kumar et al., 2013) keeping the ``beam_width`` most probable
      prefixes per depth. ``predict`` is the best complete vector of the final beam;
      ``predict_proba`` is the marginal of the distribution *restricted to the final
      beam* (each vector weighted by its chain probability, renormalised over the
      beam). It is exact when ``beam_width >= 2**L`` and otherwise an approximation
      that ignores the mass outside the beam.

    Ties (equally probable vectors) go to the lexicographically smallest in chain
    order. With linear links (logistic regression, linear SVC) both inferences run in
    numba kernels; any other classifier is queried once per chain position on a
    batch of instance/prefix pairs.

    Parameters
    ----------
    base_estimator : None, str or scikit-learn classifier
        ``None`` is MaxAbsScaler + logistic regression (lbfgs, C=1, max_iter=1000); strings are the
        shortcuts of :data:`mlw_baselines.SHORTCUTS`; objects are cloned per link.
    base_params : dict or None
        Parameters of the base classifier, set on it with ``set_params``
        (``{"C": 10}``; on a pipeline shortcut, names its last step lacks go to
        the classifier); ``--param base__C=10`` on the command line.
    order : None, "random" or sequence of int
        The chain order (see :class:`~mlw_baselines.ClassifierChain`).
    random_state : int or None
        Seed of the random order and of the randomised shortcut classifiers.
    n_jobs : int or None
        Links trained in parallel by joblib.
    max_exact_labels : int
        Exact inference up to this many labels, beam search above.
    beam_width : int
        Prefixes kept per depth by beam search (>= 1; 1 follows the greedy path of CC
        except at probabilities of exactly 0.5, where beam search keeps 0).
    threshold : None, str or strategy object
        ``None``: the joint mode above (the paper's decision for subset 0/1 loss);
        otherwise a thresholding strategy tuned in ``fit`` on the training marginals and
        applied to ``predict_proba`` (default: ``mlw.thresholds.DEFAULT_THRESHOLD``, for
        the example-based and label-based metrics; the mode left 9-20% of
        emotions' and medical's rows empty where none truly is).

    Attributes
    ----------
    inference_ : str
        ``"exact"`` or ``"beam"``.
    (and those of :class:`~mlw_baselines.ClassifierChain`)

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_baselines import ProbabilisticClassifierChain
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 3))
    >>> Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0, X[:, 2] > 0]).astype(int)
    >>> pcc = ProbabilisticClassifierChain().fit(X, Y)
    >>> pcc.inference_, pcc.predict_proba(X[:1]).shape
    ('exact', (1, 3))
    """

    def __init__(self, *, base_estimator: Any = None, base_params: dict | None = None,
                 order: Any = None, random_state: int | None = 0,
                 n_jobs: int | None = None, max_exact_labels: int = 15,
                 beam_width: int = 16, threshold: Any = DEFAULT_THRESHOLD) -> None:
        super().__init__(base_estimator=base_estimator, base_params=base_params,
                         order=order, random_state=random_state, n_jobs=n_jobs,
                         threshold=threshold)
        self.max_exact_labels = max_exact_labels
        self.beam_width = beam_width

    @single_blas_thread
    def _fit(self, X: Any, Y: Any, sample_weight: np.ndarray | None = None) -> None:
        if int(self.max_exact_labels) != self.max_exact_labels or self.max_exact_labels < 0:
            raise ValueError(f"max_exact_labels must be a non-negative integer, got "
                             f"{self.max_exact_labels!r}")
        if self.max_exact_labels > 25:
            raise ValueError(f"max_exact_labels={self.max_exact_labels} would enumerate "
                             f"2**{self.max_exact_labels} label vectors per instance; "
                             f"use at most 25")
        if int(self.beam_width) != self.beam_width or self.beam_width < 1:
            raise ValueError(f"beam_width must be a positive integer, got {self.beam_width!r}")
        super()._fit(X, Y, sample_weight)
        self.inference_ = "exact" if Y.shape[1] <= self.max_exact_labels else "beam"

    def _infer(self, X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(marginals, mode, mode_log_proba)`` in label order."""
        n, L = X.shape[0], self.n_labels_
        width = int(self.beam_width)
        if self.linear_coef_ is not None:
            A, W = self._feature_logits(X), self.linear_chain_weights_
            if self.inference_ == "exact":
                # a 2**L table per chunk: at most 2**25 floats (256 MB) in all
                chunks = max(1, min(n, 4 * (os.cpu_count() or 1), (1 << 25) >> L))
                marg, mode, lp = _kernels.pcc_exact_linear(A, W, chunks)
            else:
                marg, mode, lp = _kernels.pcc_beam_linear(A, W, width)
        elif self.inference_ == "exact":
            # one oracle call holds at most about 2**24 feature values (128 MB float64)
            per_row = (X.nnz / max(n, 1) if sp.issparse(X) else X.shape[1]) + L
            max_rows = max(1, int((1 << 24) // per_row))
            marg, mode, lp = _inference.exact(self._oracle(X), n, L, max_rows=max_rows)
        else:
            marg, mode, lp = _inference.beam(self._oracle(X), n, L, width)
        return self._to_labels(marg), self._to_labels(mode), lp

    @single_blas_thread
    def _predict(self, X: Any) -> np.ndarray:
        return self._infer(X)[1]

    @single_blas_thread
    def _predict_proba(self, X: Any) -> np.ndarray:
        return self._infer(X)[0]

    @single_blas_thread
    def _predict_with_scores(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The joint mode and the marginals from one inference pass."""
        marginals, mode, _ = self._infer(X)
        return mode, marginals

    @single_blas_thread
    def predict_joint(self, X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Marginals, joint mode and the mode's log-probability in one inference pass
        (``predict_proba`` and ``predict`` each run the inference)."""
        return self._infer(self._checked_X(X))

    def _linear_mixture(self, X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        if self.linear_coef_ is None:
            return None
        L = self.n_labels_
        return (self._feature_logits(X), self.linear_chain_weights_.reshape(1, L, L),
                np.ascontiguousarray(self.order_.reshape(1, L), dtype=np.int64))

    def _mixture_oracles(self, X: Any) -> tuple[list[_inference.Oracle], np.ndarray]:
        return [self._oracle(X)], self.order_.reshape(1, -1)
