"""Estimator base class shared by every kNN method in mlknn.

The spine (see GUIDE): ``fit`` validates, asks :mod:`mlknn.neighbors` for the
leave-one-out graph of the training set and hands it to the algorithm's
``_fit_graph``; ``predict_proba`` asks for the queries' graph and hands it to
``_predict_proba_graph``. An experiment that already has graphs calls
:meth:`KNNMultiLabelBase.fit_from_graph` / :meth:`predict_proba_from_graph` and
searches once for every algorithm and every k: the graph-reuse API lives here,
beside the search it replaces, because both run the same validation and hooks.

The label plumbing (sparse or dense Y, ``predict``'s output format, the default
top k) is a set of functions in ``_outputs.py`` that this class calls; the
explanation, leave-one-out cross-fitting and resource-guard mixins are in
``_explain_api.py``, ``_loo.py`` and ``_guards.py``. Every public name is
re-exported by :mod:`mlknn.base`.
"""

from abc import abstractmethod
from typing import Any, Self, cast

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

# The ``hubness`` parameter's constraint, defined beside the reductions: an estimator
# that accepts it adds ``"hubness": HUBNESS_CONSTRAINT`` to its constraints, and the
# base class then widens the search and re-ranks every graph.
from ..hubness import HUBNESS_CONSTRAINT
from ..neighbors import (
    NEIGHBORS_CONSTRAINT,
    NeighborGraph,
    NeighborsIndex,
    get_backend,
    is_exact,
    unchecked_graph,
)
from ..utils._docstrings import fill_doc
from ..utils._missing_labels import MISSING_LABEL_ESTIMATORS, split_unknown_labels, unknown_like
from ..utils._param_validation import (
    Integral,
    Interval,
    _fit_context,
)
from ..utils._resources import MAX_MEMORY_CONSTRAINT
from ..utils._typing import FloatArray, LabelMatrix, MatrixLike, NDArray
from ..utils._validation import (
    SPARSE_LABEL_ESTIMATORS,
    check_label_matrix,
    label_classes,
    validate_features,
    validate_fit_data,
    warn_if_unscaled,
)
from ..utils._validation import input_dtype as _input_dtype
from ._explain_api import _ExplainMixin
from ._guards import _ResourceGuardMixin
from ._loo import _CrossFitMixin
from ._outputs import (
    check_dense_scores,
    check_k,
    container_kind,
    format_prediction,
    labels_for_fit,
    num_rows,
    topk_of_scores,
)

__all__ = ["HUBNESS_CONSTRAINT", "RANDOM_STATE_CONSTRAINT", "KNNMultiLabelBase", "MultiLabelMixin"]

#: Constraint of the ``random_state`` parameter of the kNN estimators (seeds a
#: randomised backend such as pynndescent, and MULAN's random tie draws).
RANDOM_STATE_CONSTRAINT = ["random_state"]


class MultiLabelMixin:
    """Tags, the common ``score`` and the fit-data validation of multi-label estimators.

    Shared by :class:`KNNMultiLabelBase` and the baselines' base class.
    ``score`` is subset accuracy, as for scikit-learn's multi-label classifiers.
    """

    n_labels_: int

    def _validate_multilabel_fit(
        self, X: MatrixLike, Y: MatrixLike, *, sparse_labels: bool = False, **kwargs: Any
    ) -> tuple[MatrixLike, LabelMatrix]:
        """``validate_fit_data`` and the label-space attributes every fit sets.

        Sets ``n_labels_``, ``classes_`` and ``_y_dtype`` (what ``predict`` returns).

        Parameters
        ----------
        X, Y
            As given to ``fit``.
        sparse_labels : bool, default=False
            Keep a sparse Y sparse (a canonical uint8 ``csr_array``).
        **kwargs
            Passed to :func:`mlknn.utils._validation.validate_features`.

        Returns
        -------
        X, Y : validated
        """
        X, Y, self._y_dtype = validate_fit_data(self, X, Y, sparse_labels=sparse_labels, **kwargs)
        self._set_label_space(Y)
        return X, Y

    def _set_label_space(self, Y: LabelMatrix) -> None:
        self.n_labels_ = Y.shape[1]
        self.classes_ = label_classes(Y.shape[1])

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()  # type: ignore[misc]  # a mixin: BaseEstimator's, by the MRO
        tags.classifier_tags.multi_label = True
        # Each label is a binary problem: tells scikit-learn's common checks to
        # send 0/1 targets (as an (n, 1) column, since single_output is False).
        tags.classifier_tags.multi_class = False
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        tags.input_tags.sparse = True
        return tags


