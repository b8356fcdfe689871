"""ML-kNN (Zhang and Zhou 2007; the review of Zhang and Zhou 2014).

Notation follows Zhang and Zhou's (2007) pseudo-code: m training instances, k neighbours,
s the smoothing parameter, C_x(l) the number of x's neighbours that have label l,
H_1^l / H_0^l the events "x has / has not label l", E_j^l "exactly j neighbours of
x have label l".
"""

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state, gen_batches

from ..base import (
    HUBNESS_CONSTRAINT,
    RANDOM_STATE_CONSTRAINT,
    ExplainParts,
    KNNMultiLabelBase,
    Term,
    fit_one_wider,
    graph_rows,
)
from ..neighbors import NeighborGraph
from ..utils._docstrings import fill_doc
from ..utils._param_validation import Interval, Real, StrOptions, get_chunk_n_rows
from ..utils._typing import FloatArray, IntArray, LabelMatrix, MatrixLike, NDArray, SparseMatrix
from ._kernels import (
    count_histograms,
    label_frequencies,
    lookup_table,
    map_decision,
    map_posterior,
    neighbor_label_counts,
    safe_ratio,
    smoothed_likelihood,
    sparse_count_histograms,
    sparse_decisions,
    sparse_neighbor_label_counts,
    topk_from_dense,
    zero_count_topk,
)
from ._loo_counts import canonical_csr, entry_rows, sparse_bin_moves, union_pattern, values_at
from ._missing import MissingLabels, missing_labels_of, observed_counts, unobserved_histogram
from ._partial_fit import MAX_SAMPLES_CONSTRAINT, _PartialFitMixin

#: The ``missing_labels`` parameter's constraint (docs/incomplete_labels.md).
MISSING_LABELS_CONSTRAINT = [StrOptions({"ignore", "negative"})]


#: Share of non-zero counts above which the leave-one-out scores of a dense Y are
#: computed densely (below it, on the stored counts only).
_DENSE_SHARE = 0.25


