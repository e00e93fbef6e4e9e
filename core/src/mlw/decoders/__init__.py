"""Decoders: the label set that is optimal for the measure a user is scored on.

A learner's scores or joint distribution are one thing; the label set to predict from
them depends on the measure (decision theory: the set minimising the expected loss
under P(y | x)). Thresholds (:mod:`mlw.thresholds`) tune a cut-off on scores; a
decoder computes the Bayes-optimal set for one measure from what the learner gives,
as declared in its :class:`mlw.LearnerTags`:

- ``hamming``: each label whose marginal is >= 0.5 (exact for Hamming loss).
- ``subset``: the joint mode ``joint_mode(X)`` (exact or approximate as the learner
  documents); for a learner with marginals only, the mode under label independence,
  which is again marginals >= 0.5.
- ``f1``: the General F-measure Maximizer (GFM; Dembczyński, Waegeman, Cheng and
  Hüllermeier, NeurIPS 2011) on P(y_j = 1, |y| = s): exact from ``size_marginals(X)``;
  else estimated from ``n_samples`` draws of ``sample_labels``; else (marginals only)
  exact under label independence through the Poisson-binomial distribution of the set
  size (the plug-in rule; Ye, Chai, Lee and Chieu, ICML 2012).
- ``jaccard``: an approximation: among the ``k`` top-scoring labels (k = 0..L), the
  set of highest mean Jaccard index over ``n_samples`` draws from the learner's joint
  (from the independent model of its marginals when it cannot sample).

Every decoder is registered through :func:`mlw.hookspecs.mlw_register_decoders`, the
same hook as a third party's; :func:`mlw.get_decoder` builds one by name. Decoders need
no training: ``decode(learner, X)`` takes a fitted learner.

A learner's own kernels that build size marginals may call two numba kernels of this
module: :func:`poisson_binomial` (the distribution of the number of independent labels
present) and :func:`leave_one_out` (that distribution without one label).

Examples
--------
>>> import mlw
>>> train = mlw.load_dataset("emotions")
>>> pcc = mlw.get_learner("pcc").fit(train.X, train.Y)
>>> result = mlw.get_decoder("f1").decode_detailed(pcc, train.X[:5])
>>> result.route, result.labels.shape
('exact GFM', (5, 6))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from mlw.decoders import _kernels
from mlw.decoders._kernels import leave_one_out, poisson_binomial
from mlw.params import parse_params
from mlw.plugins import get_plugin_manager
from mlw.registry import LearnerTags
from mlw.thresholds import parse_threshold
from mlw.validation import check_param, check_X

#: Size-probability mass below which the plug-in F1 rule stops adding set sizes.
SIZE_TAIL = 1e-13
#: Bytes of working memory a decoder gives one chunk of rows (samples, size marginals).
CHUNK_BYTES = 1 << 25


@dataclass(frozen=True)
class DecodeResult:
    """What :meth:`Decoder.decode_detailed` returns.

    Attributes
    ----------
    labels : ndarray of uint8 or CSR, shape (n, L)
        The decoded label sets (CSR when the learner predicts CSR).
    expected : ndarray of float, shape (n,), or None
        The expected value of the measure of each row's set under the model (exact or
        estimated as ``route`` says); ``None`` where the route does not compute it.
    route : str
        How the sets were decoded for this learner (``"exact GFM"``, ...).
    """

    labels: Any
    expected: np.ndarray | None
    route: str


class DecoderError(ValueError):
    """The learner gives nothing this decoder can decode from."""


class Decoder(BaseEstimator):  # type: ignore[misc]
    """Base class of the core's decoders (a third party's need only ``decode`` and
    ``route``). Subclasses define ``measure`` and :meth:`_decode`."""

    measure: ClassVar[str] = ""

    def decode(self, learner: Any, X: Any) -> Any:
        """The decoded 0/1 label sets of the rows of ``X``, shape (n, L), for the
        fitted ``learner`` (dense uint8, or CSR when the learner predicts CSR)."""
        return self.decode_detailed(learner, X).labels

    def decode_detailed(self, learner: Any, X: Any) -> DecodeResult:
        """:meth:`decode` with each row's expected measure and the route taken."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(learner)
        tags = LearnerTags.of(type(learner))
        X = check_X(X, allow_nan=tags.allow_nan)
        route = self.route(learner)
        parts, values = [], []
        n, L = X.shape[0], int(learner.n_labels_)
        step = self._chunk_rows(L)
        for start in range(0, max(n, 1), step):
            Xc = X[start:start + step]
            if Xc.shape[0] == 0:
                parts.append(np.zeros((0, L), dtype=np.uint8))
                continue
            Y, value, route = self._decode(learner, Xc, tags, route, start)
            parts.append(np.asarray(Y, dtype=np.uint8))
            values.append(value)
        expected = (None if not values or any(v is None for v in values)
                    else np.concatenate(values))
        labels = _as_learner_output(learner, tags, parts)
        return DecodeResult(labels, expected, route)

    def _chunk_rows(self, L: int) -> int:
        return max(1, CHUNK_BYTES // (8 * max(L, 1) * max(L, 1)))

    def route(self, learner: Any) -> str:  # pragma: no cover - abstract
        """How this decoder decodes for ``learner`` (read from its tags)."""
        raise NotImplementedError

    def _decode(self, learner: Any, X: Any, tags: LearnerTags, route: str, start: int
                ) -> tuple[np.ndarray, np.ndarray | None, str]:  # pragma: no cover
        raise NotImplementedError

    def __repr__(self, N_CHAR_MAX: int = 700) -> str:
        return super().__repr__(N_CHAR_MAX)


def _as_learner_output(learner: Any, tags: LearnerTags, parts: list[np.ndarray]) -> Any:
    """The decoded chunks as one matrix in the form ``learner.predict`` gives: CSR for
    a learner with sparse output fitted on CSR labels, its training labels' dtype."""
    Y = np.concatenate(parts, axis=0) if parts else np.zeros((0, 0), np.uint8)
    as_dtype = getattr(learner, "_as_label_dtype", None)
    if tags.sparse_output and getattr(learner, "sparse_labels_", False):
        Y = sp.csr_matrix(Y)
    return as_dtype(Y) if callable(as_dtype) else Y


def _marginals(learner: Any, X: Any) -> np.ndarray:
    M = learner.predict_proba(X)
    return np.ascontiguousarray(M.toarray() if sp.issparse(M) else M, dtype=np.float64)


def _needs_scores(decoder: str, learner: Any, tags: LearnerTags) -> None:
    if not tags.predicts_scores:
        raise DecoderError(f"decoder {decoder!r}: {type(learner).__name__} gives no label "
                           f"scores (marginals), no joint mode and no samples to decode from")


class HammingDecoder(Decoder):
    """Each label whose marginal probability is at least 0.5: the Bayes decision for
    Hamming loss (label by label). Needs a learner with marginals (``predict_proba``).

    Examples
    --------
    >>> import mlw
    >>> mlw.get_decoder("hamming")
    HammingDecoder()
    """

    measure: ClassVar[str] = "hamming_loss"

    def route(self, learner: Any) -> str:
        _needs_scores("hamming", learner, LearnerTags.of(type(learner)))
        return "marginals >= 0.5"

    def _decode(self, learner: Any, X: Any, tags: LearnerTags, route: str, start: int
                ) -> tuple[np.ndarray, np.ndarray | None, str]:
        M = _marginals(learner, X)
        return M >= 0.5, np.maximum(M, 1.0 - M).mean(axis=1), route


class SubsetDecoder(Decoder):
    """The most probable label vector, the Bayes decision for subset accuracy.

    A learner with a joint model gives it through ``joint_mode(X)`` (exact for PCC, EPCC
    and CTBN by their exact inference, approximate where the learner says so, such as a
    mixture's annealing or a chain's beam search above its exact size); a learner with
    marginals only is decoded under label independence, whose mode is the marginals
    >= 0.5.

    Examples
    --------
    >>> import mlw
    >>> mlw.get_decoder("subset")
    SubsetDecoder()
    """

    measure: ClassVar[str] = "subset_accuracy"

    def route(self, learner: Any) -> str:
        tags = LearnerTags.of(type(learner))
        if tags.joint_mode:
            return "joint mode"
        _needs_scores("subset", learner, tags)
        return "mode under label independence (marginals >= 0.5)"

    def _decode(self, learner: Any, X: Any, tags: LearnerTags, route: str, start: int
                ) -> tuple[np.ndarray, np.ndarray | None, str]:
        if tags.joint_mode:
            Y = learner.joint_mode(X)
            return (Y.toarray() if sp.issparse(Y) else Y), None, route
        M = _marginals(learner, X)
        Yhat = M >= 0.5
        expected = np.exp(np.log(np.maximum(M, 1.0 - M)).sum(axis=1))
        return Yhat, expected, route


class _SamplingDecoder(Decoder):
    """A decoder that may draw ``n_samples`` label vectors per row from the learner
    (seeded by ``random_state``; each chunk of rows gets its own seed from it)."""

    n_samples: int
    random_state: int | None

    def _check(self) -> None:
        check_param("n_samples", self.n_samples, int, low=1)

    def _chunk_rows(self, L: int) -> int:
        per_row = max(8 * max(L, 1) * max(L, 1), int(self.n_samples) * max(L, 1))
        return max(1, CHUNK_BYTES // per_row)

    def _seed(self, start: int) -> int:
        base = 0 if self.random_state is None else int(self.random_state)
        return int(np.random.default_rng([base, start]).integers(2**62))

    def _draw(self, learner: Any, X: Any, tags: LearnerTags, start: int,
              M: np.ndarray | None = None) -> np.ndarray:
        """``n_samples`` label vectors per row (n, T, L) uint8: from the learner's joint
        when it samples, else from the independent model of its marginals ``M``."""
        T = int(self.n_samples)
        if tags.samples:
            S = learner.sample_labels(X, n_samples=T, random_state=self._seed(start))
            return np.ascontiguousarray(S, dtype=np.uint8)
        if M is None:
            M = _marginals(learner, X)
        rng = np.random.default_rng(self._seed(start))
        return (rng.random((M.shape[0], T, M.shape[1])) < M[:, None, :]).astype(np.uint8)


class F1Decoder(_SamplingDecoder):
    """The label set of highest expected F-beta (F1 at ``beta=1``, the example-based
    F-measure) under the learner's model: the General F-measure Maximizer (GFM).

    GFM needs, per row, P(y_j = 1, |y| = s) for every label j and size s, and
    P(y = 0); the route depends on what the learner gives (:class:`mlw.LearnerTags`):

    - ``size_marginals``: exact (PCC/EPCC up to their exact-inference size, CTBN and
      mixtures of CTBNs); the decision is the exact F-beta maximiser;
    - ``samples``: estimated from ``n_samples`` label vectors drawn from the joint;
    - marginals only: exact under label independence (the plug-in rule), the size
      distribution being Poisson-binomial; sizes whose remaining probability is below
      1e-13 are left out.

    The empty set is predicted when P(y = 0) beats every non-empty set (F(0, 0) = 1, as
    ``f1_example`` scores it). Ties go to the smaller set, then to lower label indices.

    Parameters
    ----------
    beta : float
        The F-measure's beta (> 0): 1 weighs precision and recall equally.
    n_samples : int
        Label vectors drawn per row when the route samples.
    random_state : int or None
        Seed of the draws.

    Examples
    --------
    >>> import mlw
    >>> mlw.get_decoder("f1", beta=2.0)
    F1Decoder(beta=2.0)
    """

    measure: ClassVar[str] = "f1_example"

    def __init__(self, *, beta: float = 1.0, n_samples: int = 1000,
                 random_state: int | None = 0) -> None:
        self.beta = beta
        self.n_samples = n_samples
        self.random_state = random_state

    def route(self, learner: Any) -> str:
        check_param("beta", self.beta, float, low=0.0, low_open=True)
        self._check()
        tags = LearnerTags.of(type(learner))
        if tags.size_marginals:
            return "exact GFM"
        if tags.samples:
            return "sampled GFM"
        _needs_scores("f1", learner, tags)
        return "GFM under label independence"

    def _decode(self, learner: Any, X: Any, tags: LearnerTags, route: str, start: int
                ) -> tuple[np.ndarray, np.ndarray | None, str]:
        beta2 = float(self.beta) ** 2
        if tags.size_marginals:
            P = learner.size_marginals(X)
            if P is not None:
                return (*_kernels.gfm(*split_size_marginals(P), beta2), "exact GFM")
            if not tags.samples:
                _needs_scores("f1", learner, tags)
                return (*_kernels.gfm_independent(_marginals(learner, X), beta2,
                                                  SIZE_TAIL), "GFM under label independence")
            route = "sampled GFM"
        if tags.samples:
            return (*_kernels.gfm_samples(self._draw(learner, X, tags, start), beta2),
                    "sampled GFM")
        return (*_kernels.gfm_independent(_marginals(learner, X), beta2, SIZE_TAIL), route)


def split_size_marginals(P: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(P, P(y = 0))`` from size marginals ``P`` (n, L, S), ``P[i, j, s - 1] =
    P(y_j = 1, |y| = s | x_i)``: since ``sum_j P(y_j = 1, |y| = s) = s P(|y| = s)``,
    ``P(y = 0) = 1 - sum_s P(|y| = s)`` (clipped to [0, 1])."""
    P = np.ascontiguousarray(P, dtype=np.float64)
    sizes = P.sum(axis=1) / np.arange(1, P.shape[2] + 1)
    return P, np.clip(1.0 - sizes.sum(axis=1), 0.0, 1.0)


class JaccardDecoder(_SamplingDecoder):
    """An approximate Bayes decision for the Jaccard index (``accuracy``, example-based),
    for which no exact efficient rule is known: the candidates are the sets of the
    ``k`` labels of highest marginal (``k = 0..L``; the form the optimum takes under
    label independence for F1), and the one of highest mean Jaccard index over
    ``n_samples`` label vectors drawn from the learner's joint is chosen (drawn from the
    independent model of its marginals when the learner cannot sample). J(0, 0) = 1.

    Parameters
    ----------
    n_samples : int
        Label vectors drawn per row.
    random_state : int or None
        Seed of the draws.

    Examples
    --------
    >>> import mlw
    >>> mlw.get_decoder("jaccard", n_samples=500)
    JaccardDecoder(n_samples=500)
    """

    measure: ClassVar[str] = "accuracy"

    def __init__(self, *, n_samples: int = 1000, random_state: int | None = 0) -> None:
        self.n_samples = n_samples
        self.random_state = random_state

    def route(self, learner: Any) -> str:
        self._check()
        tags = LearnerTags.of(type(learner))
        _needs_scores("jaccard", learner, tags)
        if tags.samples:
            return "top-k sets, Jaccard index on samples from the joint"
        return "top-k sets, Jaccard index under label independence (sampled)"

    def _decode(self, learner: Any, X: Any, tags: LearnerTags, route: str, start: int
                ) -> tuple[np.ndarray, np.ndarray | None, str]:
        M = _marginals(learner, X)
        S = self._draw(learner, X, tags, start, M)
        return (*_kernels.jaccard_topk_samples(S, M), route)


def make_decoder(choice: Any, **options: Any) -> Any:
    """A decoder from a registered name with optional options (``"f1"``,
    ``"f1:beta=2"``, or ``options`` as keywords) or a decoder object (returned as is).
    An unknown name raises :class:`mlw.UnknownNameError` suggesting close names; an
    unknown option a ``ValueError`` naming it."""
    if not isinstance(choice, str):
        if callable(getattr(choice, "decode", None)):
            if options:
                raise ValueError("options are given with a decoder name, not an object")
            return choice
        raise ValueError(f"decoder must be a registered name or an object with decode(), "
                         f"got {choice!r}")
    name, items = parse_threshold(choice)
    spec = get_plugin_manager().decoder(name)
    known = spec.signature_params()
    if len(items) == 1 and "=" not in items[0]:
        if not known:
            raise ValueError(f"decoder {name!r} takes no options, got {choice!r}")
        items = [f"{next(iter(known))}={items[0]}"]
    parsed = parse_params(f"decoder {name!r}", known, items)
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"decoder {name!r} has no option {', '.join(map(repr, unknown))} "
                         f"(options: {', '.join(known) or 'none'})")
    return spec.create(**{**parsed, **options})


__all__ = [
    "DecodeResult",
    "Decoder",
    "DecoderError",
    "F1Decoder",
    "HammingDecoder",
    "JaccardDecoder",
    "SubsetDecoder",
    "leave_one_out",
    "make_decoder",
    "poisson_binomial",
    "split_size_marginals",
]
