"""DML-kNN, dependent multi-label kNN (Younes, Abdallah, Denoeux, Snoussi 2011): seed 000.

Notation follows the paper's Algorithm 1: n training instances, Q labels, k
neighbours, s the smoothing parameter, delta the fuzziness parameter, c_x the
membership counting vector of x (eq 3: ``c_x(q)`` = number of x's k nearest
neighbours that have label q), H_1^q / H_0^q the events "x has / has not label q",
E_j^q "exactly j neighbours have label q" and F_j^l "the number of neighbours
with label l lies in [j - delta, j + delta]" (section 4.2).
"""

import numpy as np
import scipy.sparse as sp

from ..base import HUBNESS_CONSTRAINT, KNNMultiLabelBase
from ..utils._param_validation import Integral, Interval, Real
from ._kernels import map_decision, map_posterior, neighbor_label_counts, safe_ratio

#: Bytes the per-block arrays of the evidence computation (queries x groups and
#: queries x (label, count) columns) may take; the block height is derived from it.
_BLOCK_BYTES = 64 * 2**20

#: Default fuzziness. The value in the paper ("delta = _ generally gives good
#: classification performances", sec. 5.3) is lost in our copy; 6 has the best
#: mean rank (Hamming loss and macro AUC on emotions, scene and yeast) in a 5-fold
#: cross-validation over delta = 0..10 at k = 10, s = 1 (docs/dmlknn.md); 3 to 7
#: are within fold-to-fold noise of each other, 0 to 2 are clearly worse.
DEFAULT_DELTA = 6


