"""The one fit that exact leave-one-out posteriors start from.

:func:`mlknn.model_selection.loo_predict_proba` asks an estimator for row i's
posterior as if it had been fitted on every training row but i. The estimators
that can answer that exactly from one fit (the count methods) need the
leave-one-out graph of the training set one neighbour wider than ``fit`` uses:
removing row i gives every row j that had i among its k neighbours its
(k + 1)-th neighbour instead. :func:`fit_one_wider` fits the estimator exactly
as ``fit`` would (same validation, same backend, the same k-wide graph: the
first k columns of the wider one, since rows are sorted by distance with ties by
the lower index) and returns the wider graph beside it.
"""

from typing import Any

from ..neighbors import NeighborGraph, get_backend
from ..neighbors._base import unchecked_graph
from ..utils._missing_labels import split_unknown_labels
from ..utils._typing import LabelMatrix, MatrixLike
from ..utils._validation import validate_fit_data, warn_if_unscaled
from ._outputs import _container_kind


def check_loo_width(estimator: Any, n_samples: int, width: int) -> None:
    """Refuse a leave-one-out fit whose n - 1 remaining rows cannot hold ``width`` neighbours.

    Parameters
    ----------
    estimator : KNNMultiLabelBase
    n_samples : int
        Rows of the whole training set.
    width : int
        Neighbours each row needs in a fit on n - 1 rows.
    """
    if width > n_samples - 2:
        raise ValueError(
            f"The 'n_neighbors' parameter of {type(estimator).__name__} must be <= n_samples - 2 = "
            f"{n_samples - 2} for leave-one-out posteriors (a fit on n_samples - 1 rows, each "
            f"leaving itself out). Got n_neighbors = {estimator.n_neighbors} (search width {width}) "
            f"with n_samples = {n_samples}."
        )


def fit_one_wider(estimator: Any, X: MatrixLike, Y: MatrixLike) -> tuple[NeighborGraph, LabelMatrix, MatrixLike]:
    """Fit ``estimator`` on (X, Y) as ``fit`` does, from a leave-one-out search one neighbour wider.

    Parameters
    ----------
    estimator : KNNMultiLabelBase
        Unfitted or fitted; refitted in place.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Y : {array-like, sparse matrix} of shape (n_samples, n_labels)

    Returns
    -------
    graph : NeighborGraph
        The training set's leave-one-out graph, ``search_width() + 1`` wide.
    Y : ndarray or csr_array
        The validated labels the estimator was fitted on.
    X : validated features
    """
    estimator._validate_params()
    container = _container_kind(Y)
    Y, unknown = split_unknown_labels(estimator, Y, None)
    if unknown is not None:
        raise ValueError(
            f"Exact leave-one-out posteriors of {type(estimator).__name__} need a complete Y; this Y has "
            "unknown (NaN) entries. Use cv=5 (cross-fitting), which fits the estimator on each fold as given."
        )
    X, Y, y_dtype = validate_fit_data(estimator, X, Y, sparse_labels=True)
    Y = estimator._labels_for_fit(Y)
    if not estimator._normalises_features:
        warn_if_unscaled(X, estimator)
    n = X.shape[0]
    width = estimator.search_width(n)
    estimator._check_n_neighbors(n, width)
    check_loo_width(estimator, n, width)
    X = estimator._transform_features(X, fit=True)
    estimator.nn_ = get_backend(estimator.neighbors, metric=estimator.metric, n_jobs=estimator.n_jobs,
                                random_state=getattr(estimator, "random_state", None)).fit(X)
    wide = unchecked_graph(estimator.nn_, None, width + 1)
    graph = estimator._transform_graph(wide.take(width), X, fit=True)
    estimator._fit_from_validated_graph(graph, Y, X, (y_dtype, container))
    return wide, Y, X
