"""The exact index: one object that owns the fitted key layout and answers every query.

:class:`ExactIndex` offers the k nearest neighbours of new queries, the
leave-one-out graph of the training points, and radius counts. Each answer is
computed by one of several strategies, chosen by a named guard
(``..._is_usable_for``, as scikit-learn's ``ArgKmin.is_usable_for``):

* the leave-one-out graph of dense data in several chunks: the symmetric Gram
  path (``_loo.symmetric_loo``, guard ``_loo.symmetric_loo_is_usable_for``);
* a small dense search with threads to spare: chunks of at most a 1/threads of the
  rows, one thread each (guard :func:`thread_split_is_usable_for`);
* otherwise chunks of queries (in parallel when the work is large, guard
  :func:`parallel_chunks_are_usable_for`), each chunk's steps 2-3 compiled where
  ``_kernel.compiled_selection_is_usable_for`` holds, else in numpy.

Every strategy gives the same answer bit for bit (the tests compare them).
"""

import threading

import numpy as np
import scipy.sparse as sp

from ...utils._param_validation import get_chunk_n_rows
from ...utils._threads import map_chunks, resolve_n_jobs, threads_for
from ...utils._typing import ArrayLike, MatrixLike, NDArray, SparseMatrix
from .._contract import prepared_sqnorms
from . import _compiled, _kernel, _loo, _radius
from ._kernel import CHUNK_BYTES, MAX_CHUNK_ROWS, MIN_CHUNK_ROWS, Index
from ._layout import KeyLayout

#: Below this many multiply-adds (n_queries x n_fit x d) a search runs in one
#: thread (with multi-threaded BLAS); above, chunks run in parallel threads.
PARALLEL_MIN_WORK = 2e9


def parallel_chunks_are_usable_for(n_queries: int, n_fit: int, n_features: int) -> bool:
    """Whether a search is large enough for chunks of queries on parallel threads
    (each with one BLAS thread): the thread hand-off must be small beside the work."""
    return n_queries * n_fit * max(n_features, 1) >= PARALLEL_MIN_WORK


def thread_split_is_usable_for(layout: KeyLayout, Q: MatrixLike, n_queries: int, k: int) -> bool:
    """Whether a search in one thread can split its rows over the compiled selection's
    threads: dense points, ``k`` within the compiled limit, rows for two threads at
    least, and numba available."""
    return (layout.aug is not None and not sp.issparse(Q) and k <= _compiled.MAX_NEIGHBORS
            and n_queries >= 2 * _compiled.MIN_ROWS_PER_THREAD and _compiled.kernels() is not None)


