"""Exact brute-force k-nearest-neighbour search, chunked and BLAS-backed.

Why our own kernel rather than ``sklearn.neighbors.NearestNeighbors``: mlknn's
contract is stricter than scikit-learn's. We need (a) a deterministic tie rule
(equal distances ordered by the lower training index) so that every backend, the
distributed path and the loop references agree exactly, and (b) distances that are
exact enough for duplicates to come out as 0 (the GEMM expansion
``|q|^2 - 2 q.x + |x|^2`` does not give 0 for identical rows).

The algorithm, per chunk of queries (memory bounded by ``working_memory``):

1. one matrix product gives the ranking key ``v = |x|^2 / 2 - q.x`` for every
   (query, training point) pair: the training matrix is stored centred (minus its
   column means: distances do not change, the rounding band shrinks for data far
   from the origin) and augmented with a ``|x|^2 / 2`` column, the queries with a
   ``-1`` column, so the GEMM writes ``v`` directly into a reused buffer. The GEMM
   is float32 for float32 and float64 input alike (step 3 makes the result exact).
   ``v`` orders the training points of a row exactly as the squared distance
   ``|q|^2 + 2 v`` does, so no elementwise pass is needed. Sparse training data
   compute ``X @ q`` instead (see ``_chunk_transposed``);
2. a threshold that is at least the k-th smallest ``v`` of the row, cheaply: the
   columns are split into interleaved groups (column ``j`` belongs to group
   ``j mod B``) and the k-th smallest of the group minima is an upper bound on the
   k-th smallest value (k groups, k distinct values at or below it). Adding twice
   the GEMM rounding bound gives a threshold that certainly admits every true
   neighbour and every tie at the boundary;
3. only groups whose minimum is under the threshold can hold candidates: their
   members are gathered and filtered, and the candidates' squared distances are
   recomputed exactly in float64 (direct differences for dense input), then
   ordered by (distance, index).

Steps 2-3 touch each GEMM output once (the group-minimum reduction); the full-row
selection, the boolean mask and ``nonzero`` over the whole chunk of the first
version are gone (see docs/performance.md for the measurements). No n x n matrix is
allocated: a chunk is ``chunk_rows x n_train``.
"""

import os
import threading

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

from ._base import register_backend

# Relative rounding error of the GEMM that step 2 must cover, relative to
# |q|^2 + max |x|^2 (in units of v = |x|^2/2 - q.x, so 2x the bound of the expansion).
_GEMM_RTOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-11}
_METRICS = ("euclidean", "sqeuclidean", "cosine")
# Query rows per chunk: at least 256 (an efficient GEMM), more while the chunk's
# output stays under 16 MiB (fewer Python steps for small training sets), at most
# 2048; and never above ``working_memory``. Measured in benchmarks/.
_MIN_CHUNK_ROWS = 256
_MAX_CHUNK_ROWS = 2048
_CHUNK_BYTES = 16 << 20
# Below this many multiply-adds (n_queries x n_fit x d) kneighbors runs in one
# thread (with multi-threaded BLAS); above, chunks run in parallel threads.
_PARALLEL_MIN_WORK = 2e9
# Sparse training data: a chunk's queries are densified (d x rows) up to this size
# (see fit); beyond it (huge vocabularies) the product stays sparse x sparse.
_DENSE_Q_BYTES = 64 << 20
# Group size of step 2 (columns per group): the selection runs over n / 32 minima.
_GROUP = 32


