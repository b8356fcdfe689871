"""All-pairs distances, streamed in blocks of columns.

Mutual proximity (:mod:`mlknn.hubness`) needs every point's distance to *every*
training point, which the k-NN protocol cannot return without sorting whole
rows (and the exact kernel's per-pair float64 recomputation is far slower than
one direct pass over a block). So the neighbours layer offers this second,
all-pairs entry point, with the same definitions as the backends:

* dense input: exact differences (``scipy.spatial.distance.cdist``, float64),
  so that identical rows are at distance exactly 0;
* sparse input: ``|a|^2 + |b|^2 - 2 a.b`` in float64, clipped at 0;
* ``cosine``: ``1 - cos``, as half the squared distance of the L2-normalised rows
  (normalised as the backends normalise them).

Memory: :func:`pairwise_distances_chunked` yields blocks of columns sized by
``working_memory`` (megabytes; ``None`` reads scikit-learn's global
``working_memory``, see :func:`sklearn.config_context`), never an n x n array.
"""

from collections.abc import Iterator
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from sklearn.utils import gen_batches

from ..utils._param_validation import (
    Interval,
    StrOptions,
    get_chunk_n_rows,
    validate_params,
)
from ..utils._typing import MatrixLike, NDArray
from ._contract import METRICS, l2_normalize, prepared_sqnorms


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "Y": ["array-like", "sparse matrix"],
        "metric": [StrOptions(set(METRICS))],
    },
    prefer_skip_nested_validation=True,
)
def pairwise_distances(X: MatrixLike, Y: MatrixLike, metric: str = "euclidean") -> NDArray[np.float64]:
    """All distances between the rows of X and the rows of Y.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_x, n_features)
        The points of the result's rows.
    Y : {array-like, sparse matrix} of shape (n_y, n_features)
        The points of the result's columns.
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        ``"euclidean"``, ``"sqeuclidean"`` (the same neighbours) or ``"cosine"`` (``1 -
        cos(a, b)``).

    Returns
    -------
    ndarray of shape (n_x, n_y), float64

    See Also
    --------
    pairwise_distances_chunked : The same in blocks of columns.
    BruteNeighbors : Only the k smallest distances.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import pairwise_distances
    >>> pairwise_distances(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([[5., 0.]])
    """
    return _distances(X, Y, metric)


def _distances(A: MatrixLike, B: MatrixLike, metric: str) -> NDArray[np.float64]:
    if metric == "cosine":
        A, B = l2_normalize(A), l2_normalize(B)
    if sp.issparse(A) or sp.issparse(B):
        an = row_sqnorms(A)
        bn = row_sqnorms(B)
        dots = A @ B.T
        dots = dots.toarray() if sp.issparse(dots) else np.asarray(dots)
        sq = an[:, None] + bn[None, :] - 2.0 * dots.astype(np.float64, copy=False)
        np.maximum(sq, 0.0, out=sq)
    else:
        sq = cdist(np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64), "sqeuclidean")
    if metric == "euclidean":
        return np.sqrt(sq, out=sq)
    if metric == "cosine":
        sq *= 0.5
    return sq


def row_sqnorms(X: MatrixLike) -> NDArray[np.float64]:
    """Squared Euclidean norms of the rows of X, in float64.

    The kernels' own definition (float64 products summed in index order, so the
    values are the same bits as every backend's), for callers outside this package
    that need ``|x|^2`` (DSL's centroid residuals ``|x - c_k(x)|^2``).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n, d)
        The points whose squared norms are returned.

    Returns
    -------
    ndarray of shape (n,)

    See Also
    --------
    pairwise_distances : Distances computed from these norms.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import row_sqnorms
    >>> row_sqnorms(np.array([[3.0, 4.0], [1.0, 0.0]]))
    array([25.,  1.])
    """
    norms: NDArray[np.float64] = prepared_sqnorms(sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X))
    return norms


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "Y": ["array-like", "sparse matrix"],
        "metric": [StrOptions(set(METRICS))],
        "working_memory": [Interval(Real, 0, None, closed="neither"), None],
        "max_cols": [Interval(Integral, 1, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def pairwise_distances_chunked(
    X: MatrixLike,
    Y: MatrixLike,
    *,
    metric: str = "euclidean",
    working_memory: float | None = None,
    max_cols: int | None = None,
) -> Iterator[tuple[slice, NDArray[np.float64]]]:
    """Blocks of columns of the all-pairs distance matrix between X and Y.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_x, n_features)
        The rows of every block.
    Y : {array-like, sparse matrix} of shape (n_y, n_features)
        Streamed in blocks of rows (the columns of the distance matrix).
    metric : {"euclidean", "sqeuclidean", "cosine"}, default="euclidean"
        ``"euclidean"``, ``"sqeuclidean"`` (the same neighbours) or ``"cosine"`` (``1 -
        cos(a, b)``).
    working_memory : float, optional
        Megabytes for one block and its copy of Y's rows (``8 (n_x + n_y)`` bytes
        per column); None: scikit-learn's ``working_memory`` setting.
    max_cols : int, optional
        At most this many columns per block (small blocks stay in cache when the
        caller makes large temporaries from each).

    Yields
    ------
    cols : slice
        The rows of Y in this block.
    D : ndarray of shape (n_x, cols.stop - cols.start), float64
        ``D[i, j]`` is the distance from ``X[i]`` to ``Y[cols][j]``.

    See Also
    --------
    pairwise_distances : All the distances at once.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import pairwise_distances_chunked
    >>> X = np.arange(6.0).reshape(3, 2)
    >>> [D.shape for _, D in pairwise_distances_chunked(X, X, max_cols=2)]
    [(3, 2), (3, 1)]
    """
    n = Y.shape[0]
    step = get_chunk_n_rows(row_bytes=8 * (X.shape[0] + n) + 1, max_n_rows=n, working_memory=working_memory)
    if max_cols is not None:
        step = min(step, max_cols)
    for cols in gen_batches(n, max(1, step)):
        yield cols, _distances(X, Y[cols], metric)
