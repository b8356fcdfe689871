"""BR-kNN's vote counts as a sparse (n_queries, q) matrix: ranking and selection.

Every BR-kNN score is a strictly increasing function of the vote count within a
query row (``(count + 1/n) / (k + q/n)``, MULAN's float version of it, or
``count / k``), and every label without a vote scores the same. So ranking,
top-k and the BR-kNN-a/-b selections work on the counts alone, in "count
space": the stored entries of the row's CSR counts, plus the implicit block of
zero-vote labels, of which only the lowest indices are ever needed. Nothing here
allocates an (n, q) array; cost is O(nnz(C) log nnz(C)) plus the output.

Ties are broken by the lower label index (the order of ``np.lexsort`` on
(label, -count, row)).
"""

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..utils._typing import ArrayLike, MatrixLike, NDArray, SparseMatrix

#: int64 index arrays.
_Int64 = NDArray[np.int64]


def _count_dtype(data: NDArray[Any]) -> type[np.int64] | type[np.float64]:
    # Weighted votes (_brknn_weights) are float64 "counts"; integer counts stay int64.
    return np.float64 if data.dtype.kind == "f" else np.int64


def as_counts_csr(counts: MatrixLike) -> SparseMatrix:
    """Dense or sparse counts as a canonical ``csr_array`` (no explicit zeros):
    int64 for integer counts, float64 for weighted ones."""
    C = sp.csr_array(counts, dtype=_count_dtype(np.asarray(counts.data if sp.issparse(counts) else counts)))
    C.eliminate_zeros()
    C.sort_indices()
    return C


def entry_rows(C: SparseMatrix) -> _Int64:
    """The row of every stored entry of a CSR matrix, in storage order."""
    return np.repeat(np.arange(C.shape[0], dtype=np.int64), np.diff(C.indptr))


def row_sums(C: SparseMatrix) -> NDArray[np.int64] | NDArray[np.float64]:
    """Sum of each row of a CSR matrix (``L``, the neighbours' label mass): int64 for
    integer counts, float64 for weighted ones."""
    total = np.bincount(entry_rows(C), weights=C.data, minlength=C.shape[0])
    return total if C.data.dtype.kind == "f" else total.round().astype(np.int64)


def kth_absent(C: SparseMatrix, rows: ArrayLike, m: ArrayLike) -> _Int64:
    """The ``m``-th (0-based, ascending) label absent from row ``rows`` of C.

    Row r stores the sorted labels ``i_0 < i_1 < ...``; before ``i_j`` lie
    ``i_j - j`` absent labels, a non-decreasing sequence. The m-th absent label is
    ``m`` plus the number of stored labels whose absent-before count is <= m:
    one ``searchsorted`` over all rows at once (keys offset by row).

    Parameters
    ----------
    C : csr_array of shape (n, q), canonical
    rows, m : ndarray of shape (n_requests,), int
        ``0 <= m < q - nnz(row)``.

    Returns
    -------
    ndarray of shape (n_requests,), int64
    """
    q = C.shape[1]
    rows = np.asarray(rows, dtype=np.int64)
    m = np.asarray(m, dtype=np.int64)
    stored_rows = entry_rows(C)
    before = C.indices.astype(np.int64) - (np.arange(C.indices.size) - C.indptr[stored_rows])
    keys = stored_rows * (q + 1) + before  # sorted: rows ascending, `before` non-decreasing
    pos = np.searchsorted(keys, rows * (q + 1) + m, side="right")
    found: _Int64 = m + (pos - C.indptr[rows])
    return found


def lowest_absent(C: SparseMatrix, need: ArrayLike) -> tuple[_Int64, _Int64]:
    """For each row r, its ``need[r]`` lowest absent labels (rows, labels), row-major."""
    need = np.asarray(need, dtype=np.int64)
    rows = np.repeat(np.arange(C.shape[0], dtype=np.int64), need)
    starts = np.cumsum(need) - need
    m = np.arange(rows.size, dtype=np.int64) - starts[rows]
    return rows, kth_absent(C, rows, m)


def top_by_count(C: SparseMatrix, s: ArrayLike) -> tuple[_Int64, _Int64, NDArray[Any]]:
    """The ``s[r]`` labels of highest count of each row r, ties by the lower label.

    Labels without a vote rank after every voted label, lowest index first, and
    fill the rows that have fewer than ``s[r]`` voted labels.

    Parameters
    ----------
    C : csr_array of shape (n, q), canonical, positive data
    s : ndarray of shape (n,), int, ``0 <= s <= q``

    Returns
    -------
    rows, labels, counts : ndarrays of shape (sum(s),)
        Sorted by row, then decreasing count, then increasing label; rows and
        labels int64, counts int64 (float64 for float data), 0 for the fill.
    """
    s = np.asarray(s, dtype=np.int64)
    rows = entry_rows(C)
    order = np.lexsort((C.indices, -C.data, rows))
    rank = np.arange(order.size) - C.indptr[rows[order]]
    keep = order[rank < s[rows[order]]]
    fill_rows, fill_labels = lowest_absent(C, np.maximum(s - np.diff(C.indptr), 0))
    # Voted entries come out row-major by decreasing count; the zero-vote fill of a
    # row goes after them: one stable merge by row keeps both orders.
    out_rows = np.concatenate([rows[keep], fill_rows])
    merge = np.argsort(out_rows, kind="stable")
    labels = np.concatenate([C.indices[keep].astype(np.int64), fill_labels])[merge]
    dt = _count_dtype(C.data)
    counts = np.concatenate([C.data[keep].astype(dt), np.zeros(fill_rows.size, dt)])[merge]
    return out_rows[merge], labels, counts


def indicator(rows: NDArray[np.integer[Any]], labels: ArrayLike, shape: tuple[int, int]) -> SparseMatrix:
    """A canonical uint8 ``csr_array`` with ones at (rows, labels)."""
    out = sp.csr_array((np.ones(len(rows), dtype=np.uint8), (rows, labels)), shape=shape)
    out.sum_duplicates()
    return out


def row_max_ties(C: SparseMatrix, rows: ArrayLike) -> tuple[_Int64, _Int64, _Int64]:
    """For the given non-empty rows: the labels holding the row's maximum count.

    Returns
    -------
    n_tied : ndarray of shape (len(rows),), int64
    tied_rows, tied_labels : ndarrays, the tied labels, row by row, ascending
    """
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    sub = C[rows]
    best = np.maximum.reduceat(sub.data, sub.indptr[:-1])  # every row of sub is non-empty
    sub_rows = entry_rows(sub)
    hit = sub.data == best[sub_rows]
    n_tied = np.bincount(sub_rows[hit], minlength=rows.size)
    return n_tied, rows[sub_rows[hit]], sub.indices[hit].astype(np.int64)
