"""Leave-one-out updates of the count histograms of ML-kNN and its relatives.

The count methods (ML-kNN, BML-kNN, NC; Zhang and Zhou 2007) fit two histograms
per label, ``c1[b, l]`` (``c0[b, l]``): how many training rows with (without)
label l have exactly b neighbours with l. A fit on every row but i differs from
the fit on all rows in two ways only (docs/loo.md):

* row i's own entry leaves the histogram of its label value, at its own count;
* every row j that had i among its training neighbours takes its next
  neighbour instead, so its count of label l changes by
  ``y_next(l) - y_i(l)`` and it moves from one bin to another.

Row i's posterior reads each histogram at one bin, its query count ``Q[i, l]``,
so only the moves into or out of that bin matter. The moves are built as arrays
over the n k (row j, removed neighbour i) pairs, never a loop over rows or
labels: dense (n, q) for a dense Y, and for a sparse Y only at the labels where
a pair changes a count (``y_i`` and ``y_next`` differ), so nothing (n, q) is
formed.
"""

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils import gen_batches

from ..utils._param_validation import get_chunk_n_rows
from ..utils._threads import run_ranges, threads_for
from ..utils._typing import IntArray, MatrixLike, NDArray, SparseMatrix

#: Below this many (row, removed neighbour) pairs per thread, one thread does the pass.
_MIN_PAIRS_PER_THREAD = 20_000


def _pairs(
    train_ind: IntArray, next_ind: IntArray, rows: slice, active: NDArray[np.bool_] | None
) -> tuple[IntArray, IntArray, IntArray]:
    """(removed row i, affected row j, j's replacement neighbour) for the rows j in ``rows``;
    with ``active``, only the pairs it marks."""
    block = train_ind[rows]
    k_train = block.shape[1]
    j = np.repeat(np.arange(block.shape[0], dtype=np.int64) + (rows.start or 0), k_train)
    i, nxt = block.ravel().astype(np.int64), np.repeat(next_ind[rows].astype(np.int64), k_train)
    if active is None:
        return i, j, nxt
    keep = active[rows].ravel()
    return i[keep], j[keep], nxt[keep]


