"""BR-kNN, BR-kNN-a and BR-kNN-b (Spyromitros, Tsoumakas and Vlahavas 2008).

Binary relevance with a kNN base learner, searched once for all labels. Seed 000
compares DML-kNN with BR-kNN (Tables 4-10); seed 001 compares MLHiKNN with BRkNNa
(Tables 3, A2-A6) and with its hubness-reduced variants (Table 12).

The reading implemented is the authors' own code in MULAN
(``mulan.classifier.lazy.BRkNN``, by Spyromitros-Xioufis and Tsoumakas), not
scikit-multilearn's. Notation: n training instances, q labels, k neighbours,
``count_l`` the number of a query's k neighbours that have label l, and
``L = sum_l count_l`` the total size of the neighbours' label sets.
"""

import numpy as np

from ..base import HUBNESS_CONSTRAINT, KNNMultiLabelBase
from ._kernels import neighbor_label_counts


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

    Differences from other implementations:

    * MULAN decides ``conf_l >= 0.5`` in floating point, so for q = 2 its answer
      at an exact half vote depends on rounding; ours is exact. MULAN's
      Euclidean distance also rescales every feature to [0, 1] by its training
      range (Weka's default normalisation); ours searches the features as given
      (scale them first to reproduce that).
    * scikit-multilearn has no plain BR-kNN class: its ``BRkNNaClassifier`` is
      this rule without the extension and without the 1/n correction
      (``rint(count_l / k)``: a label is assigned only with a strict majority,
      since ``rint(0.5) = 0``), it may return the empty set, and it has no
      ``predict_proba``.

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

    Attributes
    ----------
    n_train_ : int
        n, the number of training instances.
    n_labels_ : int
        q.
    nn_ : fitted neighbour backend
    n_features_in_ : int

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
    }

    def __init__(self, n_neighbors=10, *, neighbors="brute", metric="euclidean", n_jobs=None, hubness=None):
        self.n_neighbors = n_neighbors
        self.neighbors = neighbors
        self.metric = metric
        self.n_jobs = n_jobs
        self.hubness = hubness

    def _fit_graph(self, graph, Y, X):
        # Lazy: nothing is learned beyond the stored label matrix.
        self._fit_Y = Y

    def _counts(self, graph):
        return neighbor_label_counts(graph, self._fit_Y)

    def _proba_from_counts(self, counts):
        n, q, k = self.n_train_, self.n_labels_, self.n_neighbors
        return (counts + 1.0 / n) / (k + q / n)

    def _majority(self, counts):
        # conf >= 0.5  <=>  (count + 1/n) / (k + q/n) >= 1/2  <=>  2 n count + 2 >= n k + q
        n, q, k = self.n_train_, self.n_labels_, self.n_neighbors
        return 2 * n * counts + 2 >= n * k + q

    def _predict_proba_graph(self, graph, X):
        return self._proba_from_counts(self._counts(graph))

    def _predict_graph(self, graph, X):
        return self._decide(self._counts(graph))

    def _decide(self, counts):
        return self._majority(counts).astype(np.uint8)


class BRkNNa(BRkNN):
    """BR-kNN-a: BR-kNN that never predicts the empty set (MULAN's ``EXTA``).

    Scores and the 0.5 rule are those of :class:`BRkNN`:
    ``conf_l = (count_l + 1/n) / (k + q/n)``, label l assigned when
    ``conf_l >= 0.5`` (an exact half vote is not assigned when q >= 3). When no
    label reaches 0.5, the single label with the highest confidence, i.e. the
    most neighbour votes, is assigned.

    **Tie rule.** Among labels with equal confidence the lowest label index
    (column of Y) wins; when no neighbour has any label, label 0 is assigned.
    MULAN breaks this tie at random (``Util.RandomIndexOfMax`` with a
    ``Random(1)`` that advances over the test set).

    Difference from scikit-multilearn: its ``BRkNNaClassifier`` is plain BR-kNN
    with a strict majority (``rint(count_l / k)``) and no fallback, so it can
    predict the empty set; see :class:`BRkNN`.

    Parameters
    ----------
    n_neighbors : int, default=10
    neighbors : str or object, default="brute"
    metric : str, default="euclidean"
    n_jobs : int, optional
    hubness : {"ls", "mp", "mp-gauss", "dsl"}, reduction object or None, default=None
        Seed 001's BRkNNa-ls, BRkNNa-mp, BRkNNa-dsl.

    Attributes
    ----------
    n_train_ : int
    n_labels_ : int
    nn_ : fitted neighbour backend
    n_features_in_ : int

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

    def _decide(self, counts):
        pred = self._majority(counts).astype(np.uint8)
        empty = ~pred.any(axis=1)
        # conf is increasing in count, so the top confidence is the top count;
        # argmax returns the first maximum: the lowest label index.
        best = np.argmax(counts[empty], axis=1)
        pred[np.flatnonzero(empty), best] = 1
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
    the s-th place are taken in increasing index order. MULAN picks among the
    tied labels at random.

    Difference from scikit-multilearn: its ``BRkNNbClassifier`` averages the
    label-set sizes without the correction and rounds half to even (2.5 -> 2,
    3.5 -> 4); when the rounded size is 0 it assigns **every** label
    (``top_labels[i][-0:]`` is the whole row); ties are left to
    ``np.argpartition``, and the partition point is the smallest size over all
    queries, so a row's top labels are not guaranteed to be the most voted.

    Parameters
    ----------
    n_neighbors : int, default=10
    neighbors : str or object, default="brute"
    metric : str, default="euclidean"
    n_jobs : int, optional
    hubness : {"ls", "mp", "mp-gauss", "dsl"}, reduction object or None, default=None

    Attributes
    ----------
    n_train_ : int
    n_labels_ : int
    nn_ : fitted neighbour backend
    n_features_in_ : int

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

    def label_set_size(self, counts):
        """s for each query, from its neighbour counts (see the class docstring).

        Parameters
        ----------
        counts : ndarray of shape (n_queries, n_labels), int
            ``count_l`` per query, as from
            :func:`mlknn.algorithms._kernels.neighbor_label_counts`.

        Returns
        -------
        ndarray of shape (n_queries,), int64
        """
        n, q, k = self.n_train_, self.n_labels_, self.n_neighbors
        total = np.asarray(counts, dtype=np.int64).sum(axis=1)
        s = (2 * n * total + n * k + q) // (2 * (n * k + q))
        return np.maximum(s, 1)

    def _decide(self, counts):
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
