"""Inputs of the extreme-classification measures: Y_true as CSR, any Y_score as a top-k ranking.

:mod:`mlknn.metrics._extreme` documents the accepted forms. Everything here
works on CSR index arrays and (n, k) rankings; a dense (n, q) array is only
ever read (a dense ``Y_score`` the caller already holds), never created.
"""

from __future__ import annotations

from typing import Any, TypeGuard

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..utils._topk import topk_from_dense
from ..utils._typing import MatrixLike, SparseMatrix
from ..utils._validation import check_label_matrix

__all__ = ["check_true", "hits", "is_topk_pair", "ranked_labels"]

# Rows per block when ranking a dense score matrix: blocks of at most this many
# cells keep the temporaries (partition, masks) small whatever n is.
_DENSE_BLOCK_CELLS = 1 << 22

# --------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------


def check_true(Y_true: MatrixLike, name: str = "Y_true") -> SparseMatrix:
    """``Y_true`` as a canonical uint8 CSR array (sorted indices, no duplicates, data all 1)."""
    Y = check_label_matrix(Y_true, name=name, accept_sparse=True)
    if not sp.issparse(Y):
        Y = sp.csr_array(Y)
        Y.eliminate_zeros()
    if Y.shape[0] == 0:
        raise ValueError(f"{name} must have at least one row; got shape {Y.shape}.")
    Y.sort_indices()
    return Y


def is_topk_pair(Y_score: object) -> TypeGuard[tuple[NDArray[np.integer[Any]], NDArray[Any]]]:
    return bool(
        isinstance(Y_score, tuple)
        and len(Y_score) == 2
        and all(isinstance(a, np.ndarray) for a in Y_score)
        and Y_score[0].ndim == 2
        and Y_score[0].dtype.kind in "iu"
    )


def _ranked_pair(
    labels: NDArray[Any], scores: NDArray[Any], shape: tuple[int, int], k: int
) -> NDArray[np.int64]:
    """Validate a ``(labels, scores)`` pair; return its first k labels in rank order."""
    n, q = shape
    if scores.shape != labels.shape:
        raise ValueError(
            "Y_score as a (labels, scores) pair needs two arrays of the same shape; "
            f"got labels {labels.shape} and scores {scores.shape}."
        )
    if labels.shape[0] != n:
        raise ValueError(
            f"Y_score has {labels.shape[0]} rows but Y_true has {n}; they must match."
        )
    if labels.shape[1] < k:
        raise ValueError(
            f"k must be <= the {labels.shape[1]} columns of the (labels, scores) pair; got k={k}. "
            "Ask predict_topk for at least k labels."
        )
    labels = labels.astype(np.int64, copy=False)
    bad = (labels < -1) | (labels >= q)
    if bad.any():
        value = labels[bad][0].item()
        raise ValueError(
            f"labels of the (labels, scores) pair must lie in [0, {q}) or be -1; got {value}."
        )
    if scores.dtype.kind not in "biuf":
        raise ValueError(
            f"scores of the (labels, scores) pair must be real numbers; got dtype {scores.dtype}."
        )
    scores = scores.astype(np.float64)
    empty = labels < 0
    if not np.isfinite(scores[~empty]).all():
        raise ValueError("scores of the (labels, scores) pair must be finite.")
    srt = np.sort(np.where(empty, -1 - np.arange(labels.shape[1]), labels), axis=1)
    if np.any(srt[:, 1:] == srt[:, :-1]):
        row = int(np.nonzero(np.any(srt[:, 1:] == srt[:, :-1], axis=1))[0][0])
        raise ValueError(
            f"labels of the (labels, scores) pair repeat a label in row {row}."
        )
    # Re-rank with the rule of predict_topk (decreasing score, then lower label);
    # empty slots go last. A pair from predict_topk is left in its order.
    scores[empty] = -np.inf
    lab_key = np.where(empty, q, labels)
    order = np.lexsort((lab_key, -scores), axis=1)
    return np.take_along_axis(labels, order, axis=1)[:, :k]


def _topk_dense(S: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """Top-k labels of each row of a dense score matrix, ties to the lower label."""
    n, q = S.shape
    kk = min(k, q)
    out = np.full((n, k), -1, dtype=np.int64)  # k > q: the slots past q stay empty
    step = max(1, _DENSE_BLOCK_CELLS // q)
    for start in range(0, n, step):
        out[start : start + step, :kk] = topk_from_dense(S[start : start + step], kk)[0]
    return out


def _topk_sparse(S: SparseMatrix, k: int) -> NDArray[np.int64]:
    """Top-k of the stored entries of each CSR row; slots beyond a row's nnz are -1."""
    S = sp.csr_array(S)
    S.sum_duplicates()
    n = S.shape[0]
    counts = np.diff(S.indptr)
    rows = np.repeat(np.arange(n), counts)
    order = np.lexsort((S.indices, -S.data.astype(np.float64), rows))
    rank = np.arange(order.size) - np.repeat(S.indptr[:-1], counts)
    keep = rank < k
    out = np.full((n, k), -1, dtype=np.int64)
    out[rows[keep], rank[keep]] = S.indices[order[keep]]
    return out


def ranked_labels(Y_score: MatrixLike, shape: tuple[int, int], k: int) -> NDArray[np.int64]:
    """The (n, k) int64 label ranking of any accepted ``Y_score`` (-1: empty slot)."""
    if is_topk_pair(Y_score):
        return _ranked_pair(Y_score[0], Y_score[1], shape, k)
    if sp.issparse(Y_score):
        if Y_score.shape != shape:
            raise ValueError(
                f"Y_score must have the shape of Y_true {shape}; got {Y_score.shape}."
            )
        if Y_score.dtype.kind not in "biuf" or not np.isfinite(Y_score.data).all():
            raise ValueError("Y_score must contain only finite real values.")
        return _topk_sparse(Y_score, k)
    try:
        S = np.asarray(Y_score, dtype=np.float64)
    except Exception as exc:
        raise ValueError(
            "Y_score must be a dense (n_samples, n_labels) score array, a sparse matrix, or the "
            f"(labels, scores) pair of predict_topk; it could not be read ({exc})."
        ) from exc
    if S.shape != shape:
        hint = ""
        if S.ndim == 2 and S.shape[0] == shape[0] and S.shape[1] < shape[1]:
            # (n, k) with k < q: most likely the labels of predict_topk without their scores.
            hint = (
                " An (n, k) array looks like the labels of predict_topk alone: pass the pair it returns, "
                "labels, scores = estimator.predict_topk(X, k); precision_at_k(Y_true, (labels, scores), k=k)."
            )
        raise ValueError(
            f"Y_score must have the shape of Y_true {shape}; got {S.shape}. (It may also be the "
            f"(labels, scores) pair of predict_topk.){hint}"
        )
    if not np.isfinite(S).all():
        i, j = np.argwhere(~np.isfinite(S))[0]
        raise ValueError(
            f"Y_score must contain only finite values; got {float(S[i, j])!r} at row {i}, column {j}."
        )
    return _topk_dense(S, k)


def hits(Y: SparseMatrix, L: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Boolean (n, k): is ranked label ``L[i, j]`` a true label of row i (no densifying)."""
    n, q = Y.shape
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(Y.indptr))
    keys = rows * q + Y.indices  # sorted: rows ascending, indices sorted per row
    probe = np.arange(n, dtype=np.int64)[:, None] * q + L
    pos = np.searchsorted(keys, probe)
    found = (
        keys[np.minimum(pos, keys.size - 1)] == probe
        if keys.size
        else np.zeros(L.shape, bool)
    )
    return found & (L >= 0)
