"""Scaling, chi-square feature selection and rare-label removal."""

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils import gen_batches

from ..utils._validation import check_label_matrix

_SCALINGS = ("none", "minmax", "zscore")


def _labels(Y):
    """Y as a canonical CSR array when sparse (never densified), else a uint8 ndarray."""
    return check_label_matrix(Y, accept_sparse=True)


def label_counts(Y):
    """Positive instances of every label: (n_labels,) int64, O(nnz) for a sparse Y.

    Parameters
    ----------
    Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
        0/1 label matrix.

    Returns
    -------
    ndarray of shape (n_labels,), int64
        Positive instances of every label.

    See Also
    --------
    labelled_rows : The rows with at least one label.
    RareLabelFilter : Drops the labels with too few positives.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from mlknn.preprocessing import label_counts
    >>> label_counts(sp.csr_matrix([[1, 0, 1], [1, 0, 0]])).tolist()
    [2, 0, 1]
    """
    Y = _labels(Y)
    if sp.issparse(Y):
        return np.bincount(Y.indices, minlength=Y.shape[1]).astype(np.int64)
    return Y.sum(axis=0, dtype=np.int64)


def labelled_rows(Y):
    """Boolean mask of the rows with at least one label, O(nnz) for a sparse Y.

    Parameters
    ----------
    Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
        0/1 label matrix.

    Returns
    -------
    ndarray of shape (n_samples,), dtype bool
        True for the rows with at least one label.

    See Also
    --------
    label_counts : Positive instances of every label.

    Examples
    --------
    >>> from mlknn.preprocessing import labelled_rows
    >>> labelled_rows([[1, 0], [0, 0], [0, 1]]).tolist()
    [True, False, True]
    """
    Y = _labels(Y)
    if sp.issparse(Y):
        return np.diff(Y.indptr) > 0
    return Y.any(axis=1)


#: Labels scored at once by :class:`MultiLabelChi2Selector` for a sparse Y: the
#: (labels, features) statistic of one batch is what it holds in memory.
_CHI2_LABEL_BATCH = 1024


class FeatureScaler:
    """Min-max or z-score scaling, sparse-safe.

    Parameters
    ----------
    method : {"none", "minmax", "zscore"}, default="minmax"
        ``minmax``: dense input to [0, 1] per feature on the training part
        (``MinMaxScaler``); sparse input is divided by the maximum absolute value
        (``MaxAbsScaler``: keeps zeros, gives [0, 1] for non-negative data such as
        word counts). ``zscore``: ``StandardScaler``; for sparse input without
        centring (``with_mean=False``). Constant features are left unscaled.

    Attributes
    ----------
    scaler_ : fitted scikit-learn scaler, or None for ``"none"``

    See Also
    --------
    FoldPreprocessor : Scaling with label and feature selection, fitted per fold.
    sklearn.preprocessing.MinMaxScaler : The scaler behind ``"minmax"``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 10.0, 0.0], [2.0, 20.0, 1.0], [3.0, 40.0, 0.0], [4.0, 30.0, 5.0]])
    >>> Y = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 0, 0]])
    >>> from mlknn.preprocessing import FeatureScaler
    >>> FeatureScaler("minmax").fit_transform(X)[:, 1].round(3).tolist()
    [0.0, 0.333, 1.0, 0.667]
    """

    def __init__(self, method="minmax"):
        self.method = method

    def fit(self, X):
        """Fit the scaler on the training part.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training features.

        Returns
        -------
        self : object
            The fitted transformer.
        """
        from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

        if self.method not in _SCALINGS:
            raise ValueError(
                f"The 'scaling' parameter must be one of {_SCALINGS}. Got {self.method!r} instead."
            )
        if self.method == "none":
            self.scaler_ = None
        elif self.method == "minmax":
            self.scaler_ = (MaxAbsScaler() if sp.issparse(X) else MinMaxScaler()).fit(X)
        else:
            self.scaler_ = StandardScaler(with_mean=not sp.issparse(X)).fit(X)
        return self

    def transform(self, X):
        """Scale ``X`` with the fitted scaler (``X`` itself for ``"none"``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Features to scale.

        Returns
        -------
        X_scaled : ndarray or sparse matrix of the same shape
            Sparse input stays sparse.
        """
        if self.scaler_ is None:
            return X
        out = self.scaler_.transform(X)
        return out.tocsr() if sp.issparse(out) else out

    def fit_transform(self, X):
        """Fit on ``X`` and scale it.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training features.

        Returns
        -------
        X_scaled : ndarray or sparse matrix of the same shape
            Sparse input stays sparse.
        """
        return self.fit(X).transform(X)


