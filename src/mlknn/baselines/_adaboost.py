"""Real AdaBoost.MH with decision stumps (Schapire and Singer 2000; Zhang and Zhou 2014).

AdaBoost.MH boosts one classifier g*(x, y_j) on the m q (instance, label) pairs of
Zhang and Zhou's (2014) review. This is the "real" variant that BoosTexter implements (the comparison of
the BML-kNN paper), with the weak learner BoosTexter uses for numeric features: a stump
that splits the instances on one feature, ``x_f <= theta`` (block 0) or
``x_f > theta`` (block 1), and outputs a real confidence per (block, label):

* weights D(i, j) over the pairs, initially 1 / (m q);
* for a stump, ``W_b^{j, +}`` / ``W_b^{j, -}`` are the weights of the pairs in
  block b whose label j is relevant / irrelevant;
* the stump chosen minimises ``Z = 2 sum_b sum_j sqrt(W_b^{j,+} W_b^{j,-})``
  (Schapire and Singer's criterion; the stump with no split is a candidate too);
* its confidences are ``c_{b j} = 1/2 ln((W_b^{j,+} + eps) / (W_b^{j,-} + eps))``
  (eps: the ``smoothing`` parameter, by default 1 / (m q), their suggestion);
* ``D(i, j) <- D(i, j) exp(-Y_ij h(x_i, j)) / Z_t`` with ``Y_ij`` in {-1, +1}.

The final score is ``f(x, j) = sum_t h_t(x, j)``; ``predict`` is ``f > 0`` and
``predict_proba`` is ``1 / (1 + exp(-2 f))`` (Friedman, Hastie and Tibshirani's
reading of real AdaBoost as half the log-odds; a monotone score, not calibrated).

The stump search is vectorised: each feature is sorted once; per round, the
cumulative weight sums along every feature's order give W for all thresholds of
a block of features at once. Cost per round O(m d q) time; the sort keeps two
(d, m) arrays (features are densified column block by column block for sparse X).
"""

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..utils._param_validation import Interval, Real
from ..utils._typing import MatrixLike, NDArray
from ._base import POSITIVE_INT, BaselineClassifier, DecisionScoresMixin, cite

#: Elements of a (features, m) block of the per-feature sort.
_BLOCK_ELEMENTS = 1_000_000

#: Elements of the (features, m, q) cumulative-sum block of the stump search.
#: Small enough for its temporaries to stay in cache (a block of 10**6 made the fit
#: about 1.5x slower); ties are resolved the same way whatever the block.
_STUMP_BLOCK_ELEMENTS = 2**15


def _column_block(X: MatrixLike, cols: Any) -> NDArray[Any]:
    block = X[:, cols]
    return block.toarray() if sp.issparse(block) else np.asarray(block)


