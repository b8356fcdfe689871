"""Exact top-k selection over dense scores and over sparse candidates.

Ties are broken by the lower label index everywhere, so that a top k equals the
first k of each row sorted by (score descending, label ascending). Used by the
estimators' ``predict_topk`` (re-exported by :mod:`mlknn.algorithms._kernels`)
and by the extreme-classification metrics. No Python loop over rows or labels.
"""

import numpy as np

from ._typing import ArrayLike, BoolArray, IntArray, NDArray, SparseMatrix


def is_stored(
    counts: SparseMatrix, rows: IntArray, query_rows: ArrayLike, query_cols: IntArray
) -> BoolArray:
    """Whether each (query_rows[i], query_cols[i]) is a stored entry of canonical CSR ``counts``."""
    q = counts.shape[1]
    present = rows * q + counts.indices  # ascending: rows ascending, indices sorted
    keys = np.asarray(query_rows, np.int64) * q + query_cols
    pos = np.searchsorted(present, keys)
    hit: BoolArray = pos < present.size
    hit[hit] = present[pos[hit]] == keys[hit]
    return hit


def _check_topk(k: int, n_labels: int) -> None:
    if k > n_labels:
        raise ValueError(
            f"The 'k' parameter of predict_topk must be <= n_labels = {n_labels} (the number of "
            f"labels, q). Got k = {k} instead."
        )


def topk_from_dense(
    scores: ArrayLike, k: int
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The k highest scores of each row, ties broken by the lower label index.

    Exact: equal to sorting each row by (score descending, label ascending)
    and keeping the first k; O(n q) (a partition, not a full sort).

    Parameters
    ----------
    scores : ndarray of shape (n, q)
    k : int
        ``1 <= k <= q``.

    Returns
    -------
    labels : ndarray of shape (n, k), int64
    scores : ndarray of shape (n, k), float64
    """
    scores = np.asarray(scores, dtype=np.float64)
    n, q = scores.shape
    _check_topk(k, q)
    if k == q:
        labels = np.broadcast_to(np.arange(q, dtype=np.int64), (n, q))
    else:
        kth = -np.partition(-scores, k - 1, axis=1)[:, k - 1 : k]  # the k-th largest value
        above = scores > kth
        tie = scores == kth
        need = k - above.sum(axis=1, keepdims=True)
        take = above | (tie & (np.cumsum(tie, axis=1) <= need))
        labels = np.nonzero(take)[1].reshape(n, k).astype(np.int64)  # ascending within a row
    top = np.take_along_axis(scores, labels, axis=1)
    order = np.argsort(-top, axis=1, kind="stable")  # stable: equal scores keep the lower label first
    return np.take_along_axis(labels, order, axis=1), np.take_along_axis(top, order, axis=1)


def topk_from_sparse_candidates(
    rows: ArrayLike, labels: IntArray, scores: ArrayLike, n_rows: int, k: int
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The top k of each row among (row, label, score) candidates, ties by the lower label.

    Every row must have at least k distinct candidates, and they must include
    the row's true top k (the caller's guarantee, e.g. ML-kNN's labels present
    in a neighbourhood plus the head of the zero-count list).

    Parameters
    ----------
    rows, labels : ndarray of shape (n_candidates,), int
    scores : ndarray of shape (n_candidates,), float
    n_rows, k : int

    Returns
    -------
    labels : ndarray of shape (n_rows, k), int64
    scores : ndarray of shape (n_rows, k), float64
    """
    rows = np.asarray(rows, dtype=np.int64)
    per_row = np.bincount(rows, minlength=n_rows)
    if per_row.size and per_row.min() < k:
        raise ValueError(f"topk_from_sparse_candidates needs >= k = {k} candidates per row; "
                         f"a row has {per_row.min()}.")
    scores = np.asarray(scores, dtype=np.float64)
    order = np.lexsort((labels, -scores, rows))
    starts = np.concatenate([[0], np.cumsum(per_row)[:-1]])
    rank = np.arange(order.size) - starts[rows[order]]
    keep = order[rank < k]
    return (np.asarray(labels)[keep].astype(np.int64).reshape(n_rows, k),
            scores[keep].reshape(n_rows, k))


def zero_count_topk(
    counts: SparseMatrix,
    count_scores: ArrayLike,
    zero_scores: ArrayLike,
    k: int,
    zero_order: IntArray | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Exact top k when every label absent from a row scores its per-label constant.

    ML-kNN's posterior (and BML-kNN's, NC's) of a label whose neighbour count is
    zero does not depend on the query: ``zero_scores[l]``. So the top k of a row
    lie among its stored counts (scores ``count_scores``) and the first
    ``k + nnz(row)`` labels of one list presorted by (zero score descending,
    label ascending), minus those stored in the row. Memory: O(n k + nnz).

    Parameters
    ----------
    counts : csr_array of shape (n, q), canonical
        The rows' non-zero counts (only the pattern is read).
    count_scores : ndarray of shape (nnz,)
        The score of each stored entry, in CSR order.
    zero_scores : ndarray of shape (q,)
    k : int
    zero_order : ndarray of shape (q,), optional
        ``np.lexsort((arange(q), -zero_scores))``, when the caller has it.

    Returns
    -------
    labels, scores : ndarrays of shape (n, k)
    """
    n, q = counts.shape
    _check_topk(k, q)
    if zero_order is None:
        zero_order = np.lexsort((np.arange(q), -np.asarray(zero_scores)))
    nnz_row = np.diff(counts.indptr)
    rows = np.repeat(np.arange(n, dtype=np.int64), nnz_row)
    # Row i takes the first min(q, k + nnz_i) labels of the zero-count list: at
    # most nnz_i of them are stored in the row, so >= k remain. n k + nnz in all.
    width = np.minimum(q, k + nnz_row)
    cand_rows = np.repeat(np.arange(n, dtype=np.int64), width)
    starts = np.concatenate([[0], np.cumsum(width)[:-1]])
    cand_labels = zero_order[np.arange(cand_rows.size) - np.repeat(starts, width)]
    absent = ~is_stored(counts, rows, cand_rows, cand_labels)
    return topk_from_sparse_candidates(
        np.concatenate([rows, cand_rows[absent]]),
        np.concatenate([counts.indices, cand_labels[absent]]),
        np.concatenate([count_scores, np.asarray(zero_scores, np.float64)[cand_labels[absent]]]),
        n, k,
    )
