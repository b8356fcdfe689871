"""Hubness reduction as a transformation of one neighbour graph into another: the design.

Teng et al. (2025, the MLHiKNN paper), section 2.2 and Algorithms 4-5: local scaling
(LS, eq 3), mutual proximity (MP, eq 4, empiric, and its Gaussian model) and the
local dissimilarity DSL (eq 2). A reduction replaces the primary distance d by a
secondary dissimilarity and the k nearest neighbours are re-identified under it.

Design
------
A reduction never searches. It receives

* at ``fit``: the training set's leave-one-out *candidate* graph, W >= k wide
  (W = :meth:`search_width`, what the estimator asks its backend for), and the
  training features X when the method needs them (MP, DSL);
* at ``transform``: a query graph of the same width W (and the queries' X).

It computes the secondary dissimilarity of every (point, candidate) pair, re-ranks
the W candidates and keeps the k best: the result is a :class:`HubnessGraph` of
width k whose ``distances`` are the secondary dissimilarities, ascending, ties
broken by the primary distance and then by the lower training index, and whose
``primary_distances`` are the primary distances of the same neighbours (what an
algorithm that weights by distance, such as MLHiKNN's eq 20, reads).

**Approximation: the candidate set.** Only the W primary nearest neighbours can
become secondary neighbours. With W = n_train - 1 the re-ranking is exact
(``n_candidates=-1`` asks for that). The default W = max(5 k, 100) (capped at
n_train - 1) is documented with its measured recall in ``docs/notes/hubness.md``. The
secondary *values* of the candidates are exact (MP counts over all training
points, not over the candidates).

**Queries join the set (Algorithms 4-5, line "based on the dataset {t u D}").**
A query t's secondary dissimilarities are computed in D u {t}: t can enter a
training point's k-neighbourhood, which changes that point's scale. Each query is
joined on its own (queries do not see each other):

* LS: x's k-th neighbour distance in D u {t} is ``max(d_{k-1}(x), d(x, t))`` when
  ``d(x, t) < d_k(x)``, else ``d_k(x)`` (``d_0 = 0``);
* DSL: when ``d(x, t) < d_k(x)``, t replaces x's k-th neighbour in its centroid,
  ``c'_k(x) = c_k(x) + (t - x_(k)) / k``;
* MP empiric: the count runs over D \\ {x} (t is one end of the pair) and is
  divided by ``|D u {t}| - 2 = n - 1``;
* MP Gaussian: x's mean and standard deviation are updated with d(x, t)
  (Welford's one-value update); t's are over its distances to all of D.

Training pairs (``fit`` and ``transform`` of a leave-one-out graph) are computed
in D alone, as in Algorithm 5 lines 2-5.

Memory: LS and DSL work on the (n, W) candidate arrays only. MP needs the
distribution of each point's distances to *all* training points; it streams
blocks of training columns (``working_memory`` megabytes per block), never an
n x n array. MP empiric costs O(n_rows * W * n_train) comparisons; MP Gaussian
O(n_rows * n_train) distances, streamed from the neighbours layer's all-pairs
API (:func:`mlknn.neighbors.pairwise_distances_chunked`). The only geometry
computed in this package is DSL's centroid residual ``|x - c_k(x)|^2``, a row norm
taken with :func:`mlknn.neighbors.row_sqnorms`.

Files: ``_graph.py`` (:class:`HubnessGraph`), ``_base.py`` (the shared machinery:
validation, candidate width, re-ranking), ``_ls.py``, ``_mp.py``, ``_dsl.py`` (one
method each), ``_factory.py`` (:func:`make_reduction`), ``_constraints.py`` (the
parameter constraints, in scikit-learn's validation).
"""

from abc import ABCMeta, abstractmethod
from typing import Any, Self, cast

import numpy as np
from sklearn.base import BaseEstimator

from ..neighbors import NeighborGraph
from ..utils._param_validation import validate_parameter_constraints
from ..utils._typing import FloatArray, MatrixLike, NDArray
from ._constraints import REDUCTION_CONSTRAINTS
from ._graph import HubnessGraph

_MIN_CANDIDATES = 100
_CANDIDATE_FACTOR = 5


