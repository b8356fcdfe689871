"""Local scaling (LS), Teng et al. (2025) eq 3."""

import numpy as np

from ..neighbors import NeighborGraph
from ..utils._typing import FloatArray, MatrixLike, NDArray
from ._base import _GraphReduction


class LocalScaling(_GraphReduction):
    """Local scaling (LS), Teng et al. (2025) eq 3.

    ``LS(x1, x2) = 1 - exp(-d(x1, x2)^2 / (d_k(x1) d_k(x2)))`` with ``d_k(x)`` the
    distance from x to its k-th nearest neighbour (k = ``n_neighbors``; Teng et al. (2025)
    section 4.1.2 sets it to the kNN k, 20). Ranking uses the exponent
    ``d^2 / (d_k d_k)`` (same order, no saturation at 1).

    **Zero scale** (x has k exact duplicates, ``d_k(x) = 0``): the ratio is defined
    as 0 when ``d(x1, x2) = 0`` and +inf (LS = 1) otherwise.

    Parameters
    ----------
    n_neighbors : int, optional
        k, the output width and the scale neighbour; set by the estimator.
    n_candidates : int, optional
        Candidate width W (default max(5 k, 100); -1: all training points).
    metric : str, default="euclidean"
        Distance of the primary neighbour search (set by the estimator).
    working_memory : float, default=256
        Unused by LS (kept for a uniform signature).

    Attributes
    ----------
    scale_ : ndarray of shape (n_train,)
        d_k(x) of every training point.
    fit_graph_ : HubnessGraph
        The re-ranked leave-one-out graph.
    n_train_ : int
        Number of training points of the fitted graph.

    See Also
    --------
    MutualProximity, DisSimLocal

    References
    ----------
    Schnitzer, Flexer, Schedl, Widmer, "Local and global scaling reduce hubs in
    space", JMLR 13, 2012 (Teng et al. 2025, refs [40, 41]).

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import BruteNeighbors, build_graph
    >>> from mlknn.hubness import LocalScaling
    >>> X = np.random.default_rng(0).normal(size=(60, 20))
    >>> index = BruteNeighbors().fit(X)
    >>> ls = LocalScaling(5, n_candidates=30).fit(build_graph(index, None, 30))
    >>> ls.fit_graph_.indices.shape
    (60, 5)
    """

    scale_: NDArray[np.float64]
    _scale_prev: NDArray[np.float64]

    def _fit_stats(self, graph: NeighborGraph, X: MatrixLike) -> None:
        k = self._k()
        d = graph.distances
        self.scale_ = d[:, k - 1].copy()
        self._scale_prev = d[:, k - 2].copy() if k >= 2 else np.zeros(graph.n_points)

    @staticmethod
    def _ratio(d: FloatArray, s1: FloatArray, s2: FloatArray) -> FloatArray:
        num = d * d
        den = s1 * s2
        with np.errstate(divide="ignore", invalid="ignore"):
            r = num / den
        r = np.where(den > 0, r, np.where(num > 0, np.inf, 0.0))
        return r

    def _secondary_train(self, graph: NeighborGraph) -> tuple[FloatArray, FloatArray | None]:
        s = self.scale_
        r = self._ratio(graph.distances, s[:, None], s[graph.indices])
        return -np.expm1(-r), r

    def _secondary_query(self, graph: NeighborGraph, X: MatrixLike) -> tuple[FloatArray, FloatArray | None]:
        k = self._k()
        d = graph.distances
        st = d[:, k - 1][:, None]
        sx = self.scale_[graph.indices]
        joined = d < sx  # t enters x's k-neighbourhood in D u {t}
        sx = np.where(joined, np.maximum(self._scale_prev[graph.indices], d), sx)
        r = self._ratio(d, st, sx)
        return -np.expm1(-r), r

