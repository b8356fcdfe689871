"""Exact brute-force k-nearest-neighbour search: ``neighbors="brute"`` (and ``"auto"``).

The search itself (GEMM ranking keys, candidate selection, exact float64
re-ranking, the leave-one-out graph, radius counts) is :class:`~._exact.ExactIndex`
in the ``_exact`` package. This module is the backend: scikit-learn parameters,
input validation and preparation.
"""

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..utils._typing import ArrayLike, MatrixLike, NDArray, SparseMatrix
from ._base import register_backend
from ._contract import check_metric, check_n_neighbors, check_query_features, prepare_points
from ._exact import ExactIndex


class BruteNeighbors(BaseEstimator):
    """Exact Euclidean (or squared Euclidean, or cosine) neighbours.

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        ``cosine`` is ``1 - cos(a, b)``, computed as half the squared Euclidean
        distance between the L2-normalised rows.
    working_memory : float or None, default=256
        Megabytes the chunks of ranking keys may take (all threads together);
        None: scikit-learn's ``working_memory`` (``sklearn.config_context``).
    n_jobs : int, optional
        Threads for large searches (chunks of queries in parallel, each with
        single-threaded BLAS). None: as many as the BLAS pool holds (respects
        ``threadpoolctl`` limits; the same rule on every backend, see
        ``resolve_n_jobs``); -1: all cores. Small searches run in one thread with
        multi-threaded BLAS.
    random_state : ignored
        Accepted so that every backend takes the same parameters; this search draws
        nothing at random.

    Attributes
    ----------
    n_samples_fit_ : int
    n_features_in_ : int

    See Also
    --------
    FaissNeighbors : The same exact neighbours with faiss.
    TorchNeighbors : The same exact neighbours on a GPU.
    pairwise_distances : All the distances rather than the k smallest.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 3.0], [1.0, 1.0]])
    >>> from mlknn.neighbors import BruteNeighbors
    >>> index = BruteNeighbors().fit(X)
    >>> dist, ind = index.kneighbors(X[:2], n_neighbors=2)
    >>> ind.tolist(), dist.round(3).tolist()
    ([[0, 1], [1, 0]], [[0.0, 1.0], [0.0, 1.0]])
    >>> index.kneighbors(n_neighbors=1, return_distance=False).ravel().tolist()  # leave-one-out
    [1, 0, 4, 4, 1]
    """

    exact = True

    def __init__(
        self,
        metric: str = "euclidean",
        working_memory: float | None = 256,
        n_jobs: int | None = None,
        random_state: Any = None,
    ) -> None:
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _prepare(self, X: MatrixLike) -> MatrixLike:
        return prepare_points(X, self.metric, order="C")

    def fit(self, X: MatrixLike, y: object = None) -> "BruteNeighbors":
        """Index the training points.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training points.
        y : None
            Ignored (scikit-learn's signature).

        Returns
        -------
        self
            The fitted index.
        """
        check_metric(self.metric, "the brute backend")
        X = self._prepare(X)
        self._index = ExactIndex(X, self.metric)
        self.n_samples_fit_ = X.shape[0]
        self.n_features_in_ = X.shape[1]
        return self

    def kneighbors(
        self, X: MatrixLike = None, n_neighbors: int = 10, return_distance: bool = True
    ) -> tuple[NDArray[np.float64], NDArray[np.intp]] | NDArray[np.intp]:
        """Find the ``n_neighbors`` nearest training points of each query.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features), optional
            None means the training points themselves, each excluding its own
            index (leave-one-out).
        n_neighbors : int
            k, the number of neighbours.
        return_distance : bool, default=True
            Also return the distances to the neighbours.

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors), float64
            Only when ``return_distance``.
        indices : ndarray of shape (n_queries, n_neighbors), intp
        """
        check_is_fitted(self, "n_samples_fit_")
        n_neighbors = check_n_neighbors(n_neighbors, self.n_samples_fit_, X is None)
        Q = None if X is None else check_query_features(self._prepare(X), self.n_features_in_)
        dist, ind = self._index.kneighbors(Q, n_neighbors, working_memory=self.working_memory, n_jobs=self.n_jobs)
        return (dist, ind) if return_distance else ind

    @property
    def _fit_X(self) -> MatrixLike:
        """The prepared training points (CSR or C-contiguous, unit rows for cosine),
        as every backend names them; read by the stream updates."""
        return self._index.layout.X

    def _squared_kneighbors(self, X: MatrixLike, n_neighbors: int) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
        """``kneighbors`` with squared Euclidean distances (of the prepared points),
        ``n_neighbors`` already checked (``ExactIndex.squared_kneighbors``)."""
        Q = None if X is None else check_query_features(self._prepare(X), self.n_features_in_)
        return self._index.squared_kneighbors(Q, n_neighbors, working_memory=self.working_memory, n_jobs=self.n_jobs)

    def radius_neighbors_counts(
        self,
        X: MatrixLike = None,
        radius: float = 1.0,
        labels: MatrixLike = None,
        *,
        query_indices: ArrayLike | None = None,
    ) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.int64] | SparseMatrix]:
        """Count the training points within ``radius`` of each query, in total and per label.

        Nothing proportional to the number of points inside a radius is kept:
        queries are processed in chunks of rows (``working_memory``, as in
        :meth:`kneighbors`), each chunk's in-radius mask is reduced to counts at
        once, so memory stays bounded even when a radius holds the whole set.

        A training point is inside when its distance, computed exactly as
        :meth:`kneighbors` reports it (recomputed in float64 near the boundary),
        is ``<= radius`` (a closed ball).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features), optional
            None means the training points themselves, each excluding its own
            index only (leave-one-out; duplicates are kept), as in
            :meth:`kneighbors`.
        radius : float
            ``>= 0``, in the units of the metric (``inf`` counts every point).
        labels : array-like or sparse matrix of shape (n_samples_fit, n_labels), optional
            0/1 (or integer) labels of the training points. Sparse labels give
            sparse (CSR) counts, with no (n_queries, n_labels) array.
        query_indices : array-like of int, optional
            Only with ``X=None``: the training rows to use as (leave-one-out)
            queries; default all.

        Returns
        -------
        sizes : ndarray of shape (n_queries,), int64
            Number of training points within ``radius``.
        counts : ndarray of shape (n_queries, n_labels), int64, or csr_array
            ``counts[i, l]`` = number of those points with label l; only
            returned when ``labels`` is given (CSR for sparse labels).
        """
        check_is_fitted(self, "n_samples_fit_")
        radius = float(radius)
        if not radius >= 0:
            raise ValueError(
                f"Expected radius >= 0 (in the units of the metric {self.metric!r}), but "
                f"radius = {radius!r}."
            )
        Q = None
        if X is not None:
            if query_indices is not None:
                raise ValueError("query_indices is only accepted with X=None (leave-one-out queries).")
            Q = check_query_features(self._prepare(X), self.n_features_in_)
        return self._index.radius_counts(Q, radius, labels, query_indices=query_indices,
                                         working_memory=self.working_memory, n_jobs=self.n_jobs)


def _make_brute(
    metric: str = "euclidean", n_jobs: int | None = None, random_state: Any = None, **params: Any
) -> BruteNeighbors:
    return BruteNeighbors(metric=metric, n_jobs=n_jobs, random_state=random_state, **params)


register_backend("brute", _make_brute, exact=True)