class DMLkNN(KNNMultiLabelBase):
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

    Readings of the text extraction (see ``docs/dmlknn.md``):

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

    Computation: training instances with equal counting vectors are merged into
    G groups at fit, and the queries' distinct counting vectors are processed in
    blocks. With C <= Q (k + 1) the (label, count) pairs that occur among the
    groups, steps 7-12 are two exact matrix products per block (one-hot
    encodings, small integers; see ``_evidence_block``): cost O(B G C) per block
    of B queries, memory O(G C + B (G + C)) bounded by ``_BLOCK_BYTES`` per
    block, no Python loop over instances or labels.

    Parameters
    ----------
    n_neighbors : int, default=10
        k, the number of neighbours.
    delta : int, default=6
        Fuzziness of the F events (``delta >= 0``; 0 demands identical counting
        vectors; ``delta >= n_neighbors`` makes every F event certain). The paper's
        default is unreadable in our copy; 6 was chosen by 5-fold cross-validation
        at k = 10 (``docs/dmlknn.md``): re-tune it for other k.
    smoothing : float, default=1.0
        s >= 0 of steps 14-15; 1 is Laplace smoothing.
    neighbors : str or object, default="brute"
        Neighbour-search backend (see :mod:`mlknn.neighbors`).
    metric : str, default="euclidean"
    n_jobs : int, optional

    hubness : {None, "ls", "mp", "mp-gauss", "dsl"} or reduction object, default=None
        Hubness reduction (:mod:`mlknn.hubness`, docs/hubness.md) applied to the
        neighbour graph before the method reads it: the neighbourhoods are the k
        nearest by the secondary distance. None uses the plain distances.

    Attributes
    ----------
    prior_ : ndarray of shape (n_labels,)
        ``Pr(H_1^q)`` of eq 13.
    n_positive_ : ndarray of shape (n_labels,)
        ``u(q)``; ``u'(q) = n_train_ - u(q)``.
    train_counts_ : ndarray of shape (n_train, n_labels)
        Leave-one-out membership counting vectors ``c_{x_i}`` of the training set.
    nn_ : fitted neighbour backend
    n_labels_ : int
    n_features_in_ : int

    See Also
    --------
    MLkNN : the independent-label version (delta >= k, s = 0 gives the same decisions).

    References
    ----------
    Z. Younes, F. Abdallah, T. Denoeux and H. Snoussi, "A Dependent Multilabel
    Classification Method Derived from the k-Nearest Neighbor Rule", EURASIP
    Journal on Advances in Signal Processing, 2011, Article ID 645964. Seed 000.

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
    }

    def __init__(
        self,
        n_neighbors=10,
        *,
        delta=DEFAULT_DELTA,
        smoothing=1.0,
        neighbors="brute",
        metric="euclidean",
        n_jobs=None,
        hubness=None,
    ):
        self.hubness = hubness
        self.n_neighbors = n_neighbors
        self.delta = delta
        self.smoothing = smoothing
        self.neighbors = neighbors
        self.metric = metric
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ fit
    def _fit_graph(self, graph, Y, X):
        n = Y.shape[0]
        # Steps 1-3 (eqs 13-14).
        self.n_positive_ = Y.sum(axis=0, dtype=np.int64)
        self.prior_ = self.n_positive_ / float(n)
        # Step 8 for every training instance, once: its LOO counting vector.
        self.train_counts_ = neighbor_label_counts(graph, Y)
        self._fit_Y = Y
        # Training instances with the same counting vector pass or fail the
        # constraints (15) together: keep one row per distinct vector, with the
        # number of its instances that have / lack each label.
        groups, inverse = np.unique(self.train_counts_, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        G, q = groups.shape
        onehot = sp.csr_matrix((np.ones(n), (inverse, np.arange(n))), shape=(G, n))
        pos = np.asarray(onehot @ Y.astype(np.float64))
        neg = np.asarray(onehot.sum(axis=1)) - pos
        # One-hot encoding of the groups over the (label, count) pairs that occur:
        # column c stands for "count col_count_[c] on label col_label_[c]".
        keys = (groups * q + np.arange(q)[None, :]).ravel()
        col_keys, col_of = np.unique(keys, return_inverse=True)
        C = col_keys.shape[0]
        self._col_label = col_keys % q
        self._col_count = col_keys // q
        self._col_index = np.full((self.n_neighbors + 1) * q, -1, dtype=np.intp)
        self._col_index[col_keys] = np.arange(C)
        # Integer sums below 2**24 are exact in float32 whatever the order of the
        # additions; otherwise fall back to float64.
        gemm_dtype = np.float32 if max(n, q) < 2**24 else np.float64
        rows = np.repeat(np.arange(G), q)
        cols = col_of.ravel()
        onehot_gc = np.zeros((G, C), dtype=gemm_dtype)
        onehot_gc[rows, cols] = 1
        weights = np.zeros((2 * C, G), dtype=gemm_dtype)
        weights[cols, rows] = pos.ravel()
        weights[C + cols, rows] = neg.ravel()
        self._group_onehot = onehot_gc  # (G, C): c_{x_i}(l) == j
        self._group_weights = weights  # (2C, G): instances with / without l in the group

    # -------------------------------------------------------------- predict
    def evidence_counts(self, query_counts):
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
        G, C = self._group_onehot.shape
        q = self.n_labels_
        v = np.zeros((uq.shape[0], q), dtype=np.int64)
        v_prime = np.zeros_like(v)
        # Per query row: the window matrix (C), the agreement counts and the
        # qualifying mask (2 G) and the summed weights (2 C), plus temporaries.
        row_bytes = 2 * self._group_onehot.itemsize * (3 * C + 2 * G)
        height = max(1, _BLOCK_BYTES // row_bytes)
        for start in range(0, uq.shape[0], height):
            stop = min(start + height, uq.shape[0])
            v[start:stop], v_prime[start:stop] = self._evidence_block(uq[start:stop])
        return v[inverse], v_prime[inverse]

    def _evidence_block(self, cx):
        """Steps 7-12 for a block of distinct query vectors against all groups.

        Two matrix products over one-hot (label, count) encodings, exact because
        every entry and every partial sum is a small integer:

        * ``window[b, c] = |c_x(l_c) - j_c| <= delta`` and ``agree = window @
          onehot.T`` counts, for each group, the labels on which it lies within
          +-delta of the query; the group qualifies (step 9) when that is every
          label;
        * ``qualifying @ weights`` sums, for each (label, count) column, the
          instances with / without the label among the qualifying groups; the
          column ``(l, c_x(l))`` is step 11's equality, so it is v(l) / v'(l).
        """
        q = self.n_labels_
        dt = self._group_onehot.dtype
        # Products are taken as (groups x ...) @ (... x queries): OpenBLAS is several
        # times faster in that orientation for a short block of queries.
        window = np.abs(cx[:, self._col_label] - self._col_count[None, :]) <= self.delta
        agree = self._group_onehot @ window.T.astype(dt)  # (G, B)
        qualifying = (agree == q).astype(dt)  # step 9, on every label
        summed = (self._group_weights @ qualifying).T  # (B, 2C): steps 10-12, every column
        C = self._group_onehot.shape[1]
        k = self.n_neighbors
        valid = (cx >= 0) & (cx <= k)
        col = np.where(valid, self._col_index[np.where(valid, cx, 0) * q + np.arange(q)[None, :]], -1)
        found = col >= 0
        safe = np.where(found, col, 0)
        rows = np.arange(cx.shape[0])[:, None]
        v = np.where(found, summed[rows, safe], 0)
        v_prime = np.where(found, summed[rows, C + safe], 0)
        return np.rint(v).astype(np.int64), np.rint(v_prime).astype(np.int64)

    def _joint(self, graph):
        counts = neighbor_label_counts(graph, self._fit_Y)
        v, v_prime = self.evidence_counts(counts)
        s, Q, n = float(self.smoothing), self.n_labels_, self.n_train_
        like1 = safe_ratio(s + v, s * Q + self.n_positive_)  # step 14
        like0 = safe_ratio(s + v_prime, s * Q + (n - self.n_positive_))  # step 15
        return self.prior_ * like1, (1.0 - self.prior_) * like0

    def _predict_proba_graph(self, graph, X):
        return map_posterior(*self._joint(graph), self.prior_)  # eq 10 / step 17

    def _predict_graph(self, graph, X):
        return map_decision(*self._joint(graph))  # eq 9 / step 16, ties -> 0