def _sorted_features(X: MatrixLike) -> Any:
    """(order (d, m), sorted values (d, m)) of every feature."""
    m, d = X.shape
    if sp.issparse(X):
        X = X.tocsc()
    order = np.empty((d, m), dtype=np.intp)
    values = np.empty((d, m), dtype=np.float64)
    step = max(1, _BLOCK_ELEMENTS // max(m, 1))
    for start in range(0, d, step):
        cols = np.arange(start, min(d, start + step))
        block = _column_block(X, cols).T  # (c, m)
        o = np.argsort(block, axis=1, kind="stable")
        order[cols] = o
        values[cols] = np.take_along_axis(block, o, axis=1)
    return order, values


def best_stump(Dp: Any, Dn: Any, order: Any, values: Any) -> Any:
    """The Z-minimising stump for pair weights split by relevance.

    Parameters
    ----------
    Dp, Dn : ndarray of shape (m, q)
        Weights of the relevant / irrelevant (instance, label) pairs (0 elsewhere).
    order, values : ndarray of shape (d, m)
        Per-feature sort order and sorted values.

    Returns
    -------
    feature : int
    threshold : float
        ``-inf`` for the stump with no split (every instance in block 1).
    Z : float
    """
    m, q = Dp.shape
    d = order.shape[0]
    Tp, Tn = Dp.sum(axis=0), Dn.sum(axis=0)
    best_Z = 2.0 * np.sqrt(Tp * Tn).sum()
    best = (0, -np.inf, best_Z)
    if m < 2:
        return best
    step = max(1, _STUMP_BLOCK_ELEMENTS // max(m * q, 1))
    for start in range(0, d, step):
        stop = min(d, start + step)
        o = order[start:stop]
        # Left block after r = 1..m-1 sorted instances.
        Lp = np.cumsum(Dp[o], axis=1)[:, :-1]
        Ln = np.cumsum(Dn[o], axis=1)[:, :-1]
        Rp = np.maximum(Tp - Lp, 0.0)
        Rn = np.maximum(Tn - Ln, 0.0)
        Z = 2.0 * (np.sqrt(Lp * Ln) + np.sqrt(Rp * Rn)).sum(axis=2)
        v = values[start:stop]
        Z[v[:, 1:] <= v[:, :-1]] = np.inf  # no threshold between equal values
        flat = int(np.argmin(Z))
        f, r = divmod(flat, m - 1)
        if Z[f, r] < best[2]:
            thr = 0.5 * (v[f, r] + v[f, r + 1])
            best = (start + f, float(thr), float(Z[f, r]))
    return best


@cite
class AdaBoostMH(DecisionScoresMixin, BaselineClassifier):
    """Real AdaBoost.MH over (instance, label) pairs with decision stumps (Zhang and Zhou 2014).

    See the module docstring for the algorithm. Deterministic: ties between
    stumps go to the lowest feature index, then the lowest threshold.

    Parameters
    ----------
    n_estimators : int, default=100
        Boosting rounds T. (The papers do not give BoosTexter's number of rounds.)
    smoothing : float, default=None
        eps in the confidences; None: 1 / (m q).

    Attributes
    ----------
    features_ : ndarray of shape (T,)
    thresholds_ : ndarray of shape (T,)
        A stump sends x to block 1 when ``x[features_[t]] > thresholds_[t]``.
    confidences_ : ndarray of shape (T, 2, n_labels)
        ``confidences_[t, b, j]``: h_t(x, j) for x in block b.
    normalizers_ : ndarray of shape (T,)
        Z_t; their product bounds the training Hamming loss.
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_labels_ : int
        Number of labels q.
    classes_ : list of ndarray
        ``[0, 1]`` for every label (scikit-learn's multi-label form).

    See Also
    --------
    BinaryRelevance : independent binary classifiers, one per label.

    References
    ----------
    R. E. Schapire and Y. Singer, "BoosTexter: a boosting-based system for text
    categorization", Machine Learning 39(2-3):135-168, 2000.

    %(review)s, section on binary relevance and AdaBoost.MH.

    Examples
    --------
    >>> from mlknn.baselines import AdaBoostMH
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, random_state=0)
    >>> clf = AdaBoostMH(n_estimators=10).fit(data.X, data.Y)
    >>> clf.confidences_.shape, clf.predict(data.X[:2]).shape
    ((10, 2, 5), (2, 5))
    """

    _parameter_constraints = {
        "n_estimators": POSITIVE_INT,
        "smoothing": [Interval(Real, 0, None, closed="neither"), None],
    }

    #: predict_proba = 1 / (1 + exp(-2 f)) (half log-odds, see the module docstring).
    _proba_scale = 2.0

    def __init__(self, n_estimators: int = 100, *, smoothing: float | None = None) -> None:
        self.n_estimators = n_estimators
        self.smoothing = smoothing

    def _fit(self, X: MatrixLike, Y: NDArray[Any]) -> None:
        m, q = Y.shape
        eps = self.smoothing if self.smoothing is not None else 1.0 / (m * q)
        S = 2.0 * Y - 1.0
        pos = Y.astype(bool)
        if sp.issparse(X):
            X = X.tocsc()  # one column per round
        order, values = _sorted_features(X)
        D = np.full((m, q), 1.0 / (m * q))
        T = self.n_estimators
        self.features_ = np.zeros(T, dtype=np.intp)
        self.thresholds_ = np.zeros(T)
        self.confidences_ = np.zeros((T, 2, q))
        self.normalizers_ = np.zeros(T)
        for t in range(T):  # boosting rounds (each fits one weak model)
            Dp = np.where(pos, D, 0.0)
            Dn = D - Dp
            f, thr, _ = best_stump(Dp, Dn, order, values)
            block = (_column_block(X, [f]).ravel() > thr) if np.isfinite(thr) else np.ones(m, dtype=bool)
            for b, rows in enumerate((~block, block)):
                Wp = Dp[rows].sum(axis=0)
                Wn = Dn[rows].sum(axis=0)
                self.confidences_[t, b] = 0.5 * np.log((Wp + eps) / (Wn + eps))
            h = np.where(block[:, None], self.confidences_[t, 1], self.confidences_[t, 0])
            D = D * np.exp(-S * h)
            Z = D.sum()
            D /= Z
            self.features_[t] = f
            self.thresholds_[t] = thr
            self.normalizers_[t] = Z

    def _decision(self, X: MatrixLike) -> NDArray[np.float64]:
        """f(x, j) = sum_t h_t(x, j); shape (n, n_labels)."""
        Xf = _column_block(X, self.features_)
        B = (Xf > self.thresholds_).astype(np.float64)  # (n, T)
        return (1.0 - B) @ self.confidences_[:, 0, :] + B @ self.confidences_[:, 1, :]