class KNNMultiLabelBase(
    MultiLabelMixin, _ExplainMixin, _CrossFitMixin, _ResourceGuardMixin, ClassifierMixin, BaseEstimator,
):
    """Base class: validation, neighbour search and the graph hooks.

    Subclasses implement ``_fit_graph(graph, Y, X)`` and
    ``_predict_proba_graph(graph, X)``, and may override
    ``_predict_graph(graph, X)`` (default: the 0/1 matrix ``proba > 0.5``) and
    ``_predict_topk_graph(graph, X, k)`` (default: the top k of
    ``_predict_proba_graph``, chunk by chunk over the query rows), and implement
    ``_explain_graph(graph, X)`` for :meth:`explain` (``base/_explain_api.py``).

    **Sparse labels.** A subclass with ``_supports_sparse_labels = True`` receives
    a sparse Y in ``_fit_graph`` as a canonical uint8 ``csr_array`` and must
    then return a ``csr_array`` from ``_predict_graph``; the others receive a
    dense Y, densified only after :func:`check_dense_label_budget`. The fitted
    attribute ``sparse_labels_`` records which path was taken.

    **Capabilities** are class attributes, read through :meth:`knn_capabilities`:
    ``_supports_sparse_labels``, ``_uses_features`` (``fit_from_graph`` needs X;
    may be a property when a parameter decides it) and ``_uses_radius_counts``
    (the estimator counts radius neighbourhoods through the fitted index).

    Parameters common to all subclasses
    -----------------------------------
    n_neighbors : int
    neighbors : str or object
        Backend name (see :func:`mlknn.neighbors.available_backends`) or an object
        with ``fit`` and ``kneighbors``.
    metric : str
    n_jobs : int or None
    random_state : int, RandomState instance or None
        Passed to the backend (randomised searches such as pynndescent).
    max_memory : int, float, str or None
        The resource guards' memory limit for this estimator (None: the global
        ``mlknn.config_context(max_memory=...)``).
    """

    # Parameters every subclass takes (stored by its __init__).
    n_neighbors: int
    neighbors: Any
    metric: str
    n_jobs: int | None
    #: Set by fit.
    n_train_: int
    n_features_in_: int
    nn_: NeighborsIndex | None
    _y_dtype: np.dtype[Any]

    _supports_sparse_labels = False
    _uses_features = False
    _uses_radius_counts = False
    #: True when a query's scores depend on its own graph row only, bit for bit
    #: (no BLAS product over the query rows): mlknn.distributed scores such
    #: estimators block by block on the workers.
    _row_scoring = True
    #: True when the estimator rescales X itself (no FeatureScaleWarning then).
    _normalises_features = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Named by LabelSpaceTooLargeError as the estimators that can do it.
        if cls._supports_sparse_labels is True and not cls.__name__.startswith("_"):
            SPARSE_LABEL_ESTIMATORS.add(cls.__name__)
        # Named by the refusal of unknown label entries as the estimators that learn without them.
        if "missing_labels" in cls.__dict__.get("_parameter_constraints", {}) and not cls.__name__.startswith("_"):
            MISSING_LABEL_ESTIMATORS.add(cls.__name__)

    _parameter_constraints: dict[str, list[Any]] = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "neighbors": list(NEIGHBORS_CONSTRAINT),
        "metric": [str],
        "n_jobs": [Integral, None],
        "max_memory": MAX_MEMORY_CONSTRAINT,
    }

    def _search_width(self) -> int:
        """Neighbours searched before capping (hubness reduction re-ranks a wider
        candidate set); subclasses may override."""
        reduction = self._hubness_reduction()
        if reduction is None:
            return self.n_neighbors
        wider: int = reduction.search_width(self.n_neighbors)
        return max(self.n_neighbors, wider)

    def search_width(self, n_train: int | None = None) -> int:
        """How many neighbours this estimator needs from the backend per point.

        ``n_neighbors``, or more when a hubness reduction re-ranks a wider
        candidate set. A caller that builds the graphs itself (an experiment
        sharing one search between estimators) searches this many, then calls
        :meth:`fit_from_graph` and :meth:`predict_proba_from_graph`.

        Parameters
        ----------
        n_train : int, optional
            Training-set size: a width beyond ``n_neighbors`` is capped at
            ``n_train - 1`` (leave-one-out). None: uncapped.

        Returns
        -------
        int
        """
        width = self._search_width()
        if n_train is not None and width > self.n_neighbors:
            width = max(self.n_neighbors, min(width, int(n_train) - 1))
        return int(width)

    def knn_capabilities(self) -> dict[str, bool]:
        """What this estimator needs from, and accepts beside, its neighbour graphs.

        Returns
        -------
        dict
            ``"uses_features"``: ``fit_from_graph`` / ``predict_proba_from_graph``
            need X as well as the graph (the method, or its hubness reduction,
            reads the features); ``"radius_counts"``: it counts radius
            neighbourhoods through the fitted index (pass ``index=`` to
            ``fit_from_graph``); ``"sparse_labels"``: a sparse Y stays sparse;
            ``"hubness"``: it accepts a ``hubness`` parameter; ``"row_scoring"``:
            a query's scores depend on its own graph row only, bit for bit, so
            blocks of queries may be scored separately (hubness reduction included);
            ``"missing_labels"``: it learns from the observed entries of an
            incomplete Y (NaN, or ``Y_missing``).
        """
        reduction = self._hubness_reduction()
        return {
            "uses_features": bool(self._uses_features) or bool(getattr(reduction, "_needs_X", False)),
            "radius_counts": bool(self._uses_radius_counts),
            "sparse_labels": bool(self._supports_sparse_labels),
            "hubness": "hubness" in self._parameter_constraints,
            "row_scoring": bool(self._row_scoring) and bool(getattr(reduction, "rowwise", True)),
            "missing_labels": "missing_labels" in self._parameter_constraints,
        }

    # ------------------------------------------------------ hubness hooks
    def _hubness_reduction(self) -> Any:
        """The unfitted reduction named by a ``hubness`` parameter, or None."""
        hubness = getattr(self, "hubness", None)
        if hubness is None:
            return None
        from ..hubness import make_reduction

        return make_reduction(hubness, n_neighbors=self.n_neighbors, metric=self.metric)

    def _transform_graph(self, graph: NeighborGraph, X: MatrixLike = None, *, fit: bool = False) -> NeighborGraph:
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
            return cast(NeighborGraph, self.hubness_.fit_graph_)
        return cast(NeighborGraph, self.hubness_.transform(graph, X))

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, Y: MatrixLike, Y_missing: MatrixLike = None) -> Self:
        """Fit from training data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The training instances.
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Binary indicator matrix (0/1). A single label is ``(n_samples, 1)``.
            A scipy sparse Y stays sparse in the estimators that support it
            (``knn_capabilities()["sparse_labels"]``); the others densify it
            after checking that it fits in memory. NaN marks an unknown entry
            (estimators with a ``missing_labels`` parameter; see
            docs/incomplete_labels.md).
        Y_missing : {array-like, sparse matrix} of shape (n_samples, n_labels), optional
            1 marks an unknown entry of Y (the form for a sparse Y, which
            cannot hold NaN); same estimators as NaN.

        Returns
        -------
        self
        """
        container = container_kind(Y)
        Y, unknown = split_unknown_labels(self, Y, Y_missing)
        X, Y, y_dtype = validate_fit_data(self, X, Y, sparse_labels=True)
        self._guard_fit(X.shape[1], Y)
        Y = self._labels_for_fit(Y)
        unknown = unknown_like(unknown, Y)
        if not self._normalises_features:
            warn_if_unscaled(X, self)
        width = self.search_width(X.shape[0])
        self._check_n_neighbors(X.shape[0], width)
        X = self._transform_features(X, fit=True)
        self.nn_ = get_backend(self.neighbors, metric=self.metric, n_jobs=self.n_jobs,
                               random_state=getattr(self, "random_state", None)).fit(X)
        graph = self._transform_graph(unchecked_graph(self.nn_, None, width), X, fit=True)
        self._fit_from_validated_graph(graph, Y, X, (y_dtype, container), unknown)
        return self

    def _fit_from_validated_graph(
        self, graph: NeighborGraph, Y: LabelMatrix, X: MatrixLike, y_kind: tuple[np.dtype[Any], str | None],
        unknown: MatrixLike = None,
    ) -> None:
        # The unknown entries of Y (None: complete), read by the estimators with a
        # missing_labels parameter; reset by every fit.
        self._fit_unknown = unknown
        self._set_label_space(Y)
        self._y_dtype, self._y_container = y_kind
        self.sparse_labels_ = bool(sp.issparse(Y))
        self.n_train_ = Y.shape[0]
        self._fit_graph(graph, Y, X)

    def _transform_features(self, X: MatrixLike, fit: bool = False) -> MatrixLike:
        """Hook on X before the search (identity; MLkNN(variant="mulan") rescales)."""
        return X

    def _check_n_neighbors(self, n_samples: int, width: int) -> None:
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
    def query_graph(self, X: MatrixLike = None) -> tuple[NeighborGraph, MatrixLike]:
        """The neighbour graph this estimator uses for ``X`` (None: training LOO).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features), default=None
            Queries; None: the leave-one-out graph of the training set.

        Returns
        -------
        graph : NeighborGraph
        X : validated X (None stays None)
        """
        check_is_fitted(self)
        if self.nn_ is None:
            raise ValueError(
                "This estimator was fitted from a graph without an index; use "
                "predict_proba_from_graph or pass index= to fit_from_graph."
            )
        if X is not None:
            X = self._transform_features(validate_features(self, X, reset=False))
        graph = unchecked_graph(self.nn_, X, self.search_width(self.n_train_))
        return self._transform_graph(graph, X), X

    @fill_doc
    def neighbor_recall(self, X: MatrixLike = None, *, n_samples: int = 1000, random_state: Any = None) -> float:
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
        {random_state}
            Seeds the sample of queries whose neighbours are checked.

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
            X = self._transform_features(validate_features(self, X, reset=False))
        return float(self.nn_.recall(X, n_neighbors=self.search_width(self.n_train_), n_samples=int(n_samples),
                                     random_state=random_state))

    @fill_doc
    def predict_proba(self, X: MatrixLike) -> FloatArray:
        """Scores in [0, 1] for each label.

        Parameters
        ----------
        {X_query}

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            One array (like ClassifierChain), not MultiOutputClassifier's list of
            per-label arrays. Dense also after a fit on sparse labels, while it
            fits the memory budget (else :class:`LabelSpaceTooLargeError`: use
            :meth:`predict_topk`).
        """
        check_is_fitted(self)
        self._check_dense_scores(num_rows(X))
        self._check_resources("predict_proba", self._rows_scored(X))
        graph, X = self.query_graph(X)
        return self._predict_proba_graph(graph, X)

    @fill_doc
    def predict(self, X: MatrixLike) -> MatrixLike:
        """Predicted label sets as a 0/1 indicator matrix.

        Parameters
        ----------
        {X_query}

        Returns
        -------
        ndarray or sparse of shape (n_queries, n_labels)
            Same dtype as the Y given to ``fit`` (as scikit-learn requires); CSR
            of the container kind given (``csr_matrix`` or ``csr_array``) when
            fitted on sparse labels.
        """
        check_is_fitted(self)
        self._check_resources("predict", self._rows_scored(X))
        graph, X = self.query_graph(X)
        return self._format_prediction(self._predict_graph(graph, X))

    @fill_doc
    def predict_topk(self, X: MatrixLike, k: int = 5) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The k highest-scoring labels of each query and their scores.

        Equal to the top k of :meth:`predict_proba`, row by row, with ties broken
        by the lower label index; estimators fitted on sparse labels compute it
        without any (n_queries, n_labels) array.

        Parameters
        ----------
        {X_query}
        k : int, default=5
            ``1 <= k <= n_labels``.

        Returns
        -------
        labels : ndarray of shape (n_queries, k), int64
            Label indices, by decreasing score.
        scores : ndarray of shape (n_queries, k), float64
        """
        check_is_fitted(self)
        k = self._check_k(k)
        self._check_resources("predict_topk", self._rows_scored(X))
        graph, X = self.query_graph(X)
        return self._predict_topk_graph(graph, X, k)

    # ------------------------------------------- graph reuse (precomputed graphs)
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
            Training labels, one row per graph point, 1 for a relevant label (a
            sparse matrix keeps the sparse-label path, as in ``fit``).
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

    @fill_doc
    def predict_proba_from_graph(self, graph: NeighborGraph, X: MatrixLike = None) -> FloatArray:
        """Scores from a precomputed query graph (at least :meth:`search_width` wide).

        Parameters
        ----------
        {query_graph}
        {X_graph_features}

        Returns
        -------
        ndarray of shape (n_queries, n_labels)
            As :meth:`predict_proba`.
        """
        check_is_fitted(self)
        self._check_dense_scores(graph.n_points if isinstance(graph, NeighborGraph) else 0)
        return self._predict_proba_graph(self._query_from_graph(graph, X), X)

    @fill_doc
    def predict_from_graph(self, graph: NeighborGraph, X: MatrixLike = None) -> MatrixLike:
        """0/1 predictions from a precomputed query graph (as :meth:`predict`).

        Parameters
        ----------
        {query_graph}
        {X_graph_features}

        Returns
        -------
        ndarray or CSR matrix of shape (n_queries, n_labels)
            As :meth:`predict`.
        """
        return self._format_prediction(self._predict_graph(self._query_from_graph(graph, X), X))

    @fill_doc
    def predict_topk_from_graph(
        self, graph: NeighborGraph, X: MatrixLike = None, k: int = 5
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """:meth:`predict_topk` from a precomputed query graph.

        Parameters
        ----------
        {query_graph}
        {X_graph_features}
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

    # ------------------------------------------------- label plumbing (_outputs.py)
    def _labels_for_fit(self, Y: LabelMatrix) -> LabelMatrix:
        """Keep a sparse Y sparse if this estimator supports it, else densify within budget."""
        return labels_for_fit(Y, keep_sparse=self._supports_sparse_labels, estimator=self)

    def _check_k(self, k: int) -> int:
        return check_k(k, self.n_labels_)

    def _check_dense_scores(self, n_rows: int) -> None:
        check_dense_scores(n_rows, self.n_labels_, sparse_labels=getattr(self, "sparse_labels_", False),
                           estimator=self)

    def _format_prediction(self, P: MatrixLike) -> MatrixLike:
        """``_predict_graph``'s 0/1 output in fit's dtype and container kind."""
        return format_prediction(P, self._y_dtype, getattr(self, "_y_container", None))

    def _predict_graph(self, graph: NeighborGraph, X: MatrixLike) -> MatrixLike:
        proba = self._predict_proba_graph(graph, X)
        return (proba > 0.5).astype(np.uint8)

    def _predict_topk_graph(
        self, graph: NeighborGraph, X: MatrixLike, k: int
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Default top k: of ``_predict_proba_graph``, whole if it fits the budget, else by row chunks."""
        return topk_of_scores(self._predict_proba_graph, graph, X, k, self.n_labels_)


    @abstractmethod
    def _fit_graph(self, graph: NeighborGraph, Y: LabelMatrix, X: MatrixLike) -> None: ...

    @abstractmethod
    def _predict_proba_graph(self, graph: NeighborGraph, X: MatrixLike) -> FloatArray: ...


