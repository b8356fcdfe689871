"""The ``kneighbors`` contract, once: argument checks, input preparation, leave-one-out
removal of a point's own index, and the merge of partial top-k lists.

Every backend (brute, the candidate backends, precomputed) and the Dask path use
these, so that they agree on what is accepted and on the order of the answer:
distances ascending, ties by the lower training index, ``X=None`` meaning
leave-one-out (only the point's own index excluded; duplicates kept).
"""

from numbers import Integral
from typing import Any, overload

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

from ..utils._typing import MatrixLike, NDArray

#: The metrics of mlknn's own kernels (``cosine`` = ``1 - cos``, computed as half the
#: squared Euclidean distance of the L2-normalised rows).
METRICS = ("euclidean", "sqeuclidean", "cosine")


def check_metric(metric: str, where: str) -> str:
    """``metric`` if it is one of :data:`METRICS`, else a ValueError naming ``where``."""
    if metric not in METRICS:
        raise ValueError(
            f"The 'metric' parameter of {where} must be one of {METRICS}. Got {metric!r} instead."
        )
    return metric


def check_n_neighbors(n_neighbors: int, n_samples_fit: int, loo: bool) -> int:
    """``n_neighbors`` as an int in ``[1, n_samples_fit]`` (``n_samples_fit - 1`` for
    leave-one-out), else a ValueError stating the rule and the value.

    Parameters
    ----------
    n_neighbors : int
        The requested k.
    n_samples_fit : int
        Training points of the index.
    loo : bool
        Whether the query is the leave-one-out graph of the training set, which
        has one candidate fewer per point.

    Returns
    -------
    int
        ``n_neighbors``, checked.

    See Also
    --------
    drop_own_index : The leave-one-out step of every backend.

    Examples
    --------
    >>> from mlknn.neighbors import check_n_neighbors
    >>> check_n_neighbors(3, 10, loo=True)
    3
    >>> check_n_neighbors(10, 10, loo=True)
    Traceback (most recent call last):
    ...
    ValueError: Expected 1 <= n_neighbors <= n_samples_fit - 1 (leave-one-out) = 9, but n_neighbors = 10.
    """
    limit = n_samples_fit - 1 if loo else n_samples_fit
    if (
        isinstance(n_neighbors, bool)
        or not isinstance(n_neighbors, Integral)
        or not (1 <= n_neighbors <= limit)
    ):
        what = "n_samples_fit - 1 (leave-one-out)" if loo else "n_samples_fit"
        raise ValueError(
            f"Expected 1 <= n_neighbors <= {what} = {limit}, but n_neighbors = {n_neighbors}."
        )
    return int(n_neighbors)


def check_query_features(Q: MatrixLike, n_features_in: int) -> MatrixLike:
    """Raise unless the queries have the index's number of features."""
    if Q.shape[1] != n_features_in:
        raise ValueError(
            f"X has {Q.shape[1]} features, but the index was fitted with {n_features_in} features."
        )
    return Q


def prepare_points(
    X: MatrixLike, metric: str, *, accept_sparse: bool = True, order: str | None = None
) -> MatrixLike:
    """Points as the kernels read them: float32/float64, canonical CSR when sparse
    (duplicates summed, indices sorted), L2-normalised rows for ``cosine``."""
    if not _already_checked(X, order):
        X = check_array(X, accept_sparse="csr" if accept_sparse else False,
                        dtype=[np.float64, np.float32], order=order)
    if sp.issparse(X):
        X = X.tocsr()
        X.sum_duplicates()  # also sorts indices; explicit zeros are harmless
    if metric == "cosine":
        X = l2_normalize(X)
    return X


def prepared_sqnorms(X: MatrixLike) -> NDArray[np.float64]:
    """Squared norms of the rows of prepared points, in float64 (no input check).

    Dense rows are summed by ``einsum``, sparse ones by scipy: the values every
    backend and the exact search read as ``|x|^2``.
    """
    if sp.issparse(X):
        sq: NDArray[np.float64] = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
        return sq
    X64 = X.astype(np.float64, copy=False)
    dense: NDArray[np.float64] = np.einsum("ij,ij->i", X64, X64)
    return dense


def l2_normalize(X: MatrixLike) -> MatrixLike:
    """Rows scaled to unit L2 norm, in their dtype; an all-zero row stays zero
    (distance 1 to every point under the cosine metric)."""
    norms = np.sqrt(prepared_sqnorms(X))
    norms[norms == 0] = 1.0
    if sp.issparse(X):
        # Row scaling of the stored values (the same products as diags(1 / norms) @ X)
        # keeps X's canonical layout: a pair's exact distance is then one function of
        # the two rows, not of which other rows share its block (scipy's binary
        # operations take another summation order on non-canonical operands).
        X = sp.csr_matrix(X)
        inv = np.repeat(1.0 / norms, np.diff(X.indptr))
        out = sp.csr_matrix(((inv * X.data).astype(X.dtype), X.indices.copy(), X.indptr.copy()), shape=X.shape)
        out.has_canonical_format = X.has_canonical_format
        out.eliminate_zeros()  # as the product did
        return out
    return (X / norms[:, None]).astype(X.dtype, copy=False)


