"""BR-kNN, BR-kNN-a and BR-kNN-b (Spyromitros, Tsoumakas and Vlahavas 2008).

Binary relevance with a kNN base learner, searched once for all labels. Seed 000
compares DML-kNN with BR-kNN (Tables 4-10); seed 001 compares MLHiKNN with BRkNNa
(Tables 3, A2-A6) and with its hubness-reduced variants (Table 12).

The default reading (``variant="paper"``) is the authors' own code in MULAN
(``mulan.classifier.lazy.BRkNN``, by Spyromitros-Xioufis and Tsoumakas) with
exactly k neighbours and deterministic ties; ``variant="mulan"`` reproduces
MULAN bit for bit, ties at the k-th distance and random tie draws included
(:mod:`._brknn_mulan`); ``BRkNNa(variant="skmultilearn")`` is
scikit-multilearn's ``BRkNNaClassifier``. docs/brknn.md tabulates the
differences. Notation: n training instances, q labels, k neighbours,
``count_l`` the number of a query's k neighbours that have label l, and
``L = sum_l count_l`` the total size of the neighbours' label sets.

Sparse labels: see :class:`BRkNN` and :mod:`._brknn_votes`.
"""

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from ..base import HUBNESS_CONSTRAINT, RANDOM_STATE_CONSTRAINT, KNNMultiLabelBase
from ..neighbors import NeighborGraph, build_graph
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
from ._brknn_votes import as_counts_csr, entry_rows, indicator, row_sums, top_by_count
from ._java_random import JavaRandom
from ._kernels import neighbor_label_counts, sparse_neighbor_label_counts

#: MULAN seeds the tie-breaking ``java.util.Random`` of BRkNN with 1 (its constructor).
MULAN_SEED = 1


class BRkNN(KNNMultiLabelBase):
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

    **Readings** (``variant``; the full table is in docs/brknn.md):

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

    **Sparse labels.** A CSR Y stays sparse: counts are the sparse product
    graph @ Y, ``predict`` returns CSR, and :meth:`predict_topk` is exact
    without any (n_queries, q) array. Cost: the search, plus
    O(n_queries k + nnz(counts) log nnz(counts)).

    Parameters
    ----------
    n_neighbors : int, default=10
        k, the number of neighbours.
    neighbors : str or object, default="brute"
        Neighbour-search backend (see :mod:`mlknn.neighbors`).
    metric : str, default="euclidean"
    n_jobs : int, optional
    hubness : {"ls", "mp", "mp-gauss", "dsl"}, reduction object or None, default=None
        Hubness reduction applied to every neighbour graph before the vote
        (seed 001's BRkNNa-ls, -mp and -dsl; see :mod:`mlknn.hubness`).
    variant : {"paper", "mulan"}, default="paper"
        Whose reading to compute (see above).
    random_state : int, RandomState instance or None, default=None
        Seeds a randomised backend (``neighbors="pynndescent"``). MULAN's tie
        draws always use ``java.util.Random(1)``, as MULAN does.

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
    }
    _supports_sparse_labels = True

    def __init__(self, n_neighbors: int = 10, *, neighbors: Any = "brute", metric: str = "euclidean",
                 n_jobs: int | None = None, hubness: Any = None, variant: str = "paper",
                 random_state: Any = None) -> None:
        self.n_neighbors = n_neighbors
        self.neighbors = neighbors
        self.metric = metric
        self.n_jobs = n_jobs
        self.hubness = hubness
        self.variant = variant
        self.random_state = random_state

    def _search_width(self) -> int:
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
        # Lazy: nothing is learned beyond the stored label matrix.
        self._fit_Y = Y

    # ------------------------------------------------------------- votes
    def _votes(self, graph: NeighborGraph, X: MatrixLike) -> tuple[MatrixLike, NDArray[np.int64] | None]:
        """Counts per (query, label), dense (dense Y) or CSR (sparse Y), and k' per query.

        ``k_prime`` is None when every query has exactly k neighbours (the paper and
        scikit-multilearn readings); with ``variant="mulan"`` it holds each query's
        neighbour count including the ties at the k-th distance.
        """
        Y = self._fit_Y
        if self.variant != "mulan":
            counts = sparse_neighbor_label_counts(graph, Y) if sp.issparse(Y) else neighbor_label_counts(graph, Y)
            return counts, None
        research = None
        if self.nn_ is not None and X is not None:
            research = mulan.research_with(self.nn_, validate_features(self, X, reset=False), build_graph)
        A, k_prime = mulan.tie_extended_neighbourhoods(graph, self.n_neighbors, self.n_train_, research)
        return as_counts_csr(A @ Y) if sp.issparse(Y) else np.asarray(A @ Y.astype(np.int64)), k_prime

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
        out[rows, counts.indices] = self._score(counts.data.astype(np.int64), k_prime, rows)
        return out

    def _predict_graph(self, graph: NeighborGraph, X: MatrixLike) -> MatrixLike:
        counts, k_prime = self._votes(graph, X)
        if self.variant == "mulan":
            assert k_prime is not None  # _votes gives k' with variant="mulan"
            pred = self._decide_mulan(as_counts_csr(counts), k_prime)
            return pred if sp.issparse(counts) else pred.toarray()
        if sp.issparse(counts):
            return self._decide_sparse(as_counts_csr(counts))
        return self._decide(counts)

    def _predict_topk_graph(self, graph: NeighborGraph, X: MatrixLike, k: int) -> TopK:
        """Exact top k in count space: the score is increasing in the count within a row."""
        counts, k_prime = self._votes(graph, X)
        C = as_counts_csr(counts)
        n_rows = C.shape[0]
        rows, labels, top = top_by_count(C, np.full(n_rows, k, dtype=np.int64))
        return labels.reshape(n_rows, k), np.asarray(self._score(top, k_prime, rows), dtype=np.float64).reshape(n_rows, k)

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


