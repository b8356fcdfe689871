"""Chi-square feature selection for multi-label data, with the rules the papers may have used.

A multi-label chi-square selection needs two choices that papers rarely state
(docs/reproduction.md measures what each changes):

* the per-label statistic: the one of ``sklearn.feature_selection.chi2``
  (observed against expected feature *mass* per class, :func:`multilabel_chi2`)
  or the 2 x 2 contingency table of term *presence* and label of Yang and
  Pedersen (1997), the reference Younes et al. (2011) cites for its selection
  (:func:`presence_chi2`);
* how the per-label statistics are combined: the maximum over labels, their
  mean, or Yang and Pedersen's average weighted by the label priors.
"""

import math
from numbers import Integral, Real
from typing import Any, Literal, TypeAlias

import numpy as np
import scipy.sparse as sp
from sklearn.utils import gen_batches

from ..utils._docstrings import fill_doc
from ..utils._typing import FloatArray, IntArray, MatrixLike, NDArray
from ._labels import _labels, label_counts

#: Labels scored at once by :class:`MultiLabelChi2Selector` for a sparse Y: the
#: (labels, features) statistic of one batch is what it holds in memory.
_CHI2_LABEL_BATCH = 1024

#: The rules of :class:`MultiLabelChi2Selector` (statistic and combination over labels).
Chi2Rule: TypeAlias = Literal["max", "mean", "presence-max", "presence-avg"]
CHI2_RULES: tuple[str, ...] = ("max", "mean", "presence-max", "presence-avg")


def multilabel_chi2(X: MatrixLike, Y: MatrixLike) -> FloatArray:
    """Chi-square statistic of every feature against every label.

    For label l the two classes are "has l" / "has not l" and the statistic is
    the one of ``sklearn.feature_selection.chi2(X, Y[:, l])`` (observed versus
    expected feature mass per class), computed for all labels at once with one
    matrix product.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features), non-negative
        The features to score.
    Y : {array-like, sparse matrix} of shape (n_samples, n_labels), 0/1
        A sparse Y stays sparse (the products are sparse x dense or sparse x sparse).

    Returns
    -------
    ndarray of shape (n_labels, n_features)
        NaN where the statistic is undefined (a feature that is all zero, or a
        label that is constant).

    See Also
    --------
    sklearn.feature_selection.chi2 : The statistic for one label.
    presence_chi2 : The 2 x 2 presence statistic of Yang and Pedersen.
    MultiLabelChi2Selector : Keeps the features with the largest statistic.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 10.0, 0.0], [2.0, 20.0, 1.0], [3.0, 40.0, 0.0], [4.0, 30.0, 5.0]])
    >>> Y = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 0, 0]])
    >>> from mlknn.preprocessing import multilabel_chi2
    >>> multilabel_chi2(X, Y).shape
    (3, 3)
    """
    Yf = _labels(Y).astype(np.float64)
    if sp.issparse(X):
        X = X.tocsr()
        if X.nnz and X.data.min() < 0:
            raise ValueError("chi2 feature selection needs non-negative features; got a negative value.")
        feature_sum = np.asarray(X.sum(axis=0), dtype=np.float64).ravel()
        observed1 = X.T @ Yf
        observed1 = np.asarray(observed1.toarray() if sp.issparse(observed1) else observed1, dtype=np.float64).T
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.size and X.min() < 0:
            raise ValueError("chi2 feature selection needs non-negative features; got a negative value.")
        feature_sum = X.sum(axis=0)
        observed1 = np.asarray(Yf.T @ X)  # (q, d); for a sparse Y: sparse x dense
    n = Yf.shape[0]
    p1 = (label_counts(Yf) / n)[:, None]  # (q, 1)
    expected1 = p1 * feature_sum[None, :]
    expected0 = (1.0 - p1) * feature_sum[None, :]
    observed0 = feature_sum[None, :] - observed1
    with np.errstate(invalid="ignore", divide="ignore"):
        stat: FloatArray = (observed1 - expected1) ** 2 / expected1 + (observed0 - expected0) ** 2 / expected0
    return stat