def _sum_is_finite(X: NDArray[Any]) -> bool:
    """No NaN or infinity in X, read off its sum (one pass, no temporary mask).

    The sum of valid values near the float maximum can overflow to infinity: that
    only sends X to the full check (which accepts it), so numpy's overflow warning
    is silenced here rather than shown to the user.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(X.sum()))


def _already_checked(X: MatrixLike, order: str | None) -> bool:
    """Whether ``check_array`` would return X itself: a plain 2-D float32/float64
    ndarray, non-empty, C-contiguous where asked, all finite (a finite sum implies
    finite entries; an overflowing sum falls back to the full check). The estimators
    validate X before the backend sees it: this skips the second check's fixed cost."""
    return (
        type(X) is np.ndarray
        and X.ndim == 2
        and X.dtype in (np.float64, np.float32)
        and X.shape[0] > 0
        and X.shape[1] > 0
        and (order != "C" or X.flags.c_contiguous)
        and _sum_is_finite(X)
    )


@overload
def drop_own_index(ind: NDArray[Any], own: NDArray[Any], dist: None = None) -> NDArray[Any]: ...


@overload
def drop_own_index(
    ind: NDArray[Any], own: NDArray[Any], dist: NDArray[Any]
) -> tuple[NDArray[Any], NDArray[Any]]: ...


def drop_own_index(
    ind: NDArray[Any], own: NDArray[Any], dist: NDArray[Any] | None = None
) -> NDArray[Any] | tuple[NDArray[Any], NDArray[Any]]:
    """Leave-one-out rows from rows one wider: each row without its point's own index.

    The own index is removed wherever it appears (with duplicates at distance 0
    the point need not come first); when it is absent (more duplicates with lower
    indices than slots) the last column is dropped instead. Removing one element
    of a sorted row keeps the others sorted.

    Parameters
    ----------
    ind : ndarray of shape (n_rows, w)
        Neighbour indices, each row sorted by distance and one wider than wanted.
    own : ndarray of shape (n_rows,)
        The training index of each row's point.
    dist : ndarray of shape (n_rows, w), optional
        Dropped in step with ``ind``.

    Returns
    -------
    ind : ndarray of shape (n_rows, w - 1)
        And ``dist`` likewise when given, as ``(dist, ind)``.

    See Also
    --------
    check_n_neighbors : The bounds on k, leave-one-out included.
    merge_topk : Merge partial neighbour lists.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import drop_own_index
    >>> ind = np.array([[0, 2, 1], [0, 1, 2]])  # row 1: point 1 ties with point 0 at distance 0
    >>> drop_own_index(ind, np.array([0, 1])).tolist()
    [[2, 1], [0, 2]]
    """
    n, w = ind.shape
    is_self = ind == np.asarray(own)[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), w - 1)
    keep = np.ones_like(is_self)
    keep[np.arange(n), drop] = False
    if dist is None:
        only: NDArray[Any] = ind[keep].reshape(n, w - 1)
        return only
    return dist[keep].reshape(n, w - 1), ind[keep].reshape(n, w - 1)


def merge_topk(k: int, *parts: tuple[NDArray[Any], NDArray[Any]]) -> tuple[NDArray[Any], NDArray[Any]]:
    """Merge partial top-k lists ``(distances, indices)`` by (distance, index).

    Parameters
    ----------
    k : int
        The number of neighbours kept per query after the merge.
    *parts : tuples (distances, indices), each of shape (n_queries, k_i)
        Partial neighbour lists of the same queries (e.g. one per training block).

    Returns
    -------
    distances, indices : ndarrays of shape (n_queries, min(k, sum k_i))

    See Also
    --------
    drop_own_index : The leave-one-out step of every backend.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.neighbors import merge_topk
    >>> part1 = (np.array([[0.1, 0.5]]), np.array([[4, 7]]))
    >>> part2 = (np.array([[0.3, 0.5]]), np.array([[2, 1]]))
    >>> dist, ind = merge_topk(3, part1, part2)
    >>> dist.tolist(), ind.tolist()
    ([[0.1, 0.3, 0.5]], [[4, 2, 1]])
    """
    dist = np.concatenate([p[0] for p in parts], axis=1) if len(parts) > 1 else parts[0][0]
    ind = np.concatenate([p[1] for p in parts], axis=1) if len(parts) > 1 else parts[0][1]
    if dist.shape[1] == 0:
        return dist, ind
    order = np.lexsort((ind, dist), axis=-1)[:, :k]
    return np.take_along_axis(dist, order, axis=1), np.take_along_axis(ind, order, axis=1)
