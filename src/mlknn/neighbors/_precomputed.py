"""``neighbors="precomputed"``: neighbours the user computed elsewhere.

The design follows scikit-learn's ``metric="precomputed"`` convention, so that a
:class:`sklearn.neighbors.KNeighborsTransformer` (or any ANN transformer with the
same output) can feed an mlknn estimator in a pipeline::

    from sklearn.neighbors import KNeighborsTransformer
    from sklearn.pipeline import make_pipeline
    pipe = make_pipeline(KNeighborsTransformer(n_neighbors=10, mode="distance"),
                         MLkNN(n_neighbors=10, neighbors="precomputed"))
    pipe.fit(X_train, Y_train).predict(X_test)

What ``X`` is, in ``fit`` and in ``predict`` / ``predict_proba``:

* a sparse CSR matrix of shape ``(n_queries, n_train)`` whose stored entries are
  the candidate neighbours of each row and whose values are their distances
  (explicit zeros are distances of 0 and are kept). In ``fit`` it is the square
  ``(n_train, n_train)`` graph of the training set on itself;
* or a dense distance matrix of the same shape (every entry is a candidate).

Leave-one-out (training) removes each row's *own* column ``i`` wherever it is
stored, keeps duplicates, and takes the first ``k`` by (distance, column). So a
training graph must hold at least ``k`` neighbours besides the point itself:
``KNeighborsTransformer(n_neighbors=k, mode="distance")`` stores ``k + 1``
including the point, which is exactly enough. Query rows need ``k`` entries. A row
with fewer raises a ValueError naming the row and the counts.

Graphs already in mlknn's form (``NeighborGraph`` or ``(distances, indices)``
arrays) convert with :func:`graph_to_csr`, or skip the backend altogether with
``estimator.fit_from_graph`` / ``predict_proba_from_graph``.

Distances are used as given (``metric`` is ignored), so the backend is as exact as
the search that produced the graph; it is registered as exact because it never
approximates anything itself.
"""

from typing import Any, Literal, Self, overload

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from ..utils._param_validation import Integral, Interval, validate_params
from ..utils._typing import ArrayLike, MatrixLike, NDArray, SparseMatrix
from ._base import register_backend
from ._contract import check_n_neighbors
from ._exact import topk_sorted
from ._graph import NeighborGraph, knn_to_csr