class BRkNNa(BRkNN):
    """BR-kNN-a: BR-kNN that never predicts the empty set (MULAN's ``EXTA``).

    Scores and the 0.5 rule are those of :class:`BRkNN`:
    ``conf_l = (count_l + 1/n) / (k + q/n)``, label l assigned when
    ``conf_l >= 0.5`` (an exact half vote is not assigned when q >= 3). When no
    label reaches 0.5, the single label with the highest confidence, i.e. the
    most neighbour votes, is assigned.

    **Tie rule.** Among labels with equal confidence the lowest label index
    (column of Y) wins; when no neighbour has any label, label 0 is assigned.

    **Readings** (``variant``):

    * ``"paper"`` (default): the above.
    * ``"mulan"``: MULAN's ``EXTA`` bit for bit (ties at the k-th distance and
      float confidences as in :class:`BRkNN`); the tied maxima, in increasing
      index order, are drawn from with ``java.util.Random(1).nextInt(#tied)``
      (``Util.RandomIndexOfMax``), one stream per fitted estimator, consumed in
      query order by every ``predict``; a single maximum draws nothing.
    * ``"skmultilearn"``: scikit-multilearn's ``BRkNNaClassifier``, which is
      plain BR-kNN: ``predict_proba`` is ``count_l / k`` and ``predict`` is
      ``rint(count_l / k)``, a strict majority, with no fallback (it can predict
      the empty set).

    Parameters
    ----------
    n_neighbors : int, default=10
    neighbors : str or object, default="brute"
    metric : str, default="euclidean"
    n_jobs : int, optional
    hubness : {"ls", "mp", "mp-gauss", "dsl"}, reduction object or None, default=None
        Seed 001's BRkNNa-ls, BRkNNa-mp, BRkNNa-dsl.
    variant : {"paper", "mulan", "skmultilearn"}, default="paper"
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    n_train_ : int
    n_labels_ : int
    nn_ : fitted neighbour backend
    n_features_in_ : int
    sparse_labels_ : bool
    tie_random_state_ : int
        ``variant="mulan"`` only (see :class:`BRkNN`).
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    BRkNN : the plain 0.5 rule, which may predict the empty set.
    BRkNNb : predicts as many labels as the neighbours have on average.

    References
    ----------
    Spyromitros, Tsoumakas and Vlahavas, SETN 2008 (see :class:`BRkNN`).

    Examples
    --------
    >>> from mlknn import BRkNNa
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=200, random_state=0)
    >>> clf = BRkNNa(n_neighbors=5).fit(data.X, data.Y)
    >>> bool(clf.predict(data.X).sum(axis=1).min() >= 1)
    True
    """

    _parameter_constraints = {
        **BRkNN._parameter_constraints,
        "variant": [StrOptions({"paper", "skmultilearn", "mulan"})],
    }

    def _majority(self, counts: NDArray[Any]) -> NDArray[np.bool_]:
        if self.variant == "skmultilearn":
            # scikit-multilearn: rint(count / k), i.e. a strict majority (rint(0.5) = 0).
            return 2 * counts > self.n_neighbors
        return super()._majority(counts)

    def _decide(self, counts: NDArray[Any]) -> NDArray[np.uint8]:
        pred = self._majority(counts).astype(np.uint8)
        if self.variant == "skmultilearn":
            return pred  # no fallback: scikit-multilearn's BRkNNaClassifier is plain BR-kNN
        empty = ~pred.any(axis=1)
        # conf is increasing in count, so the top confidence is the top count;
        # argmax returns the first maximum: the lowest label index.
        best = np.argmax(counts[empty], axis=1)
        pred[np.flatnonzero(empty), best] = 1
        return pred

    def _decide_sparse(self, C: SparseMatrix) -> SparseMatrix:
        rows, labels = self._majority_entries(C)
        if self.variant != "skmultilearn":
            # Rows left empty get their most voted label, the lowest index among ties
            # (label 0 when no neighbour has a label): the top 1 in count space.
            empty = np.ones(C.shape[0], dtype=np.int64)
            empty[rows] = 0
            fill_rows, fill_labels, _ = top_by_count(C, empty)
            rows, labels = np.concatenate([rows, fill_rows]), np.concatenate([labels, fill_labels])
        return indicator(rows, labels, C.shape)

    def _decide_mulan(self, C: SparseMatrix, k_prime: NDArray[np.int64]) -> SparseMatrix:
        num, total = self._weka_tables(k_prime)
        rng = self._tie_stream()
        pred = mulan.exta_select(C, k_prime, num, total, rng)
        self.tie_random_state_ = rng.state
        return pred


