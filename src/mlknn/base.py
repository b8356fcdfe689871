"""Estimator base class shared by every kNN method in mlknn.

The spine (see GUIDE): ``fit`` validates, asks :mod:`mlknn.neighbors` for the
leave-one-out graph of the training set and hands it to the algorithm's
``_fit_graph``; ``predict_proba`` asks for the queries' graph and hands it to
``_predict_proba_graph``. An experiment that already has graphs calls
:meth:`KNNMultiLabelBase.fit_from_graph` / :meth:`predict_proba_from_graph` and
searches once for every algorithm and every k.
"""

from abc import abstractmethod

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .neighbors import NeighborGraph, build_graph, get_backend, is_exact
from .utils._param_validation import HasMethods, Integral, Interval, StrOptions, _fit_context
from .utils._validation import (  # noqa: F401
    NonNumericInputError,
    check_label_matrix,
    label_classes,
    validate_features,
    validate_fit_data,
)
from .utils._validation import input_dtype as _input_dtype  # noqa: F401  (kept importable)

_BACKEND_NAMES = {"auto", "brute", "faiss", "faiss-ivf", "faiss-hnsw", "hnswlib", "pynndescent", "precomputed"}

#: Constraint of the optional ``hubness`` parameter (see :mod:`mlknn.hubness` and
#: docs/hubness.md): an estimator that accepts it stores ``self.hubness`` in
#: ``__init__`` and adds ``"hubness": HUBNESS_CONSTRAINT`` to its constraints; the
#: base class then widens the search and re-ranks every graph.
HUBNESS_CONSTRAINT = [
    StrOptions({"ls", "mp", "mp-gauss", "dsl"}),
    HasMethods(["fit", "transform", "search_width"]),
    None,
]