class PrecomputedNeighbors(BaseEstimator):
    """Backend reading precomputed neighbour graphs or distance matrices.

    Parameters
    ----------
    metric : ignored
        Accepted for a uniform signature; the distances are the user's.
    n_jobs, random_state : ignored
        Accepted so that every backend takes the same parameters; nothing is searched.

    Attributes
    ----------
    n_samples_fit_ : int
    n_features_in_ : int
        Equal to ``n_samples_fit_`` (the columns of a graph are training points).

    See Also
    --------
    graph_to_csr : Builds the sparse distance matrix this backend reads.
    compute_graphs : Search once and reuse the graphs with ``fit_from_graph``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 3.0], [1.0, 1.0]])
    >>> from mlknn.neighbors import BruteNeighbors, PrecomputedNeighbors, build_graph, graph_to_csr
    >>> D = graph_to_csr(build_graph(BruteNeighbors().fit(X), n_neighbors=2))
    >>> index = PrecomputedNeighbors().fit(D)
    >>> index.kneighbors(n_neighbors=2, return_distance=False).tolist()
    [[1, 4], [0, 4], [4, 0], [4, 2], [1, 0]]
    """

    exact = True
    n_samples_fit_: int
    n_features_in_: int
    _fit_graph: MatrixLike  # canonical CSR or a dense float array

    def __init__(self, metric: str = "precomputed", n_jobs: int | None = None, random_state: int | None = None) -> None:
        self.metric = metric
        self.n_jobs = n_jobs
        self.random_state = random_state

    @staticmethod
    def _check(G: MatrixLike, n_cols: int | None = None) -> MatrixLike:
        if isinstance(G, NeighborGraph):
            raise TypeError(
                "neighbors='precomputed' takes a sparse (n_queries, n_train) distance graph "
                "or a dense distance matrix; convert a NeighborGraph with "
                "mlknn.neighbors.graph_to_csr(graph, n_train), or use fit_from_graph."
            )
        G = check_array(G, accept_sparse="csr", dtype=[np.float64, np.float32])
        if sp.issparse(G):
            G = G.tocsr()
            if not G.has_canonical_format:
                G = G.copy()
                G.sum_duplicates()
        if n_cols is not None and G.shape[1] != n_cols:
            raise ValueError(
                f"X has {G.shape[1]} columns, but a precomputed neighbour graph must have one "
                f"column per training point ({n_cols})."
            )
        if (G.data if sp.issparse(G) else G).min(initial=0.0) < 0:
            raise ValueError("neighbors='precomputed' needs non-negative distances.")
        return G

    def fit(self, X: MatrixLike, y: object = None) -> Self:
        """Store the training graph.

        Parameters
        ----------
        X : {sparse matrix, ndarray} of shape (n_train, n_train)
            Distances of the training points to each other (a sparse kNN graph
            or a dense distance matrix).
        y : None
            Ignored (scikit-learn's signature).

        Returns
        -------
        self
            The fitted index.
        """
        G = self._check(X)
        if G.shape[0] != G.shape[1]:
            raise ValueError(
                "neighbors='precomputed' expects in fit a square (n_train, n_train) graph of "
                f"the training set on itself; got shape {G.shape}."
            )
        self._fit_graph = G
        self.n_samples_fit_ = G.shape[0]
        self.n_features_in_ = G.shape[1]
        return self

    @overload
    def kneighbors(
        self, X: MatrixLike = None, n_neighbors: int = 10, return_distance: Literal[True] = True
    ) -> tuple[NDArray[np.float64], NDArray[np.intp]]: ...

    @overload
    def kneighbors(
        self, X: MatrixLike, n_neighbors: int, return_distance: Literal[False]
    ) -> NDArray[np.intp]: ...

    @overload
    def kneighbors(
        self, X: MatrixLike = None, n_neighbors: int = 10, *, return_distance: Literal[False]
    ) -> NDArray[np.intp]: ...

    @overload
    def kneighbors(
        self, X: MatrixLike = None, n_neighbors: int = 10, return_distance: bool = True
    ) -> tuple[NDArray[np.float64], NDArray[np.intp]] | NDArray[np.intp]: ...

    def kneighbors(
        self, X: MatrixLike = None, n_neighbors: int = 10, return_distance: bool = True
    ) -> tuple[NDArray[np.float64], NDArray[np.intp]] | NDArray[np.intp]:
        """First ``n_neighbors`` of each row by (distance, training index).

        Parameters
        ----------
        X : {sparse matrix, ndarray} of shape (n_queries, n_train), optional
            None means the training graph, leave-one-out.
        n_neighbors : int
            k, the number of neighbours.
        return_distance : bool, default=True
            Also return the distances to the neighbours.

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors)
            Only when ``return_distance`` is True.
        indices : ndarray of shape (n_queries, n_neighbors)
            Training indices, by increasing (distance, index).
        """
        check_is_fitted(self, "n_samples_fit_")
        loo = X is None
        n_fit = self.n_samples_fit_
        k = check_n_neighbors(n_neighbors, n_fit, loo)
        G = self._fit_graph if loo else self._check(X, n_fit)
        if sp.issparse(G):
            dist, ind = _sparse_topk(G, k, loo)
        else:
            dist, ind = _dense_topk(G, k, loo)
        return (dist, ind) if return_distance else ind


