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
from ..utils._typing import IntArray, MatrixLike, NDArray, SparseMatrix


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


class SparseLookup:
    """Values of a canonical CSR matrix at arbitrary (row, column) positions (0 where absent)."""

    def __init__(self, M: SparseMatrix) -> None:
        self.n_cols = int(M.shape[1])
        rows = np.repeat(np.arange(M.shape[0], dtype=np.int64), np.diff(M.indptr))
        self.keys = rows * self.n_cols + M.indices
        self.values = np.asarray(M.data)

    def __call__(self, rows: IntArray, cols: IntArray) -> NDArray[np.int64]:
        keys = np.asarray(rows, np.int64) * self.n_cols + cols
        pos = np.searchsorted(self.keys, keys)
        pos = np.minimum(pos, max(self.keys.size - 1, 0))
        hit = (self.keys[pos] == keys) if self.keys.size else np.zeros(keys.shape, dtype=bool)
        return np.where(hit, self.values[pos] if self.keys.size else 0, 0).astype(np.int64)


def sparse_bin_moves(
    Y: SparseMatrix,
    train_ind: IntArray,
    next_ind: IntArray,
    T: SparseMatrix,
    Q: SparseMatrix,
    active: NDArray[np.bool_] | None = None,
    next_counts: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """:func:`dense_bin_moves` for sparse Y and counts: only the entries a move touches.

    A pair (j, i) changes j's count only at the labels where ``y_i`` and
    ``y_next(j)`` differ, at most ``2 c`` of them (c labels per row), so this
    costs O(n k c log) time and memory, never O(n q).

    Parameters
    ----------
    Y, T, Q : canonical csr_array of shape (n, q)
        As in :func:`dense_bin_moves`.
    train_ind, next_ind, active, next_counts : ndarrays
        As in :func:`dense_bin_moves`.

    Returns
    -------
    keys : ndarray of shape (n_entries,), int64
        ``i * q + l`` of the entries with a non-zero move, ascending.
    moves1, moves0 : ndarrays of shape (n_entries,), int64
    """
    n, q = Y.shape
    empty = np.zeros(0, dtype=np.int64)
    if train_ind.shape[1] == 0 or n == 0:
        return empty, empty, empty
    i, j, nxt = _pairs(train_ind, next_ind, slice(0, n), active)
    Yc = sp.csr_array(Y, dtype=np.int32)
    change = sp.csr_array(Yc[i] - _replacement(Yc, nxt, j, next_counts)).tocoo()
    change.sum_duplicates()
    pair, label, d = change.row, change.col.astype(np.int64), change.data.astype(np.int64)
    keep = d != 0
    pair, label, d = pair[keep], label[keep], d[keep]
    ri, rj = i[pair], j[pair]
    old = SparseLookup(T)(rj, label)
    bin_i = SparseLookup(Q)(ri, label)
    enters = (old - d == bin_i).astype(np.int64) - (old == bin_i)
    hit = enters != 0
    keys = ri[hit] * q + label[hit]
    enters = enters[hit]
    y_j = SparseLookup(Y)(rj[hit], label[hit])
    uniq, where = np.unique(keys, return_inverse=True)
    moves1 = np.bincount(where, weights=enters * y_j, minlength=uniq.size)
    moves_all = np.bincount(where, weights=enters, minlength=uniq.size)
    return uniq, np.rint(moves1).astype(np.int64), np.rint(moves_all - moves1).astype(np.int64)


def csr_from_keys(keys: NDArray[np.int64], shape: tuple[int, int]) -> SparseMatrix:
    """The canonical CSR pattern (values 1) of ascending unique keys ``row * q + col``."""
    n, q = shape
    rows = keys // q
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
    return sp.csr_array((np.ones(keys.size, dtype=np.int8), (keys % q).astype(np.int32), indptr), shape=shape)


def entry_keys(*matrices: MatrixLike) -> NDArray[np.int64]:
    """Ascending unique ``row * q + col`` keys of the stored entries of CSR matrices, or key arrays."""
    parts = []
    for M in matrices:
        if sp.issparse(M):
            rows = np.repeat(np.arange(M.shape[0], dtype=np.int64), np.diff(M.indptr))
            parts.append(rows * M.shape[1] + M.indices)
        else:
            parts.append(np.asarray(M, dtype=np.int64))
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