class _BayesCountsMixin:
    """ML-kNN's prior, likelihood tables and MAP rule over a given neighbour-count matrix.

    Shared by :class:`MLkNN` (counts over the k nearest neighbours) and by
    :class:`~mlknn.algorithms._bmlknn.BMLkNN` / ``NeighborhoodClassifier`` (counts
    over a bounded or radius neighbourhood, the BML-kNN paper's Tables 2-3, which reuse
    ML-kNN's equations). Reads ``self.smoothing`` and ``self.n_labels_``.

    Counts are a dense (n, q) integer array (dense Y) or a canonical
    ``csr_array`` (sparse Y: only the non-zero counts are stored). Every
    quantity below depends on a count only through a per-count, per-label
    table of n_bins + 1 rows (row n_bins: a count beyond the table), so a
    prediction is one lookup per stored count plus, for the zero counts, one
    per-label constant: the posterior, the MAP decision and the top k of a row
    never need its (q,) dense form.
    """

    _supports_sparse_labels = True

    # Read from the estimator (its parameters, and what fit sets).
    smoothing: float
    n_jobs: int | None
    n_labels_: int
    prior_: NDArray[np.float64]
    cond_prob_true_: NDArray[np.float64]
    cond_prob_false_: NDArray[np.float64]
    _fit_Y: LabelMatrix
    #: The unknown entries of the fitted Y (None: complete, or read as negative).
    _missing: MissingLabels | None = None

    def _missing_of(self, Y: LabelMatrix) -> MissingLabels | None:
        """The unknown entries of the Y being fitted (set by the base class's fit), or None."""
        self._missing = missing_labels_of(Y, getattr(self, "_fit_unknown", None))
        return self._missing

    def _fit_tables(
        self, counts: MatrixLike, Y: LabelMatrix, n_bins: int,
        histograms: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None,
    ) -> None:
        """The prior and likelihood tables; ``histograms``: c[j] and c'[j] already
        counted (``partial_fit`` keeps them up to date), else counted from ``counts``."""
        s, m = float(self.smoothing), Y.shape[0]
        missing = getattr(self, "_missing", None)
        # Zhang and Zhou (2007) lines 1-3 (BML-kNN paper, eqs 13-14): P(H_1^l) = (s + sum_i y_i(l)) / (2 s + m),
        # m the observed entries of label l when some are unknown.
        total = m if missing is None else missing.n_observed.astype(np.float64)
        self.prior_ = (s + label_frequencies(Y).astype(np.float64)) / (2 * s + total)
        # Lines 4-13 (BML-kNN paper, steps 3-15, eqs 17-18): c[j], c'[j] and
        # P(E_j^l | H_b^l) = (s + c[j]) / (s (k + 1) + sum_p c[p]).
        if histograms is not None:
            c1, c0 = histograms
        elif sp.issparse(Y):
            c1, c0 = sparse_count_histograms(counts, Y, n_bins)
        else:
            c1, c0 = count_histograms(counts, Y, n_bins)
        if missing is not None:  # c'[j] over the instances whose label is observed negative
            c0 = c0 - unobserved_histogram(counts, missing, n_bins)
        self.cond_prob_true_ = smoothed_likelihood(c1, s)
        self.cond_prob_false_ = smoothed_likelihood(c0, s)
        self._fit_Y = Y

    def _likelihood_tables(self, beyond: bool = False) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """P(E_j | H_b) for b = 1 and b = 0, shape (n_bins, q) (lines 4-13).

        ``beyond=True`` appends row ``n_bins``: a count beyond the table (NC
        only: a query in a denser region than any training instance), a bin no
        training instance reached, whose likelihood is the empty-bin value
        ``s / (s n_bins + sum_p c[p])``.
        """
        like1, like0 = self.cond_prob_true_, self.cond_prob_false_
        if beyond:
            n_bins, s = like1.shape[0], float(self.smoothing)
            u = label_frequencies(self._fit_Y).astype(np.float64)
            missing = getattr(self, "_missing", None)
            m = self._fit_Y.shape[0] if missing is None else missing.n_observed
            like1 = np.vstack([like1, safe_ratio(s, s * n_bins + u)[None, :]])
            like0 = np.vstack([like0, safe_ratio(s, s * n_bins + (m - u))[None, :]])
        return like1, like0

    def _joint_tables(self, beyond: bool = False) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """P(H_b) P(E_j | H_b) for b = 1 and b = 0, shape (n_bins, q) (line 17)."""
        like1, like0 = self._likelihood_tables(beyond)
        return self.prior_ * like1, (1.0 - self.prior_) * like0

    def _score_table(self, beyond: bool = False) -> NDArray[np.float64]:
        # Line 18: the posterior r_t(l) (the prior where both products are 0).
        return map_posterior(*self._joint_tables(beyond), self.prior_)

    def _table_index(self, counts: MatrixLike) -> tuple[MatrixLike, bool]:
        """(counts clipped to the "beyond" row n_bins, whether any count was beyond)."""
        n_bins = self.cond_prob_true_.shape[0]
        values = counts.data if sp.issparse(counts) else counts
        if not (values.size and values.max() >= n_bins):
            return counts, False
        if sp.issparse(counts):
            counts = counts.copy()
            np.minimum(counts.data, n_bins, out=counts.data)
            return counts, True
        return np.minimum(counts, n_bins), True

    def _proba_from_counts(self, counts: MatrixLike, table: FloatArray | None = None) -> FloatArray:
        """Dense (n, q) scores: the score table (default: the posterior) looked up at every count."""
        idx, beyond = self._table_index(counts)
        table = self._score_table(beyond) if table is None else table
        if not sp.issparse(idx):
            return lookup_table(table, idx)
        out = np.repeat(table[0][None, :], idx.shape[0], axis=0)
        rows = np.repeat(np.arange(idx.shape[0]), np.diff(idx.indptr))
        out[rows, idx.indices] = lookup_table(table, idx)
        return out

    def _decide_from_counts(self, counts: MatrixLike, ties: np.random.RandomState | None = None) -> MatrixLike:
        """0/1 decisions: dense (n, q) for dense counts, a uint8 ``csr_array`` for sparse ones.

        ``ties``: a RandomState drawing each exact MAP tie as a fair coin (MULAN's
        reading); None: a tie predicts 0.
        """
        idx, beyond = self._table_index(counts)
        joint1, joint0 = self._joint_tables(beyond)
        table = map_decision(joint1, joint0)
        tied = None if ties is None else (joint1 == joint0)
        if not sp.issparse(idx):
            out = lookup_table(table, idx)
            if tied is not None and ties is not None:
                at = lookup_table(tied, idx)
                out[at] = ties.randint(0, 2, size=int(at.sum()))
            return out
        values = lookup_table(table, idx)
        if tied is not None and ties is not None:
            at = lookup_table(tied, idx)
            values[at] = ties.randint(0, 2, size=int(at.sum()))
        out = sparse_decisions(idx, values, table[0])
        if tied is not None and ties is not None and tied[0].any():
            extra = sparse_decisions(idx, np.zeros_like(values), tied[0])
            extra.data = ties.randint(0, 2, size=extra.nnz).astype(np.uint8)
            out = sp.csr_array(out + extra)
            out.eliminate_zeros()
        return out

    def _explain_counts(
        self, counts: MatrixLike, evidence: str, table: FloatArray | None = None,
        ties: np.random.RandomState | None = None,
    ) -> ExplainParts:
        """The terms of the MAP rule at these counts (for ``explain``).

        The prior and the two likelihoods looked up at each observed count, the
        score table (default: the posterior) looked up by the same kernel as
        :meth:`_proba_from_counts`, and the decision of :meth:`_decide_from_counts`
        (``ties`` as there). Sparse counts give CSR terms on the counts' pattern,
        with the count-0 row of each table as ``at_zero``.
        """
        decision = self._decide_from_counts(counts, ties)
        idx, beyond = self._table_index(counts)
        like1, like0 = self._likelihood_tables(beyond)
        terms = {"prior": Term(self.prior_, "P(H_1^l): the smoothed fraction of training instances with "
                               "label l (Zhang and Zhou (2007); the ML-kNN pseudo-code, lines 1-3)", ("label",))}
        described = {
            "likelihood_true": (like1, "P(E_C^l | H_1^l): how often training instances WITH label l had "
                                       "the observed count C(l) among their neighbours (lines 4-13)"),
            "likelihood_false": (like0, "P(E_C^l | H_0^l): the same among training instances WITHOUT "
                                        "label l (lines 4-13)"),
        }
        if table is None:
            table = self._score_table(beyond)
        if not sp.issparse(idx):
            for name, (tab, text) in described.items():
                terms[name] = Term(lookup_table(tab, idx), text, ("instance", "label"))
            return ExplainParts(counts, evidence, self._proba_from_counts(counts, table), terms, {}, decision)

        def on_pattern(tab: FloatArray) -> SparseMatrix:
            return sp.csr_array((lookup_table(tab, idx), idx.indices, idx.indptr), shape=idx.shape)

        at_zero = {"evidence": np.zeros(idx.shape[1], dtype=counts.dtype), "proba": table[0]}
        for name, (tab, text) in described.items():
            terms[name] = Term(on_pattern(tab), text, ("instance", "label"))
            at_zero[name] = tab[0]
        return ExplainParts(counts, evidence, on_pattern(table), terms, at_zero, decision)

    def _topk_from_counts(
        self, counts: MatrixLike, k: int, table: FloatArray | None = None
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Exact top k of the score table (default: the posterior) at these counts."""
        idx, beyond = self._table_index(counts)
        table = self._score_table(beyond) if table is None else table
        if not sp.issparse(idx):
            return topk_from_dense(lookup_table(table, idx), k)
        return zero_count_topk(idx, lookup_table(table, idx), table[0], k)


    # ------------------------------------------------- leave-one-out (docs/loo.md)
    def _loo_entry_scores(
        self,
        hists: tuple[NDArray[np.int64], NDArray[np.int64]],
        cols: IntArray,
        bins: IntArray,
        y: IntArray,
        own_here: IntArray,
        moves: tuple[IntArray, IntArray],
        unnormalised: bool = False,
        n_bins: int | IntArray | None = None,
    ) -> NDArray[np.float64]:
        """Row i's leave-one-out posterior of label ``cols`` at its count ``bins``, entry by entry.

        The tables of a fit on the other n - 1 rows, read at one bin: the
        histograms ``hists`` (c1, c0) at the bin, plus the other rows' ``moves``
        into it, minus row i itself where its own count is that bin
        (``own_here``); the prior and the likelihood denominators without row
        i's label ``y``. The same operations as ``_fit_tables`` and
        ``_score_table`` on those numbers. ``n_bins``: the number of count
        values of the fit without row i, per entry (NC: its largest
        neighbourhood may be gone); default the fitted tables'.
        """
        s, n = float(self.smoothing), self._fit_Y.shape[0]
        c1, c0 = hists
        if n_bins is None:
            n_bins = c1.shape[0]
        n1 = label_frequencies(self._fit_Y)[cols] - y  # rows with the label among the other n - 1
        h1 = c1[bins, cols] + moves[0] - y * own_here
        h0 = c0[bins, cols] + moves[1] - (1 - y) * own_here
        prior = (s + n1.astype(np.float64)) / (2 * s + (n - 1))
        joint1 = prior * safe_ratio(s + h1, s * n_bins + n1.astype(np.float64))
        if unnormalised:
            return np.asarray(joint1, dtype=np.float64)
        joint0 = (1.0 - prior) * safe_ratio(s + h0, s * n_bins + (n - 1 - n1).astype(np.float64))
        return map_posterior(joint1, joint0, prior)

    def _loo_from_counts(
        self,
        train_ind: IntArray,
        next_ind: IntArray,
        T: MatrixLike,
        Q: MatrixLike,
        n_bins: int,
        k: int | None,
        unnormalised: bool = False,
        active: NDArray[np.bool_] | None = None,
        next_counts: NDArray[np.bool_] | None = None,
        row_bins: IntArray | None = None,
        subset: NDArray[np.intp] | None = None,
    ) -> FloatArray | tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Leave-one-out scores of every training row (or of the rows ``subset``), dense (k None) or top k.

        ``T``: the counts the tables were fitted on, over the neighbourhoods
        ``train_ind``; ``next_ind``: each row's replacement for a removed
        neighbour; ``Q``: each row's query counts (over the neighbours it has
        in a fit without it); ``active``, ``next_counts``: which of those
        neighbours count (see :func:`dense_bin_moves`); ``row_bins``: per row i,
        the number of count values of the fit without it (default ``n_bins``).
        With ``subset``, ``active`` must keep only the pairs whose removed row is in it.
        """
        Y = self._fit_Y
        q = Y.shape[1]
        # A dense Y whose counts are mostly zero (many labels, few per row) takes the
        # sparse path too: it scores the stored counts only (the same numbers).
        dense = not sp.issparse(Y) and np.count_nonzero(Q) > _DENSE_SHARE * Q.size
        if not dense:
            same = T is Q
            Y, Q = canonical_csr(Y), canonical_csr(Q)
            T = Q if same else canonical_csr(T)
        hists = count_histograms(T, Y, n_bins) if dense else sparse_count_histograms(T, Y, n_bins)
        moves1, moves0 = sparse_bin_moves(Y, train_ind, next_ind, T, Q, active, next_counts, self.n_jobs)
        if subset is not None:  # the rows asked for only; the tables above are the whole fit's
            Y, T, Q, moves1, moves0 = Y[subset], T[subset], Q[subset], moves1[subset], moves0[subset]
            row_bins = None if row_bins is None else row_bins[subset]
        n = Y.shape[0]
        if dense:
            scores = self._loo_entry_scores(hists, np.arange(q)[None, :], Q, Y.astype(np.int64),
                                            (T == Q).astype(np.int64), (moves1.toarray(), moves0.toarray()),
                                            unnormalised, None if row_bins is None else row_bins[:, None])
            return scores if k is None else topk_from_dense(scores, k)
        # Every other entry of row i has y = 0, a zero count and no move: one constant
        # per label (and per number of count values, which only NC's rows vary).
        entries = union_pattern(Y, Q, T, moves1, moves0)
        rows, cols = entry_rows(entries), entries.indices.astype(np.int64)
        bins = values_at(entries, Q)
        own_here = (values_at(entries, T) == bins).astype(np.int64)
        scores = self._loo_entry_scores(hists, cols, bins, values_at(entries, Y), own_here,
                                        (values_at(entries, moves1), values_at(entries, moves0)), unnormalised,
                                        None if row_bins is None else row_bins[rows])
        none = np.zeros(q, dtype=np.int64)
        bin_values, row_group = np.unique(np.full(n, n_bins) if row_bins is None else row_bins, return_inverse=True)
        zeros = [self._loo_entry_scores(hists, np.arange(q), none, none, none + 1, (none, none), unnormalised,
                                        int(v)) for v in bin_values]
        if k is None:
            out = np.vstack(zeros)[row_group]
            out[rows, cols] = scores
            return out
        if len(zeros) == 1:
            return zero_count_topk(entries, scores, zeros[0], k)
        labels, top = np.empty((n, k), dtype=np.int64), np.empty((n, k))
        for g, zero in enumerate(zeros):  # a few groups (NC: the largest neighbourhood with or without i)
            members = np.flatnonzero(row_group == g)
            labels[members], top[members] = zero_count_topk(entries[members], scores[row_group[rows] == g], zero, k)
        return labels, top


@fill_doc
class MLkNN(_PartialFitMixin, _BayesCountsMixin, KNNMultiLabelBase):
    """Multi-label k-nearest neighbours with a Bayesian (MAP) decision per label.

    Training (Zhang and Zhou 2007, lines 1-13):

    * prior ``P(H_1^l) = (s + sum_i y_i(l)) / (2 s + m)`` and
      ``P(H_0^l) = 1 - P(H_1^l)``;
    * with C the leave-one-out neighbour counts of the training instances,
      ``c[j] = #{i : y_i(l) = 1, C_i(l) = j}`` and ``c'[j]`` the same over
      ``y_i(l) = 0``;
    * likelihoods ``P(E_j^l | H_1^l) = (s + c[j]) / (s (k + 1) + sum_p c[p])`` and
      likewise ``P(E_j^l | H_0^l)`` with c'.

    Prediction (lines 14-18) for a query t with neighbour counts C_t:

    * ``predict_proba`` returns the posterior ``r_t(l) = P(H_1^l | E_{C_t(l)}^l)``
      = ``P(H_1) P(E|H_1) / (P(H_1) P(E|H_1) + P(H_0) P(E|H_0))`` (line 18), not the
      unnormalised ``P(H_1) P(E|H_1)`` that scikit-multilearn returns;
    * ``predict`` is the MAP rule of line 17. **Tie rule:** label l is assigned
      only when ``P(H_1) P(E|H_1) > P(H_0) P(E|H_0)`` strictly; an exact tie
      predicts 0. When both products are 0 (possible only with ``smoothing=0``)
      the posterior is defined as the prior, as in Zhang's reference code.

    Parameters
    ----------
    {n_neighbors}
    smoothing : float, default=1.0
        s >= 0; 1 is Laplace smoothing.
    neighbors : str or object, default="brute"
        Neighbour-search backend (see :mod:`mlknn.neighbors`).
    {metric}
    {n_jobs}
    hubness : {None, "ls", "mp", "mp-gauss", "dsl"} or reduction object, default=None
        Hubness reduction (:mod:`mlknn.hubness`): the neighbourhoods of the
        training instances (leave-one-out) and of the queries are re-ranked by
        local scaling, mutual proximity (empiric / Gaussian) or DSL, as in Teng et
        al.'s (2025) MLKNN-ls / -mp / -dsl (Algorithm 5). None: plain kNN.
    variant : {"paper", "skmultilearn", "mulan"}, default="paper"
        Which reading of ML-kNN:

        * ``"paper"``: Zhang and Zhou (2007) as above.
        * ``"skmultilearn"``: scikit-multilearn's ``MLkNN``. Its training
          neighbourhoods contain each point itself (``ignore_first_neighbours=0``:
          the point, then its k - 1 nearest others), so the c-histograms count the
          point's own label; ``predict_proba`` is the unnormalised
          ``P(H_1) P(E_{C_t(l)} | H_1)``; ``predict`` is the MAP rule. With
          ``hubness`` the training neighbourhoods stay the reduced leave-one-out
          ones (as the harness's ``mlknn:skml`` since Teng et al.'s (2025) runs).
        * ``"mulan"``: MULAN's ``mulan.classifier.lazy.MLkNN`` (read from its
          source). Its equations are those of the paper (same prior, same
          smoothed c-histograms over leave-one-out neighbourhoods, confidence
          ``P_in / (P_in + P_out)``); it differs in (1) an exact MAP tie is a
          coin flip (MULAN's unseeded ``java.util.Random``; here seeded by
          ``random_state``, so not MULAN's draws); (2) where both products are 0
          (``smoothing=0`` only) MULAN's confidence is NaN, here the prior as in
          "paper". Neighbours tied at the k-th distance are taken by the lower
          training index, where Weka's order depends on its heap. Distances are
          Weka's *without* its internal attribute normalisation, as for every
          ``"mulan"`` reading in mlknn (DMLkNN, BRkNN*, IBLR): MULAN's default
          ``EuclideanDistance`` divides each attribute by its training range,
          which is min-max scaling on the training set (``FeatureScaler("minmax")``,
          ``--scaling minmax``); scale X that way to reproduce MULAN's default.
    {random_state_backend}
        It also seeds the tie draws of ``variant="mulan"``.
    missing_labels : {"ignore", "negative"}, default="ignore"
        How to read the unknown entries of an incomplete Y (NaN, or
        ``Y_missing`` in ``fit``): ``"ignore"`` learns from the observed entries
        only (priors and histograms over the instances whose label is
        observed; neighbour counts over the neighbours whose label is
        observed, rescaled to k; docs/incomplete_labels.md); ``"negative"``
        reads them as 0. A complete Y gives the same model either way.
    {max_samples}
    {max_memory}

    Attributes
    ----------
    prior_ : ndarray of shape (n_labels,)
        P(H_1^l).
    cond_prob_true_ : ndarray of shape (n_neighbors + 1, n_labels)
        ``cond_prob_true_[j, l] = P(E_j^l | H_1^l)``.
    cond_prob_false_ : ndarray of shape (n_neighbors + 1, n_labels)
        ``P(E_j^l | H_0^l)``.
    sparse_labels_ : bool
        Whether Y was kept sparse (a scipy sparse Y given to ``fit``).
    nn_ : fitted neighbour backend
    n_labels_ : int
    n_features_in_ : int
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).
    n_train_ : int
        Number of training instances.

    See Also
    --------
    DMLkNN : ML-kNN with dependencies between labels (Younes et al. 2011).
    BRkNN : binary relevance kNN voting.

    Notes
    -----
    **Cost** (n training rows, m queries, q labels, k neighbours, c = nnz(Y) / n
    labels per row; the neighbour search is the backend's and comes on top).
    With a sparse Y (``sparse_labels_``): fit forms the counts ``C = A Y`` of
    the leave-one-out graph A, at most n k c non-zeros, in O(n k c) time, and
    the c-histograms from C's and Y's non-zeros in O(n k c + k q); memory
    O(nnz(Y) + n k + k q). ``predict`` and ``predict_topk`` cost O(m k c + k q)
    per call, by row chunks under scikit-learn's ``working_memory``: a label's
    posterior depends on its count only, and every label absent from a
    neighbourhood has the per-label constant ``r(0, l)``, so the exact top k
    of a query are among its stored counts and the first k + (its stored
    counts) labels of one list presorted by ``r(0, l)`` (ties by the lower
    label). ``predict`` returns CSR; ``predict_proba`` is dense, O(m q), and
    refuses over the dense budget (:class:`~mlknn.LabelSpaceTooLargeError`).
    With a dense Y everything is O(n q) and O(m q) as before (same numbers).
    See docs/sparse_labels.md.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "ML-KNN: A lazy learning approach to multi-label
    learning", Pattern Recognition 40(7), 2007. Zhang and Zhou (2014), the review's ML-kNN section.

    Examples
    --------
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=200, random_state=0)
    >>> clf = MLkNN(n_neighbors=5).fit(data.X, data.Y)
    >>> clf.predict(data.X[:2]).shape
    (2, 5)
    >>> labels, scores = clf.predict_topk(data.X[:2], k=3)  # best 3 labels per query
    >>> labels.shape
    (2, 3)

    Sparse labels stay sparse (``predict`` then returns CSR):

    >>> import scipy.sparse as sp
    >>> sparse = MLkNN(n_neighbors=5).fit(data.X, sp.csr_matrix(data.Y))
    >>> sparse.sparse_labels_, type(sparse.predict(data.X[:2])).__name__
    (True, 'csr_matrix')
    """

    #: partial_fit updates the histograms by deltas (algorithms/_partial_fit.py).
    _count_deltas = True

    _parameter_constraints = {
        **KNNMultiLabelBase._parameter_constraints,
        "smoothing": [Interval(Real, 0, None, closed="left")],
        "hubness": HUBNESS_CONSTRAINT,
        "variant": [StrOptions({"paper", "skmultilearn", "mulan"})],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "missing_labels": MISSING_LABELS_CONSTRAINT,
        "max_samples": MAX_SAMPLES_CONSTRAINT,
    }

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        smoothing: float = 1.0,
        neighbors: Any = "brute",
        metric: str = "euclidean",
        n_jobs: int | None = None,
        hubness: Any = None,
        variant: str = "paper",
        random_state: Any = None,
        missing_labels: str = "ignore",
        max_samples: int | None = None,
        max_memory: Any = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.smoothing = smoothing
        self.neighbors = neighbors
        self.metric = metric
        self.n_jobs = n_jobs
        self.hubness = hubness
        self.variant = variant
        self.random_state = random_state
        self.missing_labels = missing_labels
        self.max_samples = max_samples
        self.max_memory = max_memory

    # ----------------------------------------------------------------- fit
    def _fit_graph(self, graph: NeighborGraph, Y: LabelMatrix, X: MatrixLike) -> None:
        # Lines 1-13 over the leave-one-out counts C_{x_i} of the training set.
        if self.variant == "skmultilearn" and self.hubness is None:
            graph = _self_included(graph, self.n_neighbors)
        missing = self._missing_of(Y)
        kept = getattr(self, "_kept_histograms", None)  # partial_fit's count deltas (_partial_fit.py)
        if kept is not None and missing is None:
            self._fit_tables(None, Y, self.n_neighbors + 1, histograms=kept(graph, Y, self.n_neighbors + 1))
            return
        self._fit_tables(_counts(graph, Y, missing=missing), Y, self.n_neighbors + 1)

    # ------------------------------------------------------------- predict
    def _predict_proba_graph(self, graph: NeighborGraph, X: MatrixLike) -> FloatArray:
        counts = _counts(graph, self._fit_Y, missing=self._missing)
        if self.variant == "skmultilearn":
            return self._proba_from_counts(counts, table=self.prior_ * self.cond_prob_true_)
        return self._proba_from_counts(counts)

    def _explain_graph(self, graph: NeighborGraph, X: MatrixLike) -> ExplainParts:
        counts = _counts(graph, self._fit_Y, missing=self._missing)
        table = self.prior_ * self.cond_prob_true_ if self.variant == "skmultilearn" else None
        ties = check_random_state(self.random_state) if self.variant == "mulan" else None
        return self._explain_counts(
            counts, "C(l): how many of the k neighbours have label l (Zhang and Zhou 2007)", table, ties
        )

    def _predict_graph(self, graph: NeighborGraph, X: MatrixLike) -> MatrixLike:
        counts = _counts(graph, self._fit_Y, missing=self._missing)
        if self.variant == "mulan":
            return self._decide_from_counts(counts, ties=check_random_state(self.random_state))
        return self._decide_from_counts(counts)

    def _predict_topk_graph(
        self, graph: NeighborGraph, X: MatrixLike, k: int
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        if self.variant == "skmultilearn":
            table = self.prior_ * self.cond_prob_true_
        else:
            table = None
        return _topk_by_chunks(self, graph, k, lambda g, rows: _counts(g, self._fit_Y, missing=self._missing), table)

    # ------------------------------------------------------ leave-one-out
    def _loo_exact_supported(self) -> bool:
        """Whether one fit gives the exact leave-one-out posteriors (not with hubness
        reduction: it rescales every neighbourhood from the whole training set)."""
        return self.hubness is None

    def _loo_exact(self, X: MatrixLike, Y: MatrixLike, k: int | None = None) -> Any:
        """Fit on (X, Y) and return every row's posterior from a fit without it (docs/loo.md).

        Removing row i takes its own entry out of the prior and the
        c-histograms; each row j that had i among its k training neighbours
        takes its (k + 1)-th instead (scikit-multilearn's reading: among its
        k - 1 neighbours besides itself, the k-th). Row i's query count is over
        its k nearest other rows, the first k columns of the leave-one-out graph.
        """
        wide, Y, _ = fit_one_wider(self, X, Y)
        kk = self.n_neighbors
        Q = _counts(wide.take(kk), Y)
        if self.variant == "skmultilearn":
            T = _counts(_self_included(wide, kk), Y)
            train_ind, next_ind = wide.indices[:, : kk - 1], wide.indices[:, kk - 1]
        else:
            T, train_ind, next_ind = Q, wide.indices[:, :kk], wide.indices[:, kk]
        if k is None:
            self._check_dense_scores(wide.n_points)
        return self._loo_from_counts(train_ind, next_ind, T, Q, kk + 1, k,
                                     unnormalised=self.variant == "skmultilearn")


def _counts(
    graph: NeighborGraph, Y: LabelMatrix, mask: NDArray[np.bool_] | None = None, *,
    missing: MissingLabels | None = None,
) -> MatrixLike:
    """ML-kNN's C over a graph: dense (n, q) for dense Y, CSR for sparse Y.

    ``mask`` keeps some neighbours only; ``missing``: Y's unknown entries, the
    counts then estimated from the observed ones (:mod:`._missing`).
    """
    sizes = graph.n_neighbors if mask is None else mask.sum(axis=1, dtype=np.int64)
    return observed_counts(lambda Z: _label_counts(graph, Z, mask), Y, missing, sizes)


def _label_counts(graph: NeighborGraph, Y: LabelMatrix, mask: NDArray[np.bool_] | None) -> MatrixLike:
    if sp.issparse(Y):
        return sparse_neighbor_label_counts(graph, Y, mask)
    if mask is None:
        return neighbor_label_counts(graph, Y)
    return np.rint(neighbor_label_counts(graph, Y, weights=mask.astype(np.float64))).astype(np.int64)


def _self_included(graph: NeighborGraph, k: int) -> NeighborGraph:
    """scikit-multilearn's training neighbourhoods (``ignore_first_neighbours=0``):
    each training point is its own first neighbour, then its k - 1 nearest others."""
    n = graph.n_points
    ind = np.hstack([np.arange(n, dtype=graph.indices.dtype)[:, None], graph.indices[:, : k - 1]])
    dist = np.hstack([np.zeros((n, 1), dtype=graph.distances.dtype), graph.distances[:, : k - 1]])
    return NeighborGraph(np.ascontiguousarray(ind), np.ascontiguousarray(dist), loo=True)


def _topk_by_chunks(
    est: Any,
    graph: NeighborGraph,
    k: int,
    counts_of: Callable[[NeighborGraph, slice], MatrixLike],
    table: FloatArray | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Top k of a count-based estimator over row chunks of the query graph.

    Memory per chunk: its counts (dense: rows x q; sparse: the stored counts)
    and k + (stored counts of a row) candidates per row, under scikit-learn's
    ``working_memory``.
    """
    n, q = graph.n_points, est.n_labels_
    if sp.issparse(est._fit_Y):  # ~6 int64/float64 arrays of k + (stored counts) per row
        per_row = k + graph.n_neighbors * max(1, -(-est._fit_Y.nnz // max(est._fit_Y.shape[0], 1)))
    else:  # the counts, scores and the partition's temporaries, q per row
        per_row = 4 * q
    row_bytes = 8 * 6 * per_row
    step = get_chunk_n_rows(row_bytes=row_bytes, max_n_rows=max(n, 1))
    labels, scores = [], []
    for rows in gen_batches(n, step):
        lab, sc = est._topk_from_counts(counts_of(graph_rows(graph, rows), rows), k, table=table)
        labels.append(lab)
        scores.append(sc)
    if not labels:
        return np.empty((0, k), dtype=np.int64), np.empty((0, k))
    return np.vstack(labels), np.vstack(scores)