class _GraphReduction(BaseEstimator, metaclass=ABCMeta):
    """Shared machinery: validation, candidate width, re-ranking."""

    _needs_X = False
    @property
    def rowwise(self) -> bool:
        """True when a query row's secondary values depend on that row (and the fitted
        state) only, bit for bit, whichever other queries share the call."""
        return True

    #: scikit-learn's parameter validation (checked at ``fit``; ``n_neighbors`` also
    #: wherever k is read, since an estimator's ``search_width`` asks before fit).
    _parameter_constraints: dict[str, list[Any]] = dict(REDUCTION_CONSTRAINTS)

    n_train_: int
    fit_graph_: HubnessGraph
    _cand_indices: NDArray[np.intp]
    #: The training features, kept by the methods that need them (MP, DSL).
    _X: MatrixLike

    def __init__(
        self,
        n_neighbors: int | None = None,
        *,
        n_candidates: int | None = None,
        metric: str = "euclidean",
        working_memory: float = 256,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.n_candidates = n_candidates
        self.metric = metric
        self.working_memory = working_memory

    # ------------------------------------------------------------ public
    def search_width(self, n_neighbors: int | None = None) -> int:
        """How many primary neighbours (candidates) to ask the backend for.

        ``n_candidates`` when set (``-1``: every training point, i.e. exact
        re-ranking; the caller caps it at n_train - 1), else
        ``max(5 k, 100)``; never less than k.

        Parameters
        ----------
        n_neighbors : int, optional
            k; defaults to the reduction's ``n_neighbors``.

        Returns
        -------
        int
        """
        k = self._k(n_neighbors)
        if self.n_candidates is None:
            width = max(_CANDIDATE_FACTOR * k, _MIN_CANDIDATES)
        elif self.n_candidates == -1:
            width = int(np.iinfo(np.int64).max)
        else:
            width = int(self.n_candidates)
        return max(k, width)

    def fit(self, graph: NeighborGraph, X: MatrixLike = None) -> Self:
        """Learn the training set's statistics from its leave-one-out candidate graph.

        Parameters
        ----------
        graph : NeighborGraph
            Leave-one-out graph of the training set, at least ``n_neighbors`` wide
            (its width is the candidate set).
        X : {array-like, sparse matrix} of shape (n_train, n_features), optional
            Training features; required by MP and DSL.

        Returns
        -------
        self
            With ``fit_graph_``, the re-ranked leave-one-out graph (width k).
        """
        self._validate()
        if not isinstance(graph, NeighborGraph) or not graph.loo:
            raise ValueError(
                f"{type(self).__name__}.fit needs the training set's leave-one-out NeighborGraph "
                f"(loo=True). Got {type(graph).__name__}"
                f"{'' if not isinstance(graph, NeighborGraph) else ' with loo=False'} instead."
            )
        self._check_width(graph, "fit")
        X = self._check_X(X, graph.n_points, "fit")
        self.n_train_ = graph.n_points
        self._cand_indices = graph.indices
        self._fit_stats(graph, X)
        self.fit_graph_ = self._rerank(graph, *self._secondary_train(graph))
        return self

    def transform(self, graph: NeighborGraph, X: MatrixLike = None) -> HubnessGraph:
        """Re-rank a candidate graph by the secondary dissimilarity.

        Parameters
        ----------
        graph : NeighborGraph
            A query graph (each query joins the training set, Algorithm 4 line 2),
            or the training set's leave-one-out graph (secondary distances within
            the training set, Algorithm 5 line 3). At least ``n_neighbors`` wide.
        X : {array-like, sparse matrix} of shape (n_queries, n_features), optional
            The queries' features; required by MP and DSL for a query graph.

        Returns
        -------
        HubnessGraph
            Width ``n_neighbors``.
        """
        if not hasattr(self, "fit_graph_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet; call fit first.")
        if not isinstance(graph, NeighborGraph):
            raise ValueError(
                f"The 'graph' parameter of {type(self).__name__}.transform must be a NeighborGraph. "
                f"Got {type(graph).__name__} instead."
            )
        k = self._check_width(graph, "transform")
        if graph.loo:
            if graph.n_points != self.n_train_:
                raise ValueError(
                    f"The 'graph' parameter of {type(self).__name__}.transform is a leave-one-out "
                    f"graph, so it must be the training set's ({self.n_train_} points). "
                    f"Got {graph.n_points} points instead."
                )
            if graph.indices.shape == self._cand_indices.shape and np.array_equal(graph.indices, self._cand_indices):
                return self.fit_graph_
            return self._rerank(graph, *self._secondary_train(graph))
        X = self._check_X(X, graph.n_points, "transform")
        if graph.n_points == 0:
            empty = np.empty((0, k))
            return HubnessGraph(np.empty((0, k), dtype=np.intp), empty, False, empty.copy())
        return self._rerank(graph, *self._secondary_query(graph, X))

    def fit_transform(self, graph: NeighborGraph, X: MatrixLike = None) -> HubnessGraph:
        """``fit(graph, X).fit_graph_``.

        Parameters
        ----------
        graph : NeighborGraph
            Leave-one-out graph of the training set, at least :meth:`search_width` wide.
        X : {array-like, sparse matrix} of shape (n_train, n_features), default=None
            Training features, for the reductions that need them (DSL).

        Returns
        -------
        HubnessGraph
            The re-ranked training graph (``fit_graph_``).
        """
        return self.fit(graph, X).fit_graph_

    # ----------------------------------------------------------- helpers
    def _k(self, n_neighbors: int | None = None) -> int:
        """k (``n_neighbors``, or the value given), checked against its constraint."""
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        validate_parameter_constraints(
            {"n_neighbors": self._parameter_constraints["n_neighbors"]}, {"n_neighbors": k},
            caller_name=type(self).__name__,
        )
        return int(cast(int, k))  # the constraint refuses None

    def _check_width(self, graph: NeighborGraph, where: str) -> int:
        """k, after checking that the candidate graph is at least k wide."""
        k = self._k()
        if graph.n_neighbors < k:
            raise ValueError(
                f"The 'graph' parameter of {type(self).__name__}.{where} (the candidate graph) must "
                f"be at least n_neighbors = {k} wide. Got width {graph.n_neighbors} instead."
            )
        return k

    def _validate(self) -> None:
        # Called directly, not through _fit_context: inside an estimator's fit
        # (which skips nested validation) the reduction's parameters, which the
        # estimator's own constraints do not see, must still be checked.
        self._validate_params()

    def _check_X(self, X: MatrixLike, n_rows: int, where: str) -> MatrixLike:
        if not self._needs_X:
            return None
        if X is None:
            raise ValueError(
                f"The hubness reduction {type(self).__name__} needs the features X in {where} "
                "(secondary distances use the data, not only the graph); got X=None. Pass X "
                "(e.g. fit_from_graph(graph, Y, X=X) / predict_proba_from_graph(graph, X))."
            )
        from sklearn.utils import check_array

        X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
        if X.shape[0] != n_rows:
            raise ValueError(f"X has {X.shape[0]} rows but the graph has {n_rows} points; they must match.")
        if where == "transform" and X.shape[1] != self._X.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} was fitted with {self._X.shape[1]} features."
            )
        return X

    # ------------------------------------------------- one method's part
    @abstractmethod
    def _fit_stats(self, graph: NeighborGraph, X: MatrixLike) -> None:
        """The training statistics of the method (LS's scales, MP's distributions, ...)."""

    @abstractmethod
    def _secondary_train(self, graph: NeighborGraph) -> tuple[FloatArray, FloatArray | None]:
        """Secondary values (and an optional finer ranking key) of training pairs."""

    @abstractmethod
    def _secondary_query(self, graph: NeighborGraph, X: MatrixLike) -> tuple[FloatArray, FloatArray | None]:
        """Secondary values (and an optional finer ranking key) of (query, training) pairs."""

    def _rerank(self, graph: NeighborGraph, secondary: FloatArray, key: FloatArray | None = None) -> HubnessGraph:
        """Keep the k candidates with the smallest secondary dissimilarity.

        ``key`` is a monotone (non-decreasing) function of ``secondary`` with more
        resolution (e.g. the LS exponent before it saturates at 1); ties are broken
        by the primary distance, then the lower training index.
        """
        k = self._k()
        key = secondary if key is None else key
        order = np.lexsort((graph.indices, graph.distances, key), axis=-1)[:, :k]

        def take(a: NDArray[Any]) -> NDArray[Any]:
            return np.take_along_axis(a, order, axis=1)

        return HubnessGraph(
            np.ascontiguousarray(take(graph.indices), dtype=np.intp),
            np.ascontiguousarray(take(secondary), dtype=np.float64),
            graph.loo,
            np.ascontiguousarray(take(graph.distances), dtype=np.float64),
        )