class BruteNeighbors:
    """Exact Euclidean (or squared Euclidean, or cosine) neighbours.

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        ``cosine`` is ``1 - cos(a, b)``, computed as half the squared Euclidean
        distance between the L2-normalised rows.
    working_memory : float, default=256
        Megabytes one chunk of the distance matrix may take.
    n_jobs : int, optional
        Threads for large searches (chunks of queries in parallel, each with
        single-threaded BLAS). None: as many as BLAS would use (respects
        ``threadpoolctl`` limits); -1: all cores. Small searches run in one thread
        with multi-threaded BLAS.
    random_state : ignored

    Attributes
    ----------
    n_samples_fit_ : int
    n_features_in_ : int
    """

    exact = True

    def __init__(self, metric="euclidean", working_memory=256, n_jobs=None, random_state=None):
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs
        self.random_state = random_state

    def get_params(self, deep=True):
        return {
            "metric": self.metric,
            "working_memory": self.working_memory,
            "n_jobs": self.n_jobs,
            "random_state": self.random_state,
        }

    def set_params(self, **params):
        for key, value in params.items():
            setattr(self, key, value)
        return self

    def _prepare(self, X):
        X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32], order="C")
        if sp.issparse(X):
            X = X.tocsr()
            X.sum_duplicates()  # also sorts indices; explicit zeros are harmless
        if self.metric == "cosine":
            X = _l2_normalize(X)
        return X

    def fit(self, X, y=None):
        """Index the training points.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        self
        """
        if self.metric not in _METRICS:
            raise ValueError(
                f"The 'metric' parameter of the brute backend must be one of {_METRICS}. "
                f"Got {self.metric!r} instead."
            )
        X = self._prepare(X)
        self._fit_sqnorm = _row_sqnorms(X)
        if sp.issparse(X):
            self._fit_aug = None
            self._fit_X = X
            # Sparse training data: the chunk's keys are computed transposed, as
            # X @ Q.T with the chunk's queries dense (d x rows, cache-resident):
            # scipy's csr_matvecs streams X once and writes contiguous rows, several
            # times faster than Q @ X.T (sparse x sparse, then toarray). float32
            # keys when every stored value is exactly a float32 (binary, counts).
            key_dtype = X.dtype
            if X.dtype == np.float64 and np.array_equal(X.data.astype(np.float32), X.data):
                key_dtype = np.dtype(np.float32)
            self._key_X = X.astype(key_dtype)
            self._key_half = (0.5 * self._fit_sqnorm).astype(key_dtype)
        else:
            self._key_X = None
            self._fit_X = X
            # Step 1's keys in float32 on centred data, for float32 and float64
            # input alike: [X - mean, |X - mean|^2 / 2], C-contiguous, read by the
            # GEMM directly. Centring keeps the rounding band (relative to the
            # norms) narrow for data far from the origin; float32 halves the GEMM of
            # float64 input. Exactness comes from the float64 recomputation.
            n, d = X.shape
            self._center = X.mean(axis=0, dtype=np.float64) if n else np.zeros(d)
            aug = np.empty((n, d + 1), dtype=np.float32)
            csq = np.empty(n, dtype=np.float64)
            for a in range(0, n, 1 << 15):
                b = min(a + (1 << 15), n)
                np.subtract(X[a:b], self._center, out=aug[a:b, :d], casting="unsafe")
                block = aug[a:b, :d].astype(np.float64)
                csq[a:b] = np.einsum("ij,ij->i", block, block)
            aug[:, d] = 0.5 * csq
            self._fit_aug = aug
            self._key_sqnorm_max = float(csq.max(initial=0.0))
        self._fit_sqnorm_max = float(self._fit_sqnorm.max(initial=0.0))
        self.n_samples_fit_ = X.shape[0]
        self.n_features_in_ = X.shape[1]
        return self

    def kneighbors(self, X=None, n_neighbors=10, return_distance=True):
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
        loo = X is None
        n_fit = self.n_samples_fit_
        limit = n_fit - 1 if loo else n_fit
        if not (1 <= n_neighbors <= limit):
            what = "n_samples_fit - 1 (leave-one-out)" if loo else "n_samples_fit"
            raise ValueError(
                f"Expected 1 <= n_neighbors <= {what} = {limit}, but n_neighbors = {n_neighbors}."
            )
        if loo:
            Q, q_sqnorm = self._fit_X, self._fit_sqnorm
        else:
            Q = self._prepare(X)
            if Q.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {Q.shape[1]} features, but the index was fitted with "
                    f"{self.n_features_in_} features."
                )
            q_sqnorm = _row_sqnorms(Q)
        n_q = Q.shape[0]
        dist = np.empty((n_q, n_neighbors), dtype=np.float64)
        ind = np.empty((n_q, n_neighbors), dtype=np.intp)
        gemm_dtype = self._fit_aug.dtype if self._fit_aug is not None else np.float64
        itemsize = np.dtype(gemm_dtype).itemsize
        row_bytes = itemsize * max(n_fit, 1)
        workers = self._workers(n_q, n_fit)
        rows = max(_MIN_CHUNK_ROWS, min(_MAX_CHUNK_ROWS, _CHUNK_BYTES // row_bytes))
        budget = self.working_memory * 2**20 / workers  # one key buffer per worker
        chunk = max(1, min(int(budget // row_bytes), rows, -(-n_q // workers)))
        starts = range(0, n_q, chunk)
        local = threading.local()

        def work(start):
            buf = getattr(local, "buf", None)
            if buf is None and self._fit_aug is not None:
                buf = local.buf = np.empty((chunk, n_fit), dtype=gemm_dtype)
            stop = min(start + chunk, n_q)
            d, i = self._chunk(Q[start:stop], q_sqnorm[start:stop], start if loo else None, n_neighbors, buf)
            dist[start:stop], ind[start:stop] = d, i

        _map_chunks(work, starts, workers)
        if self.metric == "euclidean":
            np.sqrt(dist, out=dist)
        elif self.metric == "cosine":
            dist *= 0.5  # |a-b|^2 = 2 - 2cos for unit vectors
        return (dist, ind) if return_distance else ind

    def _workers(self, n_q, n_fit):
        """Threads for kneighbors: 1 for small searches, else n_jobs (default: the
        number of BLAS threads, so that a caller's threadpool limit is respected)."""
        if n_q * n_fit * max(self.n_features_in_, 1) < _PARALLEL_MIN_WORK:
            return 1
        if self.n_jobs is not None:
            n = (os.cpu_count() or 1) if self.n_jobs < 0 else self.n_jobs
            return max(1, int(n))
        from threadpoolctl import threadpool_info

        blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
        return max(1, min(blas) if blas else 1)

    def _ranking_keys(self, Qc, qn, buf):
        """Step 1: ``v = |x|^2 / 2 - q.x`` for every pair, shape (rows, n_fit).

        Also returns, per row, the scale of the keys' rounding error (|q|^2 +
        max |x|^2 in the space the keys were computed in: centred for dense data).
        """
        X = self._fit_X
        n_rows = Qc.shape[0]
        if self._fit_aug is not None:
            aug = self._fit_aug
            d = aug.shape[1] - 1
            Qa = np.empty((n_rows, d + 1), dtype=aug.dtype)
            Qd = Qc.toarray() if sp.issparse(Qc) else Qc
            np.subtract(self._center, Qd, out=Qa[:, :d], casting="unsafe")  # -(q - mean)
            Qa[:, d] = 1.0
            q64 = Qa[:, :d].astype(np.float64)
            scale = np.einsum("ij,ij->i", q64, q64) + self._key_sqnorm_max
            return np.matmul(Qa, aug.T, out=buf[:n_rows]), scale
        prod = Qc @ X.T
        D = prod.toarray() if sp.issparse(prod) else np.asarray(prod)
        if not D.flags.c_contiguous:
            D = np.ascontiguousarray(D)
        if D.dtype != np.float64 and D.dtype != np.float32:
            D = D.astype(np.float64)
        np.subtract((0.5 * self._fit_sqnorm).astype(D.dtype)[None, :], D, out=D)
        return D, qn + self._fit_sqnorm_max

    def _chunk(self, Qc, qn, loo_offset, k, buf=None):
        X = self._fit_X
        n_rows, n_fit = Qc.shape[0], X.shape[0]
        key_X = getattr(self, "_key_X", None)
        if key_X is not None and X.shape[1] * n_rows * key_X.dtype.itemsize <= _DENSE_Q_BYTES:
            return self._chunk_transposed(Qc, qn, loo_offset, k)
        V, scale = self._ranking_keys(Qc, qn, buf)
        rows = np.arange(n_rows)
        if loo_offset is not None:
            V[rows, rows + loo_offset] = np.inf  # exclude the point itself only
        # Step 2: an upper bound on the k-th smallest key, from interleaved groups.
        m = max(1, min(_GROUP, n_fit // (4 * k)))
        n_groups = n_fit // m
        body = m * n_groups
        if m > 1:
            G = V[:, :body].reshape(n_rows, m, n_groups).min(axis=1)
            pool = np.concatenate((G, V[:, body:]), axis=1) if body < n_fit else G
        else:
            G = pool = V
        kth = np.partition(pool, k - 1, axis=1)[:, k - 1].astype(np.float64)
        delta = _GEMM_RTOL.get(V.dtype, 1e-11) * scale
        thr = (kth + 2.0 * delta + 1e-300).astype(V.dtype)
        # Step 3: members of the groups whose minimum passes, then the tail columns.
        # (Flat indices: 2-D nonzero and 2-D fancy indexing are several times slower.)
        if m > 1:
            flat = np.flatnonzero(G <= thr[:, None])
            gr, gg = np.divmod(flat, n_groups)
            cols = gg[:, None] + n_groups * np.arange(m)[None, :]
            vals = np.take(V.reshape(-1), (gr * n_fit)[:, None] + cols)
            sel = vals <= thr[gr][:, None]
            r = np.broadcast_to(gr[:, None], cols.shape)[sel]
            c = cols[sel]
            if body < n_fit:
                tr, tc = np.divmod(np.flatnonzero(V[:, body:] <= thr[:, None]), n_fit - body)
                r = np.concatenate((r, tr))
                c = np.concatenate((c, tc + body))
        else:
            r, c = np.divmod(np.flatnonzero(V <= thr[:, None]), n_fit)
        return self._finish(Qc, qn, r, c, k, n_rows)

    def _chunk_transposed(self, Qc, qn, loo_offset, k):
        """``_chunk`` for sparse training data, keys laid out (n_fit, rows)."""
        Xk = self._key_X
        n_rows, n_fit = Qc.shape[0], Xk.shape[0]
        dt = Xk.dtype
        Qd = Qc.T.toarray() if sp.issparse(Qc) else Qc.T
        Y = np.asarray(Xk @ np.ascontiguousarray(Qd, dtype=dt))  # (n_fit, rows) = X q
        if not Y.flags.c_contiguous or Y.dtype != dt:
            Y = np.ascontiguousarray(Y, dtype=dt)
        np.subtract(self._key_half[:, None], Y, out=Y)
        rows = np.arange(n_rows)
        if loo_offset is not None:
            Y[rows + loo_offset, rows] = np.inf
        m = max(1, min(_GROUP, n_fit // (4 * k)))
        n_groups = n_fit // m
        body = m * n_groups
        if m > 1:
            G = Y[:body].reshape(m, n_groups, n_rows).min(axis=0)  # (n_groups, rows)
            pool = np.concatenate((G, Y[body:]), axis=0) if body < n_fit else G
        else:
            G = pool = Y
        kth = np.partition(pool.T, k - 1, axis=1)[:, k - 1].astype(np.float64)
        delta = _GEMM_RTOL.get(Y.dtype, 1e-11) * (qn + self._fit_sqnorm_max)
        thr = (kth + 2.0 * delta + 1e-300).astype(Y.dtype)
        if m > 1:
            gg, gr = np.divmod(np.flatnonzero(G <= thr[None, :]), n_rows)
            cols = gg[:, None] + n_groups * np.arange(m)[None, :]
            vals = np.take(Y.reshape(-1), cols * n_rows + gr[:, None])
            sel = vals <= thr[gr][:, None]
            r = np.broadcast_to(gr[:, None], cols.shape)[sel]
            c = cols[sel]
            if body < n_fit:
                tc, tr = np.divmod(np.flatnonzero(Y[body:] <= thr[None, :]), n_rows)
                r = np.concatenate((r, tr))
                c = np.concatenate((c, tc + body))
        else:
            c, r = np.divmod(np.flatnonzero(Y <= thr[None, :]), n_rows)
        return self._finish(Qc, qn, r, c, k, n_rows)

    def _finish(self, Qc, qn, r, c, k, n_rows):
        """Exact recomputation on the candidates (r, c), then (row, distance, index) order."""
        exact = _exact_sqdist(Qc, self._fit_X, qn, self._fit_sqnorm, r, c)
        order = np.lexsort((c, exact, r))
        r, c, exact = r[order], c[order], exact[order]
        counts = np.bincount(r, minlength=n_rows)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        take = starts[:, None] + np.arange(k)[None, :]
        return exact[take], c[take]

    def radius_neighbors_counts(self, X=None, radius=1.0, labels=None, *, query_indices=None):
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
        labels : array-like of shape (n_samples_fit, n_labels), optional
            0/1 (or integer) labels of the training points.
        query_indices : array-like of int, optional
            Only with ``X=None``: the training rows to use as (leave-one-out)
            queries; default all.

        Returns
        -------
        sizes : ndarray of shape (n_queries,), int64
            Number of training points within ``radius``.
        counts : ndarray of shape (n_queries, n_labels), int64
            ``counts[i, l]`` = number of those points with label l; only
            returned when ``labels`` is given.
        """
        radius = float(radius)
        if not radius >= 0:
            raise ValueError(
                f"Expected radius >= 0 (in the units of the metric {self.metric!r}), but "
                f"radius = {radius!r}."
            )
        n_fit = self.n_samples_fit_
        if X is None:
            rows_fit = np.arange(n_fit) if query_indices is None else np.asarray(query_indices, dtype=np.intp)
            if rows_fit.ndim != 1 or (rows_fit.size and (rows_fit.min() < 0 or rows_fit.max() >= n_fit)):
                raise ValueError(
                    f"Expected query_indices to be a 1-D array of training indices in [0, {n_fit}), "
                    f"got {query_indices!r}."
                )
            Q, q_sqnorm = self._fit_X[rows_fit], self._fit_sqnorm[rows_fit]
        else:
            if query_indices is not None:
                raise ValueError("query_indices is only accepted with X=None (leave-one-out queries).")
            rows_fit = None
            Q = self._prepare(X)
            if Q.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {Q.shape[1]} features, but the index was fitted with "
                    f"{self.n_features_in_} features."
                )
            q_sqnorm = _row_sqnorms(Q)
        L = None
        if labels is not None:
            L = np.asarray(labels.toarray() if sp.issparse(labels) else labels)
            if L.ndim != 2 or L.shape[0] != n_fit:
                raise ValueError(
                    f"Expected labels of shape (n_samples_fit, n_labels) = ({n_fit}, q), got {L.shape}."
                )
            # Counted by a matrix product of the 0/1 in-radius mask with L: exact in
            # float32 while every count stays below 2**24.
            L = L.astype(np.float32 if n_fit < 2**24 and np.abs(L).max(initial=0) <= 1 else np.float64)
        n_q = Q.shape[0]
        sizes = np.empty(n_q, dtype=np.int64)
        counts = None if L is None else np.empty((n_q, L.shape[1]), dtype=np.int64)
        workers = self._workers(n_q, n_fit)
        # ~3 float64-sized buffers of chunk_rows x n_fit live at once per worker.
        chunk = max(1, int(self.working_memory * 2**20 // (3 * 8 * max(n_fit, 1) * workers)))
        chunk = min(chunk, max(1, -(-n_q // workers)))

        def work(start):
            stop = min(start + chunk, n_q)
            own = None if rows_fit is None else rows_fit[start:stop]
            # (n_fit, rows): training points along the first axis (see _radius_chunk).
            inside = self._radius_chunk(Q[start:stop], q_sqnorm[start:stop], own, radius)
            sizes[start:stop] = inside.sum(axis=0)
            if L is not None:
                # (rows, q) as mask.T @ L: OpenBLAS was erratic (up to 20x slower)
                # on the equivalent L.T @ mask with few labels.
                counts[start:stop] = np.rint(inside.astype(L.dtype).T @ L)

        _map_chunks(work, range(0, n_q, chunk), workers)
        return sizes if L is None else (sizes, counts)

    def _radius_chunk(self, Qc, qn, own, radius):
        """Boolean (n_fit, rows) mask of the training points within ``radius`` of each query.

        Works on :meth:`kneighbors`' ranking keys ``v = |x|^2 / 2 - q.x`` (squared
        distance ``|q|^2 + 2 v``; centred and float32 for dense data): one pass
        turns the product into keys, one comparison marks the points certainly
        inside, a second the rounding band around the boundary, whose distances
        are recomputed exactly. Sparse training data are multiplied as ``X @ q``
        with the chunk's queries dense, training-major (``q @ X.T`` sparse x
        sparse took 9 s of a 25 s NC fit on tmc2007-500); dense keys come
        query-major and the mask is returned transposed (a view).
        """
        X, xn = self._fit_X, self._fit_sqnorm
        n_rows = Qc.shape[0]
        # The radius as a squared Euclidean distance between prepared points.
        if self.metric == "euclidean":
            t = radius * radius
        elif self.metric == "cosine":
            t = 2.0 * radius  # cosine distance = |a - b|^2 / 2 for unit vectors
        else:
            t = radius
        key_X = getattr(self, "_key_X", None)
        if key_X is not None:
            Qd = Qc.T.toarray() if sp.issparse(Qc) else Qc.T
            V = np.asarray(key_X @ np.ascontiguousarray(Qd, dtype=key_X.dtype))  # (n_fit, rows) = X q
            if not V.flags.c_contiguous or V.dtype != key_X.dtype:
                V = np.ascontiguousarray(V, dtype=key_X.dtype)
            np.subtract(self._key_half[:, None], V, out=V)
            q_key, scale = qn, qn + self._fit_sqnorm_max
        else:  # dense training data: centred, augmented float32 keys
            buf = np.empty((n_rows, X.shape[0]), dtype=self._fit_aug.dtype)
            V, scale = self._ranking_keys(Qc, qn, buf)  # (rows, n_fit)
            q_key = scale - self._key_sqnorm_max  # |q - mean|^2, the space of the keys
        # Inside iff |q|^2 + 2 v <= t, i.e. v <= (t - |q|^2) / 2 (radius = inf: all).
        half = 0.5 * (t - q_key)
        delta = 2.0 * _GEMM_RTOL.get(V.dtype, 1e-11) * scale + 1e-300
        lo = _round_toward(half - delta, V.dtype, down=True)
        hi = _round_toward(half + delta, V.dtype, down=False)
        if key_X is not None:
            lo, hi = lo[None, :], hi[None, :]
        else:
            lo, hi = lo[:, None], hi[:, None]
        inside = V <= lo  # certainly inside
        band = V <= hi
        band &= ~inside  # the rounding band around the boundary
        if key_X is not None:
            c, r = np.nonzero(band)
        else:
            r, c = np.nonzero(band)
        del V, band
        if r.size:
            exact = _exact_sqdist(Qc, X, qn, xn, r, c)
            if self.metric == "euclidean":
                np.sqrt(exact, out=exact)
            elif self.metric == "cosine":
                exact *= 0.5
            ok = exact <= radius
            if key_X is not None:
                inside[c[ok], r[ok]] = True
            else:
                inside[r[ok], c[ok]] = True
        if key_X is None:
            inside = inside.T
        if own is not None:
            inside[own, np.arange(n_rows)] = False  # leave-one-out: the point itself only
        return inside


def _map_chunks(work, starts, workers):
    """``work(start)`` for every chunk start, on ``workers`` threads.

    Chunks in parallel, each with single-threaded BLAS: the selection and exact
    steps (numpy, single-threaded, GIL released) then run on every core too,
    instead of idling all cores but one between two matrix products.
    """
    if workers == 1 or len(starts) <= 1:
        for start in starts:
            work(start)
        return
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(work, starts))


def _round_toward(values, dtype, down):
    """``values`` (float64) cast to ``dtype``, rounded down (or up) so that the
    comparison ``key <= result`` in ``dtype`` stays on the safe side."""
    out = np.asarray(values, dtype=np.float64).astype(dtype)
    if down:
        bad = out.astype(np.float64) > values
        out[bad] = np.nextafter(out[bad], dtype.type(-np.inf))
    else:
        bad = out.astype(np.float64) < values
        out[bad] = np.nextafter(out[bad], dtype.type(np.inf))
    return out


def _row_sqnorms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    X64 = X.astype(np.float64, copy=False)
    return np.einsum("ij,ij->i", X64, X64)


def _l2_normalize(X):
    norms = np.sqrt(_row_sqnorms(X))
    norms[norms == 0] = 1.0  # an all-zero row stays zero (distance 1 to all)
    if sp.issparse(X):
        return sp.csr_matrix(sp.diags(1.0 / norms) @ X, dtype=X.dtype)
    return (X / norms[:, None]).astype(X.dtype, copy=False)


def _contiguous_base(X):
    """The C-contiguous array whose leading columns X is, or X itself."""
    base = X.base
    if (
        not X.flags.c_contiguous
        and isinstance(base, np.ndarray)
        and base.ndim == 2
        and base.flags.c_contiguous
        and base.dtype == X.dtype
        and base.shape[0] == X.shape[0]
        and base.strides == X.strides
        and base.__array_interface__["data"][0] == X.__array_interface__["data"][0]
    ):
        return base
    return X


def _exact_sqdist(Qc, X, qn, xn, r, c, block=None):
    """Squared distances of the pairs (Qc[r], X[c]) in float64, block by block.

    Direct differences, dense or sparse, so that identical rows give exactly 0.
    ``qn`` and ``xn`` are kept in the signature for callers; they are not needed.
    Dense blocks reuse two small buffers (about 256 KiB each): fresh multi-megabyte
    temporaries cost more in page faults than the arithmetic.
    """
    out = np.empty(r.shape[0], dtype=np.float64)
    q_sparse, x_sparse = sp.issparse(Qc), sp.issparse(X)
    d = X.shape[1]
    if block is None:
        block = max(64, (1 << 15) // max(d, 1))
    if not q_sparse:
        Q64 = np.ascontiguousarray(Qc, dtype=np.float64)  # one chunk of queries: small
    if not q_sparse and not x_sparse:
        # np.take is several times slower from a strided view: read rows from the
        # contiguous array X is the leading columns of (BruteNeighbors' [X, |x|^2/2]).
        src = _contiguous_base(X)
        qbuf = np.empty((block, d), dtype=np.float64)
        xbuf = np.empty((block, src.shape[1]), dtype=X.dtype)
        for s in range(0, r.shape[0], block):
            m = min(block, r.shape[0] - s)
            qb, xb = qbuf[:m], xbuf[:m]
            np.take(Q64, r[s : s + m], axis=0, out=qb, mode="clip")  # "raise" buffers out
            np.take(src, c[s : s + m], axis=0, out=xb, mode="clip")
            np.subtract(qb, xb[:, :d], out=qb)  # float64 - float32 upcasts inside the ufunc
            np.einsum("ij,ij->i", qb, qb, out=out[s : s + m])
        return out
    block = max(block, 1 << 12)
    for s in range(0, r.shape[0], block):
        rr, cc = r[s : s + block], c[s : s + block]
        if q_sparse and x_sparse:
            diff = sp.csr_matrix(Qc[rr], dtype=np.float64) - sp.csr_matrix(X[cc], dtype=np.float64)
            v = np.asarray(diff.multiply(diff).sum(axis=1), dtype=np.float64).ravel()
        else:  # mixed: the sparse side is densified block by block
            A = Qc[rr].toarray() if q_sparse else Q64[rr]
            B = X[cc].toarray() if x_sparse else X[cc]
            diff = np.subtract(A, B, dtype=np.float64)
            v = np.einsum("ij,ij->i", diff, diff)
        out[s : s + block] = v
    return out


class _CandidateBackend:
    """Base of the backends that wrap another library's search (faiss, hnswlib, ...).

    The wrapped library proposes candidates (``_search``: indices and approximate
    squared distances, ``-1`` for a missing slot); this class turns them into
    mlknn's contract:

    * each candidate's squared distance is recomputed exactly in float64 (as in
      :class:`BruteNeighbors`) and a row is ordered by (distance, training index);
    * leave-one-out (``X=None``) searches the training points with one extra slot
      and removes the point's own index wherever it appears (never "the first
      column": with duplicates the point itself need not come first). When the
      point is absent (more duplicates than slots) the last candidate is dropped;
    * a row with fewer than k valid candidates is answered by brute force;
    * ``exact = True`` subclasses also verify each row: the k-th exact distance
      must be below the smallest approximate distance any non-candidate can have
      (the last candidate's, minus a rounding bound). A row that fails (ties or
      near-ties at the boundary) is recomputed by brute force, so an exact backend
      returns exactly what ``neighbors="brute"`` returns, tie rule included.

    Subclasses set ``_name``, ``exact``, ``_accepts_sparse`` and implement
    ``_build(X32)`` and ``_search(Q32 or None, width)``.
    """

    exact = False
    _name = "?"
    _accepts_sparse = False
    #: Extra candidates searched beyond k (+1 for leave-one-out) before re-ranking.
    _margin = 8
    #: Rounding bound of the wrapped float32 distances, relative to |q|^2 + max |x|^2.
    _rtol = 1e-4

    def get_params(self, deep=True):
        return {key: getattr(self, key) for key in self._param_names}

    def set_params(self, **params):
        for key, value in params.items():
            setattr(self, key, value)
        return self

    # -------------------------------------------------------------- input
    def _prepare(self, X):
        if sp.issparse(X) and not self._accepts_sparse:
            raise TypeError(
                f"neighbors={self._name!r} does not accept sparse input (it indexes dense "
                "float32 vectors). Densify X (X.toarray()) or use neighbors='brute' or "
                "neighbors='pynndescent'."
            )
        X = check_array(X, accept_sparse="csr" if self._accepts_sparse else False,
                        dtype=[np.float64, np.float32])
        if sp.issparse(X):
            X = X.tocsr()
            X.sum_duplicates()
        if self.metric == "cosine":
            X = _l2_normalize(X)
        return X

    @staticmethod
    def _as_float32(X):
        if sp.issparse(X):
            return X.astype(np.float32)
        return np.ascontiguousarray(X, dtype=np.float32)

    def fit(self, X, y=None):
        """Index the training points.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Sparse input only where the backend supports it.

        Returns
        -------
        self
        """
        if self.metric not in _METRICS:
            raise ValueError(
                f"The 'metric' parameter of the {self._name} backend must be one of "
                f"{_METRICS}. Got {self.metric!r} instead."
            )
        X = self._prepare(X)
        self._fit_X = X
        self._fit_sqnorm = _row_sqnorms(X)
        self._fit_sqnorm_max = float(self._fit_sqnorm.max(initial=0.0))
        self._brute = None
        self.n_samples_fit_ = X.shape[0]
        self.n_features_in_ = X.shape[1]
        self._build(self._as_float32(X))
        return self

    def recall(self, X=None, n_neighbors=10, n_samples=1000, random_state=None):
        """Recall@k of this fitted index against exact search, on a sample.

        :func:`mlknn.neighbors.estimate_recall` on the training points the index
        keeps (1.0 up to sampling for an exact backend).

        Parameters
        ----------
        X : {array-like, sparse matrix}, optional
            Queries; None measures the leave-one-out graph of the training set.
        n_neighbors : int, default=10
        n_samples : int, default=1000
            Rows drawn without replacement; all if fewer.
        random_state : int, optional

        Returns
        -------
        float
        """
        from ._reuse import estimate_recall

        if not hasattr(self, "_fit_X"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"This {type(self).__name__} index is not fitted yet; call fit first.")
        approx = None
        if X is not None:
            X = self._prepare(X)
        elif self._loo_reads_built_graph(n_neighbors):
            # The leave-one-out answer comes from a graph built at fit, not from
            # searching the training points as queries: measure that graph itself.
            approx = self.kneighbors(None, n_neighbors, return_distance=False)
        return estimate_recall(self, self._fit_X, X, n_neighbors=n_neighbors, n_samples=n_samples,
                               random_state=random_state, approx_indices=approx)

    def _loo_width(self, n_neighbors):
        """Candidates asked of the library for a leave-one-out search: one slot for
        the point itself, plus the re-ranking margin."""
        return min(n_neighbors + 1 + self._margin, self.n_samples_fit_)

    def _loo_reads_built_graph(self, n_neighbors):
        """Whether ``kneighbors(None, n_neighbors)`` reads a graph built at fit
        (then measuring it costs no search) rather than searching the training points."""
        return False

    def _fallback(self):
        if self._brute is None:
            # Shares the data; the brute index only adds |x|^2 and its own GEMM layout.
            self._brute = BruteNeighbors(metric="sqeuclidean").fit(self._fit_X)
        return self._brute

    # ------------------------------------------------------------- search
    def kneighbors(self, X=None, n_neighbors=10, return_distance=True):
        """The ``n_neighbors`` nearest training points of each query.

        Same contract as :meth:`BruteNeighbors.kneighbors`: distances ascending,
        ties by the lower index, exact float64 distances for the neighbours
        returned, ``X=None`` for leave-one-out.
        """
        loo = X is None
        n_fit = self.n_samples_fit_
        limit = n_fit - 1 if loo else n_fit
        if not (1 <= n_neighbors <= limit):
            what = "n_samples_fit - 1 (leave-one-out)" if loo else "n_samples_fit"
            raise ValueError(
                f"Expected 1 <= n_neighbors <= {what} = {limit}, but n_neighbors = {n_neighbors}."
            )
        k = n_neighbors
        if loo:
            Q, qn, own = self._fit_X, self._fit_sqnorm, np.arange(n_fit)
        else:
            Q = self._prepare(X)
            if Q.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {Q.shape[1]} features, but the index was fitted with "
                    f"{self.n_features_in_} features."
                )
            qn, own = _row_sqnorms(Q), None
        width = self._loo_width(k) if loo else min(k + self._margin, n_fit)
        cand, approx = self._search(None if loo else self._as_float32(Q), width)
        cand, approx = np.asarray(cand), np.asarray(approx)
        sq = np.empty((Q.shape[0], k))
        ind = np.empty((Q.shape[0], k), dtype=np.intp)
        redo = np.zeros(Q.shape[0], dtype=bool)
        step = 8192  # rows re-ranked at once: bounds the float64 copies of the queries
        for a in range(0, Q.shape[0], step):
            b = min(a + step, Q.shape[0])
            sq[a:b], ind[a:b], redo[a:b] = self._rerank(
                Q[a:b], qn[a:b], None if own is None else own[a:b], cand[a:b], approx[a:b], k
            )
        if redo.any():
            rows = np.flatnonzero(redo)
            sq[rows], ind[rows] = self._brute_rows(Q, rows, own, k)
        if self.metric == "euclidean":
            np.sqrt(sq, out=sq)
        elif self.metric == "cosine":
            sq *= 0.5
        return (sq, ind) if return_distance else ind

    def _rerank(self, Q, qn, own, cand, approx, k):
        n_q, width = cand.shape
        n_fit = self.n_samples_fit_
        cand = cand.astype(np.intp, copy=False)
        valid = (cand >= 0) & (cand < n_fit)
        if own is not None:
            valid &= cand != own[:, None]
        r, c = np.divmod(np.flatnonzero(valid), width)
        exact = np.full((n_q, width), np.inf)
        exact[r, c] = _exact_sqdist(Q, self._fit_X, qn, self._fit_sqnorm, r, cand[r, c])
        keys = np.where(valid, cand, n_fit)
        order = np.lexsort((keys, exact), axis=-1)[:, :k]
        sq = np.take_along_axis(exact, order, axis=1)
        ind = np.take_along_axis(keys, order, axis=1)
        redo = valid.sum(axis=1) < k
        if self.exact and width < n_fit:
            # Every point outside the candidates has an approximate distance of at
            # least the last candidate's; its exact one is at least that minus delta.
            last = np.where(cand >= 0, approx, -np.inf).max(axis=1).astype(np.float64)
            delta = self._rtol * (qn + self._fit_sqnorm_max)
            redo |= ~(sq[:, -1] < last - delta)
        return sq, ind, redo

    def _brute_rows(self, Q, rows, own, k):
        """Exact answer for some rows: brute-force queries (k + 1 and self removed for LOO)."""
        brute = self._fallback()
        if own is None:
            return brute.kneighbors(Q[rows], k)
        sq, ind = brute.kneighbors(Q[rows], k + 1)
        # The exact (k+1)-list without the point's own index is its leave-one-out
        # k-list; if the point is absent (duplicates with lower indices) drop the last.
        is_self = ind == own[rows][:, None]
        drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), k)
        keep = np.ones_like(is_self)
        keep[np.arange(rows.size), drop] = False
        return sq[keep].reshape(rows.size, k), ind[keep].reshape(rows.size, k)


def _make_brute(metric="euclidean", n_jobs=None, random_state=None, **params):
    return BruteNeighbors(metric=metric, n_jobs=n_jobs, random_state=random_state, **params)


register_backend("brute", _make_brute, exact=True)