def presence_chi2(X: MatrixLike, Y: MatrixLike) -> FloatArray:
    """Yang and Pedersen's chi-square of every feature's presence against every label.

    For feature t and label l, with A the instances that have t and l, B those
    with t and not l, C those with l and not t, D those with neither, and
    N = A + B + C + D:

    ``chi2(t, l) = N (A D - C B)^2 / ((A + C) (B + D) (A + B) (C + D))``

    the statistic of the 2 x 2 table of "t present" against "has l". Only
    whether a feature is non-zero counts, not its value.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The features to score.
    Y : {array-like, sparse matrix} of shape (n_samples, n_labels), 0/1
        The binary label matrix.

    Returns
    -------
    ndarray of shape (n_labels, n_features)
        0 where the statistic is undefined (a feature present everywhere or
        nowhere, or a constant label).

    See Also
    --------
    multilabel_chi2 : The feature-mass statistic of scikit-learn.
    MultiLabelChi2Selector : Combines the statistics over labels.

    References
    ----------
    Yang and Pedersen, "A comparative study on feature selection in text
    categorization", ICML 1997 (its CHI statistic); cited by Younes et al. (2011) (ref. 24)
    for its 20% selection on medical and enron.

    Examples
    --------
    Feature 0 is present exactly with the label (A = D = 2, B = C = 0: chi2 = N = 4);
    feature 1 is present in every row (undefined, 0):

    >>> import numpy as np
    >>> from mlknn.preprocessing import presence_chi2
    >>> X = np.array([[1, 1], [1, 1], [0, 1], [0, 1]])
    >>> presence_chi2(X, np.array([[1], [1], [0], [0]])).tolist()
    [[4.0, 0.0]]
    """
    Yf = _labels(Y).astype(np.float64)
    present = (X != 0).astype(np.float64) if sp.issparse(X) else (np.asarray(X) != 0).astype(np.float64)
    n = Yf.shape[0]
    both = present.T @ Yf  # (d, q): A
    both = np.asarray(both.toarray() if sp.issparse(both) else both, dtype=np.float64).T
    term = np.asarray(present.sum(axis=0), dtype=np.float64).ravel()[None, :]  # A + B
    label = label_counts(Yf).astype(np.float64)[:, None]  # A + C
    a, b, c = both, term - both, label - both
    d = n - a - b - c
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = n * (a * d - c * b) ** 2 / ((a + c) * (b + d) * (a + b) * (c + d))
    out: FloatArray = np.where(np.isfinite(stat), stat, 0.0)
    return out


def _combined_chi2(X: MatrixLike, Y: MatrixLike, d: int, rule: str) -> FloatArray:
    """The per-feature score of ``rule`` (undefined statistics count as 0).

    A dense Y is scored in one product; a sparse Y, whose q may be 10^4-10^6,
    in batches of :data:`_CHI2_LABEL_BATCH` labels with a running maximum or
    sum, so no (q, d) array is held.
    """
    Yl = _labels(Y)
    n, q = Yl.shape
    batches: Any = gen_batches(q, _CHI2_LABEL_BATCH) if sp.issparse(Yl) else [slice(None)]
    statistic = presence_chi2 if rule.startswith("presence") else multilabel_chi2
    prior = label_counts(Yl) / max(n, 1)
    best = np.zeros(d)
    total = np.zeros(d)
    for batch in batches:
        stat = statistic(X, Yl[:, batch])
        if not stat.shape[0]:
            continue
        stat = np.where(np.isfinite(stat), stat, 0.0)
        if rule in ("max", "presence-max"):
            best = np.maximum(best, stat.max(axis=0))
        elif rule == "mean":
            total += stat.sum(axis=0)
        else:  # presence-avg: Yang and Pedersen's chi2_avg, weighted by P(l)
            total += prior[batch] @ stat
    if rule in ("max", "presence-max"):
        return best
    return total / q if rule == "mean" else total


