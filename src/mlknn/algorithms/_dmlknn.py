"""DML-kNN, dependent multi-label kNN (Younes, Abdallah, Denoeux and Snoussi 2011).

Notation follows the paper's Algorithm 1: n training instances, Q labels, k
neighbours, s the smoothing parameter, delta the fuzziness parameter, c_x the
membership counting vector of x (eq 3: ``c_x(q)`` = number of x's k nearest
neighbours that have label q), H_1^q / H_0^q the events "x has / has not label q",
E_j^q "exactly j neighbours have label q" and F_j^l "the number of neighbours
with label l lies in [j - delta, j + delta]" (section 4.2).
"""

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..base import HUBNESS_CONSTRAINT, RANDOM_STATE_CONSTRAINT, ExplainParts, KNNMultiLabelBase, Term, fit_one_wider
from ..neighbors import NeighborGraph
from ..utils._budget import WORK_BYTES
from ..utils._docstrings import fill_doc
from ..utils._param_validation import Integral, Interval, Real, StrOptions
from ..utils._resources import ProblemSize, ResourceEstimate
from ..utils._topk import topk_from_dense
from ..utils._typing import FloatArray, LabelMatrix, MatrixLike, NDArray, SparseMatrix
from ._footprint import dmlknn_estimate
from ._kernels import map_decision, map_posterior, neighbor_label_counts, safe_ratio
from ._loo_counts import dense_bin_moves
from ._missing import MissingLabels, missing_labels_of, observed_counts
from ._mlknn import MISSING_LABELS_CONSTRAINT
from ._partial_fit import MAX_SAMPLES_CONSTRAINT, _PartialFitMixin

#: Bytes the per-block arrays of the evidence computation (queries x groups and
#: queries x (label, count) columns) may take; the block height is derived from it.
_BLOCK_BYTES = 4 * WORK_BYTES


#: Default fuzziness. The value in the paper ("delta = _ generally gives good
#: classification performances", sec. 5.3) is lost in our copy; 6 has the best
#: mean rank (Hamming loss and macro AUC on emotions, scene and yeast) in a 5-fold
#: cross-validation over delta = 0..10 at k = 10, s = 1 (docs/notes/dmlknn.md); 3 to 7
#: are within fold-to-fold noise of each other, 0 to 2 are clearly worse.
DEFAULT_DELTA = 6

#: The delta that MULAN's ``DMLkNN.buildInternal`` sets whatever its option says.
MULAN_DELTA = 6


