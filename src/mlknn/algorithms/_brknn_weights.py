"""BR-kNN's weighted vote (``weights="distance"`` or a callable).

With neighbour weights ``w_j >= 0`` (j = 1..k) the vote of label l is the
weighted share ``v_l = sum_j w_j y_jl / sum_j w_j`` in [0, 1], and BR-kNN's
scores, decisions and top-k use the *weighted count* ``c_l = k v_l`` where the
uniform vote uses the integer count: ``conf_l = (c_l + 1/n) / (k + q/n)``.
Uniform weights give ``c_l = count_l`` (and mlknn keeps the integer path for
them, bit for bit). The weights follow scikit-learn's ``KNeighborsClassifier``:

* ``"distance"``: ``w_j = 1 / d_j``; a query with a neighbour at distance 0
  gets weight 1 on its zero-distance neighbours and 0 on the others;
* a callable: ``w = weights(d)``, d the (n_queries, k) distances in the
  metric's units (for ``metric="cosine"``, ``d = 1 - cos``, so
  ``lambda d: np.maximum(1 - d, 0) ** 4`` is the cosine similarity to the 4th power).

A query whose weights are all zero has ``v_l = 0`` for every label. The
weighted counts are float64; with a sparse Y they are a CSR ``csr_array``
computed as one product ``W @ Y`` (W the (n_queries, n_train) weighted
adjacency), so no (n_queries, q) array is formed.
"""

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..neighbors import NeighborGraph
from ..utils._typing import FloatArray, LabelMatrix, MatrixLike, NDArray

#: The ``weights`` parameter's type: a name or a callable on the distances.
WeightsParam = str | Callable[[NDArray[np.float64]], Any]


def neighbour_weights(distances: NDArray[Any], weights: WeightsParam, owner: str = "BRkNN") -> FloatArray:
    """The (n_queries, k) weights of the neighbours, validated.

    Parameters
    ----------
    distances : ndarray of shape (n_queries, k)
        The neighbours' distances, ascending along each row.
    weights : "uniform", "distance" or callable
    owner : str
        The estimator's name, for the error messages.

    Returns
    -------
    ndarray of shape (n_queries, k), float64, finite, >= 0

    Raises
    ------
    ValueError
        If a callable returns an array of another shape, or a negative, NaN or
        infinite weight.
    """
    d = np.asarray(distances, dtype=np.float64)
    if weights == "uniform":
        return np.ones(d.shape)
    if weights == "distance":
        # scikit-learn's rule: 1/d, and a row with an exact match keeps only its matches.
        with np.errstate(divide="ignore"):
            w = 1.0 / d
        inf = np.isinf(w)
        exact = inf.any(axis=1)
        w[exact] = inf[exact]
        return w
    assert callable(weights)  # the parameter constraints allow nothing else
    w = np.asarray(weights(d.copy()), dtype=np.float64)
    if w.shape != d.shape:
        raise ValueError(
            f"The 'weights' callable of {owner} must return an array of the distances' shape "
            f"{d.shape}; got shape {w.shape}."
        )
    if not np.all(np.isfinite(w)) or (w.size and w.min() < 0):
        bad = w[~np.isfinite(w) | (w < 0)]
        raise ValueError(
            f"The 'weights' callable of {owner} must return finite, non-negative weights; "
            f"got {bad.size} invalid values, e.g. {bad[0]!r}."
        )
    return w


def weighted_counts(graph: NeighborGraph, Y: LabelMatrix, w: FloatArray) -> MatrixLike:
    """``c_l = k v_l``: the weighted vote of each (query, label), dense or CSR.

    Parameters
    ----------
    graph : NeighborGraph
        k neighbours per query.
    Y : ndarray or csr_array of shape (n_train, q), 0/1
    w : ndarray of shape (n_queries, k)
        The neighbour weights (:func:`neighbour_weights`).

    Returns
    -------
    ndarray of shape (n_queries, q), float64, or a canonical float64 csr_array
        (sorted indices, no explicit zeros) when Y is sparse.
    """
    n_queries, k = graph.indices.shape
    total = w.sum(axis=1)
    # Normalise per row so that the weighted counts sum like counts (k v_l); a row of
    # zero weights votes for nothing.
    scale = np.divide(k, total, out=np.zeros(n_queries), where=total > 0)
    A = graph.to_csr(Y.shape[0], w * scale[:, None])
    if sp.issparse(Y):
        C = sp.csr_array(A @ sp.csr_array(Y, dtype=np.float64))
        C.eliminate_zeros()
        C.sort_indices()
        return C
    return np.asarray(A @ np.asarray(Y, dtype=np.float64))
