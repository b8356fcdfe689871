"""ML-kNN (Zhang and Zhou 2007): seed 003 Knowl 11 and seed 004.

Notation follows seed 004's pseudo-code: m training instances, k neighbours,
s the smoothing parameter, C_x(l) the number of x's neighbours that have label l,
H_1^l / H_0^l the events "x has / has not label l", E_j^l "exactly j neighbours of
x have label l".
"""

import numpy as np

from ..base import HUBNESS_CONSTRAINT, KNNMultiLabelBase
from ..utils._param_validation import Interval, Real
from ._kernels import (
    count_histograms,
    map_decision,
    map_posterior,
    neighbor_label_counts,
    safe_ratio,
    smoothed_likelihood,
)


class _BayesCountsMixin:
    """ML-kNN's prior, likelihood tables and MAP rule over a given neighbour-count matrix.

    Shared by :class:`MLkNN` (counts over the k nearest neighbours) and by
    :class:`~mlknn.algorithms._bmlknn.BMLkNN` / ``NeighborhoodClassifier`` (counts
    over a bounded or radius neighbourhood, seed 002 Tables 2-3, which reuse
    ML-kNN's equations). Reads ``self.smoothing`` and ``self.n_labels_``.
    """

    def _fit_tables(self, counts, Y, n_bins):
        s, m = float(self.smoothing), Y.shape[0]
        # Seed 004 lines 1-3 (seed 002 eqs 13-14): P(H_1^l) = (s + sum_i y_i(l)) / (2 s + m).
        self.prior_ = (s + Y.sum(axis=0, dtype=np.float64)) / (2 * s + m)
        # Lines 4-13 (seed 002 steps 3-15, eqs 17-18): c[j], c'[j] and
        # P(E_j^l | H_b^l) = (s + c[j]) / (s (k + 1) + sum_p c[p]).
        c1, c0 = count_histograms(counts, Y, n_bins)
        self.cond_prob_true_ = smoothed_likelihood(c1, s)
        self.cond_prob_false_ = smoothed_likelihood(c0, s)
        self._fit_Y = Y

    def _joint_from_counts(self, counts):
        """P(H_b) P(E_{C_t(l)} | H_b) for b = 1 and b = 0 (line 17, before the argmax).

        A count beyond the table (NC only: a query in a denser region than any
        training instance) is a bin no training instance reached: its
        likelihood is the empty-bin value ``s / (s n_bins + sum_p c[p])``.
        """
        n_bins = self.cond_prob_true_.shape[0]
        s = float(self.smoothing)
        cols = np.arange(self.n_labels_)[None, :]
        beyond = counts >= n_bins
        idx = np.where(beyond, 0, counts)
        like1 = self.cond_prob_true_[idx, cols]
        like0 = self.cond_prob_false_[idx, cols]
        if beyond.any():
            u = self._fit_Y.sum(axis=0, dtype=np.float64)
            like1 = np.where(beyond, safe_ratio(s, s * n_bins + u), like1)
            like0 = np.where(beyond, safe_ratio(s, s * n_bins + (self._fit_Y.shape[0] - u)), like0)
        return self.prior_ * like1, (1.0 - self.prior_) * like0

    def _proba_from_counts(self, counts):
        # Line 18: the posterior r_t(l) (the prior where both products are 0).
        return map_posterior(*self._joint_from_counts(counts), self.prior_)

    def _decide_from_counts(self, counts):
        # Line 17: the MAP rule, an exact tie predicts 0.
        return map_decision(*self._joint_from_counts(counts))


class MLkNN(_BayesCountsMixin, KNNMultiLabelBase):
    """Multi-label k-nearest neighbours with a Bayesian (MAP) decision per label.

    Training (seed 004, lines 1-13):

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
    n_neighbors : int, default=10
        k, the number of neighbours.
    smoothing : float, default=1.0
        s >= 0; 1 is Laplace smoothing.
    neighbors : str or object, default="brute"
        Neighbour-search backend (see :mod:`mlknn.neighbors`).
    metric : str, default="euclidean"
    n_jobs : int, optional
    hubness : {None, "ls", "mp", "mp-gauss", "dsl"} or reduction object, default=None
        Hubness reduction (:mod:`mlknn.hubness`): the neighbourhoods of the
        training instances (leave-one-out) and of the queries are re-ranked by
        local scaling, mutual proximity (empiric / Gaussian) or DSL, as in seed
        001's MLKNN-ls / -mp / -dsl (Algorithm 5). None: plain kNN.

    Attributes
    ----------
    prior_ : ndarray of shape (n_labels,)
        P(H_1^l).
    cond_prob_true_ : ndarray of shape (n_neighbors + 1, n_labels)
        ``cond_prob_true_[j, l] = P(E_j^l | H_1^l)``.
    cond_prob_false_ : ndarray of shape (n_neighbors + 1, n_labels)
        ``P(E_j^l | H_0^l)``.
    nn_ : fitted neighbour backend
    n_labels_ : int
    n_features_in_ : int

    See Also
    --------
    DMLkNN : ML-kNN with dependencies between labels (seed 000).
    BRkNN : binary relevance kNN voting.

    References
    ----------
    M.-L. Zhang and Z.-H. Zhou, "ML-KNN: A lazy learning approach to multi-label
    learning", Pattern Recognition 40(7), 2007. Seed 003 (Knowl 11), seed 004.

    Examples
    --------
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=200, random_state=0)
    >>> clf = MLkNN(n_neighbors=5).fit(data.X, data.Y)
    >>> clf.predict(data.X[:2]).shape
    (2, 5)
    """

    _parameter_constraints = {
        **KNNMultiLabelBase._parameter_constraints,
        "smoothing": [Interval(Real, 0, None, closed="left")],
        "hubness": HUBNESS_CONSTRAINT,
    }

    def __init__(
        self, n_neighbors=10, *, smoothing=1.0, neighbors="brute", metric="euclidean", n_jobs=None, hubness=None
    ):
        self.n_neighbors = n_neighbors
        self.smoothing = smoothing
        self.neighbors = neighbors
        self.metric = metric
        self.n_jobs = n_jobs
        self.hubness = hubness

    def _fit_graph(self, graph, Y, X):
        # Lines 1-13 over the leave-one-out counts C_{x_i} of the training set.
        self._fit_tables(neighbor_label_counts(graph, Y), Y, self.n_neighbors + 1)

    def _predict_proba_graph(self, graph, X):
        return self._proba_from_counts(neighbor_label_counts(graph, self._fit_Y))

    def _predict_graph(self, graph, X):
        return self._decide_from_counts(neighbor_label_counts(graph, self._fit_Y))
