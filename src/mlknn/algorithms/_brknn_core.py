"""BR-kNN (Spyromitros, Tsoumakas and Vlahavas 2008): the vote, its scores and the 0.5 rule.

The class :class:`BRkNN`, importable as ``mlknn.BRkNN`` (and from
:mod:`mlknn.algorithms._brknn`, with BR-kNN-a and -b, which subclass it).
Readings, notation and references: :mod:`._brknn`.
"""

import copy
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..base import HUBNESS_CONSTRAINT, RANDOM_STATE_CONSTRAINT, ExplainParts, KNNMultiLabelBase, Term, fit_one_wider
from ..neighbors import NeighborGraph, build_graph
from ..utils._docstrings import fill_doc
from ..utils._param_validation import StrOptions
from ..utils._typing import (
    FloatArray,
    LabelMatrix,
    MatrixLike,
    NDArray,
    SparseMatrix,
    TopK,
)
from ..utils._validation import validate_features
from . import _brknn_mulan as mulan
from ._brknn_votes import as_counts_csr, entry_rows, indicator, top_by_count
from ._brknn_weights import WeightsParam, neighbour_weights, weighted_counts
from ._java_random import JavaRandom
from ._kernels import neighbor_label_counts, sparse_neighbor_label_counts
from ._missing import MissingLabels, missing_labels_of, observed_counts
from ._mlknn import MISSING_LABELS_CONSTRAINT
from ._partial_fit import MAX_SAMPLES_CONSTRAINT, _PartialFitMixin

#: MULAN seeds the tie-breaking ``java.util.Random`` of BRkNN with 1 (its constructor).
MULAN_SEED = 1


