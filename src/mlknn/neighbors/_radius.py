"""Radius counting on the exact kernel: how many training points (and of each label)
lie within a radius of each query, without keeping the points themselves.

Serves NeighborhoodClassifier's radius counts (``BruteNeighbors.radius_neighbors_counts``).
"""

from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp

from ..utils._param_validation import get_chunk_n_rows
from ..utils._typing import ArrayLike, MatrixLike, NDArray, SparseMatrix
from ._compiled import keys_out_of_range
from ._contract import check_query_features
from ._exact_kernel import (
    _GEMM_RTOL,
    _exact_sqdist,
    _map_chunks,
    _round_toward,
    _row_sqnorms,
)


class _KernelIndex(Protocol):
    """What the radius counts read of the index they are mixed into: a fitted
    :class:`~._exact_kernel._ExactKernel` with BruteNeighbors' parameters (the
    self-type of the mixin's methods; read-only members, so that an index with
    narrower types still matches)."""

    @property
    def metric(self) -> str: ...
    @property
    def working_memory(self) -> float | None: ...
    @property
    def n_samples_fit_(self) -> int: ...
    @property
    def n_features_in_(self) -> int: ...
    @property
    def _fit_X(self) -> MatrixLike: ...
    @property
    def _fit_sqnorm(self) -> NDArray[np.float64]: ...
    @property
    def _fit_sqnorm_max(self) -> float: ...
    @property
    def _key_X(self) -> SparseMatrix | None: ...
    @property
    def _fit_aug(self) -> NDArray[np.floating[Any]] | None: ...
    @property
    def _key_sqnorm_max(self) -> float: ...

    def _prepare(self, X: MatrixLike) -> MatrixLike: ...

    def _workers(self, n_q: int, n_fit: int) -> int: ...

    def _transposed_keys(self, Qc: MatrixLike) -> NDArray[np.floating[Any]]: ...

    def _ranking_keys(
        self, Qc: MatrixLike, qn: NDArray[np.float64], buf: NDArray[np.floating[Any]]
    ) -> tuple[NDArray[np.floating[Any]], NDArray[np.float64]]: ...

    def _radius_chunk(
        self, Qc: MatrixLike, qn: NDArray[np.float64], own: NDArray[np.intp] | None, radius: float
    ) -> NDArray[np.bool_]: ...


class _RadiusCounts:
    """Radius counts for an index built on :class:`~._exact_kernel._ExactKernel` (a mixin)."""

    def radius_neighbors_counts(
        self: _KernelIndex,
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
        radius = float(radius)
        if not radius >= 0:
            raise ValueError(
                f"Expected radius >= 0 (in the units of the metric {self.metric!r}), but "
                f"radius = {radius!r}."
            )
        n_fit = self.n_samples_fit_
        rows_fit: NDArray[np.intp] | None
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
            Q = check_query_features(self._prepare(X), self.n_features_in_)
            q_sqnorm = _row_sqnorms(Q)
        L: MatrixLike = None  # the labels as float32/64, dense or CSR
        if labels is not None:
            # Sparse labels stay sparse (CSR counts, no (n, q) array; mlknn's sparse-label path).
            L = sp.csr_array(labels) if sp.issparse(labels) else np.asarray(labels)
            if L.ndim != 2 or L.shape[0] != n_fit:
                raise ValueError(
                    f"Expected labels of shape (n_samples_fit, n_labels) = ({n_fit}, q), got {L.shape}."
                )
            # Counted by a matrix product of the 0/1 in-radius mask with L: exact in
            # float32 while every count stays below 2**24.
            peak = (abs(L).max() if L.nnz else 0) if sp.issparse(L) else np.abs(L).max(initial=0)
            L = L.astype(np.float32 if n_fit < 2**24 and peak <= 1 else np.float64)
        n_q = Q.shape[0]
        sizes = np.empty(n_q, dtype=np.int64)
        sparse_counts: dict[int, SparseMatrix] | None = {} if sp.issparse(L) else None
        counts: NDArray[np.int64] | SparseMatrix | None = (
            None if L is None or sparse_counts is not None else np.empty((n_q, L.shape[1]), dtype=np.int64)
        )
        workers = self._workers(n_q, n_fit)
        # ~3 float64-sized buffers of chunk_rows x n_fit live at once per worker.
        chunk = get_chunk_n_rows(row_bytes=3 * 8 * max(n_fit, 1) * workers, max_n_rows=max(1, -(-n_q // workers)),
                                 working_memory=self.working_memory)

        def work(start: int) -> None:
            stop = min(start + chunk, n_q)
            own = None if rows_fit is None else rows_fit[start:stop]
            # (n_fit, rows): training points along the first axis (see _radius_chunk).
            inside = self._radius_chunk(Q[start:stop], q_sqnorm[start:stop], own, radius)
            sizes[start:stop] = inside.sum(axis=0)
            if sparse_counts is not None:
                part = sp.csr_array(sp.csr_array(inside.T.astype(L.dtype)) @ L)
                part.data = np.rint(part.data)
                sparse_counts[start] = part.astype(np.int64)
            elif counts is not None:
                # (rows, q) as mask.T @ L: OpenBLAS was erratic (up to 20x slower)
                # on the equivalent L.T @ mask with few labels.
                counts[start:stop] = np.rint(inside.astype(L.dtype).T @ L)

        _map_chunks(work, range(0, n_q, chunk), workers)
        if sparse_counts is not None:
            counts = sp.csr_array(sp.vstack([sparse_counts[s] for s in sorted(sparse_counts)], format="csr")
                                  if sparse_counts else sp.csr_array((0, L.shape[1]), dtype=np.int64))
        return sizes if L is None else (sizes, counts)

    def _radius_chunk(
        self: _KernelIndex, Qc: MatrixLike, qn: NDArray[np.float64], own: NDArray[np.intp] | None, radius: float
    ) -> NDArray[np.bool_]:
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
        key_X = self._key_X
        if key_X is not None:
            V = self._transposed_keys(Qc)  # (n_fit, rows)
            q_key, scale = qn, qn + self._fit_sqnorm_max
        else:  # dense training data: centred, augmented float32 keys
            assert self._fit_aug is not None  # _fit_keys sets one of _key_X and _fit_aug
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
        keyed = key_X if key_X is not None else self._fit_aug
        assert keyed is not None
        if keys_out_of_range(scale, V.dtype, keyed.shape[1], _GEMM_RTOL.get(V.dtype, 1e-11)):
            # Keys that may be inf, NaN (data of magnitude about 1e19 and more in
            # float32) or rounded beyond the band (about 1e-20 and less): every pair
            # is recomputed exactly.
            inside: NDArray[np.bool_] = np.zeros(V.shape, dtype=bool)
            band = np.ones(V.shape, dtype=bool)
        else:
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