class MultiLabelChi2Selector:
    """Keep the features with the largest chi-square score over the labels.

    Parameters
    ----------
    n_features : float in (0, 1] or int >= 1
        A float is the fraction of the features to keep (rounded up, at least
        one); an int is the number of features (at most all of them).
    rule : {"max", "mean", "presence-max", "presence-avg"}, default="max"
        The per-label statistic and how it is combined over the q labels:

        * ``"max"``: :func:`multilabel_chi2` (scikit-learn's feature-mass
          chi-square per label), maximum over labels: a feature is kept when it
          is strongly associated with at least one label;
        * ``"mean"``: the same statistic, mean over labels;
        * ``"presence-max"``: :func:`presence_chi2` (Yang and Pedersen's 2 x 2
          table of presence and label), maximum over labels (their chi2_max);
        * ``"presence-avg"``: the same, averaged with the label priors as
          weights, ``sum_l P(l) chi2(t, l)`` (their chi2_avg). With it, Younes et al.'s
          (2011) enron cells reproduce (docs/reproduction.md).

    See Also
    --------
    multilabel_chi2, presence_chi2 : The statistics.
    FoldPreprocessor : Selection with scaling and label filtering, fitted per fold.

    Notes
    -----
    Features with negative values (e.g. already z-scored data) are shifted to
    start at 0 on the training part before scoring, since chi-square needs
    count-like data; selection itself never changes the values. Undefined
    statistics (all-zero features) count as 0. Ties are broken by the lower
    feature index. The selected columns keep their original order.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in,)
        The combined chi-square score of every feature.
    support_ : ndarray of intp
        Indices of the kept features, ascending.

    References
    ----------
    "A Hubness Information-Based k-Nearest Neighbor Approach for Multi-Label
    Learning", Mathematics 2025, the protocol (chi-square feature
    selection). Younes et al., EURASIP 2011, section 5.3 (20% of the
    features by the chi-square statistic, after Yang and Pedersen, ICML 1997).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 10.0, 0.0], [2.0, 20.0, 1.0], [3.0, 40.0, 0.0], [4.0, 30.0, 5.0]])
    >>> Y = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 0, 0]])
    >>> from mlknn.preprocessing import MultiLabelChi2Selector
    >>> selector = MultiLabelChi2Selector(n_features=2).fit(X, Y)
    >>> selector.support_.tolist(), selector.transform(X).shape
    ([1, 2], (4, 2))
    """

    scores_: FloatArray
    support_: NDArray[np.intp]

    def __init__(self, n_features: float | str = 0.2, rule: Chi2Rule = "max") -> None:
        self.n_features = n_features
        self.rule = rule

    def _n_keep(self, d: int) -> int:
        k = self.n_features
        if isinstance(k, bool) or not isinstance(k, (Integral, Real)):
            raise ValueError(  # noqa: TRY004  (a parameter error, ValueError like the others here)
                "The 'feature_selection' parameter must be a float in (0, 1] (fraction) or an "
                f"int >= 1 (number of features). Got {k!r} instead."
            )
        if isinstance(k, Integral):
            if k < 1:
                raise ValueError(
                    f"The 'feature_selection' parameter must be an int >= 1 when it is a count. Got {k} instead."
                )
            return min(int(k), d)
        if not 0 < k <= 1:
            raise ValueError(
                f"The 'feature_selection' parameter must be a float in the range (0, 1] when it is a "
                f"fraction. Got {k!r} instead."
            )
        return max(1, min(d, math.ceil(float(k) * d - 1e-9)))

    @fill_doc
    def fit(self, X: MatrixLike, Y: MatrixLike) -> "MultiLabelChi2Selector":
        """Score the features against the labels and choose the kept ones.

        Parameters
        ----------
        {X_train}
        {Y_train}

        Returns
        -------
        self : object
            The fitted transformer.
        """
        if self.rule not in CHI2_RULES:
            raise ValueError(f"The 'rule' parameter must be one of {CHI2_RULES}. Got {self.rule!r} instead.")
        d = X.shape[1]
        n_keep = self._n_keep(d)
        Xs = X
        if sp.issparse(X):
            Xs = X.tocsr()
            if Xs.nnz and Xs.data.min() < 0:
                Xs = sp.csr_matrix(Xs.toarray() - Xs.min(axis=0).toarray())
        else:
            Xs = np.asarray(X, dtype=np.float64)
            if Xs.size and Xs.min() < 0:
                Xs = Xs - Xs.min(axis=0)
        self.scores_ = _combined_chi2(Xs, Y, d, self.rule)
        order: IntArray = np.lexsort((np.arange(d), -self.scores_))
        self.support_ = np.sort(order[:n_keep]).astype(np.intp)
        return self

    def transform(self, X: MatrixLike) -> MatrixLike:
        """The kept feature columns, in their original order.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Features.

        Returns
        -------
        X_selected : ndarray or CSR matrix of shape (n_samples, n_kept)
            Sparse input stays sparse.
        """
        if sp.issparse(X):
            return X.tocsr()[:, self.support_]
        return np.asarray(X)[:, self.support_]

    @fill_doc
    def fit_transform(self, X: MatrixLike, Y: MatrixLike) -> MatrixLike:
        """Fit on ``X, Y`` and keep the selected columns of ``X``.

        Parameters
        ----------
        {X_train}
        {Y_train}

        Returns
        -------
        X_selected : ndarray or CSR matrix of shape (n_samples, n_kept)
            Sparse input stays sparse.
        """
        return self.fit(X, Y).transform(X)