class ExactIndex:
    """Exact Euclidean search over prepared training points.

    Parameters
    ----------
    X : ndarray or csr_matrix of shape (n_samples, n_features)
        Prepared training points (``prepare_points``).
    metric : {"euclidean", "sqeuclidean", "cosine"}
        The metric distances are reported in (cosine: the points are unit rows and
        the distance is half the squared Euclidean one).

    Attributes
    ----------
    layout : KeyLayout
        The training points in the layout of the ranking keys.
    allow_symmetric_loo : bool
        False: the leave-one-out graph always takes the plain chunked path (the
        tests compare the two).
    """

    allow_symmetric_loo = True

    def __init__(self, X: MatrixLike, metric: str) -> None:
        self.metric = metric
        self.layout = KeyLayout(X)

    @property
    def n_samples(self) -> int:
        """Training points indexed."""
        return int(self.layout.X.shape[0])

    @property
    def n_features(self) -> int:
        """Features of the training points."""
        return int(self.layout.X.shape[1])

    def workers(self, n_queries: int, n_jobs: int | None) -> int:
        """Threads for chunks of queries: 1 for small searches, else ``n_jobs``'s
        (default: the BLAS pool's size, so that a caller's thread limit holds)."""
        if not parallel_chunks_are_usable_for(n_queries, self.n_samples, self.n_features):
            return 1
        return resolve_n_jobs(n_jobs)

    def kneighbors(
        self, Q: MatrixLike, k: int, *, working_memory: float | None, n_jobs: int | None
    ) -> tuple[NDArray[np.float64], Index]:
        """Distances (in the metric) and indices of the k nearest training points.

        :meth:`squared_kneighbors`, its distances turned into the metric's
        (:meth:`to_metric`); the parameters and the order are the same.

        Parameters
        ----------
        Q : ndarray or sparse matrix of shape (n_queries, n_features), or None
            Prepared queries; None: the leave-one-out graph.
        k : int
            Neighbours per query.
        working_memory : float or None
            Megabytes the chunks of keys may take.
        n_jobs : int or None
            Threads.

        Returns
        -------
        distances : ndarray of shape (n_queries, k), float64
        indices : ndarray of shape (n_queries, k), intp
        """
        sqdist, ind = self.squared_kneighbors(Q, k, working_memory=working_memory, n_jobs=n_jobs)
        return self.to_metric(sqdist), ind

    def squared_kneighbors(
        self, Q: MatrixLike, k: int, *, working_memory: float | None, n_jobs: int | None
    ) -> tuple[NDArray[np.float64], Index]:
        """Squared Euclidean distances (between prepared points) and indices of the
        k nearest training points: what the incremental updates keep, since the
        metric's distances do not give the squares back bit for bit.

        Parameters
        ----------
        Q : ndarray or sparse matrix of shape (n_queries, n_features), or None
            Prepared queries; None: the training points, each excluding its own
            index (the leave-one-out graph).
        k : int
            Neighbours per query (checked by the caller).
        working_memory : float or None
            Megabytes the chunks of keys may take, all threads together.
        n_jobs : int or None
            Threads (``resolve_n_jobs``).

        Returns
        -------
        sqdist : ndarray of shape (n_queries, k), float64
            Ascending, ties by the lower index.
        indices : ndarray of shape (n_queries, k), intp
        """
        layout = self.layout
        loo = Q is None
        n_fit = self.n_samples
        if loo:
            Q, q_sqnorm = layout.X, layout.sqnorm
        else:
            q_sqnorm = prepared_sqnorms(Q)
        n_q = Q.shape[0]
        gemm_dtype = layout.aug.dtype if layout.aug is not None else np.float64
        row_bytes = np.dtype(gemm_dtype).itemsize * max(n_fit, 1)
        workers = self.workers(n_q, n_jobs)
        rows = max(MIN_CHUNK_ROWS, min(MAX_CHUNK_ROWS, CHUNK_BYTES // row_bytes))
        # One key buffer per worker within working_memory (scikit-learn's setting when None).
        chunk = get_chunk_n_rows(row_bytes=row_bytes * workers, max_n_rows=max(1, min(rows, -(-n_q // workers))),
                                 working_memory=working_memory)
        if loo and self.allow_symmetric_loo and _loo.symmetric_loo_is_usable_for(layout, n_q, chunk, k):
            # Each off-diagonal block of the symmetric Gram matrix computed once.
            return _loo.symmetric_loo(layout, k, chunk, workers)
        if workers == 1 and thread_split_is_usable_for(layout, Q, n_q, k) and (split := threads_for(n_jobs)) > 1:
            # Chunks of at most a 1/split of the rows (the same key memory in all),
            # one thread each with its GEMM on one BLAS thread, rather than one GEMM
            # on all cores followed by the selection split over threads.
            workers, chunk = split, max(1, min(-(-n_q // split), -(-chunk // split)))
        dist = np.empty((n_q, k), dtype=np.float64)
        ind = np.empty((n_q, k), dtype=np.intp)
        local = threading.local()
        # The compiled selection splits a chunk's rows over threads only when the
        # chunks themselves run one at a time.
        threads = 1 if workers > 1 else threads_for(n_jobs)

        def work(start: int) -> None:
            buf = getattr(local, "buf", None)
            if buf is None and layout.aug is not None:
                buf = local.buf = np.empty((chunk, n_fit), dtype=gemm_dtype)
            stop = min(start + chunk, n_q)
            d, i = _kernel.search_chunk(layout, Q[start:stop], q_sqnorm[start:stop], start if loo else None, k,
                                        buf, threads)
            dist[start:stop], ind[start:stop] = d, i

        map_chunks(work, range(0, n_q, chunk), workers)
        return dist, ind

    def radius_counts(
        self,
        Q: MatrixLike,
        radius: float,
        labels: MatrixLike,
        *,
        query_indices: ArrayLike | None,
        working_memory: float | None,
        n_jobs: int | None,
    ) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.int64] | SparseMatrix]:
        """Training points within ``radius`` of each query, in total and per label.

        Parameters
        ----------
        Q : ndarray or sparse matrix of shape (n_queries, n_features), or None
            Prepared queries; None: training points as leave-one-out queries.
        radius : float
            ``>= 0``, in the metric (checked by the caller).
        labels : ndarray or sparse matrix of shape (n_samples, n_labels), or None
            Labels of the training points to count.
        query_indices : array-like of int, optional
            Only read with ``Q=None``: the training rows to use as queries; default all.
        working_memory : float or None
            Megabytes the chunks may take.
        n_jobs : int or None
            Threads (``resolve_n_jobs``).

        Returns
        -------
        sizes : ndarray of shape (n_queries,), int64
        counts : ndarray of shape (n_queries, n_labels), int64, or csr_array
            Only when ``labels`` is given.
        """
        layout = self.layout
        n_fit = self.n_samples
        rows_fit: NDArray[np.intp] | None
        if Q is None:
            rows_fit = np.arange(n_fit) if query_indices is None else np.asarray(query_indices, dtype=np.intp)
            if rows_fit.ndim != 1 or (rows_fit.size and (rows_fit.min() < 0 or rows_fit.max() >= n_fit)):
                raise ValueError(
                    f"Expected query_indices to be a 1-D array of training indices in [0, {n_fit}), "
                    f"got {query_indices!r}."
                )
            Q, q_sqnorm = layout.X[rows_fit], layout.sqnorm[rows_fit]
        else:
            rows_fit = None
            q_sqnorm = prepared_sqnorms(Q)
        workers = self.workers(Q.shape[0], n_jobs)
        return _radius.radius_counts(layout, self.metric, Q, q_sqnorm, rows_fit, radius, labels, workers,
                                     working_memory)

    def to_metric(self, sqdist: NDArray[np.float64]) -> NDArray[np.float64]:
        """Squared Euclidean distances between prepared points, in place, to the metric's.

        Parameters
        ----------
        sqdist : ndarray of float64
            Overwritten.

        Returns
        -------
        ndarray
            ``sqdist`` itself.
        """
        if self.metric == "euclidean":
            np.sqrt(sqdist, out=sqdist)
        elif self.metric == "cosine":
            sqdist *= 0.5  # |a-b|^2 = 2 - 2cos for unit vectors
        return sqdist
