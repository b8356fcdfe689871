"""Radius counting on the exact search: how many training points (and of each label)
lie within a radius of each query, without keeping the points themselves.

Serves NeighborhoodClassifier's radius counts (``BruteNeighbors.radius_neighbors_counts``
through ``ExactIndex.radius_counts``).
"""

import numpy as np
import scipy.sparse as sp

from ...utils._param_validation import get_chunk_n_rows
from ...utils._threads import map_chunks
from ...utils._typing import MatrixLike, NDArray, SparseMatrix
from ._compiled import keys_out_of_range
from ._kernel import GEMM_RTOL, exact_sqdist, round_toward
from ._layout import KeyLayout


def radius_counts(
    layout: KeyLayout,
    metric: str,
    Q: MatrixLike,
    q_sqnorm: NDArray[np.float64],
    rows_fit: NDArray[np.intp] | None,
    radius: float,
    labels: MatrixLike,
    workers: int,
    working_memory: float | None,
) -> NDArray[np.int64] | tuple[NDArray[np.int64], NDArray[np.int64] | SparseMatrix]:
    """Training points within ``radius`` of each query, in total and per label.

    Parameters
    ----------
    layout : KeyLayout
        The fitted training points.
    metric : {"euclidean", "sqeuclidean", "cosine"}
        The metric ``radius`` is in.
    Q : ndarray or sparse matrix of shape (n_queries, n_features)
        Prepared queries.
    q_sqnorm : ndarray of shape (n_queries,), float64
        Their squared norms.
    rows_fit : ndarray of shape (n_queries,), intp, or None
        Leave-one-out: query i is training point ``rows_fit[i]`` and excludes it.
    radius : float
        ``>= 0``; a point at distance exactly ``radius`` is inside (a closed ball).
    labels : ndarray or sparse matrix of shape (n_fit, n_labels), or None
        0/1 (or integer) labels of the training points; sparse labels give CSR counts.
    workers : int
        Threads (chunks of queries in parallel).
    working_memory : float or None
        Megabytes the chunks' masks may take (None: scikit-learn's setting).

    Returns
    -------
    sizes : ndarray of shape (n_queries,), int64
    counts : ndarray of shape (n_queries, n_labels), int64, or csr_array
        Only when ``labels`` is given.
    """
    n_fit = layout.X.shape[0]
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
    # ~3 float64-sized buffers of chunk_rows x n_fit live at once per worker.
    chunk = get_chunk_n_rows(row_bytes=3 * 8 * max(n_fit, 1) * workers, max_n_rows=max(1, -(-n_q // workers)),
                             working_memory=working_memory)

    def work(start: int) -> None:
        stop = min(start + chunk, n_q)
        own = None if rows_fit is None else rows_fit[start:stop]
        # (n_fit, rows): training points along the first axis (see radius_mask).
        inside = radius_mask(layout, metric, Q[start:stop], q_sqnorm[start:stop], own, radius)
        sizes[start:stop] = inside.sum(axis=0)
        if sparse_counts is not None:
            part = sp.csr_array(sp.csr_array(inside.T.astype(L.dtype)) @ L)
            part.data = np.rint(part.data)
            sparse_counts[start] = part.astype(np.int64)
        elif counts is not None:
            # (rows, q) as mask.T @ L: OpenBLAS was erratic on the equivalent
            # L.T @ mask with few labels.
            counts[start:stop] = np.rint(inside.astype(L.dtype).T @ L)

    map_chunks(work, range(0, n_q, chunk), workers)
    if sparse_counts is not None:
        counts = sp.csr_array(sp.vstack([sparse_counts[s] for s in sorted(sparse_counts)], format="csr")
                              if sparse_counts else sp.csr_array((0, L.shape[1]), dtype=np.int64))
    return sizes if L is None else (sizes, counts)


def radius_mask(
    layout: KeyLayout,
    metric: str,
    Qc: MatrixLike,
    qn: NDArray[np.float64],
    own: NDArray[np.intp] | None,
    radius: float,
) -> NDArray[np.bool_]:
    """Boolean (n_fit, rows) mask of the training points within ``radius`` of each query.

    Works on the search's ranking keys ``v = |x|^2 / 2 - q.x`` (squared
    distance ``|q|^2 + 2 v``; centred and float32 for dense data): one pass
    turns the product into keys, one comparison marks the points certainly
    inside, a second the rounding band around the boundary, whose distances
    are recomputed exactly. Sparse training data are multiplied as ``X @ q``
    with the chunk's queries dense, training-major (``q @ X.T`` sparse x
    sparse would dominate a radius fit on sparse data); dense keys come
    query-major and the mask is returned transposed (a view). ``own``: row i
    excludes training point ``own[i]`` (leave-one-out).
    """
    X = layout.X
    n_rows = Qc.shape[0]
    # The radius as a squared Euclidean distance between prepared points.
    if metric == "euclidean":
        t = radius * radius
    elif metric == "cosine":
        t = 2.0 * radius  # cosine distance = |a - b|^2 / 2 for unit vectors
    else:
        t = radius
    key_X = layout.key_X
    if key_X is not None:
        V = layout.transposed_keys(Qc)  # (n_fit, rows)
        q_key, scale = qn, qn + layout.sqnorm_max
    else:  # dense training data: centred, augmented float32 keys
        assert layout.aug is not None  # the layout sets one of key_X and aug
        buf = np.empty((n_rows, X.shape[0]), dtype=layout.aug.dtype)
        V, scale = layout.ranking_keys(Qc, qn, buf)  # (rows, n_fit)
        q_key = scale - layout.key_sqnorm_max  # |q - mean|^2, the space of the keys
    # Inside iff |q|^2 + 2 v <= t, i.e. v <= (t - |q|^2) / 2 (radius = inf: all).
    half = 0.5 * (t - q_key)
    delta = 2.0 * GEMM_RTOL.get(V.dtype, 1e-11) * scale + 1e-300
    lo = round_toward(half - delta, V.dtype, down=True)
    hi = round_toward(half + delta, V.dtype, down=False)
    if key_X is not None:
        lo, hi = lo[None, :], hi[None, :]
    else:
        lo, hi = lo[:, None], hi[:, None]
    if keys_out_of_range(scale, V.dtype, layout.n_terms, GEMM_RTOL.get(V.dtype, 1e-11)):
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
        exact = exact_sqdist(Qc, X, r, c)
        if metric == "euclidean":
            np.sqrt(exact, out=exact)
        elif metric == "cosine":
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