class MultiLabelMixin:
    """Tags and the common ``score`` for multi-label estimators.

    ``score`` is subset accuracy, as for scikit-learn's multi-label classifiers.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        # Each label is a binary problem: tells scikit-learn's common checks to
        # send 0/1 targets (as an (n, 1) column, since single_output is False).
        tags.classifier_tags.multi_class = False
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        tags.input_tags.sparse = True
        return tags


class KNNMultiLabelBase(MultiLabelMixin, ClassifierMixin, BaseEstimator):
    """Base class: validation, neighbour search and the graph hooks.

    Subclasses implement ``_fit_graph(graph, Y, X)`` and
    ``_predict_proba_graph(graph, X)``, and may override ``_decide(proba, graph)``
    to turn scores into a 0/1 bipartition (default: score > threshold_).

    Parameters common to all subclasses
    -----------------------------------
    n_neighbors : int
    neighbors : str or object
        Backend name (see :func:`mlknn.neighbors.available_backends`) or an object
        with ``fit`` and ``kneighbors``.
    metric : str
    n_jobs : int or None
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "neighbors": [StrOptions(_BACKEND_NAMES), HasMethods(["fit", "kneighbors"])],
        "metric": [str],
        "n_jobs": [Integral, None],
    }

    #: Extra neighbours searched beyond n_neighbors (hubness reduction re-ranks a
    #: wider candidate set); subclasses may override.
    def _search_width(self):
        reduction = self._hubness_reduction()
        if reduction is None:
            return self.n_neighbors
        return max(self.n_neighbors, reduction.search_width(self.n_neighbors))

    # ------------------------------------------------------ hubness hooks
    def _hubness_reduction(self):
        """The unfitted reduction named by a ``hubness`` parameter, or None."""
        hubness = getattr(self, "hubness", None)
        if hubness is None:
            return None
        from .hubness import make_reduction

        return make_reduction(hubness, n_neighbors=self.n_neighbors, metric=self.metric)

    def _width_for(self, n_train):
        """``_search_width()``, capped at n_train - 1 when it exceeds n_neighbors."""
        width = self._search_width()
        if width > self.n_neighbors:
            width = max(self.n_neighbors, min(width, n_train - 1))
        return width

    def _transform_graph(self, graph, X=None, *, fit=False):
        """Hook between the search and the algorithm, in fit and in every query.

        Identity unless the estimator has a ``hubness`` parameter that is not None;
        then the candidate graph (``_search_width()`` wide) is re-ranked by the
        hubness reduction into a graph ``n_neighbors`` wide. ``fit=True`` (the
        training leave-one-out graph) fits the reduction, kept as ``hubness_``.
        """
        if getattr(self, "hubness", None) is None:
            return graph
        if fit:
            self.hubness_ = self._hubness_reduction().fit(graph, X)
            return self.hubness_.fit_graph_
        return self.hubness_.transform(graph, X)

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, Y):
        """Fit from training data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Y : array-like of shape (n_samples, n_labels)
            Binary indicator matrix (0/1). A single label is ``(n_samples, 1)``.

        Returns
        -------
        self
        """
        X, Y = self._validate_fit_input(X, Y)
        width = self._width_for(X.shape[0])
        self._check_n_neighbors(X.shape[0], width)
        self.nn_ = get_backend(self.neighbors, metric=self.metric, n_jobs=self.n_jobs).fit(X)
        graph = self._transform_graph(build_graph(self.nn_, None, width), X, fit=True)
        self._fit_from_validated_graph(graph, Y, X)
        return self

    def fit_from_graph(self, graph, Y, X=None, index=None):
        """Fit from a precomputed leave-one-out graph of the training set.

        Parameters
        ----------
        graph : NeighborGraph
            Leave-one-out graph, at least ``n_neighbors`` wide (wider is sliced).
        Y : array-like of shape (n_samples, n_labels)
        X : {array-like, sparse matrix}, optional
            Training features, for methods that use them (e.g. IBLR-ML+).
        index : fitted backend, optional
            Kept as ``nn_`` so that :meth:`predict` works without a graph.

        Returns
        -------
        self
        """
        self._validate_params()
        if not isinstance(graph, NeighborGraph) or not graph.loo:
            got = type(graph).__name__ if not isinstance(graph, NeighborGraph) else "a NeighborGraph with loo=False"
            raise ValueError(
                f"The 'graph' parameter of {type(self).__name__}.fit_from_graph must be the training "
                f"set's leave-one-out NeighborGraph (loo=True). Got {got} instead."
            )
        self._y_input_dtype = _input_dtype(Y)
        Y = check_label_matrix(Y, n_samples=graph.n_points)
        if X is not None:
            X = validate_features(self, X)
        else:
            self.n_features_in_ = getattr(index, "n_features_in_", 0)
        width = self._width_for(graph.n_points)
        self._check_n_neighbors(graph.n_points, width)
        self.nn_ = index
        self._fit_from_validated_graph(self._transform_graph(graph.take(width), X, fit=True), Y, X)
        return self

    def _fit_from_validated_graph(self, graph, Y, X):
        self.n_labels_ = Y.shape[1]
        self.classes_ = label_classes(Y.shape[1])
        self._y_dtype = self._y_input_dtype
        self.n_train_ = Y.shape[0]
        self._fit_graph(graph, Y, X)

    def _validate_fit_input(self, X, Y):
        X, Y, self._y_input_dtype = validate_fit_data(self, X, Y)
        return X, Y

    def _check_n_neighbors(self, n_samples, width):
        if n_samples < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 training instances (leave-one-out "
                f"neighbourhoods); got n_samples = {n_samples}."
            )
        if self.n_neighbors > n_samples - 1 or width > n_samples - 1:
            raise ValueError(
                f"The 'n_neighbors' parameter of {type(self).__name__} must be <= "
                f"n_samples - 1 = {n_samples - 1} (leave-one-out on the training set). "
                f"Got {self.n_neighbors} instead."
            )

    # -------------------------------------------------------------- predict
    def query_graph(self, X=None):
        """The neighbour graph this estimator uses for ``X`` (None: training LOO)."""
        check_is_fitted(self)
        if self.nn_ is None:
            raise ValueError(
                "This estimator was fitted from a graph without an index; use "
                "predict_proba_from_graph or pass index= to fit_from_graph."
            )
        if X is not None:
            X = validate_features(self, X, reset=False)
        graph = build_graph(self.nn_, X, self._width_for(self.n_train_))
        return self._transform_graph(graph, X), X

    def neighbor_recall(self, X=None, *, n_samples=1000, random_state=None):
        """Recall@k of the fitted neighbour search against exact search, on a sample.

        What an approximate backend (``"hnswlib"``, ``"faiss-ivf"``, ...) loses:
        the mean fraction of the exact neighbours it finds, with k the width this
        estimator searches (``n_neighbors``, or more with hubness reduction, which
        re-ranks that raw search). Exact backends return 1.0 without searching.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features), optional
            Queries; None measures the leave-one-out graph of the training set
            (what ``fit`` learned from).
        n_samples : int, default=1000
            Rows searched exactly (drawn without replacement; all if fewer).
        random_state : int, RandomState instance or None, default=None

        Returns
        -------
        float
            In [0, 1].
        """
        check_is_fitted(self)
        if isinstance(n_samples, bool) or not (isinstance(n_samples, Integral) and n_samples >= 1):
            raise ValueError(f"The 'n_samples' parameter of neighbor_recall must be an int >= 1. Got {n_samples!r}.")
        if self.nn_ is None:
            raise ValueError(
                "This estimator was fitted from a graph without an index; measure its graph with "
                "mlknn.neighbors.estimate_recall(index, X_train, approx_indices=...)."
            )
        if is_exact(self.nn_):
            return 1.0
        if not hasattr(self.nn_, "recall"):
            raise ValueError(
                f"The neighbour backend {type(self.nn_).__name__} has no recall(); use "
                "mlknn.neighbors.estimate_recall(index, X_train, X_query) with its training points."
            )
        if X is not None:
            X = validate_features(self, X, reset=False)
        return float(self.nn_.recall(X, n_neighbors=self._width_for(self.n_train_), n_samples=int(n_samples),
                                     random_state=random_state))

    def predict_proba(self, X):
        """Scores in [0, 1] for each label.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            One array (like ClassifierChain), not MultiOutputClassifier's list of
            per-label arrays.
        """
        graph, X = self.query_graph(X)
        return self._predict_proba_graph(graph, X)

    def predict(self, X):
        """Predicted label sets as a 0/1 indicator matrix.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            Same dtype as the Y given to ``fit`` (as scikit-learn requires).
        """
        graph, X = self.query_graph(X)
        return self._predict_graph(graph, X).astype(self._y_dtype, copy=False)

    def predict_proba_from_graph(self, graph, X=None):
        """Scores from a precomputed query graph (at least ``n_neighbors`` wide)."""
        return self._predict_proba_graph(self._query_from_graph(graph, X), X)

    def predict_from_graph(self, graph, X=None):
        """0/1 predictions from a precomputed query graph."""
        return self._predict_graph(self._query_from_graph(graph, X), X).astype(self._y_dtype, copy=False)

    def _query_from_graph(self, graph, X):
        """A precomputed query graph sliced to the search width and transformed."""
        check_is_fitted(self)
        if not isinstance(graph, NeighborGraph):
            raise ValueError(
                f"The 'graph' parameter of {type(self).__name__} must be a NeighborGraph. "
                f"Got {type(graph).__name__} instead."
            )
        return self._transform_graph(graph.take(self._width_for(self.n_train_)), X)

    def _predict_graph(self, graph, X):
        proba = self._predict_proba_graph(graph, X)
        return (proba > 0.5).astype(np.uint8)

    @abstractmethod
    def _fit_graph(self, graph, Y, X): ...

    @abstractmethod
    def _predict_proba_graph(self, graph, X): ...