def multilabel_chi2(X, Y):
    """Chi-square statistic of every feature against every label.

    For label l the two classes are "has l" / "has not l" and the statistic is
    the one of ``sklearn.feature_selection.chi2(X, Y[:, l])`` (observed versus
    expected feature mass per class), computed for all labels at once with one
    matrix product.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features), non-negative
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
    Y = _labels(Y).astype(np.float64)
    if sp.issparse(X):
        X = X.tocsr()
        if X.nnz and X.data.min() < 0:
            raise ValueError("chi2 feature selection needs non-negative features; got a negative value.")
        feature_sum = np.asarray(X.sum(axis=0), dtype=np.float64).ravel()
        observed1 = X.T @ Y
        observed1 = np.asarray(observed1.toarray() if sp.issparse(observed1) else observed1, dtype=np.float64).T
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.size and X.min() < 0:
            raise ValueError("chi2 feature selection needs non-negative features; got a negative value.")
        feature_sum = X.sum(axis=0)
        observed1 = np.asarray(Y.T @ X)  # (q, d); for a sparse Y: sparse x dense
    n = Y.shape[0]
    p1 = (label_counts(Y) / n)[:, None]  # (q, 1)
    expected1 = p1 * feature_sum[None, :]
    expected0 = (1.0 - p1) * feature_sum[None, :]
    observed0 = feature_sum[None, :] - observed1
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = (observed1 - expected1) ** 2 / expected1 + (observed0 - expected0) ** 2 / expected0
    return stat


class MultiLabelChi2Selector:
    """Keep the features with the largest chi-square statistic (max over labels).

    Parameters
    ----------
    n_features : float in (0, 1] or int >= 1
        A float is the fraction of the features to keep (rounded up, at least
        one); an int is the number of features (at most all of them).

    See Also
    --------
    multilabel_chi2 : The statistic.
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
        Max-over-labels chi-square statistic.
    support_ : ndarray of intp
        Indices of the kept features, ascending.

    References
    ----------
    "A Hubness Information-Based k-Nearest Neighbor Approach for Multi-Label
    Learning", Mathematics 2025 (seed 001), the protocol (chi-square feature selection).

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

    def __init__(self, n_features=0.2):
        self.n_features = n_features

    def _n_keep(self, d):
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
        return max(1, min(d, math.ceil(k * d - 1e-9)))

    def fit(self, X, Y):
        """Score the features against the labels and choose the kept ones.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training features.
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Training labels (0/1).

        Returns
        -------
        self : object
            The fitted transformer.
        """
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
        self.scores_ = _max_chi2_over_labels(Xs, Y, d)
        order = np.lexsort((np.arange(d), -self.scores_))
        self.support_ = np.sort(order[:n_keep]).astype(np.intp)
        return self

    def transform(self, X):
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

    def fit_transform(self, X, Y):
        """Fit on ``X, Y`` and keep the selected columns of ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training features.
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Training labels (0/1).

        Returns
        -------
        X_selected : ndarray or CSR matrix of shape (n_samples, n_kept)
            Sparse input stays sparse.
        """
        return self.fit(X, Y).transform(X)


def _max_chi2_over_labels(X, Y, d):
    """Max over labels of :func:`multilabel_chi2` (undefined counts as 0).

    A dense Y is scored in one product (as before); a sparse Y, whose q may be
    10^4-10^6, in batches of :data:`_CHI2_LABEL_BATCH` labels with a running
    maximum, so no (q, d) array is held.
    """
    Y = _labels(Y)
    batches = gen_batches(Y.shape[1], _CHI2_LABEL_BATCH) if sp.issparse(Y) else [slice(None)]
    best = np.zeros(d)
    for batch in batches:
        stat = multilabel_chi2(X, Y[:, batch])
        if stat.shape[0]:
            best = np.maximum(best, np.where(np.isfinite(stat), stat, 0.0).max(axis=0))
    return best


class RareLabelFilter:
    """Remove labels with fewer than ``min_count`` positive instances.

    Parameters
    ----------
    min_count : int, default=20
        Labels whose number of positive instances in the fitted Y is below
        this are dropped (0 or 1 keeps every label).

    Attributes
    ----------
    support_ : ndarray of intp
        Indices of the kept labels.

    See Also
    --------
    label_counts : The counts compared with ``min_count``.
    mlknn.datasets.label_stats : Per-label frequencies.

    References
    ----------
    "A Hubness Information-Based k-Nearest Neighbor Approach for Multi-Label
    Learning", Mathematics 2025 (seed 001), the protocol (labels with fewer than 20 instances removed).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 10.0, 0.0], [2.0, 20.0, 1.0], [3.0, 40.0, 0.0], [4.0, 30.0, 5.0]])
    >>> Y = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 0, 0]])
    >>> from mlknn.preprocessing import RareLabelFilter
    >>> f = RareLabelFilter(min_count=2).fit(Y)
    >>> f.support_.tolist(), f.transform(Y).shape
    ([0, 1], (4, 2))
    """

    def __init__(self, min_count=20):
        self.min_count = min_count

    def fit(self, Y):
        """Count the positives of every label and keep those with at least ``min_count``.

        Parameters
        ----------
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Training labels (0/1).

        Returns
        -------
        self : object
            The fitted transformer.
        """
        if isinstance(self.min_count, bool) or not isinstance(self.min_count, Integral) or self.min_count < 0:
            raise ValueError(
                f"The 'min_label_count' parameter must be an int >= 0. Got {self.min_count!r} instead."
            )
        counts = label_counts(Y)
        self.support_ = np.flatnonzero(counts >= self.min_count).astype(np.intp)
        if self.support_.size == 0:
            raise ValueError(
                f"The 'min_label_count' parameter ({self.min_count}) removes every label: the most "
                f"frequent label has {int(counts.max(initial=0))} positive instances."
            )
        return self

    def transform(self, Y):
        """The kept label columns; a sparse Y stays sparse (CSR).

        Parameters
        ----------
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Labels (0/1).

        Returns
        -------
        Y_kept : ndarray or CSR matrix of shape (n_samples, n_kept)
            The kept label columns.
        """
        if sp.issparse(Y):
            return Y.tocsc()[:, self.support_].tocsr()
        return np.asarray(Y)[:, self.support_]

    def fit_transform(self, Y):
        """Fit on ``Y`` and keep its frequent label columns.

        Parameters
        ----------
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Training labels (0/1).

        Returns
        -------
        Y_kept : ndarray or CSR matrix of shape (n_samples, n_kept)
            The kept label columns.
        """
        return self.fit(Y).transform(Y)


