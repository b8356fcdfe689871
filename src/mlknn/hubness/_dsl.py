"""Local dissimilarity DSL, Teng et al. (2025) eq 2."""

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils import gen_batches

from ..neighbors import NeighborGraph, knn_to_csr, row_sqnorms
from ..utils._param_validation import get_chunk_n_rows
from ..utils._typing import FloatArray, MatrixLike, NDArray
from ._base import _GraphReduction
from ._constraints import WordedStrOptions


class DisSimLocal(_GraphReduction):
    """Local dissimilarity DSL, Teng et al. (2025) eq 2.

    ``DSL(x1, x2) = |x1 - x2|^2 - |x1 - c_k(x1)|^2 - |x2 - c_k(x2)|^2`` with
    ``c_k(x)`` the mean of x's k nearest neighbours (k = ``n_neighbors``; Teng et al. (2025)
    section 4.1.2 sets it to the kNN k). Defined for the Euclidean metric only
    (``metric`` "euclidean" or "sqeuclidean"). The values may be negative: the
    graph's ``distances`` hold them as they are (sorted), ``primary_distances``
    the Euclidean distances.

    Parameters
    ----------
    n_neighbors : int, optional
        k; set by the estimator.
    n_candidates : int, optional
        Candidate width W (default max(5 k, 100); -1: all training points).
    metric : {"euclidean", "sqeuclidean"}, default="euclidean"
        Distance of the primary neighbour search (set by the estimator); DSL's centroids
        need a Euclidean one.
    working_memory : float, default=256
        Megabytes per chunk of query pairs whose centroid the query changes.

    Attributes
    ----------
    centroid_sqdist_ : ndarray of shape (n_train,)
        ``|x - c_k(x)|^2`` of every training point (leave-one-out neighbours).
    fit_graph_ : HubnessGraph
    n_train_ : int
        Number of training points of the fitted graph.

    See Also
    --------
    LocalScaling, MutualProximity

    References
    ----------
    Hara, Suzuki, Kobayashi, Fukumizu, Radovanovic, "Flattening the density
    gradient for eliminating spatial centrality to reduce hubness", AAAI 2016
    (Teng et al. 2025, ref. [34]).

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import BruteNeighbors, build_graph
    >>> from mlknn.hubness import DisSimLocal
    >>> X = np.random.default_rng(0).normal(size=(60, 20))
    >>> index = BruteNeighbors().fit(X)
    >>> dsl = DisSimLocal(5, n_candidates=30).fit(build_graph(index, None, 30), X)
    >>> dsl.fit_graph_.indices.shape
    (60, 5)
    """

    _needs_X = True

    _parameter_constraints: dict[str, list[Any]] = {
        **_GraphReduction._parameter_constraints,
        "metric": [WordedStrOptions({"euclidean", "sqeuclidean"},
                                    description="'euclidean' or 'sqeuclidean' (DSL is defined in Euclidean space)")],
    }

    centroid_sqdist_: NDArray[np.float64]
    _nbr_k: NDArray[np.intp]
    _dk: NDArray[np.float64]
    _resid: MatrixLike

    def _sq(self, d: FloatArray) -> FloatArray:
        return d if self.metric == "sqeuclidean" else d * d

    def _fit_stats(self, graph: NeighborGraph, X: MatrixLike) -> None:
        k = self._k()
        self._X = X
        self._nbr_k = graph.indices[:, k - 1].copy()  # x_(k), the k-th neighbour
        self._dk = graph.distances[:, k - 1].copy()
        C = _centroids(X, graph.indices[:, :k])
        R = X - C  # x - c_k(x)
        self._resid = sp.csr_matrix(R) if sp.issparse(R) else np.asarray(R)
        self.centroid_sqdist_ = row_sqnorms(self._resid)

    def _secondary_train(self, graph: NeighborGraph) -> tuple[FloatArray, FloatArray | None]:
        c = self.centroid_sqdist_
        return self._sq(graph.distances) - c[:, None] - c[graph.indices], None

    def _secondary_query(self, graph: NeighborGraph, X: MatrixLike) -> tuple[FloatArray, FloatArray | None]:
        k = self._k()
        ind = graph.indices
        d = graph.distances
        Ct = _centroids_from(self._X, ind[:, :k])
        ct = row_sqnorms(_sub(X, Ct))  # |t - c_k(t)|^2, c_k over t's k nearest in D
        cx = self.centroid_sqdist_[ind].copy()
        # Pairs where t enters x's k-neighbourhood (replacing x_(k)): recompute.
        r, c = np.nonzero(d < self._dk[ind])
        if r.size:
            x = ind[r, c]
            block = get_chunk_n_rows(row_bytes=8 * 4 * max(X.shape[1], 1), working_memory=self.working_memory)
            for sl in gen_batches(r.size, block):
                rr, xx, cc = r[sl], x[sl], c[sl]
                v = _sub(self._resid[xx], _sub(X[rr], self._X[self._nbr_k[xx]]) / k)
                cx[rr, cc] = row_sqnorms(v)
        return self._sq(d) - ct[:, None] - cx, None



def _sub(A: MatrixLike, B: MatrixLike) -> MatrixLike:
    out = A - B
    return sp.csr_matrix(out) if sp.issparse(out) else np.asarray(out)


def _centroids(X: MatrixLike, nbrs: NDArray[np.intp]) -> MatrixLike:
    """Mean of each point's neighbours' rows, as one sparse-by-X product."""
    n, k = nbrs.shape
    C = knn_to_csr(nbrs, X.shape[0], np.full((n, k), 1.0 / k)) @ X
    return sp.csr_matrix(C) if sp.issparse(C) else np.asarray(C)


def _centroids_from(X_train: MatrixLike, nbrs: NDArray[np.intp]) -> MatrixLike:
    return _centroids(X_train, nbrs)