def _sparse_topk(G: SparseMatrix, k: int, loo: bool) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    n = G.shape[0]
    rows = np.repeat(np.arange(n), np.diff(G.indptr))
    cols = G.indices.astype(np.intp)
    vals = G.data.astype(np.float64)
    if loo:
        keep = cols != rows
        rows, cols, vals = rows[keep], cols[keep], vals[keep]
    counts = np.bincount(rows, minlength=n)
    short = np.flatnonzero(counts < k)
    if short.size:
        i = int(short[0])
        raise ValueError(
            f"The precomputed neighbour graph has {int(counts[i])} neighbours in row {i}"
            + (" besides the point itself" if loo else "")
            + f", but n_neighbors = {k} are needed ({short.size} row(s) too short). Build it "
            f"with at least {k} neighbours per row (KNeighborsTransformer(n_neighbors={k}, "
            "mode='distance') for the training set)."
        )
    dist: NDArray[np.float64]
    ind: NDArray[np.intp]
    dist, ind = topk_sorted(rows, cols, vals, k, n)  # the dtypes of vals and cols
    return dist, ind


def _dense_topk(G: NDArray[np.floating[Any]], k: int, loo: bool) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    n, m = G.shape
    dist = np.empty((n, k))
    ind = np.empty((n, k), dtype=np.intp)
    step = max(1, (1 << 22) // max(m, 1))
    for a in range(0, n, step):
        b = min(a + step, n)
        D = np.array(G[a:b], dtype=np.float64)
        if loo:
            D[np.arange(b - a), np.arange(a, b)] = np.inf
        order = np.argsort(D, axis=1, kind="stable")[:, :k]  # stable: ties by index
        ind[a:b] = order
        dist[a:b] = np.take_along_axis(D, order, axis=1)
    return dist, ind


@validate_params(
    {
        "graph": [NeighborGraph, "array-like"],
        "n_train": [Interval(Integral, 0, None, closed="left"), None],
        "indices": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def graph_to_csr(
    graph: NeighborGraph | ArrayLike, n_train: int | None = None, indices: ArrayLike | None = None
) -> SparseMatrix:
    """A neighbour graph as the sparse distance matrix ``neighbors="precomputed"`` reads.

    Parameters
    ----------
    graph : NeighborGraph or ndarray
        A :class:`NeighborGraph`, or the ``distances`` array with ``indices`` given.
    n_train : int, optional
        Number of training points (columns); default ``max(index) + 1``.
    indices : ndarray of shape (n_points, k), optional
        Only when ``graph`` is the distances array.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_points, n_train)
        Distances as values, zeros kept explicitly. A leave-one-out training graph
        does not contain the points themselves, which is what ``fit`` expects.

    See Also
    --------
    PrecomputedNeighbors : The backend that reads the result.
    knn_to_csr : Neighbour lists as a sparse matrix.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 3.0], [1.0, 1.0]])
    >>> from mlknn.neighbors import BruteNeighbors, build_graph, graph_to_csr
    >>> D = graph_to_csr(build_graph(BruteNeighbors().fit(X), n_neighbors=1))
    >>> D.shape, D.nnz
    ((5, 5), 5)
    """
    if isinstance(graph, NeighborGraph):
        dist, ind = graph.distances, graph.indices
    else:
        if indices is None:
            raise ValueError("graph_to_csr needs indices= when graph is a distances array.")
        dist, ind = np.asarray(graph, dtype=np.float64), np.asarray(indices, dtype=np.intp)
        if dist.shape != ind.shape or dist.ndim != 2:
            raise ValueError(
                f"distances and indices must have the same 2-D shape; got {dist.shape} and {ind.shape}."
            )
    if n_train is None:
        n_train = int(ind.max(initial=-1)) + 1
    return knn_to_csr(ind, n_train, dist)


def _make(metric: str = "euclidean", n_jobs: int | None = None, random_state: int | None = None,
          **params: Any) -> PrecomputedNeighbors:
    return PrecomputedNeighbors(metric=metric, n_jobs=n_jobs, random_state=random_state, **params)


register_backend("precomputed", _make, exact=True)