class FoldPreprocessor:
    """Labels, then features, then scaling, all fitted on the training part.

    Parameters
    ----------
    scaling : {"none", "minmax", "zscore"}, default="none"
    feature_selection : float, int or None, default=None
        See :class:`MultiLabelChi2Selector`; None keeps every feature.
    min_label_count : int, default=0
        See :class:`RareLabelFilter`; 0 keeps every label.

    Attributes
    ----------
    label_support_, feature_support_ : ndarray of intp
    info_ : dict
        ``n_features`` and ``n_labels`` after preprocessing.
    labels_ : RareLabelFilter
        The fitted label filter.
    selector_ : MultiLabelChi2Selector or None
        The fitted feature selection (None without ``feature_selection``).
    scaler_ : FeatureScaler
        The fitted scaling.

    See Also
    --------
    FeatureScaler, MultiLabelChi2Selector, RareLabelFilter : The three steps.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 10.0, 0.0], [2.0, 20.0, 1.0], [3.0, 40.0, 0.0], [4.0, 30.0, 5.0]])
    >>> Y = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 0, 0]])
    >>> from mlknn.preprocessing import FoldPreprocessor
    >>> pre = FoldPreprocessor(scaling="minmax", feature_selection=2, min_label_count=2)
    >>> Xt, Yt = pre.fit_transform(X, Y)
    >>> Xt.shape, Yt.shape, pre.info_
    ((4, 2), (4, 2), {'n_features': 2, 'n_labels': 2})
    """

    def __init__(self, scaling="none", feature_selection=None, min_label_count=0):
        self.scaling = scaling
        self.feature_selection = feature_selection
        self.min_label_count = min_label_count

    def fit(self, X, Y):
        """Fit the label filter, then the feature selection, then the scaling.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training features.
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Training labels (0/1).

        Returns
        -------
        self : object
            The fitted transformer.
        """
        self.labels_ = RareLabelFilter(self.min_label_count).fit(Y)
        Yk = self.labels_.transform(Y)
        if self.feature_selection is None:
            self.selector_ = None
            Xk = X
        else:
            self.selector_ = MultiLabelChi2Selector(self.feature_selection).fit(X, Yk)
            Xk = self.selector_.transform(X)
        self.scaler_ = FeatureScaler(self.scaling).fit(Xk)
        self.label_support_ = self.labels_.support_
        self.feature_support_ = self.selector_.support_ if self.selector_ is not None else np.arange(X.shape[1])
        self.info_ = {"n_features": len(self.feature_support_), "n_labels": len(self.label_support_)}
        return self

    def transform(self, X, Y=None):
        """Select and scale ``X`` (and filter ``Y`` when given) as fitted.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Features.
        Y : {{array-like, sparse matrix}} of shape (n_samples, n_labels), default=None
            Labels to filter the same way.

        Returns
        -------
        X_out : ndarray or sparse matrix of shape (n_samples, n_features_kept)
            Without ``Y``, only this is returned.
        Y_out : ndarray or CSR matrix of shape (n_samples, n_labels_kept)
            The kept label columns, when ``Y`` is given.
        """
        if self.selector_ is not None:
            X = self.selector_.transform(X)
        X = self.scaler_.transform(X)
        if Y is None:
            return X
        return X, self.labels_.transform(Y)

    def fit_transform(self, X, Y):
        """Fit on the training part and transform it.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training features.
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Training labels (0/1).

        Returns
        -------
        X_out : ndarray or sparse matrix of shape (n_samples, n_features_kept)
            The selected, scaled features.
        Y_out : ndarray or CSR matrix of shape (n_samples, n_labels_kept)
            The kept label columns.
        """
        return self.fit(X, Y).transform(X, Y)
