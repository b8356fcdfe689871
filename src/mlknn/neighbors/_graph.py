"""The neighbour graph: the one object every kNN algorithm reads."""

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..utils._typing import ArrayLike, NDArray, SparseMatrix


@dataclass(frozen=True)
class NeighborGraph:
    """k nearest neighbours of a set of points, sorted by distance.

    A graph computed once for the largest k an experiment needs serves every
    smaller k: :meth:`take` returns the first ``k`` columns (a view), because
    the rows are sorted ascending by distance with ties broken by the lower
    training index.

    Parameters
    ----------
    indices : ndarray of shape (n_points, k), dtype intp
        Row ``i`` holds the training indices of the neighbours of point ``i``.
    distances : ndarray of shape (n_points, k), dtype float64
        The matching distances, ascending along each row.
    loo : bool
        True when the points are the training instances themselves and each
        row excludes its own point (leave-one-out). Duplicates of a point are
        kept: only the point's own index is excluded.

    Attributes
    ----------
    n_points : int
    n_neighbors : int
        k, the number of neighbours.
    """

    indices: NDArray[Any]
    distances: NDArray[Any]
    loo: bool = False

    def __post_init__(self) -> None:
        if self.indices.shape != self.distances.shape or self.indices.ndim != 2:
            raise ValueError(
                "NeighborGraph needs indices and distances of the same 2-D shape; got "
                f"{self.indices.shape} and {self.distances.shape}."
            )

    @property
    def metric_distances(self) -> NDArray[Any]:
        """Distances in the units of the metric (``distances`` here; a hubness-reduced
        graph overrides it with its primary distances)."""
        return self.distances

    @property
    def n_points(self) -> int:
        return int(self.indices.shape[0])

    @property
    def n_neighbors(self) -> int:
        return int(self.indices.shape[1])

    def take(self, n_neighbors: int) -> "NeighborGraph":
        """Return the graph restricted to the first ``n_neighbors`` columns.

        Parameters
        ----------
        n_neighbors : int
            Must not exceed :attr:`n_neighbors`.

        Returns
        -------
        NeighborGraph
        """
        if n_neighbors > self.n_neighbors:
            raise ValueError(
                f"Expected n_neighbors <= {self.n_neighbors} (the graph's width), but "
                f"n_neighbors = {n_neighbors}."
            )
        if n_neighbors == self.n_neighbors:
            return self
        return NeighborGraph(
            self.indices[:, :n_neighbors], self.distances[:, :n_neighbors], self.loo
        )

    def to_csr(self, n_train: int, weights: ArrayLike | None = None) -> SparseMatrix:
        """The graph as a sparse (n_points, n_train) adjacency matrix.

        Parameters
        ----------
        n_train : int
            Number of training points (columns).
        weights : ndarray of shape (n_points, k), optional
            Entry values; 1 when omitted.

        Returns
        -------
        scipy.sparse.csr_matrix
        """
        return knn_to_csr(self.indices, n_train, weights)


def knn_to_csr(indices: NDArray[Any], n_cols: int, values: ArrayLike | None = None) -> SparseMatrix:
    """A k-wide neighbour list as a sparse (n_rows, n_cols) matrix, one row per point.

    Parameters
    ----------
    indices : ndarray of shape (n_rows, k)
        Column (training) indices; row ``i`` stores its k entries in this order.
    n_cols : int
        The number of columns of the matrix (the training set's size).
    values : array-like of shape (n_rows, k), optional
        Entry values (float64); 1 when omitted. Zeros are stored explicitly.

    Returns
    -------
    scipy.sparse.csr_matrix

    See Also
    --------
    graph_to_csr : A graph as the distance matrix ``neighbors="precomputed"`` reads.
    NeighborGraph : The dense (n, k) neighbour lists.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import knn_to_csr
    >>> knn_to_csr(np.array([[1, 2], [0, 2]]), n_cols=3).toarray()
    array([[0., 1., 1.],
           [1., 0., 1.]])
    """
    import scipy.sparse as sp

    n, k = indices.shape
    data = np.ones(n * k) if values is None else np.asarray(values, float).ravel()
    indptr = np.arange(0, n * k + 1, k)
    return sp.csr_matrix((data, indices.ravel(), indptr), shape=(n, n_cols))