@fill_doc
class BRkNN(_PartialFitMixin, KNNMultiLabelBase):
    """Binary relevance k-nearest neighbours (BR-kNN), as in MULAN.

    **Scores.** ``predict_proba`` returns MULAN's per-label confidence

    ``conf_l = (count_l + 1/n) / (k + q/n)``,

    the neighbour vote with the estimator correction of Weka's IBk (every label
    starts at 1/n, the total at q/n). The scores are in (0, 1) and never exactly
    0 or 1, and they order the labels exactly as the counts do.

    **Decision.** Label l is assigned when ``conf_l >= 0.5``. Because of the
    correction, the decision is evaluated exactly, in integers:
    ``conf_l >= 0.5`` iff ``2 n count_l + 2 >= n k + q``. Consequences for a vote
    of exactly half the neighbours (``count_l = k/2``): with q >= 3 labels it falls
    just under 0.5 and is **not** assigned (k = 10, n = 100, q = 6:
    (5 + 0.01) / (10 + 0.06) = 0.49801...); with q = 2 it is exactly 0.5 and is
    assigned; with q = 1 it is just above 0.5 and is assigned. A strict majority
    (``count_l > k/2``) is assigned whenever ``n >= q - 2``. The prediction may
    be the empty set (see :class:`BRkNNa` and :class:`BRkNNb`).

    **Readings** (``variant``; the full table is in docs/notes/brknn.md):

    * ``"paper"`` (default): the above, with exactly k neighbours (ties at the
      k-th distance go to the lower training index) and exact decisions.
    * ``"mulan"``: MULAN bit for bit. Every training instance tied with the
      k-th distance votes (k' >= k neighbours, found by a wider exact search),
      ``conf_l = (1/n + count_l) / (q/n + k')`` summed in Weka's order in
      float64, and ``conf_l >= 0.5`` decided in floating point (q = 2, n = 12,
      k = 2, a half vote: 0.4999999999999999, not assigned). Needs an exact
      backend and ``hubness=None``. Features are searched as given (MULAN's
      Weka distance rescales them to [0, 1] by the training range unless
      switched off: scale first to match a default MULAN run).
    * scikit-multilearn has no plain BR-kNN class; its ``BRkNNaClassifier`` is
      this rule without the correction, ``BRkNNa(variant="skmultilearn")``.

    **Weighted vote** (``weights``, as scikit-learn's ``KNeighborsClassifier``):
    ``count_l`` becomes ``k v_l``, with ``v_l = sum_j w_j y_jl / sum_j w_j`` the
    weighted share of the k neighbours that have label l, in the scores and
    every decision (evaluated in float64); see :mod:`._brknn_weights`.

    **Sparse labels.** A CSR Y stays sparse: counts are the sparse product
    graph @ Y, ``predict`` returns CSR, and :meth:`predict_topk` is exact
    without any (n_queries, q) array. Cost: the search, plus
    O(n_queries k + nnz(counts) log nnz(counts)).

    Parameters
    ----------
    {n_neighbors}
    neighbors : str or object, default="brute"
        Neighbour-search backend (see :mod:`mlknn.neighbors`).
    {metric}
    {n_jobs}
    hubness : {"ls", "mp", "mp-gauss", "dsl"}, reduction object or None, default=None
        Hubness reduction applied to every neighbour graph before the vote
        (Teng et al.'s (2025) BRkNNa-ls, -mp and -dsl; see :mod:`mlknn.hubness`).
    variant : {"paper", "mulan"}, default="paper"
        Whose reading to compute (see above).
    {random_state_backend}
        MULAN's tie draws always use ``java.util.Random(1)``, as MULAN does.
    missing_labels : {"ignore", "negative"}, default="ignore"
        How to read the unknown entries of an incomplete Y (NaN, or
        ``Y_missing`` in ``fit``): ``"ignore"`` votes with the neighbours whose
        label is observed, the count rescaled to k (rounded; a weighted vote
        unrounded; docs/incomplete_labels.md); ``"negative"`` reads them as 0.
    weights : {"uniform", "distance"} or callable, default="uniform"
        The neighbours' vote weights: ``"uniform"`` (the paper's vote, integer
        counts), ``"distance"`` (1/d; a query with a zero-distance neighbour
        keeps only those), or a callable mapping the (n_queries, k) distances
        to finite non-negative weights of the same shape, e.g.
        ``lambda d: np.maximum(1 - d, 0) ** 4`` with ``metric="cosine"`` (similarity to the
        4th power). Only with ``variant="paper"``. :func:`mlknn.persistence.save`
        refuses a callable (pickle a module-level function instead).
    {max_samples}
    {max_memory}

    Attributes
    ----------
    n_train_ : int
        n, the number of training instances.
    n_labels_ : int
        q.
    nn_ : fitted neighbour backend
    n_features_in_ : int
    sparse_labels_ : bool
        Whether Y was kept sparse.
    tie_random_state_ : int
        ``variant="mulan"`` only: the 48-bit state of MULAN's ``java.util.Random(1)``
        tie stream (BR-kNN-a and -b), reset by ``fit`` and advanced by every
        ``predict``, query by query.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    BRkNNa : never predicts the empty set.
    BRkNNb : predicts as many labels as the neighbours have on average.
    MLkNN : a MAP decision per label instead of the vote.

    References
    ----------
    E. Spyromitros, G. Tsoumakas and I. Vlahavas, "An Empirical Study of Lazy
    Multilabel Classification Algorithms", Proc. 5th Hellenic Conference on
    Artificial Intelligence (SETN 2008), LNAI 5138, pp. 401-406, 2008.

    Examples
    --------
    >>> from mlknn import BRkNN
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=200, random_state=0)
    >>> clf = BRkNN(n_neighbors=5).fit(data.X, data.Y)
    >>> clf.predict(data.X[:2]).shape
    (2, 5)
    """

    _parameter_constraints = {
        **KNNMultiLabelBase._parameter_constraints,
        "hubness": HUBNESS_CONSTRAINT,
        "variant": [StrOptions({"paper", "mulan"})],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "max_samples": MAX_SAMPLES_CONSTRAINT,
        "weights": [StrOptions({"uniform", "distance"}), callable],
        "missing_labels": MISSING_LABELS_CONSTRAINT,
    }
    _supports_sparse_labels = True
    #: The unknown entries of the fitted Y (None: complete, or read as negative).
    _missing: MissingLabels | None = None

    def __init__(self, n_neighbors: int = 10, *, neighbors: Any = "brute", metric: str = "euclidean",
                 n_jobs: int | None = None, hubness: Any = None, variant: str = "paper",
                 random_state: Any = None, weights: WeightsParam = "uniform",
                 missing_labels: str = "ignore", max_samples: int | None = None,
                 max_memory: Any = None) -> None:
        self.n_neighbors = n_neighbors
        self.neighbors = neighbors
        self.metric = metric
        self.n_jobs = n_jobs
        self.hubness = hubness
        self.variant = variant
        self.random_state = random_state
        self.max_samples = max_samples
        self.weights = weights
        self.missing_labels = missing_labels
        self.max_memory = max_memory

    def _weighted(self) -> bool:
        return not (isinstance(self.weights, str) and self.weights == "uniform")

    def _search_width(self) -> int:
        if self._weighted() and self.variant != "paper":
            # Checked here, i.e. before any search or allocation.
            raise ValueError(
                f"The 'weights' parameter of {type(self).__name__} must be 'uniform' with "
                f"variant={self.variant!r} (that reading has no weighted vote). Got weights={self.weights!r}."
            )
        if self.variant == "mulan":
            self._check_no_hubness()
            # One neighbour more than k shows whether the k-th distance is tied; the
            # rows where it is are searched wider (see _votes).
            return self.n_neighbors + 1
        return super()._search_width()

    def _check_no_hubness(self) -> None:
        # Called by search_width, i.e. before any search or allocation.
        if self.hubness is not None:
            raise ValueError(
                f"The 'hubness' parameter of {type(self).__name__} must be None with "
                f"variant='mulan' (MULAN has no hubness reduction). Got hubness={self.hubness!r}."
            )

    # ------------------------------------------------------------------ fit
    def _fit_graph(self, graph: NeighborGraph, Y: LabelMatrix, X: MatrixLike) -> None:
        if self.variant == "mulan":
            self._check_no_hubness()
            if getattr(self.nn_, "exact", None) is False:  # a user backend may not say
                raise ValueError(
                    f"variant='mulan' of {type(self).__name__} counts every training instance tied with "
                    "the k-th distance, which needs an exact neighbour search (MULAN's linear search); "
                    f"the 'neighbors' backend {type(self.nn_).__name__} is approximate."
                )
            # MULAN's Random(1) is created with the classifier; its experiments copy a
            # fresh classifier per fold, which is what a fit is here.
            self.tie_random_state_ = JavaRandom(MULAN_SEED).state
        # Lazy: nothing is learned beyond the stored label matrix (and its unknown entries).
        self._fit_Y = Y
        self._missing = missing_labels_of(Y, getattr(self, "_fit_unknown", None))

    # ------------------------------------------------------ leave-one-out
    def _loo_exact_supported(self) -> bool:
        """Exact from one fit without hubness reduction, except MULAN's reading (its
        tie-extended neighbourhoods re-search the queries)."""
        return self.hubness is None and self.variant != "mulan"

    def _cross_fit_supported(self) -> bool:
        """MULAN's reading re-searches the rows tied at the k-th distance through its own
        index: its fold models are fitted fold by fold."""
        return self.variant != "mulan" and super()._cross_fit_supported()

    def _loo_exact(self, X: MatrixLike, Y: MatrixLike, k: int | None = None) -> Any:
        """Fit on (X, Y) and return every row's scores from a fit without it (docs/loo.md).

        BR-kNN learns nothing but the labels: without row i, row i's query
        neighbourhood is its leave-one-out neighbourhood, and the only other
        change is n, which becomes n - 1 in the score's correction 1/n.
        """
        wide, Y, _ = fit_one_wider(self, X, Y)
        graph = wide.take(self.search_width(wide.n_points))
        without = copy.copy(self)  # the fitted model with n - 1 training rows
        without.n_train_ = wide.n_points - 1
        if k is None:
            self._check_dense_scores(wide.n_points)
            return without._predict_proba_graph(graph, None)
        return without._predict_topk_graph(graph, None, k)

    # ------------------------------------------------------------- votes
    def _votes(self, graph: NeighborGraph, X: MatrixLike) -> tuple[MatrixLike, NDArray[np.int64] | None]:
        """Counts per (query, label), dense (dense Y) or CSR (sparse Y), and k' per query.

        ``k_prime`` is None when every query has exactly k neighbours (the paper and
        scikit-multilearn readings); with ``variant="mulan"`` it holds each query's
        neighbour count including the ties at the k-th distance.
        """
        Y, missing, k = self._fit_Y, self._missing, self.n_neighbors
        # With unknown labels, each vote is over the neighbours whose label is observed, rescaled to k.
        if self._weighted():
            w = neighbour_weights(graph.metric_distances, self.weights, type(self).__name__)
            return observed_counts(lambda Z: weighted_counts(graph, Z, w), Y, missing, k, rounded=False), None
        if self.variant != "mulan":
            def count(Z: LabelMatrix) -> MatrixLike:
                return sparse_neighbor_label_counts(graph, Z) if sp.issparse(Z) else neighbor_label_counts(graph, Z)

            return observed_counts(count, Y, missing, k), None
        research = None
        if self.nn_ is not None and X is not None:
            research = mulan.research_with(self.nn_, validate_features(self, X, reset=False), build_graph)
        A, k_prime = mulan.tie_extended_neighbourhoods(graph, self.n_neighbors, self.n_train_, research)

        def tie_counts(Z: LabelMatrix) -> MatrixLike:
            return as_counts_csr(A @ Z) if sp.issparse(Z) else np.asarray(A @ Z.astype(np.int64))

        return observed_counts(tie_counts, Y, missing, k_prime), k_prime

    def _weka_tables(self, k_prime: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return mulan.weka_tables(self.n_train_, self.n_labels_, int(k_prime.max(initial=self.n_neighbors)))

    def _score(
        self, counts: NDArray[Any], k_prime: NDArray[np.int64] | None, rows: NDArray[np.int64] | None = None
    ) -> FloatArray:
        """Scores of dense counts, or of count values at the given query rows (sparse path)."""
        n, q, k = self.n_train_, self.n_labels_, self.n_neighbors
        if self.variant == "mulan":
            assert k_prime is not None  # _votes gives k' with variant="mulan"
            num, total = self._weka_tables(k_prime)
            conf: FloatArray = num[counts] / (total[k_prime][:, None] if rows is None else total[k_prime[rows]])
            return conf
        if self.variant == "skmultilearn":
            return counts / k
        return (counts + 1.0 / n) / (k + q / n)

    # -------------------------------------------------------------- hooks
    def _predict_proba_graph(self, graph: NeighborGraph, X: MatrixLike) -> FloatArray:
        counts, k_prime = self._votes(graph, X)
        if not sp.issparse(counts):
            return self._score(counts, k_prime)
        # The dense output the caller asked for (the base class checked its size):
        # each row's zero-vote score everywhere, then the stored counts' scores.
        n_rows, rows = counts.shape[0], entry_rows(counts)
        out = np.empty(counts.shape)
        out[:] = self._score(np.zeros(n_rows, dtype=np.int64), k_prime, np.arange(n_rows))[:, None]
        data = counts.data if self._weighted() else counts.data.astype(np.int64)
        out[rows, counts.indices] = self._score(data, k_prime, rows)
        return out

    def _explain_graph(self, graph: NeighborGraph, X: MatrixLike) -> ExplainParts:
        counts, k_prime = self._votes(graph, X)
        n_rows = counts.shape[0]
        voters = np.full(n_rows, self.n_neighbors, dtype=np.int64) if k_prime is None else k_prime
        terms = {"n_voters": Term(voters, "k: the neighbours that vote (variant='mulan': k' >= k, every "
                                          "training instance tied with the k-th distance votes)", ("instance",))}
        fraction = "the vote fraction count_l / k (weighted: the weighted share v_l)"
        evidence = "count_l: the neighbours' votes for label l (weighted: k v_l)"
        if self._weighted():
            w = neighbour_weights(graph.metric_distances, self.weights, type(self).__name__)
            total = w.sum(axis=1, keepdims=True)
            share = np.divide(w, total, out=np.zeros_like(w), where=total > 0)
            terms["weight"] = Term(share, "w_j / sum_j w_j: each neighbour's share of the weighted vote",
                                   ("instance", "neighbour"))
        if not sp.issparse(counts):
            terms["vote_fraction"] = Term(counts / voters[:, None], fraction, ("instance", "label"))
            return ExplainParts(counts, evidence, self._score(counts, k_prime), terms, {})
        # Sparse labels: the scores of the stored votes, as _predict_proba_graph computes them,
        # and each row's zero-vote score as at_zero.
        rows = entry_rows(counts)
        data = counts.data if self._weighted() else counts.data.astype(np.int64)
        proba = sp.csr_array((self._score(data, k_prime, rows), counts.indices, counts.indptr), shape=counts.shape)
        terms["vote_fraction"] = Term(
            sp.csr_array((counts.data / voters[rows], counts.indices, counts.indptr), shape=counts.shape),
            fraction, ("instance", "label"))
        zero = self._score(np.zeros(n_rows, dtype=np.int64), k_prime, np.arange(n_rows))[:, None]
        at_zero = {"evidence": np.zeros(counts.shape[1], dtype=counts.dtype), "proba": zero,
                   "vote_fraction": np.zeros(counts.shape[1])}
        return ExplainParts(counts, evidence, proba, terms, at_zero)

    def _predict_graph(self, graph: NeighborGraph, X: MatrixLike) -> MatrixLike:
        counts, k_prime = self._votes(graph, X)
        if self.variant == "mulan":
            assert k_prime is not None  # _votes gives k' with variant="mulan"
            pred = self._decide_mulan(as_counts_csr(counts), k_prime)
            return pred if sp.issparse(counts) else pred.toarray()
        if sp.issparse(counts):
            return self._decide_sparse(as_counts_csr(counts))
        if self._weighted():  # float counts: the sparse selections, which rank them exactly
            return self._decide_sparse(as_counts_csr(counts)).toarray()
        return self._decide(counts)

    def _predict_topk_graph(self, graph: NeighborGraph, X: MatrixLike, k: int) -> TopK:
        """Exact top k in count space: the score is increasing in the count within a row."""
        counts, k_prime = self._votes(graph, X)
        C = as_counts_csr(counts)
        n_rows = C.shape[0]
        if self._weighted():
            return self._weighted_topk(C, k)
        rows, labels, top = top_by_count(C, np.full(n_rows, k, dtype=np.int64))
        return labels.reshape(n_rows, k), np.asarray(self._score(top, k_prime, rows), dtype=np.float64).reshape(n_rows, k)

    def _weighted_topk(self, C: SparseMatrix, k: int) -> TopK:
        """Top k ranked by the float64 scores themselves, as the dense scores are: a weighted
        count so small that its score rounds to the zero-vote score ties with the zero-vote
        labels (and goes by label index), exactly as in ``predict_proba``."""
        n_rows = C.shape[0]
        zero = float(self._score(np.zeros(1), None)[0])
        S = sp.csr_array((self._score(C.data, None), C.indices, C.indptr), shape=C.shape)
        S.data[S.data <= zero] = 0
        S.eliminate_zeros()
        rows, labels, top = top_by_count(S, np.full(n_rows, k, dtype=np.int64))
        scores = np.where(top == 0, zero, top)
        return labels.reshape(n_rows, k), np.asarray(scores, dtype=np.float64).reshape(n_rows, k)

    # ---------------------------------------------------------- decisions
    def _majority(self, counts: NDArray[Any]) -> NDArray[np.bool_]:
        # conf >= 0.5  <=>  (count + 1/n) / (k + q/n) >= 1/2  <=>  2 n count + 2 >= n k + q
        n, q, k = self.n_train_, self.n_labels_, self.n_neighbors
        return 2 * n * counts + 2 >= n * k + q

    def _decide(self, counts: NDArray[Any]) -> NDArray[np.uint8]:
        """Paper reading, dense counts."""
        return self._majority(counts).astype(np.uint8)

    def _majority_entries(self, C: SparseMatrix) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Rows and labels of the sparse counts that pass the 0.5 rule (a label without
        votes never does: it would need ``2 >= n k + q``)."""
        hit = self._majority(C.data)
        return entry_rows(C)[hit], C.indices[hit].astype(np.int64)

    def _decide_sparse(self, C: SparseMatrix) -> SparseMatrix:
        """Paper reading, CSR counts (same decisions as :meth:`_decide`)."""
        return indicator(*self._majority_entries(C), C.shape)

    def _decide_mulan(self, C: SparseMatrix, k_prime: NDArray[np.int64]) -> SparseMatrix:
        num, total = self._weka_tables(k_prime)
        return indicator(*mulan.mulan_majority(C, k_prime, num, total), C.shape)

    def _tie_stream(self) -> JavaRandom:
        """MULAN's tie-breaking stream, continued from where the last prediction left it."""
        return JavaRandom.from_state(self.tie_random_state_)