def dense_bin_moves(
    Y: NDArray[Any],
    train_ind: IntArray,
    next_ind: IntArray,
    T: NDArray[Any],
    Q: NDArray[Any],
    active: NDArray[np.bool_] | None = None,
    next_counts: NDArray[np.bool_] | None = None,
    window: int | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """How row i's leave-one-out fit changes ``c1[Q[i, l], l]`` and ``c0[Q[i, l], l]`` through the other rows.

    Parameters
    ----------
    Y : ndarray of shape (n, q), 0/1
    train_ind : ndarray of shape (n, k_train)
        Each row's training neighbours (the ones its count T sums over), sorted.
    next_ind : ndarray of shape (n,)
        Each row's next neighbour, the one that replaces a removed training neighbour.
    T : ndarray of shape (n, q), int
        The counts the histograms were built from.
    Q : ndarray of shape (n, q), int
        Each row's query count: the bin its posterior reads.
    active : ndarray of shape (n, k_train), bool, optional
        The training neighbours that count (BML-kNN: those within the radius);
        default all. An inactive neighbour's removal changes nothing.
    next_counts : ndarray of shape (n,), bool, optional
        Whether the replacement neighbour counts (BML-kNN: within the radius;
        NC, whose neighbourhoods are radius balls, has none); default all.
    window : int, optional
        DML-kNN's delta: a row is in row i's bin of label l only if its count of
        l equals ``Q[i, l]`` and its whole count vector lies within +-window of
        ``Q[i]`` (Younes et al. 2011, constraints (15)). None: the count alone.

    Returns
    -------
    moves1, moves0 : ndarrays of shape (n, q), int64
        ``moves_b[i, l]``: rows with ``y(l) = b`` that enter the bin ``Q[i, l]``
        minus those that leave it when row i is removed (row i itself excluded).
    """
    n, q = Y.shape
    moves1 = np.zeros((n, q), dtype=np.int64)
    moves_all = np.zeros((n, q), dtype=np.int64)
    k_train = train_ind.shape[1]
    if k_train == 0 or n == 0:
        return moves1, moves_all
    Yi = Y.astype(np.int8, copy=False)
    # About six (pairs, q) temporaries of 1-8 bytes.
    step = get_chunk_n_rows(row_bytes=max(1, 24 * k_train * q), max_n_rows=n)
    for rows in gen_batches(n, step):
        i, j, nxt = _pairs(train_ind, next_ind, rows, active)
        change = Yi[i] - _replacement(Yi, nxt, j, next_counts)  # j's count of l drops by this when i leaves
        bin_i = Q[i]
        old = T[j]
        new = old - change
        enters = (new == bin_i).astype(np.int8) - (old == bin_i)
        if window is not None:
            near_new = np.all(np.abs(new - bin_i) <= window, axis=1)
            near_old = np.all(np.abs(old - bin_i) <= window, axis=1)
            enters = ((new == bin_i) & near_new[:, None]).astype(np.int8) - ((old == bin_i) & near_old[:, None])
        # Sum each pair's moves into its removed row i: one sparse (n, pairs) product.
        owner = sp.csr_array((np.ones(i.size, dtype=np.int32), (i, np.arange(i.size))), shape=(n, i.size))
        moves1 += owner @ (enters * Yi[j]).astype(np.int32)
        moves_all += owner @ enters.astype(np.int32)
    return moves1, moves_all - moves1


def _replacement(Y: MatrixLike, nxt: IntArray, j: IntArray, next_counts: NDArray[np.bool_] | None) -> MatrixLike:
    """The replacement neighbours' label rows, zero where the replacement does not count."""
    rows = Y[nxt]
    if next_counts is None:
        return rows
    weight = next_counts[j].astype(np.int8)
    if sp.issparse(rows):
        return sp.csr_array(sp.diags_array(weight) @ rows)
    return rows * weight[:, None]


def canonical_csr(M: MatrixLike, dtype: Any = np.int64) -> SparseMatrix:
    """A canonical CSR copy (sorted indices, no explicit zeros) of a dense or sparse matrix."""
    out = sp.csr_array(M, dtype=dtype)
    out.eliminate_zeros()
    out.sort_indices()
    return out


def values_at(pattern: SparseMatrix, A: SparseMatrix) -> NDArray[np.int64]:
    """Integer values of canonical CSR ``A`` at the stored entries of canonical CSR ``pattern``,
    in its order (0 where A stores nothing)."""
    from ._loo_kernels import values_at as kernel

    out = np.empty(pattern.nnz, dtype=np.int64)
    kernel(pattern.indptr, pattern.indices, A.indptr, A.indices, np.asarray(A.data, dtype=np.int64), out)
    return out


def union_pattern(*matrices: SparseMatrix) -> SparseMatrix:
    """The canonical CSR pattern (values 1, int64) of every entry stored in any of ``matrices``."""
    total = None
    for M in matrices:
        ones = sp.csr_array((np.ones(M.nnz, dtype=np.int64), M.indices, M.indptr), shape=M.shape)
        total = ones if total is None else total + ones
    total = sp.csr_array(total)
    total.sort_indices()
    total.data[:] = 1
    return total


def entry_rows(M: SparseMatrix) -> NDArray[np.int64]:
    """The row of every stored entry of a CSR matrix, in CSR order."""
    return np.repeat(np.arange(M.shape[0], dtype=np.int64), np.diff(M.indptr))


def sparse_bin_moves(
    Y: MatrixLike,
    train_ind: IntArray,
    next_ind: IntArray,
    T: MatrixLike,
    Q: MatrixLike,
    active: NDArray[np.bool_] | None = None,
    next_counts: NDArray[np.bool_] | None = None,
    n_jobs: int | None = None,
) -> tuple[SparseMatrix, SparseMatrix]:
    """:func:`dense_bin_moves` over sparse rows: only the entries a move touches.

    A pair (j, i) changes j's count only at the labels where ``y_i`` and
    ``y_next(j)`` differ, at most ``2 c`` of them (c labels per row), each
    looked up by binary search in j's and i's count rows (compiled:
    ``_loo_kernels.bin_moves``): O(n k c log(k c)) time, O(n k c) memory,
    never O(n q).

    Parameters
    ----------
    Y, T, Q : csr_array or ndarray of shape (n, q)
        As in :func:`dense_bin_moves` (made canonical CSR here).
    train_ind, next_ind, active, next_counts : ndarrays
        As in :func:`dense_bin_moves`.
    n_jobs : int, optional
        Threads of the compiled pass (the estimator's ``n_jobs``; None: as the
        neighbour search, the BLAS pool's size).

    Returns
    -------
    moves1, moves0 : csr_array of shape (n, q), int64, canonical
        As in :func:`dense_bin_moves`, stored only where some pair moves a row
        into or out of the bin (a stored entry may sum to 0).
    """
    from ._loo_kernels import bin_moves

    n, q = Y.shape
    i, j, nxt = _pairs(train_ind, next_ind, slice(0, n), active)
    Yc, Tc, Qc = canonical_csr(Y, np.int8), canonical_csr(T), canonical_csr(Q)
    counts = np.ones(i.size, dtype=np.bool_) if next_counts is None else np.asarray(next_counts)[j]
    row_len = np.diff(Yc.indptr)
    room = row_len[i] + row_len[nxt] * counts  # at most one move per label of y_i and y_next
    offsets = np.concatenate([[0], np.cumsum(room)]).astype(np.int64)
    bound = int(offsets[-1])
    out_row, out_col = np.zeros(bound, dtype=np.int64), np.zeros(bound, dtype=np.int64)
    out1, out0 = np.zeros(bound, dtype=np.int64), np.zeros(bound, dtype=np.int64)
    valid = np.zeros(bound, dtype=np.bool_)

    def pass_over(lo: int, hi: int) -> None:
        bin_moves(Yc.indptr, Yc.indices, Tc.indptr, Tc.indices, Tc.data, Qc.indptr, Qc.indices, Qc.data,
                  i, j, nxt, counts, lo, hi, offsets, out_row, out_col, out1, out0, valid)

    threads = max(1, min(threads_for(n_jobs), i.size // _MIN_PAIRS_PER_THREAD))
    run_ranges(pass_over, np.linspace(0, i.size, threads + 1).astype(np.int64).tolist())
    out_row, out_col, out1, out0 = out_row[valid], out_col[valid], out1[valid], out0[valid]
    m = out_row.size

    def summed(values: NDArray[np.int64]) -> SparseMatrix:
        out = sp.csr_array((values[:m], (out_row[:m], out_col[:m])), shape=(n, q), dtype=np.int64)
        out.sum_duplicates()
        return out

    return summed(out1), summed(out0)


def medians_without_each_row(values: NDArray[np.float64], replacement: NDArray[np.float64],
                             train_ind: IntArray) -> NDArray[np.float64]:
    """``np.median`` of ``values`` in the fit without row i, for every i at once.

    ``values[j]``: row j's distance to its k-th neighbour (``radius="auto"``
    of BML-kNN and NC is their median); without row i, the rows that had i
    among their k neighbours (``train_ind``) read ``replacement[j]``, the
    (k + 1)-th distance, instead, and row i's own value leaves. O(n k log n)
    in all (compiled: ``_loo_kernels.medians_without``).

    Parameters
    ----------
    values, replacement : ndarray of shape (n,)
    train_ind : ndarray of shape (n, k)

    Returns
    -------
    ndarray of shape (n,)
    """
    from ._loo_kernels import medians_without

    n = values.shape[0]
    removed = train_ind.ravel().astype(np.int64)
    owner = np.repeat(np.arange(n, dtype=np.int64), train_ind.shape[1])
    order = np.argsort(removed, kind="stable")
    rev_ptr = np.concatenate([[0], np.cumsum(np.bincount(removed, minlength=n))]).astype(np.int64)
    changed = owner[order]
    out = np.empty(n)
    medians_without(np.sort(values), np.asarray(values, np.float64), rev_ptr,
                    np.asarray(values, np.float64)[changed], np.asarray(replacement, np.float64)[changed], out)
    return out
