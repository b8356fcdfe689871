"""ML-kNN (Zhang and Zhou 2007): seed 003 Knowl 11 and seed 004.

Notation follows seed 004's pseudo-code: m training instances, k neighbours,
s the smoothing parameter, C_x(l) the number of x's neighbours that have label l,
H_1^l / H_0^l the events "x has / has not label l", E_j^l "exactly j neighbours of
x have label l".
"""

import numpy as np

from ..base import HUBNESS_CONSTRAINT, KNNMultiLabelBase
from ..utils._param_validation import Interval, Real
from ._kernels import count_histograms, neighbor_label_counts


class MLkNN(KNNMultiLabelBase):
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
        s, k, m = float(self.smoothing), self.n_neighbors, Y.shape[0]
        self.prior_ = (s + Y.sum(axis=0, dtype=np.float64)) / (2 * s + m)
        counts = neighbor_label_counts(graph, Y)
        c1, c0 = count_histograms(counts, Y, k + 1)
        self.cond_prob_true_ = _smoothed_likelihood(c1, s, k)
        self.cond_prob_false_ = _smoothed_likelihood(c0, s, k)
        self._fit_Y = Y

    def _joint(self, graph):
        counts = neighbor_label_counts(graph, self._fit_Y)
        cols = np.arange(self.n_labels_)[None, :]
        joint1 = self.prior_ * self.cond_prob_true_[counts, cols]
        joint0 = (1.0 - self.prior_) * self.cond_prob_false_[counts, cols]
        return joint1, joint0

    def _predict_proba_graph(self, graph, X):
        joint1, joint0 = self._joint(graph)
        total = joint1 + joint0
        prior = np.broadcast_to(self.prior_, joint1.shape)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, joint1 / np.where(total > 0, total, 1.0), prior)

    def _predict_graph(self, graph, X):
        joint1, joint0 = self._joint(graph)
        return (joint1 > joint0).astype(np.uint8)


def _smoothed_likelihood(hist, s, k):
    """(s + c[j]) / (s (k + 1) + sum_p c[p]); 0/0 (s = 0, no instance) gives 0."""
    denom = s * (k + 1) + hist.sum(axis=0, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (s + hist) / denom
    return np.where(denom > 0, out, 0.0)
