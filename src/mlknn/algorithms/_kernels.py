"""Kernels shared by the kNN algorithms.

Pure-ndarray counting and posterior kernels (no Python loop over instances or
labels), and the per-label logistic-regression fit of the methods that end in
one regression per label (MLHiKNN, IBLR).
"""

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from ..neighbors import NeighborGraph
from ..utils._budget import WORK_BYTES
from ..utils._topk import (  # the top-k helpers of interface 2, importable here
    is_stored,
    topk_from_dense,
    topk_from_sparse_candidates,
    zero_count_topk,
)
from ..utils._typing import (
    ArrayLike,
    BoolArray,
    FloatArray,
    IntArray,
    LabelMatrix,
    MatrixLike,
    NDArray,
    SparseMatrix,
)

__all__ = [
    "constant_labels",
    "count_histograms",
    "fit_logistic_per_label",
    "graph_adjacency",
    "is_stored",
    "label_frequencies",
    "lookup_table",
    "map_decision",
    "map_posterior",
    "neighbor_label_counts",
    "safe_ratio",
    "smoothed_likelihood",
    "sparse_count_histograms",
    "sparse_decisions",
    "sparse_neighbor_label_counts",
    "topk_from_dense",
    "topk_from_sparse_candidates",
    "zero_count_topk",
]


def neighbor_label_counts(
    graph: NeighborGraph, Y: NDArray[Any], weights: FloatArray | None = None
) -> NDArray[np.int64] | NDArray[np.float64]:
    """Count, for every point and label, how many of its neighbours have the label.

    This is the membership counting vector C_x of ML-kNN (Zhang and Zhou 2014;
    Zhang and Zhou 2007, step "C_x(l)"). Computed as one sparse-by-dense product, so memory is
    O(n k + n q) and there is no Python loop over instances or labels.

    Parameters
    ----------
    graph : NeighborGraph
        Rows are points, columns their k neighbours (training indices).
    Y : ndarray of shape (n_train, n_labels)
        Training label matrix (0/1).
    weights : ndarray of shape (n_points, k), optional
        Weight of each neighbour (default 1: plain counts).

    Returns
    -------
    ndarray of shape (n_points, n_labels)
        int64 counts when unweighted, float64 sums otherwise.
    """
    if weights is None and isinstance(Y, np.ndarray) and Y.dtype in (np.uint8, np.bool_):
        return _gathered_counts(graph.indices, Y)
    A = graph.to_csr(Y.shape[0], weights)
    if weights is None:
        A = A.astype(np.int64)
        return np.asarray(A @ Y.astype(np.int64))
    return np.asarray(A @ Y.astype(np.float64))


# Bytes of gathered label rows per step of ``_gathered_counts`` (k x rows x q).
_GATHER_BYTES = WORK_BYTES


