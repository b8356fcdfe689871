"""Exact brute-force k-nearest-neighbour search: ``neighbors="brute"`` (and ``"auto"``).

The algorithm (GEMM ranking keys, candidate selection, exact float64 re-ranking)
lives in ``_exact_kernel.py``; radius counts in ``_radius.py``. This module is the
backend: parameters, input preparation, chunking of the queries and threads.
"""

import threading
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..utils._param_validation import get_chunk_n_rows
from ..utils._typing import MatrixLike, NDArray
from . import _compiled
from ._base import register_backend
from ._compiled import keys_out_of_range, threads_for
from ._contract import (
    check_metric,
    check_n_neighbors,
    check_query_features,
    prepare_points,
    resolve_n_jobs,
)
from ._exact_kernel import (
    _CHUNK_BYTES,
    _GEMM_RTOL,
    _MAX_CHUNK_ROWS,
    _MIN_CHUNK_ROWS,
    _ExactKernel,
    _map_chunks,
    _row_sqnorms,
)
from ._exact_loo import symmetric_loo
from ._radius import _RadiusCounts

# Below this many multiply-adds (n_queries x n_fit x d) kneighbors runs in one
# thread (with multi-threaded BLAS); above, chunks run in parallel threads.
_PARALLEL_MIN_WORK = 2e9


#: Where the symmetric leave-one-out path (_exact_loo.py) pays. It halves the GEMM
#: flops but keeps a candidate pool for every row; measured in one-thread CPU time
#: (session 4 review), it wins at d = 120, k = 10 (7.4 vs 10.0 s at n = 50k) and loses at
#: low d (d = 8: 4.4 vs 3.3 s) or wide k (d = 120, k = 30: 12.6 vs 10.5 s, 3.5x the
#: memory; d = 16, k = 100: 20.3 vs 8.5 s, 5.4x the memory). The GEMM must dominate the
#: selection: many features, few neighbours.
_SYMMETRIC_MIN_FEATURES = 64
_SYMMETRIC_MAX_NEIGHBORS = 16


def _symmetric_pays(n_samples: int, n_features: int, n_neighbors: int) -> bool:
    """Whether a leave-one-out graph should take the symmetric Gram path (see above)."""
    return (
        n_features >= _SYMMETRIC_MIN_FEATURES
        and n_neighbors <= _SYMMETRIC_MAX_NEIGHBORS
        # The path packs row and column indices in 32 bits.
        and n_samples < 1 << 32
    )


