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

import numpy as np
from sklearn.base import clone

from ..neighbors import NeighborGraph, drop_own_index, get_backend, unchecked_graph
from ..utils._missing_labels import split_unknown_labels
from ..utils._typing import LabelMatrix, MatrixLike, NDArray
from ..utils._validation import validate_fit_data, warn_if_unscaled
from ._outputs import container_kind


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
    container = container_kind(Y)
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


class _CrossFitMixin:
    """K-fold cross-fitting from one neighbour search (``loo_predict_proba(est, X, Y, cv=K)``).

    The fold models see the folds' neighbourhoods, read off one leave-one-out
    search of the whole set: with exact distances and ties broken by the lower
    index, a row's nearest neighbours among a fold's training rows are the
    first of its nearest neighbours overall that lie in that fold, in the same
    order (the fold's rows keep their relative order). The search is about
    twice as wide as the estimator's; the rare rows with too few of their
    neighbours in a fold are searched again against that fold.
    """

    def _cross_fit_supported(self) -> bool:
        """Whether :meth:`_cross_fit` reproduces fold-by-fold fits (not for the
        estimators that count radius neighbourhoods through their own index)."""
        return not self.knn_capabilities()["radius_counts"]  # type: ignore[attr-defined]

    def _cross_fit(
        self, X: MatrixLike, Y: MatrixLike, folds: list[tuple[NDArray[np.intp], NDArray[np.intp]]], k: int | None
    ) -> Any:
        """Each row's scores (or top k) from the fold model fitted without it, one search in all.

        Parameters
        ----------
        X, Y : the training data, as ``fit`` takes them
        folds : list of (train, test) index arrays; every row in exactly one test part
        k : int or None
            None: dense (n, q) scores; else the top k (labels, scores).

        Returns
        -------
        ndarray of shape (n, q), or (labels, scores) of shape (n, k)
        """
        est: Any = self
        est._validate_params()
        X, Y, _ = validate_fit_data(est, X, Y, sparse_labels=True)
        n = X.shape[0]
        widths = [est.search_width(len(train)) for train, _ in folds]
        for (train, _), width in zip(folds, widths, strict=True):
            est._check_n_neighbors(len(train), width)
        index = get_backend(est.neighbors, metric=est.metric, n_jobs=est.n_jobs,
                            random_state=getattr(est, "random_state", None)).fit(X)
        graph = unchecked_graph(index, None, min(n - 1, 2 * max(widths) + 8))
        uses_features = est.knn_capabilities()["uses_features"]
        out: Any = None
        for (train, test), width in zip(folds, widths, strict=True):
            fold = _FoldGraphs(est, X, graph, np.asarray(train), width)
            model = clone(est).fit_from_graph(fold.rows(fold.train, loo=True), Y[fold.train],
                                              X[fold.train] if uses_features else None)
            test_graph, X_test = fold.rows(np.asarray(test), loo=False), X[test] if uses_features else None
            if k is None:
                part = model.predict_proba_from_graph(test_graph, X_test)
                out = np.empty((n, part.shape[1])) if out is None else out
                out[test] = part
            else:
                lab, sc = model.predict_topk_from_graph(test_graph, X_test, k=k)
                out = (np.empty((n, k), dtype=np.int64), np.empty((n, k))) if out is None else out
                out[0][test], out[1][test] = lab, sc
        return out


class _FoldGraphs:
    """One fold's neighbour graphs, cut from the whole set's leave-one-out graph."""

    def __init__(self, est: Any, X: MatrixLike, graph: NeighborGraph, train: NDArray[np.intp], width: int) -> None:
        self.est, self.X, self.graph, self.train, self.width = est, X, graph, np.sort(train), width
        n = graph.n_points
        self.position = np.full(n, -1, dtype=np.intp)  # whole-set row -> fold training row
        self.position[self.train] = np.arange(self.train.size)
        self._index: Any = None

    def rows(self, rows: NDArray[np.intp], loo: bool) -> NeighborGraph:
        """The ``width`` nearest fold training rows of each of ``rows`` (a training row: itself excluded)."""
        ind, dist = self.graph.indices[rows], self.graph.distances[rows]
        member = self.position[ind] >= 0
        keep = member & (np.cumsum(member, axis=1) <= self.width)
        short = keep.sum(axis=1) < self.width
        out_ind = np.empty((rows.size, self.width), dtype=np.intp)
        out_dist = np.empty((rows.size, self.width))
        full = ~short
        out_ind[full] = self.position[ind[full][keep[full]]].reshape(-1, self.width)
        out_dist[full] = dist[full][keep[full]].reshape(-1, self.width)
        if short.any():
            out_dist[short], out_ind[short] = self._search(rows[short], loo)
        return NeighborGraph(out_ind, out_dist, loo=loo)

    def _search(self, rows: NDArray[np.intp], loo: bool) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
        """The rows whose first neighbours overall hold too few of the fold's: searched in the fold."""
        est = self.est
        if self._index is None:
            self._index = get_backend(est.neighbors, metric=est.metric, n_jobs=est.n_jobs,
                                      random_state=getattr(est, "random_state", None)).fit(self.X[self.train])
        dist, ind = self._index.kneighbors(self.X[rows], n_neighbors=self.width + int(loo), return_distance=True)
        if loo:
            dist, ind = drop_own_index(ind, self.position[rows], dist)
        return np.asarray(dist, dtype=np.float64), np.asarray(ind, dtype=np.intp)