def _gathered_counts(indices: NDArray[np.integer[Any]], Y: NDArray[Any]) -> NDArray[np.int64]:
    """Unweighted counts of a dense 0/1 uint8 Y: the neighbours' label rows gathered
    neighbour-major, (k, rows, q), and summed over k (in uint8 while k * max(Y) fits:
    several times faster than the sparse product on small problems; the same integers)."""
    n, k = indices.shape
    q = Y.shape[1]
    out = np.empty((n, q), dtype=np.int64)
    acc = np.uint8 if k * int(Y.max(initial=0)) <= 255 else np.int64
    step = max(1, _GATHER_BYTES // max(1, k * q))
    for a in range(0, n, step):
        rows = indices[a : a + step]
        G = np.take(Y, rows.T.ravel(), axis=0).reshape(k, rows.shape[0], q)
        out[a : a + step] = G.sum(axis=0, dtype=acc)
    return out


def count_histograms(
    counts: IntArray, Y: NDArray[Any], n_bins: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Per-label histograms of neighbour counts, split by the instance's own label.

    Returns ``c1[j, l]`` = number of training instances with label l whose count of
    l-labelled neighbours is j, and ``c0[j, l]`` the same for instances without l
    (Zhang and Zhou's (2007) c[j] and c'[j]).

    Parameters
    ----------
    counts : ndarray of shape (n, q), int
    Y : ndarray of shape (n, q), 0/1
    n_bins : int
        k + 1.

    Returns
    -------
    c1, c0 : ndarrays of shape (n_bins, q), int64
    """
    n, q = counts.shape
    key = np.multiply(counts, q, dtype=np.int64)
    key += np.arange(q)
    # Every instance's histogram, then the positives' alone (y = 1 is the rare value:
    # an index of nnz(Y) entries, not a boolean mask and a gather of the n q others).
    total = np.bincount(key.ravel(), minlength=n_bins * q)
    rows, cols = np.nonzero(np.asarray(Y))
    c1 = np.bincount(key[rows, cols], minlength=n_bins * q)
    return c1.reshape(n_bins, q), (total - c1).reshape(n_bins, q)


def graph_adjacency(graph: NeighborGraph, n_train: int, mask: ArrayLike | None = None) -> SparseMatrix:
    """The graph as a sparse int32 (n_points, n_train) 0/1 adjacency ``csr_array``.

    ``mask`` (bool, shape (n_points, k)) keeps only some neighbours (BML-kNN:
    those within the radius); the others are absent, not explicit zeros.
    """
    n, k = graph.indices.shape
    if mask is None:
        indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
        cols = graph.indices.ravel()
    else:
        mask = np.asarray(mask, dtype=bool)
        indptr = np.concatenate([[0], np.cumsum(mask.sum(axis=1, dtype=np.int64))])
        cols = graph.indices[mask]
    return sp.csr_array((np.ones(cols.size, dtype=np.int32), cols, indptr), shape=(n, n_train))


def sparse_neighbor_label_counts(
    graph: NeighborGraph, Y: SparseMatrix, mask: ArrayLike | None = None
) -> SparseMatrix:
    """ML-kNN's counting vectors C_x as a sparse product ``A @ Y`` (sparse Y).

    The sparse counterpart of :func:`neighbor_label_counts`: with A the
    (n_points, n_train) adjacency of the graph, ``C = A @ Y`` has at most
    ``n_points * k * (labels per training row)`` non-zeros and is computed in
    O(nnz(C)) memory; no (n_points, q) array is formed.

    Parameters
    ----------
    graph : NeighborGraph
    Y : csr_array of shape (n_train, n_labels), 0/1
    mask : ndarray of shape (n_points, k), bool, optional
        Neighbours to count (default all).

    Returns
    -------
    csr_array of shape (n_points, n_labels), int32
        Canonical (sorted indices, no explicit zeros).
    """
    C = sp.csr_array(graph_adjacency(graph, Y.shape[0], mask) @ Y.astype(np.int32))
    C.eliminate_zeros()
    C.sort_indices()
    return C


def sparse_count_histograms(
    C: SparseMatrix, Y: SparseMatrix, n_bins: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """:func:`count_histograms` from sparse counts C and sparse labels Y, in O(nnz + n_bins q).

    ``c1[j, l]`` for ``j >= 1`` counts the non-zeros of C at the positions of
    Y's non-zeros (``C * Y``, elementwise); ``c1[0, l]`` is the rest of the
    instances with l. ``c0[j, l]`` (``j >= 1``) is the histogram of all of C's
    non-zeros minus c1; ``c0[0, l]`` the remaining instances without l. The
    integers are those of the dense computation, so the tables that follow are
    bit-identical.

    Parameters
    ----------
    C : csr_array of shape (n, q), int, canonical
    Y : csr_array of shape (n, q), 0/1, canonical
    n_bins : int
        One more than the largest count.

    Returns
    -------
    c1, c0 : ndarrays of shape (n_bins, q), int64
    """
    n, q = Y.shape
    at_pos = sp.csr_array(C.multiply(Y))
    at_pos.eliminate_zeros()
    size = n_bins * q
    c1 = np.bincount(at_pos.data.astype(np.int64) * q + at_pos.indices, minlength=size).reshape(n_bins, q)
    c_all = np.bincount(C.data.astype(np.int64) * q + C.indices, minlength=size).reshape(n_bins, q)
    c0 = c_all - c1
    n_pos = label_frequencies(Y)
    c1[0] = n_pos - c1[1:].sum(axis=0)
    c0[0] = (n - n_pos) - c0[1:].sum(axis=0)
    return c1, c0


def label_frequencies(Y: LabelMatrix) -> NDArray[np.int64]:
    """Number of training instances with each label, (q,) int64 (dense or sparse Y)."""
    if sp.issparse(Y):
        freq: NDArray[np.int64] = np.bincount(Y.indices, minlength=Y.shape[1]).astype(np.int64)
    else:
        freq = np.asarray(Y).sum(axis=0, dtype=np.int64)
    return freq


def lookup_table(table: NDArray[Any], counts: MatrixLike) -> NDArray[Any]:
    """``table[counts[i, l], l]`` for dense counts, or the CSR of the looked-up non-zeros.

    Parameters
    ----------
    table : ndarray of shape (n_rows, q)
        A per-count, per-label value (a posterior, a decision).
    counts : ndarray of shape (n, q) or csr_array
        Indices into the table's rows, already clipped to ``n_rows - 1``.

    Returns
    -------
    ndarray of shape (n, q), or ndarray of shape (nnz,) (the values at
    ``counts``' stored entries, in CSR order) for sparse counts.
    """
    if sp.issparse(counts):
        stored: NDArray[Any] = table[counts.data, counts.indices]
        return stored
    return table[counts, np.arange(table.shape[1])[None, :]]


def sparse_decisions(counts: SparseMatrix, count_values: ArrayLike, zero_values: ArrayLike) -> SparseMatrix:
    """0/1 CSR decisions from per-entry values and a per-label value for zero counts.

    Parameters
    ----------
    counts : csr_array of shape (n, q), canonical
        Stored (non-zero) counts; only the pattern is read.
    count_values : ndarray of shape (nnz,)
        The decision (0/1) of each stored entry, in CSR order.
    zero_values : ndarray of shape (q,)
        The decision of a label whose count is zero (usually all 0: only a label
        with a high prior is predicted with no neighbour carrying it).

    Returns
    -------
    csr_array of shape (n, q), uint8
    """
    n, q = counts.shape
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(counts.indptr))
    keep = np.asarray(count_values) != 0
    out_rows, out_cols = rows[keep], counts.indices[keep]
    zero_pos = np.flatnonzero(zero_values)
    if zero_pos.size:
        z_rows = np.repeat(np.arange(n, dtype=np.int64), zero_pos.size)
        z_cols = np.tile(zero_pos, n)
        absent = ~is_stored(counts, rows, z_rows, z_cols)
        out_rows = np.concatenate([out_rows, z_rows[absent]])
        out_cols = np.concatenate([out_cols, z_cols[absent]])
    out = sp.csr_array((np.ones(out_rows.size, dtype=np.uint8), (out_rows, out_cols)), shape=(n, q))
    out.sort_indices()
    return out


# ------------------------------------------------- Bayesian (MAP) kernels
def safe_ratio(num: ArrayLike, denom: ArrayLike) -> NDArray[np.float64]:
    """``num / denom`` elementwise, 0 where ``denom == 0``.

    The smoothed frequencies of ML-kNN, BML-kNN / NC and DML-kNN are 0/0 only
    with ``smoothing = 0`` and no training instance in the class; that case is
    defined as 0 (no evidence), never NaN.
    """
    num = np.asarray(num, dtype=np.float64)
    denom = np.broadcast_to(np.asarray(denom, dtype=np.float64), np.broadcast_shapes(num.shape, np.shape(denom)))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / denom
    return np.where(denom > 0, out, 0.0)


def smoothed_likelihood(hist: NDArray[Any], s: float) -> NDArray[np.float64]:
    """ML-kNN's likelihood table ``(s + c[j]) / (s n_bins + sum_p c[p])``, column by column.

    Zhang and Zhou (2007) lines 11-13 (and the BML-kNN paper eqs 17-18) with ``n_bins = k + 1``:
    ``hist[j, l]`` counts the training instances (with, or without, label l)
    whose neighbourhood holds exactly j instances with l.

    Parameters
    ----------
    hist : ndarray of shape (n_bins, n_labels)
    s : float
        The smoothing parameter, >= 0.

    Returns
    -------
    ndarray of shape (n_bins, n_labels), float64
        0 where the denominator is 0 (s = 0 and an empty class).
    """
    n_bins = hist.shape[0]
    return safe_ratio(s + hist, s * n_bins + hist.sum(axis=0, dtype=np.float64))


def map_posterior(joint1: FloatArray, joint0: FloatArray, prior: FloatArray) -> NDArray[np.float64]:
    """Posterior ``joint1 / (joint1 + joint0)`` of a two-class MAP rule.

    ``joint_b = P(H_b) P(E | H_b)`` (ML-kNN, Zhang and Zhou 2007, line 18, DML-kNN eq 10,
    BML-kNN eq 19). Where both products are 0 (possible only with
    ``smoothing = 0``) the posterior is defined as the prior, as in Zhang's
    reference code.

    Parameters
    ----------
    joint1, joint0 : ndarray of shape (n, q)
    prior : ndarray of shape (q,)
        ``P(H_1)`` per label.

    Returns
    -------
    ndarray of shape (n, q), in [0, 1]
    """
    total = joint1 + joint0
    prior = np.broadcast_to(prior, joint1.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, joint1 / np.where(total > 0, total, 1.0), prior)


def map_decision(joint1: FloatArray, joint0: FloatArray) -> NDArray[np.uint8]:
    """The MAP rule ``joint1 > joint0`` as 0/1; an exact tie predicts 0."""
    return (joint1 > joint0).astype(np.uint8)


# ------------------------------------------------ one regression per label
def constant_labels(Y: ArrayLike) -> tuple[BoolArray, NDArray[np.uint8]]:
    """Labels that are constant in the training set, and their value.

    A constant label (all 0 or all 1) has no regression: MLHiKNN and IBLR
    predict that constant, with probability exactly 0 or 1.

    Parameters
    ----------
    Y : ndarray of shape (n, q), 0/1, n >= 1

    Returns
    -------
    constant : ndarray of shape (q,), bool
    value : ndarray of shape (q,), uint8
        The constant's value (0 where the label is not constant).
    """
    Y = np.asarray(Y)
    first = Y[0]
    constant = np.all(Y == first, axis=0)
    return constant, np.where(constant, first, 0).astype(np.uint8)


def _fit_one_logistic(
    Z: MatrixLike, y: NDArray[Any], params: dict[str, Any]
) -> tuple[FloatArray, float, int, bool]:
    """One LogisticRegression; its ConvergenceWarning becomes a flag, others pass."""
    model = LogisticRegression(**params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(Z, y)
    converged = True
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            converged = False
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return model.coef_[0].copy(), float(model.intercept_[0]), int(model.n_iter_[0]), converged


def fit_logistic_per_label(
    Z: MatrixLike, Y: NDArray[Any], labels: ArrayLike, params: dict[str, Any], n_jobs: int | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], list[int]]:
    """Fit ``LogisticRegression(**params)`` on ``(Z, Y[:, l])`` for each label l in ``labels``.

    Each fit is a separate optimisation over the whole (n, p) input (a loop over
    labels, one scikit-learn model each; nothing loops over instances), run
    with joblib ``Parallel(n_jobs)``.

    Parameters
    ----------
    Z : {ndarray, sparse matrix} of shape (n, p)
    Y : ndarray of shape (n, q), 0/1
    labels : array-like of int
        The labels to fit (typically the non-constant ones).
    params : dict
        Keyword arguments of :class:`~sklearn.linear_model.LogisticRegression`.
    n_jobs : int, optional

    Returns
    -------
    coef : ndarray of shape (len(labels), p)
    intercept : ndarray of shape (len(labels),)
    n_iter : ndarray of shape (len(labels),), int64
    not_converged : list of int
        The labels whose solver stopped at ``max_iter``: their
        :class:`~sklearn.exceptions.ConvergenceWarning` is not shown, so that
        the caller can issue one warning naming them all.
    """
    labels = [int(l) for l in np.asarray(labels).ravel()]
    fits = Parallel(n_jobs=n_jobs)(delayed(_fit_one_logistic)(Z, Y[:, l], params) for l in labels)
    p = Z.shape[1]
    coef = np.zeros((len(labels), p))
    intercept = np.zeros(len(labels))
    n_iter = np.zeros(len(labels), dtype=np.int64)
    not_converged = []
    for i, (c, b, it, ok) in enumerate(fits):
        coef[i], intercept[i], n_iter[i] = c, b, it
        if not ok:
            not_converged.append(labels[i])
    return coef, intercept, n_iter, not_converged
