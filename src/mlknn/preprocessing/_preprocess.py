"""Scaling, rare-label removal and the per-fold chain of the three steps.

The chi-square selection is in :mod:`._chi2`, the label counts in :mod:`._labels`;
their names are imported here too, where they were defined before.
"""

from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..utils._docstrings import fill_doc
from ..utils._typing import MatrixLike, NDArray
from ._chi2 import (
    _CHI2_LABEL_BATCH,
    CHI2_RULES,
    Chi2Rule,
    MultiLabelChi2Selector,
    multilabel_chi2,
    presence_chi2,
)
from ._labels import _labels, label_counts, labelled_rows

__all__ = [
    "CHI2_RULES",
    "_CHI2_LABEL_BATCH",
    "FeatureScaler",
    "FoldPreprocessor",
    "MultiLabelChi2Selector",
    "RareLabelFilter",
    "_labels",
    "label_counts",
    "labelled_rows",
    "multilabel_chi2",
    "presence_chi2",
]

_SCALINGS = ("none", "minmax", "zscore")


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

    scaler_: Any

    def __init__(self, method: str = "minmax") -> None:
        self.method = method

    @fill_doc
    def fit(self, X: MatrixLike) -> "FeatureScaler":
        """Fit the scaler on the training part.

        Parameters
        ----------
        {X_train}

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

    def transform(self, X: MatrixLike) -> MatrixLike:
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

    @fill_doc
    def fit_transform(self, X: MatrixLike) -> MatrixLike:
        """Fit on ``X`` and scale it.

        Parameters
        ----------
        {X_train}

        Returns
        -------
        X_scaled : ndarray or sparse matrix of the same shape
            Sparse input stays sparse.
        """
        return self.fit(X).transform(X)


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
    Learning", Mathematics 2025, the protocol (labels with fewer than 20 instances removed).

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

    support_: NDArray[np.intp]

    def __init__(self, min_count: int = 20) -> None:
        self.min_count = min_count

    @fill_doc
    def fit(self, Y: MatrixLike) -> "RareLabelFilter":
        """Count the positives of every label and keep those with at least ``min_count``.

        Parameters
        ----------
        {Y_train}

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

    def transform(self, Y: MatrixLike) -> MatrixLike:
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

    @fill_doc
    def fit_transform(self, Y: MatrixLike) -> MatrixLike:
        """Fit on ``Y`` and keep its frequent label columns.

        Parameters
        ----------
        {Y_train}

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
        The feature scaling fitted on each training fold: none, min-max or z-score.
    feature_selection : float, int or None, default=None
        See :class:`MultiLabelChi2Selector`; None keeps every feature.
    min_label_count : int, default=0
        See :class:`RareLabelFilter`; 0 keeps every label.
    chi2_rule : {"max", "mean", "presence-max", "presence-avg"}, default="max"
        The selection's statistic and combination over labels (see
        :class:`MultiLabelChi2Selector`).

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

    labels_: RareLabelFilter
    selector_: MultiLabelChi2Selector | None
    scaler_: FeatureScaler
    label_support_: NDArray[np.intp]
    feature_support_: NDArray[np.intp]
    info_: dict[str, int]

    def __init__(
        self,
        scaling: str = "none",
        feature_selection: float | str | None = None,  # a str is refused by the selector's check
        min_label_count: int = 0,
        chi2_rule: Chi2Rule = "max",
    ) -> None:
        self.scaling = scaling
        self.feature_selection = feature_selection
        self.min_label_count = min_label_count
        self.chi2_rule = chi2_rule

    @fill_doc
    def fit(self, X: MatrixLike, Y: MatrixLike) -> "FoldPreprocessor":
        """Fit the label filter, then the feature selection, then the scaling.

        Parameters
        ----------
        {X_train}
        {Y_train}

        Returns
        -------
        self : object
            The fitted transformer.
        """
        # Checked even without feature selection, so that a typo is not silently ignored.
        if self.chi2_rule not in CHI2_RULES:
            raise ValueError(
                f"The 'chi2_rule' parameter must be one of {CHI2_RULES}. Got {self.chi2_rule!r} instead."
            )
        self.labels_ = RareLabelFilter(self.min_label_count).fit(Y)
        Yk = self.labels_.transform(Y)
        if self.feature_selection is None:
            self.selector_ = None
            Xk = X
        else:
            self.selector_ = MultiLabelChi2Selector(self.feature_selection, rule=self.chi2_rule).fit(X, Yk)
            Xk = self.selector_.transform(X)
        self.scaler_ = FeatureScaler(self.scaling).fit(Xk)
        self.label_support_ = self.labels_.support_
        self.feature_support_ = (
            self.selector_.support_ if self.selector_ is not None else np.arange(X.shape[1], dtype=np.intp)
        )
        self.info_ = {"n_features": len(self.feature_support_), "n_labels": len(self.label_support_)}
        return self

    def transform(self, X: MatrixLike, Y: MatrixLike | None = None) -> Any:
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

    @fill_doc
    def fit_transform(self, X: MatrixLike, Y: MatrixLike) -> Any:
        """Fit on the training part and transform it.

        Parameters
        ----------
        {X_train}
        {Y_train}

        Returns
        -------
        X_out : ndarray or sparse matrix of shape (n_samples, n_features_kept)
            The selected, scaled features.
        Y_out : ndarray or CSR matrix of shape (n_samples, n_labels_kept)
            The kept label columns.
        """
        return self.fit(X, Y).transform(X, Y)
