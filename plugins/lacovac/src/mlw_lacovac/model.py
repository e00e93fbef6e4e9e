"""LaCovaC, LaCova and ML-C4.5 multi-label trees as mlw learners."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from mlw import MultiLabelLearner
from mlw.validation import check_param, check_Y
from mlw_lacovac import _kernels as K
from mlw_lacovac._leaves import (
    LeafModels,
    add_size_marginals,
    leaf_models,
    log_proba,
    predict,
    sample,
)
from mlw_lacovac._tree import Tree, TreeBuilder, child_sizes

#: LaCovaC's default decision: the paper's Pcut with the core's adaptive top-label rule
#: (the rule of ``mlw.thresholds.DEFAULT_THRESHOLD``, on only when the training set has
#: (almost) no empty label sets). Pcut alone left 1-15% of the test rows empty on yeast,
#: scene, medical, slashdot and bibtex, where none is, and the leaf modes 2-28%.
DEFAULT_THRESHOLD = "pcut:top_label=auto"

#: Above this many labels ``size_marginals`` returns None (its (n, L, L) output and its
#: O(L^3) worst case per row grow too large) and the ``f1`` decoder samples instead.
EXACT_SIZE_LABELS = 256


def seed_from(random_state: Any) -> int:
    """The kernels' integer seed from a ``random_state`` (an int or None)."""
    return int(np.random.default_rng(random_state).integers(2**32))


def check_n_samples(n_samples: Any) -> int:
    check_param("n_samples", n_samples, int, low=1)
    return int(n_samples)


def check_marginals(marginals: Any) -> str:
    if marginals not in ("laplace", "joint"):
        raise ValueError(f"marginals must be 'laplace' or 'joint', got {marginals!r}")
    return str(marginals)


def _check_common(min_samples: Any, alpha: Any) -> int:
    if isinstance(min_samples, bool) or not isinstance(min_samples, (int, np.integer)) \
            or min_samples < 1:
        raise ValueError(f"min_samples must be an integer >= 1, got {min_samples!r}")
    if not np.isfinite(alpha) or alpha < 0:
        raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
    return int(min_samples)


def check_min_child(min_child: Any, min_child_numeric: Any) -> tuple[int, int | None]:
    def ok(v: Any) -> bool:
        return not isinstance(v, bool) and isinstance(v, (int, np.integer)) and v >= 1
    if not ok(min_child):
        raise ValueError(f"min_child must be an integer >= 1, got {min_child!r}")
    if min_child_numeric is not None and not ok(min_child_numeric):
        raise ValueError(f"min_child_numeric must be None or an integer >= 1, got "
                         f"{min_child_numeric!r}")
    return int(min_child), None if min_child_numeric is None else int(min_child_numeric)


def check_max_bins(max_bins: Any) -> int | None:
    if max_bins is None:
        return None
    if isinstance(max_bins, bool) or not isinstance(max_bins, (int, np.integer)) \
            or not 2 <= max_bins <= 65535:
        raise ValueError(f"max_bins must be None or an integer in [2, 65535], got "
                         f"{max_bins!r}")
    return int(max_bins)


def drop_zero_weight(X: Any, Y: Any, sample_weight: np.ndarray | None
                     ) -> tuple[Any, Any, np.ndarray | None]:
    """The trees weigh rows as frequencies (a row of weight 2 counts as two rows), so a
    row of weight 0 is a row not there: it is dropped before anything is counted or
    binned, and the tree is the one grown without it (scikit-learn's trees accept zero
    weights too). The core has already checked shape, finiteness and sign."""
    if sample_weight is None or np.all(sample_weight > 0):
        return X, Y, sample_weight
    keep = np.flatnonzero(sample_weight > 0)
    return X[keep], Y[keep], sample_weight[keep]