class BRkNNb(BRkNN):
    """BR-kNN-b: assign the s most voted labels (MULAN's ``EXTB``).

    Scores are those of :class:`BRkNN`, ``conf_l = (count_l + 1/n) / (k + q/n)``.
    The prediction is the s labels of highest confidence, where s is the size of
    the neighbours' label sets, averaged as MULAN does it:

    ``s = max(1, round_half_up(L / (k + q/n)))``, with ``L = sum_l count_l``,

    i.e. the mean label-set size L/k with the same q/n correction in the
    denominator as the confidences, rounded like Java's ``Math.round``. It is
    computed exactly, in integers: ``s = (2 n L + n k + q) // (2 (n k + q))``.
    **Rounding of .5:** the correction makes the averaged value slightly smaller
    than L/k, so a mean of exactly x.5 rounds **down** to x (k = 2 neighbours
    with 1 and 2 labels, n = 100, q = 6: 3 / 2.06 = 1.456, s = 1), and so does a
    mean within about ``(L/k) q / (n k)`` above x.5. ``s = 0`` (neighbours with
    no labels) is raised to 1; MULAN would index out of bounds there. s never
    exceeds q, and exactly s labels are predicted.

    **Tie rule.** Labels are ranked by confidence (equivalently by count); among
    equal confidences the lower label index ranks first, so the labels tied at
    the s-th place are taken in increasing index order.

    **Readings** (``variant``):

    * ``"paper"`` (default): the above.
    * ``"mulan"``: MULAN's ``EXTB`` bit for bit: ties at the k-th distance and
      float confidences as in :class:`BRkNN`, ``s = Math.round(L / (q/n + k'))``
      in float64; the labels above the s-th confidence are set and the remaining
      slots are filled by ``java.util.Random(1).nextInt(#tied)`` draws, with
      rejection, among the tied labels as MULAN lists them (Weka's
      ``stableSort``, walked from the top down to position 1, so the
      lowest-index label of minimum confidence is never a candidate). Every
      query draws at least once. Where MULAN fails (s = 0: index out of bounds;
      s = q: ``nextInt(0)`` or an endless draw) s = 0 is raised to 1 and s = q
      selects every label.

    scikit-multilearn's ``BRkNNbClassifier`` differs (half-to-even rounding of the
    plain mean, every label when that is 0, ties left to ``np.argpartition``):
    see docs/brknn.md.

    Parameters
    ----------
    n_neighbors : int, default=10
    neighbors : str or object, default="brute"
    metric : str, default="euclidean"
    n_jobs : int, optional
    hubness : {"ls", "mp", "mp-gauss", "dsl"}, reduction object or None, default=None
    variant : {"paper", "mulan"}, default="paper"
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    n_train_ : int
    n_labels_ : int
    nn_ : fitted neighbour backend
    n_features_in_ : int
    sparse_labels_ : bool
    tie_random_state_ : int
        ``variant="mulan"`` only (see :class:`BRkNN`).
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    BRkNN : the plain 0.5 rule.
    BRkNNa : the 0.5 rule, with the top label when it predicts nothing.

    References
    ----------
    Spyromitros, Tsoumakas and Vlahavas, SETN 2008 (see :class:`BRkNN`).

    Examples
    --------
    >>> from mlknn import BRkNNb
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=200, random_state=0)
    >>> clf = BRkNNb(n_neighbors=5).fit(data.X, data.Y)
    >>> clf.predict(data.X[:2]).shape
    (2, 5)
    """

    def label_set_size(self, counts: MatrixLike) -> NDArray[np.int64]:
        """s for each query, from its neighbour counts (see the class docstring).

        The paper reading's s (exactly k neighbours); ``variant="mulan"`` uses
        MULAN's float rounding over its k' neighbours instead.

        Parameters
        ----------
        counts : ndarray or sparse matrix of shape (n_queries, n_labels), int
            ``count_l`` per query, as from
            :func:`mlknn.algorithms._kernels.neighbor_label_counts` (or its sparse
            counterpart).

        Returns
        -------
        ndarray of shape (n_queries,), int64
        """
        check_is_fitted(self)
        n, q, k = self.n_train_, self.n_labels_, self.n_neighbors
        if sp.issparse(counts):
            total = row_sums(as_counts_csr(counts))
        else:
            total = np.asarray(counts, dtype=np.int64).sum(axis=1)
        s = (2 * n * total + n * k + q) // (2 * (n * k + q))
        return np.maximum(s, 1)

    def _decide_sparse(self, C: SparseMatrix) -> SparseMatrix:
        rows, labels, _ = top_by_count(C, self.label_set_size(C))
        return indicator(rows, labels, C.shape)

    def _decide_mulan(self, C: SparseMatrix, k_prime: NDArray[np.int64]) -> SparseMatrix:
        _, total = self._weka_tables(k_prime)
        rng = self._tie_stream()
        pred = mulan.extb_select(C, k_prime, total, rng)
        self.tie_random_state_ = rng.state
        return pred

    def _decide(self, counts: NDArray[Any]) -> NDArray[np.uint8]:
        n_queries, q = counts.shape
        s = self.label_set_size(counts)
        pred = np.zeros((n_queries, q), dtype=np.uint8)
        if n_queries == 0:
            return pred
        # A unique key per row: more votes first, then the lower label index.
        key = counts.astype(np.int64) * q + (q - 1 - np.arange(q))
        s_max = int(s.max())
        if s_max < q:
            top = np.argpartition(-key, s_max - 1, axis=1)[:, :s_max]
        else:
            top = np.broadcast_to(np.arange(q), (n_queries, q))
        # Order the candidates by decreasing key, then keep the first s of each row.
        order = np.argsort(-np.take_along_axis(key, top, axis=1), axis=1)
        ranked = np.take_along_axis(top, order, axis=1)
        keep = np.arange(ranked.shape[1])[None, :] < s[:, None]
        rows = np.broadcast_to(np.arange(n_queries)[:, None], ranked.shape)
        pred[rows[keep], ranked[keep]] = 1
        return pred