class BruteNeighbors(_ExactKernel, _RadiusCounts, BaseEstimator):
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
    # The leave-one-out graph of dense data on the symmetric Gram matrix (half the
    # GEMM flops); False: the plain chunked path (the tests compare the two).
    _symmetric_loo = True

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
        self._fit_keys(X)
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
        return_distance : bool, default=True

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors), float64
            Only when ``return_distance``.
        indices : ndarray of shape (n_queries, n_neighbors), intp
        """
        check_is_fitted(self, "n_samples_fit_")
        n_neighbors = check_n_neighbors(n_neighbors, self.n_samples_fit_, X is None)
        dist, ind = self._squared_kneighbors(X, n_neighbors)
        return self._finish_distances(dist, ind, return_distance)

    def _squared_kneighbors(self, X: MatrixLike, n_neighbors: int) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
        """``kneighbors`` with squared Euclidean distances (of the prepared points),
        ``n_neighbors`` already checked: what the incremental updates
        (``_incremental.py``) keep, since the metric's distances do not give the
        squares back bit for bit."""
        loo = X is None
        n_fit = self.n_samples_fit_
        if loo:
            Q, q_sqnorm = self._fit_X, self._fit_sqnorm
        else:
            Q = check_query_features(self._prepare(X), self.n_features_in_)
            q_sqnorm = _row_sqnorms(Q)
        n_q = Q.shape[0]
        dist = np.empty((n_q, n_neighbors), dtype=np.float64)
        ind = np.empty((n_q, n_neighbors), dtype=np.intp)
        gemm_dtype = self._fit_aug.dtype if self._fit_aug is not None else np.float64
        itemsize = np.dtype(gemm_dtype).itemsize
        row_bytes = itemsize * max(n_fit, 1)
        workers = self._workers(n_q, n_fit)
        rows = max(_MIN_CHUNK_ROWS, min(_MAX_CHUNK_ROWS, _CHUNK_BYTES // row_bytes))
        # One key buffer per worker within working_memory (scikit-learn's setting when None).
        chunk = get_chunk_n_rows(row_bytes=row_bytes * workers, max_n_rows=max(1, min(rows, -(-n_q // workers))),
                                 working_memory=self.working_memory)
        if loo and self._fit_aug is not None and self._symmetric_loo and n_q > chunk and _symmetric_pays(
                n_fit, self._fit_aug.shape[1] - 1, n_neighbors) and not keys_out_of_range(
                self._key_sqnorm + self._key_sqnorm_max, self._fit_aug.dtype, self._fit_aug.shape[1],
                _GEMM_RTOL[np.dtype(self._fit_aug.dtype)]):
            # Several chunks of a dense training set: the symmetric Gram matrix,
            # each off-diagonal block computed once (_exact_loo.py); the same answer.
            return symmetric_loo(self, n_neighbors, chunk, workers)
        if workers == 1 and self._compiled_rows(Q, n_q, n_neighbors) and (split := threads_for(self.n_jobs)) > 1:
            # A small dense search on the compiled selection: chunks of at most a
            # 1/split of the rows (the same key memory in all), one thread each,
            # each chunk's GEMM on one BLAS thread; not one GEMM on all cores and
            # then the selection split over threads.
            workers, chunk = split, max(1, min(-(-n_q // split), -(-chunk // split)))
        starts = range(0, n_q, chunk)
        local = threading.local()
        # The compiled selection splits a chunk's rows over threads only when the
        # chunks themselves run one at a time.
        threads = 1 if workers > 1 else threads_for(self.n_jobs)

        def work(start: int) -> None:
            buf = getattr(local, "buf", None)
            if buf is None and self._fit_aug is not None:
                buf = local.buf = np.empty((chunk, n_fit), dtype=gemm_dtype)
            stop = min(start + chunk, n_q)
            d, i = self._chunk(Q[start:stop], q_sqnorm[start:stop], start if loo else None, n_neighbors, buf, threads)
            dist[start:stop], ind[start:stop] = d, i

        _map_chunks(work, starts, workers)
        return dist, ind

    def _finish_distances(
        self, dist: NDArray[np.float64], ind: NDArray[np.intp], return_distance: bool
    ) -> tuple[NDArray[np.float64], NDArray[np.intp]] | NDArray[np.intp]:
        """Squared distances to the metric's (in place), and kneighbors' return value."""
        if self.metric == "euclidean":
            np.sqrt(dist, out=dist)
        elif self.metric == "cosine":
            dist *= 0.5  # |a-b|^2 = 2 - 2cos for unit vectors
        return (dist, ind) if return_distance else ind

    def _compiled_rows(self, Q: MatrixLike, n_q: int, k: int) -> bool:
        """Whether a search takes the compiled selection with rows for two threads."""
        return (self._fit_aug is not None and not sp.issparse(Q) and k <= _compiled.MAX_NEIGHBORS
                and n_q >= 2 * _compiled._MIN_ROWS_PER_THREAD and _compiled.kernels() is not None)

    def _workers(self, n_q: int, n_fit: int) -> int:
        """Threads for kneighbors: 1 for small searches, else n_jobs (default: the
        number of BLAS threads, so that a caller's threadpool limit is respected)."""
        if n_q * n_fit * max(self.n_features_in_, 1) < _PARALLEL_MIN_WORK:
            return 1
        return resolve_n_jobs(self.n_jobs)


def _make_brute(
    metric: str = "euclidean", n_jobs: int | None = None, random_state: Any = None, **params: Any
) -> BruteNeighbors:
    return BruteNeighbors(metric=metric, n_jobs=n_jobs, random_state=random_state, **params)


register_backend("brute", _make_brute, exact=True)