def check_training_data(X: Any, Y: Any, min_samples: int) -> sp.csr_matrix:
    """Reject data no tree can be grown from; return ``Y`` as CSR."""
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"need at least 2 training instances to grow a tree, got {n}")
    if min_samples > n:
        raise ValueError(f"min_samples={min_samples} is larger than the number of training "
                         f"instances ({n})")
    Yc = sp.csr_matrix(Y, dtype=np.uint8) if not sp.issparse(Y) else Y.tocsr()
    Yc.sort_indices()
    return Yc


class MultiLabelTree(MultiLabelLearner):
    """Common machinery of the three trees; see :class:`LaCovaC`.

    Parameters
    ----------
    min_samples : int
        m: a node with fewer rows is a leaf (the paper's only size rule).
    min_child : int
        The smallest child of a horizontal split on a 0/1 feature (binary, one-hot and
        sparse word features): 1, the paper's Algorithm 1, which names no child
        minimum (the authors' code uses 2 for nominal attributes).
    min_child_numeric : int or None
        The smallest child of a split on any other (numeric) feature; None means m, as
        the authors' code (C4.5's ``minNumObj`` for numeric attributes).
    alpha : float
        Pseudo-count of the leaf's smoothed joint distribution (``log_proba_of``, see
        :mod:`mlw_lacovac._leaves`); 0 uses the raw subset frequencies.
    marginals : "laplace" or "joint"
        ``predict_proba``: the Laplace estimate (c_j + 1) / (n + 2) of each label in the
        leaf (as the authors' implementation), or the marginals of the smoothed joint.
    max_bins : int or None
        Dense features: thresholds are tried only between values in different
        training-set quantile bins (``max_bins`` per feature); None tries every midpoint
        like the paper's sorted scan. Sparse ``X`` is always scanned exactly.
    """

    _joint_prediction: ClassVar[bool] = True
    _method: ClassVar[str] = "lacovac"

    def _grow(self, X: Any, Y: Any, z: float, sample_weight: np.ndarray | None) -> None:
        m = _check_common(self.min_samples, self.alpha)
        check_marginals(self.marginals)
        bins = check_max_bins(self.max_bins)
        mc, mcn = check_min_child(self.min_child, self.min_child_numeric)
        X, Y, w = drop_zero_weight(X, Y, sample_weight)
        Yc = check_training_data(X, Y, m)
        sizes = child_sizes(X, mc, mcn, m)
        self.tree_: Tree = TreeBuilder(self._method, m, sizes, z=z, max_bins=bins).fit(
            X, Yc, sample_weight=w)
        self.leaf_models_: LeafModels = leaf_models(self.tree_, float(self.alpha),
                                                    self.marginals)

    def _predict_proba(self, X: Any) -> np.ndarray:
        return predict(self.tree_, self.leaf_models_, X, self.n_labels_, joint=False)[0]

    def _predict(self, X: Any) -> np.ndarray:
        return predict(self.tree_, self.leaf_models_, X, self.n_labels_, proba=False)[1]

    def _predict_with_scores(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The joint decision and the marginals from one traversal of the tree."""
        P, Y = predict(self.tree_, self.leaf_models_, X, self.n_labels_)
        return Y, P

    def joint_mode(self, X: Any) -> np.ndarray:
        """The joint decision without the core's top-label rule, shape (n, L): in each
        leaf a row reaches, the most frequent observed label subset (the ``subset``
        decoder of :mod:`mlw.decoders` uses it)."""
        check_is_fitted(self, "tree_")
        return self._predict(self._validate_X(X, reset=False))

    def log_proba_of(self, X: Any, Y: Any) -> np.ndarray:
        """log P(y_i | x_i) of the given label vectors, shape (n,): the sum over the
        leaves each row reaches (one per label block) of the log smoothed leaf
        probability of the row's labels in that block."""
        check_is_fitted(self, "tree_")
        X = self._validate_X(X, reset=False)
        Y = check_Y(Y, n_rows=X.shape[0], n_labels=self.n_labels_)
        return log_proba(self.tree_, self.leaf_models_, X, Y, float(self.alpha))

    # -- what the decoders use (mlw.decoders) -----------------------------------------------
    def size_marginals(self, X: Any) -> np.ndarray | None:
        """Exact P(y_j = 1, |y| = s | x) of the joint ``log_proba_of`` gives, shape
        (n, L, L) (entry ``[i, j, s - 1]``): in each leaf reached, the observed subsets'
        share plus ``alpha`` times that of the leaf's independent Laplace marginals; the
        independent blocks of vertical splits combined by convolving their set sizes.
        ``None`` above 256 labels (``EXACT_SIZE_LABELS``), where the decoders sample."""
        check_is_fitted(self, "tree_")
        X = self._validate_X(X, reset=False)
        if self.n_labels_ > EXACT_SIZE_LABELS:
            return None
        out = np.zeros((X.shape[0], self.n_labels_, self.n_labels_))
        add_size_marginals(self.tree_, self.leaf_models_, X, float(self.alpha), 1.0, out)
        return out

    def sample_labels(self, X: Any, *, n_samples: int = 100,
                      random_state: int | None = None) -> np.ndarray:
        """``n_samples`` label vectors per row drawn from the joint ``log_proba_of``
        gives (in each leaf reached, an observed subset with probability count / (n +
        alpha), else independent labels with the leaf's Laplace marginals), uint8 of
        shape (n, n_samples, L), seeded by ``random_state``."""
        check_is_fitted(self, "tree_")
        T = check_n_samples(n_samples)
        X = self._validate_X(X, reset=False)
        out = np.zeros((X.shape[0], T, self.n_labels_), np.uint8)
        sample(self.tree_, self.leaf_models_, X, float(self.alpha),
               np.ones((X.shape[0], T), np.bool_), seed_from(random_state), out)
        return out

    # -- inspection ------------------------------------------------------------------------
    @property
    def n_leaves_(self) -> int:
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves

    def to_text(self, feature_names: Sequence[str] | None = None,
                label_names: Sequence[str] | None = None, *, max_subsets: int = 4,
                max_depth: int | None = None, decimals: int = 2) -> str:
        """The fitted tree as text, in the style of Figure 1 of the paper.

        ``VS`` nodes (vertical splits) list their label blocks and have one branch per
        block; ``HS`` nodes (horizontal splits) test ``feature <= threshold`` (a 0/1
        feature splits at 0.5); leaves list their most
        frequent label subsets with relative frequencies (at most ``max_subsets``).
        """
        check_is_fitted(self, "tree_")
        t = self.tree_
        fn = list(feature_names) if feature_names is not None else [
            f"x{j}" for j in range(self.n_features_in_)]
        ln = list(label_names) if label_names is not None else [
            f"y{j}" for j in range(self.n_labels_)]
        if len(fn) != self.n_features_in_ or len(ln) != self.n_labels_:
            raise ValueError(f"to_text: expected {self.n_features_in_} feature names and "
                             f"{self.n_labels_} label names, got {len(fn)} and {len(ln)}")
        lines: list[str] = []

        def block(labels: np.ndarray) -> str:
            return "{" + ", ".join(ln[j] for j in labels) + "}"

        def leaf_text(v: int) -> str:
            leaf = t.leaf(int(t.leaf_id[v]))
            parts = []
            for s, fr in zip(leaf.subsets[:max_subsets], leaf.frequencies[:max_subsets],
                             strict=True):
                on = [ln[j] for j, b in zip(leaf.labels, s, strict=False) if b]
                parts.append("{" + ", ".join(on) + f"}}: {fr:.{decimals}f}")
            more = len(leaf.counts) - max_subsets
            tail = f", ... ({more} more)" if more > 0 else ""
            return f"LEAF {block(leaf.labels)} n={leaf.n:g}: " + ", ".join(parts) + tail

        def walk(v: int, indent: str, head: str, last: bool, depth: int) -> None:
            k = t.kind[v]
            a, b = t.child_ptr[v], t.child_ptr[v + 1]
            conn = "" if depth == 0 else ("`-- " if last else "|-- ")
            if k == K.LEAF:
                lines.append(indent + conn + head + leaf_text(v))
                return
            if max_depth is not None and depth >= max_depth:
                lines.append(indent + conn + head + f"... (n={t.n_rows[v]:g})")
                return
            if k == K.VSPLIT:
                blocks = " | ".join(block(t.node_labels(c)) for c in t.children[a:b])
                lines.append(indent + conn + head + f"VS {blocks} (n={t.n_rows[v]:g})")
                heads = [f"[{block(t.node_labels(c))}] " for c in t.children[a:b]]
            else:
                f, thr = t.feature[v], t.threshold[v]
                lines.append(indent + conn + head + f"HS {fn[f]} (n={t.n_rows[v]:g})")
                heads = [f"{fn[f]} <= {thr:.4g}: ", f"{fn[f]} > {thr:.4g}: "]
            sub = indent if depth == 0 else indent + ("    " if last else "|   ")
            kids = list(t.children[a:b])
            for i, (c, h) in enumerate(zip(kids, heads, strict=False)):
                walk(c, sub, h, i == len(kids) - 1, depth + 1)

        walk(0, "", "", True, 0)
        return "\n".join(lines)


class LaCovaC(MultiLabelTree):
    """LaCovaC: a multi-label tree that clusters labels locally (Al-Otaibi, Kull and
    Flach, ECAI 2016, Algorithms 1 and 2).

    At a node with rows D and labels L it stops with a leaf when every label is constant
    on D or |D| < m. Otherwise it clusters the labels that vary: phi correlations on D,
    single linkage at distance 1 - lambda_n with lambda_n = z / sqrt(n - 1), i.e. the
    connected components of the graph |phi| > lambda_n. Several clusters give a
    vertical split (one subtree per cluster, same rows; labels constant on D go
    together into one pure leaf); one cluster gives a horizontal split on the feature
    and threshold minimising the LaCova criterion: for each child the minimum of the
    sum of label variances and the sum of absolute label covariances, weighted by the
    child's size (the variance alone when fewer than two labels vary). Leaves keep the
    relative frequencies of their label subsets; ``predict_proba`` gives the (smoothed)
    marginals of the leaves a row reaches, ``predict`` applies ``threshold`` to them
    (default: the paper's Pcut with the adaptive top-label rule), or with
    ``threshold=None`` concatenates the leaves' modes (the joint decision).

    The tree parameters shared with LaCova and ML-C4.5 (``min_samples``,
    ``min_child``, ``min_child_numeric``, ``alpha``, ``marginals``, ``max_bins``) are
    documented on :class:`MultiLabelTree`; ``mlw learners lacovac`` lists them all.

    Parameters
    ----------
    z : float
        Normal quantile of the correlation test, lambda_n = z / sqrt(n - 1).
    threshold : str, strategy object or None
        How ``predict`` turns the marginals into label sets. Default
        :data:`DEFAULT_THRESHOLD`, ``"pcut:top_label=auto"``: the paper's Pcut (one
        cut on the predicted set matching the training label density) with the
        adaptive top-label rule (a row Pcut leaves empty gets its top label, only when
        at most 1% of the training label sets are empty); Pcut alone left 1-15% of the
        test rows empty where none is, the leaf modes 2-28%
        (``docs/guide/thresholds.md``).
        ``"pcut"`` is the paper's rule alone; ``None`` the joint decision (the
        concatenated leaf modes).

    Notes
    -----
    ``fit(X, Y, sample_weight=w)`` weighs the rows as frequencies (a row of weight 0
    is dropped, a row not there): a row of weight 2 counts as two rows in every size
    (``min_samples``, ``min_child``, the ``n`` of lambda_n), label count, pair count,
    quantile bin and leaf distribution, so integer weights grow the tree of the repeated
    rows. Scaling all weights therefore changes the tree (unlike scikit-learn's
    criterion, the correlation test depends on ``n``). The threshold is fitted
    unweighted (the core's rule).

    Examples
    --------
    >>> import numpy as np
    >>> from mlw_lacovac import LaCovaC
    >>> X = np.array([[0, 1], [0, 1], [1, 0], [1, 0], [1, 1], [0, 0]], float)
    >>> Y = np.array([[1, 1], [1, 1], [0, 0], [0, 0], [1, 0], [0, 1]])
    >>> LaCovaC(min_samples=2).fit(X, Y).predict(X).shape
    (6, 2)
    """

    _method = "lacovac"

    def __init__(self, *, min_samples: int = 5, z: float = 1.96, alpha: float = 1.0,
                 marginals: str = "laplace", max_bins: int | None = 64, min_child: int = 1,
                 min_child_numeric: int | None = None,
                 threshold: Any = DEFAULT_THRESHOLD) -> None:
        self.min_samples = min_samples
        self.min_child = min_child
        self.min_child_numeric = min_child_numeric
        self.z = z
        self.alpha = alpha
        self.marginals = marginals
        self.max_bins = max_bins
        self.threshold = threshold

    def _fit(self, X: Any, Y: Any, sample_weight: np.ndarray | None = None) -> None:
        if not np.isfinite(self.z) or self.z <= 0:
            raise ValueError(f"z must be a positive number, got {self.z!r}")
        self._grow(X, Y, float(self.z), sample_weight)


class LaCova(MultiLabelTree):
    """LaCova (Al-Otaibi, Flach and Kull, 2014), the predecessor of LaCovaC.

    At each node: when the sum of absolute label covariances is at most its critical
    value under label independence (mean + 2 sd of the sum of half-normal |cov|,
    as in the authors' code), the labels are treated independently, Binary-Relevance
    style: a vertical split into one single-label subtree per label. Otherwise the
    labels stay together and the node splits horizontally with the LaCova criterion.
    Leaves, stopping rule and predictions are those of :class:`LaCovaC`'s leaf modes
    (``threshold=None``).

    Parameters
    ----------
    top_label : bool or "auto"
        The core's top-label rule on that joint decision: a row whose leaf modes are
        all empty gets its top label by the leaf marginals. ``"auto"`` (default) only
        when at most 1% of the training label sets are empty; ``False`` is the paper's
        leaf modes alone, which left 1.6-30% of the test rows empty on data where none
        is (``docs/guide/thresholds.md``).
    """

    _method = "lacova"

    def __init__(self, *, min_samples: int = 5, alpha: float = 1.0,
                 marginals: str = "laplace", max_bins: int | None = 64, min_child: int = 1,
                 min_child_numeric: int | None = None,
                 top_label: bool | str = "auto") -> None:
        self.top_label = top_label
        self.min_samples = min_samples
        self.min_child = min_child
        self.min_child_numeric = min_child_numeric
        self.alpha = alpha
        self.marginals = marginals
        self.max_bins = max_bins

    def _fit(self, X: Any, Y: Any, sample_weight: np.ndarray | None = None) -> None:
        self._grow(X, Y, 1.96, sample_weight)


class MLC45(MultiLabelTree):
    """ML-C4.5 (Clare and King, 2001) as the classical baseline: binary splits that
    minimise the weighted sum of the per-label binary entropies of the children (the
    multi-label entropy), only when the information gain is positive; no vertical
    splits, no pruning. Leaves are the label-subset distributions of :class:`LaCovaC`.
    """

    _method = "ml_c45"

    def __init__(self, *, min_samples: int = 5, alpha: float = 1.0,
                 marginals: str = "laplace", max_bins: int | None = 64, min_child: int = 1,
                 min_child_numeric: int | None = None) -> None:
        self.min_samples = min_samples
        self.min_child = min_child
        self.min_child_numeric = min_child_numeric
        self.alpha = alpha
        self.marginals = marginals
        self.max_bins = max_bins

    def _fit(self, X: Any, Y: Any, sample_weight: np.ndarray | None = None) -> None:
        self._grow(X, Y, 1.96, sample_weight)