@fill_doc
class DMLkNN(_PartialFitMixin, KNNMultiLabelBase):
    """Dependent multi-label kNN: a MAP rule per label that also looks at the other labels.

    ML-kNN decides label q from ``c_x(q)`` alone. DML-kNN (Younes et al. 2011)
    conditions on the joint event "exactly ``c_x(q)`` neighbours have q **and**,
    for every other label l, about ``c_x(l)`` neighbours (within +-delta) have l"
    (eq 9), so that the co-occurrence of labels in the neighbourhood informs each
    decision.

    Training (Algorithm 1, steps 1-3; eqs 13-14):

    * prior ``Pr(H_1^q) = (1/n) sum_i y_i(q)`` and ``Pr(H_0^q) = 1 - Pr(H_1^q)``
      (eq 13, **not** smoothed, unlike ML-kNN's);
    * ``u(q) = sum_i y_i(q)``, ``u'(q) = n - u(q)`` (eq 14);
    * the leave-one-out membership counting vector ``c_{x_i}`` of every training
      instance (step 8: its k nearest neighbours among the other training
      instances, as in ML-kNN).

    Prediction for a query x with counting vector ``c_x`` (steps 4-17):

    * ``v(q)`` (``v'(q)``) = number of training instances i **with** (without)
      label q such that ``|c_{x_i}(l) - c_x(l)| <= delta`` for every label l and
      ``c_{x_i}(q) = c_x(q)`` (steps 7-12, constraints (15));
    * likelihoods (steps 14-15, eq 16)
      ``Pr(E^q_{c_x(q)}, F | H_1^q) = (s + v(q)) / (s Q + u(q))`` and
      ``Pr(E^q_{c_x(q)}, F | H_0^q) = (s + v'(q)) / (s Q + u'(q))``;
    * ``predict_proba`` returns the posterior ``r_x(q)`` of eq 10 (step 17),
      ``Pr(H_1) Pr(E, F | H_1) / sum_b Pr(H_b) Pr(E, F | H_b)``, in [0, 1];
    * ``predict`` is the MAP rule of eq 9 (step 16). **Tie rule:** label q is
      assigned only when ``Pr(H_1) Pr(E,F|H_1) > Pr(H_0) Pr(E,F|H_0)`` strictly;
      an exact tie predicts 0 (as :class:`MLkNN`). When both products are 0
      (possible only with ``smoothing=0``) the posterior is defined as the prior.

    Readings of the text extraction (see ``docs/notes/dmlknn.md``):

    * **"s x Q"** in steps 14-15 is read literally: s times Q, the number of
      labels (the symbol Q is used for nothing else in the paper). Note that this
      differs from ML-kNN's ``s (k + 1)``; with ``smoothing=0`` the two agree.
    * In eq 16 the likelihoods are printed with index l (``v(l)``, ``u(l)``); the
      pseudo-code (steps 14-15) uses q, the label being decided, which is the only
      reading that makes sense and the one implemented.
    * Step 9 tests the +-delta window on **every** label including q; together
      with the equality on q (step 11) this is exactly constraint set (15).
    * The prior of step 2 / eq 13 is ``(sum_i y_i(q)) / n`` without smoothing, as
      printed.
    * ``delta`` is an integer (counts are integers); any ``delta >= k`` makes
      every F event certain, and then DML-kNN with ``smoothing=0`` equals
      :class:`MLkNN` with ``smoothing=0`` exactly (as section 4.2 notes for
      delta = k).

    **Readings** (``variant``; the table is in ``docs/notes/dmlknn.md``):

    ============================  ==================================  ====================================
    what                          ``"paper"`` (default)               ``"mulan"`` (MULAN's ``DMLkNN``)
    ============================  ==================================  ====================================
    delta                         ``delta``                           6, whatever ``delta`` says
                                                                      (``buildInternal`` sets it; a
                                                                      UserWarning if ``delta != 6``)
    prior ``Pr(H_1^q)``           ``u(q) / n`` (eq 13 as printed)     ``(s + u(q)) / (2 s + n)``
    ``predict``                   ``Pin > Pout`` (tie -> 0)           ``Pin >= Pout`` (tie -> 1)
    ``predict_proba``             ``Pin / (Pin + Pout)``, the prior   ``Pin / (Pin + Pout)``, ``Pin``
                                  when the sum is 0                   (= 0) when the sum is 0
    ============================  ==================================  ====================================

    with ``Pin = Pr(H_1) Pr(E,F|H_1)`` and ``Pout = Pr(H_0) Pr(E,F|H_0)``; the
    likelihoods (steps 14-15) and the evidence counts are the same in both.

    **Cost** (n training rows, k neighbours, q labels, Z <= nnz(counting
    vectors) <= min(n q, n k ``|Y|_row``) the non-zero training counts, G <= n the
    distinct training counting vectors, C <= q k the (label, count) pairs that
    occur): fit O(n k q) for the dense counting vectors plus O(n q log n) to
    group them; each distinct query vector O(Z + G + C + q). The output
    ``v``, ``v'`` of a query is dense in q: for every label the query counts 0
    times, ``v(q)`` depends on which groups qualify, so it differs from query
    to query and there is no per-label constant to presort (unlike ML-kNN).
    DML-kNN therefore has no sparse-label path
    (``_supports_sparse_labels = False``): a sparse Y is densified after the
    base class's memory check.

    Computation: training instances with equal counting vectors are merged into
    G groups at fit, and the queries' distinct counting vectors are processed in
    blocks. Steps 7-12 are a few exact sparse x dense products per block over the
    Z non-zero entries of the groups' counting vectors (a label that both the
    group and the query count 0 times never violates the window; see
    ``_evidence_block``): cost O(B (Z + G + C)) per block of B queries, C <= Q k
    the (label, count >= 1) pairs that occur, memory O(Z + B (G + C + Q))
    bounded by ``_BLOCK_BYTES`` per block, no Python loop over instances or
    labels. (Dense one-hot products would cost O(B G C), with G x C matrices in
    memory.)

    Parameters
    ----------
    {n_neighbors}
    delta : int, default=6
        Fuzziness of the F events (``delta >= 0``; 0 demands identical counting
        vectors; ``delta >= n_neighbors`` makes every F event certain). The paper's
        default is unreadable in our copy; 6 was chosen by 5-fold cross-validation
        at k = 10 (``docs/notes/dmlknn.md``): re-tune it for other k.
    smoothing : float, default=1.0
        s >= 0 of steps 14-15; 1 is Laplace smoothing.
    neighbors : str or object, default="brute"
        Neighbour-search backend (see :mod:`mlknn.neighbors`).
    {metric}
    {n_jobs}
    {random_state_backend}

    hubness : {None, "ls", "mp", "mp-gauss", "dsl"} or reduction object, default=None
        Hubness reduction (:mod:`mlknn.hubness`, docs/hubness.md) applied to the
        neighbour graph before the method reads it: the neighbourhoods are the k
        nearest by the secondary distance. None uses the plain distances.
    variant : {"paper", "mulan"}, default="paper"
        Whose reading: the paper's (Younes et al. 2011, as printed) or MULAN's
        ``mulan.classifier.lazy.DMLkNN`` (see the table above).
    missing_labels : {"ignore", "negative"}, default="ignore"
        How to read the unknown entries of an incomplete Y (NaN, or
        ``Y_missing`` in ``fit``): ``"ignore"`` learns from the observed entries
        only (u(q), u'(q), the prior and the evidence counts v, v' over the
        instances whose label q is observed; counting vectors over the
        neighbours whose label is observed, rescaled to k;
        docs/incomplete_labels.md); ``"negative"`` reads them as 0.
    {max_samples}
    {max_memory}

    Attributes
    ----------
    prior_ : ndarray of shape (n_labels,)
        ``Pr(H_1^q)`` of eq 13 (smoothed with ``variant="mulan"``).
    delta_ : int
        The delta in use (``delta``, or 6 with ``variant="mulan"``).
    n_positive_ : ndarray of shape (n_labels,)
        ``u(q)``; ``u'(q) = n_train_ - u(q)``.
    train_counts_ : ndarray of shape (n_train, n_labels)
        Leave-one-out membership counting vectors ``c_{x_i}`` of the training set.
    nn_ : fitted neighbour backend
    n_labels_ : int
    n_features_in_ : int
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).
    sparse_labels_ : bool
        Whether the sparse-label path was taken (a scipy sparse Y given to ``fit`` and kept sparse).
    n_train_ : int
        Number of training instances.

    See Also
    --------
    MLkNN : the independent-label version (delta >= k, s = 0 gives the same decisions).

    References
    ----------
    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP
    Journal on Advances in Signal Processing, 2011, Article ID 645964.

    Examples
    --------
    >>> from mlknn import DMLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=200, random_state=0)
    >>> clf = DMLkNN(n_neighbors=5, delta=1).fit(data.X, data.Y)
    >>> clf.predict(data.X[:2]).shape
    (2, 5)
    """

    _parameter_constraints = {
        **KNNMultiLabelBase._parameter_constraints,
        "delta": [Interval(Integral, 0, None, closed="left")],
        "smoothing": [Interval(Real, 0, None, closed="left")],
        "hubness": HUBNESS_CONSTRAINT,
        "variant": [StrOptions({"paper", "mulan"})],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "max_samples": MAX_SAMPLES_CONSTRAINT,
        "missing_labels": MISSING_LABELS_CONSTRAINT,
    }

    #: The evidence counts of a query are dense in q (see the class docstring).
    _supports_sparse_labels = False
    #: The unknown entries of the fitted Y, and each group's observed entries per
    #: label, transposed (None: Y complete, or its unknown entries read as negative).
    _missing: MissingLabels | None = None
    _observed_T: NDArray[Any] | None = None

    def __init__(
        self,
        n_neighbors: int = 10,
        *,
        delta: int = DEFAULT_DELTA,
        smoothing: float = 1.0,
        neighbors: Any = "brute",
        metric: str = "euclidean",
        n_jobs: int | None = None,
        hubness: Any = None,
        variant: str = "paper",
        random_state: Any = None,
        max_samples: int | None = None,
        missing_labels: str = "ignore",
        max_memory: Any = None,
    ) -> None:
        self.hubness = hubness
        self.variant = variant
        self.n_neighbors = n_neighbors
        self.delta = delta
        self.smoothing = smoothing
        self.neighbors = neighbors
        self.metric = metric
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_samples = max_samples
        self.missing_labels = missing_labels
        self.max_memory = max_memory

    def _method_estimate(self, size: ProblemSize, action: str) -> ResourceEstimate:
        # Dense in q: see mlknn.algorithms._footprint.
        return dmlknn_estimate(size, action)

    # ------------------------------------------------------------------ fit
    def _fit_graph(self, graph: NeighborGraph, Y: LabelMatrix, X: MatrixLike) -> None:
        n = Y.shape[0]
        self.delta_ = self._delta()
        missing = self._missing = missing_labels_of(Y, getattr(self, "_fit_unknown", None))
        # Steps 1-3 (eqs 13-14), over the observed entries of each label when some are unknown.
        self.n_positive_ = Y.sum(axis=0, dtype=np.int64)
        total = float(n) if missing is None else missing.n_observed
        if self.variant == "mulan":  # MULAN smooths the prior as ML-kNN does
            s = float(self.smoothing)
            self.prior_ = (s + self.n_positive_) / (2.0 * s + total)
        else:
            self.prior_ = safe_ratio(self.n_positive_, total) if missing is not None else self.n_positive_ / total
        # Step 8 for every training instance, once: its LOO counting vector.
        self.train_counts_ = self._counting_vectors(graph, Y)
        self._fit_Y = Y
        # Training instances with the same counting vector pass or fail the
        # constraints (15) together: keep one row per distinct vector, with the
        # number of its instances that have / lack each label.
        groups, inverse = np.unique(self.train_counts_, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        G, q = groups.shape
        self._n_groups = G
        onehot = sp.csr_matrix((np.ones(n), (inverse, np.arange(n))), shape=(G, n))
        pos = np.asarray(onehot @ Y.astype(np.float64))
        size = np.asarray(onehot.sum(axis=1)).ravel()
        # A group's instances count for label q where their label q is observed.
        observed = None if missing is None else size[:, None] - np.asarray(onehot @ missing.unknown.astype(np.float64))
        # Integer sums below 2**24 are exact in float32 whatever the order of the
        # additions; otherwise fall back to float64.
        self._fit_evidence(groups, pos, size, np.float32 if max(n, q) < 2**24 else np.float64, observed)

    def _counting_vectors(self, graph: NeighborGraph, Y: LabelMatrix) -> NDArray[np.int64]:
        """c_x (eq 3) of the graph's rows; over the observed neighbours, rescaled to k, when Y is incomplete."""
        counts: NDArray[np.int64] = observed_counts(
            lambda Z: neighbor_label_counts(graph, Z), Y, self._missing, graph.n_neighbors)
        return counts

    def _delta(self) -> int:
        if self.variant != "mulan":
            return int(self.delta)
        if self.delta != MULAN_DELTA:
            warnings.warn(
                f"DMLkNN(variant='mulan') uses delta={MULAN_DELTA}, as MULAN's buildInternal does "
                f"whatever its option says; the 'delta' parameter ({self.delta}) is ignored. "
                "Use variant='paper' to choose delta.",
                UserWarning,
                stacklevel=5,
            )
        return MULAN_DELTA

    def _fit_evidence(
        self, groups: NDArray[Any], pos: FloatArray, size: FloatArray, dt: Any, observed: FloatArray | None = None
    ) -> None:
        """Sparse encodings of the groups' non-zero counts (see ``_evidence_block``).

        ``dt``: float32 or float64, the dtype of every product (``_group_size.dtype``).
        ``observed``: (G, q) instances of each group whose label is observed
        (None: all of them, ``size``).
        """
        G, q = groups.shape
        g_idx, l_idx = np.nonzero(groups)  # row-major: sorted by group
        j_idx = groups[g_idx, l_idx]
        # Columns: the (label, count >= 1) pairs that occur, key = count * q + label.
        col_keys, col_of = np.unique(j_idx * q + l_idx, return_inverse=True)
        col_of = col_of.ravel()
        C = col_keys.shape[0]
        self._col_label = col_keys % q
        self._col_count = col_keys // q
        self._col_index = np.full((self.n_neighbors + 1) * q, -1, dtype=np.intp)
        self._col_index[col_keys] = np.arange(C)

        def csr(values: NDArray[Any], rows: NDArray[Any], cols: NDArray[Any], shape: tuple[int, int]) -> SparseMatrix:
            return sp.csr_matrix((np.asarray(values, dtype=dt), (rows, cols)), shape=shape)

        ones = np.ones(g_idx.shape[0])
        self._g_nonzero_cols = csr(ones, g_idx, col_of, (G, C))  # (G, C): c_g(l) == j >= 1
        self._g_nonzero_labels = csr(ones, g_idx, l_idx, (G, q))  # (G, q): c_g(l) >= 1
        self._col_pos_T = csr(pos[g_idx, l_idx], col_of, g_idx, (C, G))  # with l, at column (l, c_g(l))
        at_size = size[g_idx] if observed is None else observed[g_idx, l_idx]
        self._col_size_T = csr(at_size, col_of, g_idx, (C, G))  # all (observed), at column (l, c_g(l))
        self._observed_T = None if observed is None else np.ascontiguousarray(observed.T, dtype=dt)
        p_g, p_l = np.nonzero(pos)
        self._pos_T = csr(pos[p_g, p_l], p_l, p_g, (q, G))  # (q, G)
        self._group_size = size.astype(dt)
        self._label_of_col = csr(np.ones(C), self._col_label, np.arange(C), (q, C))  # sums columns per label

    # -------------------------------------------------------------- predict
    def evidence_counts(self, query_counts: NDArray[Any]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``v`` and ``v'`` of Algorithm 1 (steps 5-12) for given counting vectors.

        Parameters
        ----------
        query_counts : ndarray of shape (n_queries, n_labels), int
            Membership counting vectors ``c_x`` (eq 3) of the queries.

        Returns
        -------
        v, v_prime : ndarrays of shape (n_queries, n_labels), int64
            Training instances with (v) / without (v') label q whose LOO
            counting vector equals ``c_x`` on q and is within +-delta of it on
            every other label.
        """
        query_counts = np.asarray(query_counts, dtype=np.int64)
        uq, inverse = np.unique(query_counts, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        q = self.n_labels_
        v = np.zeros((uq.shape[0], q), dtype=np.int64)
        v_prime = np.zeros_like(v)
        G, C = self._n_groups, self._col_label.shape[0]
        # Per query row: the violation matrix and the summed weights (3 C), the
        # violation counts and the qualifying mask (3 G), per-label sums (4 Q), with
        # temporaries; and the int64 per-label index arrays of the gather (8 Q).
        row_bytes = 2 * self._group_size.itemsize * (3 * C + 3 * G + 4 * q) + 8 * 8 * q
        height = max(1, _BLOCK_BYTES // row_bytes)
        for start in range(0, uq.shape[0], height):
            stop = min(start + height, uq.shape[0])
            v[start:stop], v_prime[start:stop] = self._evidence_block(uq[start:stop])
        return v[inverse], v_prime[inverse]

    def _evidence_block(self, cx: NDArray[Any]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Steps 7-12 for a block of query vectors, from the groups' non-zero counts.

        Exact (small integers in float32 or float64), work proportional to the
        groups' non-zero counts. For query x and group g:

        * a label on which both count 0 always lies in the window (delta >= 0), so
          the labels that can violate step 9 are the group's non-zero ones,
          ``|c_g(l) - c_x(l)| > delta`` (sparse product over the group's (label,
          count) columns), and the query's labels with ``c_x(l) > delta`` on which
          the group counts 0 (all such labels minus those where the group is
          non-zero); the group qualifies when neither happens;
        * step 11 for ``c_x(l) = j >= 1`` reads column (l, j) of the qualifying
          groups' summed weights (sparse product); for ``c_x(l) = 0`` it is the
          sum over all qualifying groups minus those with ``c_g(l) >= 1``.
        """
        q, k, dt = self.n_labels_, self.n_neighbors, self._group_size.dtype
        cx = np.asarray(cx)
        B = cx.shape[0]
        # (C, B): group column (l, j) violates the window of query b.
        # (Few (column, query) pairs violate: the products follow their non-zeros.)
        viol = np.abs(self._col_count[:, None] - cx.T[self._col_label]) > self.delta_
        high = cx.T > self.delta_  # (q, B): c_x(l) > delta
        violations = _count_product(self._g_nonzero_cols, viol, dt)  # (G, B)
        violations += high.sum(axis=0, dtype=dt)[None, :]
        violations -= _count_product(self._g_nonzero_labels, high, dt)
        qualifying = (violations == 0).astype(dt)  # step 9 on every label; (G, B)
        del viol, violations
        col_pos = np.asarray(self._col_pos_T @ qualifying)  # (C, B)
        col_size = np.asarray(self._col_size_T @ qualifying)
        # c_x(l) = 0: all qualifying groups minus those with c_g(l) >= 1 (per-label sums).
        zero_pos = np.asarray(self._pos_T @ qualifying) - np.asarray(self._label_of_col @ col_pos)  # (q, B)
        every = (self._group_size @ qualifying)[None, :] if self._observed_T is None else self._observed_T @ qualifying
        zero_all = every - np.asarray(self._label_of_col @ col_size)
        # c_x(l) = j >= 1: column (l, j) if some group has it, else no qualifying instance.
        valid = (cx >= 1) & (cx <= k)
        col = np.where(valid, self._col_index[np.where(valid, cx, 0) * q + np.arange(q)[None, :]], -1)
        found = col >= 0
        safe = np.where(found, col, 0)
        cols_b = np.arange(B)[:, None]
        if col_pos.shape[0] == 0:  # no group counts any label (e.g. all-zero Y): nothing to read
            col_pos = col_size = np.zeros((1, B), dtype=dt)
        v = np.where(cx == 0, zero_pos.T, np.where(found, col_pos[safe, cols_b], 0))
        all_ = np.where(cx == 0, zero_all.T, np.where(found, col_size[safe, cols_b], 0))
        return np.rint(v).astype(np.int64), np.rint(all_ - v).astype(np.int64)

    def _likelihoods(self, graph: NeighborGraph) -> tuple[NDArray[Any], ...]:
        """c_x, v, v' and the two likelihoods of steps 14-15 for the points of a graph."""
        counts = self._counting_vectors(graph, self._fit_Y)
        v, v_prime = self.evidence_counts(counts)
        s, Q = float(self.smoothing), self.n_labels_
        n = self.n_train_ if self._missing is None else self._missing.n_observed
        like1 = safe_ratio(s + v, s * Q + self.n_positive_)  # step 14
        like0 = safe_ratio(s + v_prime, s * Q + (n - self.n_positive_))  # step 15
        return counts, v, v_prime, like1, like0

    def _joint(self, graph: NeighborGraph) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        like1, like0 = self._likelihoods(graph)[3:]
        return self.prior_ * like1, (1.0 - self.prior_) * like0

    def _posterior(self, joint1: NDArray[np.float64], joint0: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.variant == "mulan":  # Pin / (Pin + Pout), Pin (= 0) when the sum is 0
            return map_posterior(joint1, joint0, np.zeros_like(self.prior_))
        return map_posterior(joint1, joint0, self.prior_)  # eq 10 / step 17

    def _predict_proba_graph(self, graph: NeighborGraph, X: MatrixLike) -> NDArray[np.float64]:
        return self._posterior(*self._joint(graph))

    def _explain_graph(self, graph: NeighborGraph, X: MatrixLike) -> ExplainParts:
        counts, v, v_prime, like1, like0 = self._likelihoods(graph)
        cite = "Younes et al. (2011)"
        terms = {
            "prior": Term(self.prior_, f"Pr(H_1^q): the fraction of training instances with label q ({cite}, "
                                       "eq 13; smoothed with variant='mulan')", ("label",)),
            "v": Term(v, "v(q): training instances WITH q whose leave-one-out counts equal c_x(q) and lie "
                         "within +-delta of c_x on every label (Algorithm 1, steps 7-12)", ("instance", "label")),
            "v_prime": Term(v_prime, "v'(q): the same among training instances WITHOUT q (steps 7-12)",
                            ("instance", "label")),
            "likelihood_true": Term(like1, "Pr(E, F | H_1^q) = (s + v(q)) / (s Q + u(q)) (step 14, eq 16)",
                                    ("instance", "label")),
            "likelihood_false": Term(like0, "Pr(E, F | H_0^q) = (s + v'(q)) / (s Q + u'(q)) (step 15, eq 16)",
                                     ("instance", "label")),
        }
        joint1, joint0 = self.prior_ * like1, (1.0 - self.prior_) * like0
        return ExplainParts(counts, f"c_x(q): how many of the k neighbours have label q ({cite}, eq 3)",
                            self._posterior(joint1, joint0), terms, {}, self._decide(joint1, joint0))

    def _predict_graph(self, graph: NeighborGraph, X: MatrixLike) -> NDArray[np.uint8]:
        return self._decide(*self._joint(graph))

    def _decide(self, joint1: NDArray[np.float64], joint0: NDArray[np.float64]) -> NDArray[np.uint8]:
        if self.variant == "mulan":  # MULAN: Pin >= Pout
            return (joint1 >= joint0).astype(np.uint8)
        return map_decision(joint1, joint0)  # eq 9 / step 16, ties -> 0

    # ------------------------------------------------------ leave-one-out
    def _loo_exact_supported(self) -> bool:
        """Exact from one fit without hubness reduction."""
        return self.hubness is None

    def _loo_exact(self, X: MatrixLike, Y: MatrixLike, k: int | None = None) -> Any:
        """Fit on (X, Y) and return every row's posterior from a fit without it (docs/loo.md).

        Row i's query counting vector is its leave-one-out one, which the full
        fit's evidence counts ``v``, ``v'`` already compare with every training
        vector, row i's own included (it always qualifies against itself). A fit
        without i drops that self-match, ``u(q)`` loses ``y_i(q)``, n becomes
        n - 1, and every row j that had i among its k neighbours takes its
        (k + 1)-th instead: its vector moves, and may enter or leave row i's
        evidence (equal count on q, within +-delta on every label).
        """
        wide, Y, _ = fit_one_wider(self, X, Y)
        kk, n, s = self.n_neighbors, wide.n_points, float(self.smoothing)
        C = self.train_counts_
        v, v_prime = self.evidence_counts(C)
        moves1, moves0 = dense_bin_moves(Y, wide.indices[:, :kk], wide.indices[:, kk], C, C, window=self.delta_)
        y = np.asarray(Y, dtype=np.int64)
        v, v_prime = v - y + moves1, v_prime - (1 - y) + moves0
        u = self.n_positive_ - y  # u(q) of the other n - 1 rows
        if self.variant == "mulan":
            prior = (s + u) / (2.0 * s + (n - 1))
        else:
            prior = u / float(n - 1)
        joint1 = prior * safe_ratio(s + v, s * self.n_labels_ + u)
        joint0 = (1.0 - prior) * safe_ratio(s + v_prime, s * self.n_labels_ + ((n - 1) - u))
        proba = map_posterior(joint1, joint0, np.zeros_like(prior) if self.variant == "mulan" else prior)
        return proba if k is None else topk_from_dense(proba, k)


#: Per multiply-add, how much more a sparse x sparse product costs than a sparse x
#: dense one (index merging, building the result, densifying it; measured in
#: docs/performance.md): the sparse form of M pays off only when it saves more
#: multiply-adds than this factor.
_SPARSE_PRODUCT_OVERHEAD = 50


def _count_product(A: SparseMatrix, M: NDArray[np.bool_], dt: Any) -> NDArray[Any]:
    """``A @ M`` for a sparse 0/1 matrix A and a boolean M, as a dense array.

    When M is mostly zero (on delicious 0.2 % of ``high``), M is made sparse first,
    so that the cost follows its non-zeros; otherwise (the violation matrices of
    small label sets, 10-20 % non-zero) A multiplies the dense M directly. The
    multiply-adds of the sparse form are counted exactly (A's entries per column
    times M's per row). Sums of ones: exact in float32 below 2**24, so both forms
    give the same bits.
    """
    sparse_work = float(np.bincount(A.indices, minlength=A.shape[1]) @ M.sum(axis=1, dtype=np.float64))
    if _SPARSE_PRODUCT_OVERHEAD * sparse_work >= float(A.nnz) * M.shape[1]:
        return np.asarray(A @ M.astype(dt), dtype=dt)
    out = A @ sp.csr_matrix(M, dtype=dt)
    return np.asarray(out.toarray(), dtype=dt)
