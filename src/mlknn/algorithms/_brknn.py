"""BR-kNN, BR-kNN-a and BR-kNN-b (Spyromitros, Tsoumakas and Vlahavas 2008).

Binary relevance with a kNN base learner, searched once for all labels. Younes et al. (2011)
compare DML-kNN with BR-kNN (Tables 4-10); Teng et al. (2025) compare MLHiKNN with BRkNNa
(Tables 3, A2-A6) and with its hubness-reduced variants (Table 12).

The default reading (``variant="paper"``) is the authors' own code in MULAN
(``mulan.classifier.lazy.BRkNN``, by Spyromitros-Xioufis and Tsoumakas) with
exactly k neighbours and deterministic ties; ``variant="mulan"`` reproduces
MULAN bit for bit, ties at the k-th distance and random tie draws included
(:mod:`._brknn_mulan`); ``BRkNNa(variant="skmultilearn")`` is
scikit-multilearn's ``BRkNNaClassifier``. docs/notes/brknn.md tabulates the
differences. Notation: n training instances, q labels, k neighbours,
``count_l`` the number of a query's k neighbours that have label l, and
``L = sum_l count_l`` the total size of the neighbours' label sets.

Sparse labels: see :class:`BRkNN` and :mod:`._brknn_votes`; the weighted vote:
:mod:`._brknn_weights`. :class:`BRkNN` itself is defined in :mod:`._brknn_core`.
"""

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from ..utils._docstrings import fill_doc
from ..utils._param_validation import StrOptions
from ..utils._typing import MatrixLike, NDArray, SparseMatrix
from . import _brknn_mulan as mulan
from ._brknn_core import MULAN_SEED, BRkNN
from ._brknn_votes import as_counts_csr, indicator, row_sums, top_by_count

__all__ = ["MULAN_SEED", "BRkNN", "BRkNNa", "BRkNNb"]


@fill_doc
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
        k, the number of neighbours that vote.
    {neighbors}
    {metric}
    {n_jobs}
    hubness : {"ls", "mp", "mp-gauss", "dsl"}, reduction object or None, default=None
        Teng et al.'s (2025) BRkNNa-ls, BRkNNa-mp, BRkNNa-dsl.
    variant : {"paper", "mulan", "skmultilearn"}, default="paper"
        Which reading: the paper's, MULAN's or scikit-multilearn's (see :class:`BRkNN`
        and docs/notes/brknn.md for what differs).
    {random_state_backend}
        It also seeds MULAN's tie draws (``variant="mulan"``).
    missing_labels : {"ignore", "negative"}, default="ignore"
        See :class:`BRkNN` (docs/incomplete_labels.md).
    weights : {"uniform", "distance"} or callable, default="uniform"
        See :class:`BRkNN`; the fallback takes the label of highest weighted vote.
    {max_samples}
    {max_memory}

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


@fill_doc
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
    see docs/notes/brknn.md.

    Parameters
    ----------
    n_neighbors : int, default=10
        k, the number of neighbours that vote.
    {neighbors}
    {metric}
    {n_jobs}
    hubness : {"ls", "mp", "mp-gauss", "dsl"}, reduction object or None, default=None
        Hubness reduction of the neighbourhoods (:mod:`mlknn.hubness`); None: plain kNN.
    variant : {"paper", "mulan"}, default="paper"
        Which reading: the paper's or MULAN's (see :class:`BRkNN`).
    {random_state_backend}
        It also seeds MULAN's tie draws (``variant="mulan"``).
    missing_labels : {"ignore", "negative"}, default="ignore"
        See :class:`BRkNN` (docs/incomplete_labels.md).
    weights : {"uniform", "distance"} or callable, default="uniform"
        See :class:`BRkNN`; ``L`` is then the sum of the weighted counts ``k v_l``
        and s is computed in float64.
    {max_samples}
    {max_memory}

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
        if sp.issparse(counts) or self._weighted():
            total = row_sums(as_counts_csr(counts))
        else:
            total = np.asarray(counts, dtype=np.int64).sum(axis=1)
        s = (2 * n * total + n * k + q) // (2 * (n * k + q))  # float64 floor for weighted counts
        return np.maximum(s, 1).astype(np.int64)

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
