"""The graph-reuse API of :class:`~mlknn.base.KNNMultiLabelBase`: fit and predict from precomputed graphs.

An experiment that already has the neighbour graphs (one search shared by every
algorithm and every k) calls ``fit_from_graph`` and the ``*_from_graph``
predictions instead of ``fit`` / ``predict*``; the graphs are sliced to
:meth:`~mlknn.base.KNNMultiLabelBase.search_width` and go through the same hubness
hook as a search of the estimator's own.
"""

from typing import TYPE_CHECKING, Any, Self

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..neighbors import NeighborGraph, NeighborsIndex
from ..utils._missing_labels import split_unknown_labels, unknown_like
from ..utils._param_validation import _fit_context
from ..utils._typing import FloatArray, LabelMatrix, MatrixLike, NDArray
from ..utils._validation import check_label_matrix, validate_features
from ..utils._validation import input_dtype as _input_dtype
from ._outputs import container_kind


class _GraphReuseMixin:
    """``fit_from_graph`` and ``predict*_from_graph`` of :class:`~mlknn.base.KNNMultiLabelBase`."""

    n_train_: int
    n_features_in_: int
    nn_: NeighborsIndex | None

    if TYPE_CHECKING:  # provided by KNNMultiLabelBase and _LabelOutputMixin
        def search_width(self, n_train: int | None = None) -> int: ...
        def _check_n_neighbors(self, n_samples: int, width: int) -> None: ...
        def _labels_for_fit(self, Y: LabelMatrix) -> LabelMatrix: ...
        def _guard_fit(self, n_features: int, Y: MatrixLike) -> None: ...
        def _fit_from_validated_graph(
            self, graph: NeighborGraph, Y: LabelMatrix, X: MatrixLike, y_kind: tuple[np.dtype[Any], str | None],
            unknown: MatrixLike = None,
        ) -> None: ...
        def _transform_graph(
            self, graph: NeighborGraph, X: MatrixLike = None, *, fit: bool = False
        ) -> NeighborGraph: ...
        def _check_k(self, k: int) -> int: ...
        def _check_dense_scores(self, n_rows: int) -> None: ...
        def _format_prediction(self, P: MatrixLike) -> MatrixLike: ...
        def _predict_graph(self, graph: NeighborGraph, X: MatrixLike) -> MatrixLike: ...
        def _predict_proba_graph(self, graph: NeighborGraph, X: MatrixLike) -> FloatArray: ...
        def _predict_topk_graph(
            self, graph: NeighborGraph, X: MatrixLike, k: int
        ) -> tuple[NDArray[np.int64], NDArray[np.float64]]: ...

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_from_graph(
        self, graph: NeighborGraph, Y: MatrixLike, X: MatrixLike = None, index: NeighborsIndex | None = None,
        Y_missing: MatrixLike = None,
    ) -> Self:
        """Fit from a precomputed leave-one-out graph of the training set.

        Everything is validated before any fitted attribute is set.

        Parameters
        ----------
        graph : NeighborGraph
            Leave-one-out graph, at least :meth:`search_width` wide (wider is sliced).
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
        X : {array-like, sparse matrix}, optional
            Training features, for methods that use them
            (``knn_capabilities()["uses_features"]``).
        index : fitted backend, optional
            Kept as ``nn_`` so that :meth:`predict` works without a graph.
        Y_missing : {array-like, sparse matrix} of shape (n_samples, n_labels), optional
            1 marks an unknown entry of Y, as in ``fit`` (where NaN in Y does too).

        Returns
        -------
        self
        """
        if not isinstance(graph, NeighborGraph) or not graph.loo:
            got = type(graph).__name__ if not isinstance(graph, NeighborGraph) else "a NeighborGraph with loo=False"
            raise ValueError(
                f"The 'graph' parameter of {type(self).__name__}.fit_from_graph must be the training "
                f"set's leave-one-out NeighborGraph (loo=True). Got {got} instead."
            )
        y_dtype, container = _input_dtype(Y), container_kind(Y)
        Y, unknown = split_unknown_labels(self, Y, Y_missing)
        Y = check_label_matrix(Y, n_samples=graph.n_points, accept_sparse=True)
        # The resource guard, before a dense-in-q estimator densifies Y (X's width, or the index's).
        self._guard_fit(X.shape[1] if X is not None else getattr(index, "n_features_in_", 0), Y)
        Y = self._labels_for_fit(Y)
        unknown = unknown_like(unknown, Y)
        width = self.search_width(graph.n_points)
        self._check_n_neighbors(graph.n_points, width)
        if graph.n_neighbors < width:
            raise ValueError(
                f"The 'graph' parameter of {type(self).__name__}.fit_from_graph must be at least "
                f"search_width() = {width} wide. Got a graph {graph.n_neighbors} wide instead."
            )
        if X is not None:
            X = validate_features(self, X)
            if X.shape[0] != graph.n_points:
                raise ValueError(
                    f"X has {X.shape[0]} rows but the graph has {graph.n_points} points; they must match."
                )
        else:
            self.n_features_in_ = getattr(index, "n_features_in_", 0)
        self.nn_ = index
        self._fit_from_validated_graph(self._transform_graph(graph.take(width), X, fit=True), Y, X,
                                       (y_dtype, container), unknown)
        return self

    def predict_proba_from_graph(self, graph: NeighborGraph, X: MatrixLike = None) -> FloatArray:
        """Scores from a precomputed query graph (at least :meth:`search_width` wide).

        Parameters
        ----------
        graph : NeighborGraph
            Neighbours of the queries among the training points (a leave-one-out
            graph for the training set itself), at least :meth:`search_width` wide;
            wider graphs are cut to that width.
        X : {array-like, sparse matrix} of shape (n_queries, n_features), default=None
            The queries' features, for estimators that use them
            (``knn_capabilities()["uses_features"]``); else ignored.

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            As :meth:`predict_proba`.
        """
        check_is_fitted(self)
        self._check_dense_scores(graph.n_points if isinstance(graph, NeighborGraph) else 0)
        return self._predict_proba_graph(self._query_from_graph(graph, X), X)

    def predict_from_graph(self, graph: NeighborGraph, X: MatrixLike = None) -> MatrixLike:
        """0/1 predictions from a precomputed query graph (as :meth:`predict`).

        Parameters
        ----------
        graph : NeighborGraph
            Neighbours of the queries among the training points (a leave-one-out
            graph for the training set itself), at least :meth:`search_width` wide;
            wider graphs are cut to that width.
        X : {array-like, sparse matrix} of shape (n_queries, n_features), default=None
            The queries' features, for estimators that use them
            (``knn_capabilities()["uses_features"]``); else ignored.

        Returns
        -------
        ndarray or CSR matrix of shape (n_queries, n_labels)
            As :meth:`predict`.
        """
        return self._format_prediction(self._predict_graph(self._query_from_graph(graph, X), X))

    def predict_topk_from_graph(
        self, graph: NeighborGraph, X: MatrixLike = None, k: int = 5
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """:meth:`predict_topk` from a precomputed query graph.

        Parameters
        ----------
        graph : NeighborGraph
            Neighbours of the queries among the training points (a leave-one-out
            graph for the training set itself), at least :meth:`search_width` wide;
            wider graphs are cut to that width.
        X : {array-like, sparse matrix} of shape (n_queries, n_features), default=None
            The queries' features, for estimators that use them
            (``knn_capabilities()["uses_features"]``); else ignored.
        k : int, default=5
            Labels per query.

        Returns
        -------
        labels : ndarray of shape (n_queries, k), int64
            Label indices by decreasing score (ties: lower index first).
        scores : ndarray of shape (n_queries, k), float64
            Their scores, as in :meth:`predict_topk`.
        """
        check_is_fitted(self)
        k = self._check_k(k)
        return self._predict_topk_graph(self._query_from_graph(graph, X), X, k)

    def _query_from_graph(self, graph: NeighborGraph, X: MatrixLike) -> NeighborGraph:
        """A precomputed query graph sliced to the search width and transformed."""
        check_is_fitted(self)
        if not isinstance(graph, NeighborGraph):
            raise ValueError(
                f"The 'graph' parameter of {type(self).__name__} must be a NeighborGraph. "
                f"Got {type(graph).__name__} instead."
            )
        return self._transform_graph(graph.take(self.search_width(self.n_train_)), X)

