"""The graph a hubness reduction returns (Teng et al. 2025, Algorithms 4-5)."""


from dataclasses import dataclass
from typing import cast

import numpy as np

from ..neighbors import NeighborGraph
from ..utils._typing import NDArray


@dataclass(frozen=True)
class HubnessGraph(NeighborGraph):
    """A :class:`~mlknn.neighbors.NeighborGraph` re-ranked by a hubness reduction.

    ``distances`` hold the secondary dissimilarities (ascending along each row);
    ``primary_distances`` the primary (metric) distances of the same neighbours,
    in the same order (not necessarily ascending).

    Parameters
    ----------
    indices, distances, loo
        As for :class:`~mlknn.neighbors.NeighborGraph`.
    primary_distances : ndarray of shape (n_points, k)
        The primary (metric) distances of the same neighbours, in the same order.

    Attributes
    ----------
    indices : ndarray of shape (n_points, k)
        Training indices of the neighbours, by increasing secondary dissimilarity.
    distances : ndarray of shape (n_points, k)
        The secondary dissimilarities.
    primary_distances : ndarray of shape (n_points, k)
        The primary (metric) distances of the same neighbours.
    loo : bool
        True for the training set's leave-one-out graph.

    See Also
    --------
    LocalScaling, MutualProximity, DisSimLocal : the reductions that make one.

    References
    ----------
    Teng et al. (2025, the MLHiKNN paper), section 2.2 and Algorithms 4-5.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.hubness import HubnessGraph
    >>> g = HubnessGraph(np.array([[1], [0]]), np.array([[0.2], [0.2]]), True, np.array([[1.0], [1.0]]))
    >>> g.take(1) is g, g.primary_distances.shape
    (True, (2, 1))
    """

    primary_distances: NDArray[np.float64] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.primary_distances is None or self.primary_distances.shape != self.indices.shape:
            raise ValueError(
                "HubnessGraph needs primary_distances of the same shape as indices; got "
                f"{None if self.primary_distances is None else self.primary_distances.shape} "
                f"and {self.indices.shape}."
            )

    @property
    def metric_distances(self) -> NDArray[np.float64]:
        """The primary distances: what a radius or a distance weight is compared with."""
        return cast(NDArray[np.float64], self.primary_distances)  # not None: __post_init__ refuses it

    def take(self, n_neighbors: int) -> "HubnessGraph":
        """The first ``n_neighbors`` columns (all three arrays sliced).

        Parameters
        ----------
        n_neighbors : int
            Columns to keep.

        Returns
        -------
        HubnessGraph
            ``self`` when it is already that wide.
        """
        base = super().take(n_neighbors)
        if base is self:
            return self
        return HubnessGraph(base.indices, base.distances, self.loo, self.metric_distances[:, :n_neighbors])

