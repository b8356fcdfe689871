"""Exact leave-one-out graphs under appended and removed rows (``partial_fit``).

An estimator learning from a stream keeps, for every training row, an exact prefix
of its leave-one-out neighbour list: squared distances and indices in the order of
``fit`` (distance, then the lower index), padded with index ``-1`` and distance
``+inf`` past the part known to be exact. The functions here move that state
forward without an n x n array and without searching the old rows again:

* :func:`loo_state` starts it: the exact kernel's leave-one-out search, squared
  distances kept (the metric's distances do not give the squares back bit for bit,
  and the tie rule orders by the squares);
* :func:`append_rows` adds a batch. Its rows are searched against every row (the
  kernel is refitted on old + new rows, an O(n d) step); the same ranking keys,
  read the other way, hold each old row's keys to the new rows, and an old row
  takes a new one only where the key passes the row's current last exact distance
  plus the rounding band, checked by the exact float64 recomputation. So one GEMM
  of the batch against all rows (O(n b d)) serves both directions;
* :func:`drop_first_rows` removes the oldest rows (a sliding window): entries
  naming them leave the lists, the indices shift down, and a row left with fewer
  exact entries than it needs is searched again, exactly, against the window.

Exactness. A distance here is ``exact_sqdist`` of the pair, the function every
exact backend re-ranks with; it is symmetric bit for bit (``fl(a - b) =
-fl(b - a)``, squared, summed in the same order). The candidate rule is step 2-3's
of ``_exact._kernel`` with the row's known k-th squared distance in place of the
group bound and twice its band, so every pair that can enter is recomputed; new rows
have higher indices than old ones, so a new row at a distance equal to a row's last
exact entry cannot come before an old row not in the list, and is not counted
exact unless the list already held every other row.
"""

from typing import Any

import numpy as np

from ..utils._budget import WORK_BYTES
from ..utils._param_validation import get_chunk_n_rows
from ..utils._typing import NDArray
from ._contract import drop_own_index
from ._exact._compiled import keys_out_of_range
from ._exact._kernel import GEMM_RTOL, candidates, exact_sqdist, finish, round_toward, search_chunk, topk_sorted

Index = NDArray[np.intp]
# Slots past a row's exact prefix.
PAD = -1
# Keys of one chunk of batch rows against every row: at most this many bytes.
_CHUNK_BYTES = 16 * WORK_BYTES


def loo_state(kernel: Any, width: int) -> tuple[NDArray[np.float64], Index]:
    """The exact leave-one-out lists of every fitted point, squared distances.

    Parameters
    ----------
    kernel : BruteNeighbors
        Fitted on all rows.
    width : int
        Neighbours per row, at most ``n - 1``.

    Returns
    -------
    sqdist : ndarray of shape (n, width), float64
    indices : ndarray of shape (n, width), intp
    """
    sq, ind = kernel._squared_kneighbors(None, width)
    return np.ascontiguousarray(sq, dtype=np.float64), np.ascontiguousarray(ind, dtype=np.intp)


def metric_distances(kernel: Any, sqdist: NDArray[np.float64]) -> NDArray[np.float64]:
    """The distances the kernel's ``kneighbors`` reports for these squares (a copy)."""
    out: NDArray[np.float64] = kernel._index.to_metric(sqdist.copy())
    return out


def append_rows(
    kernel: Any, n_old: int, sqdist: NDArray[np.float64], indices: Index, width: int
) -> tuple[NDArray[np.float64], Index]:
    """The exact lists of all rows after rows ``n_old, ...`` were appended.

    Parameters
    ----------
    kernel : BruteNeighbors
        Fitted on the old rows followed by the new ones.
    n_old : int
        Rows before the batch (at least 2).
    sqdist, indices : ndarrays of shape (n_old, width)
        The old rows' state (exact prefixes, padded with ``PAD`` / +inf).
    width : int
        Slots per row.

    Returns
    -------
    sqdist, indices : ndarrays of shape (n_old + n_new, width)
        The state of every row. The old rows' arrays are new arrays; the inputs are
        not modified.
    """
    layout = kernel._index.layout
    X = layout.X
    n_all = X.shape[0]
    n_new = n_all - n_old
    sparse = layout.aug is None
    rtol = GEMM_RTOL.get(np.dtype(np.float32 if not sparse else layout.key_X.dtype), 1e-11)
    n_valid = (indices != PAD).sum(axis=1)
    # A list holding every other old row takes every new row; the others take a new
    # row only strictly before their last exact entry.
    complete = n_valid == n_old - 1
    last = sqdist[np.arange(n_old), np.maximum(n_valid - 1, 0)]
    t = np.where(complete, np.inf, last)
    key_dtype = np.dtype(np.float32) if not sparse else layout.key_X.dtype
    # Per old column: t / 2 in the keys' dtype, rounded up (the safe side).
    thr = round_toward(0.5 * t, key_dtype, down=False)
    own_width = min(width, n_all - 1)
    new_sq = np.full((n_new, width), np.inf)
    new_ind = np.full((n_new, width), PAD, dtype=np.intp)
    pair_old, pair_new, pair_sq = [], [], []
    # Chunks of a few hundred batch rows: the product's K = d + 1 is small, and
    # fewer rows per chunk would re-read the whole key matrix more often than
    # they compute on it. One reused key buffer (fresh large arrays cost page faults).
    # Keys that may be out of float range make every pair a candidate (as in the
    # kernel): then a chunk's pair lists, not its keys, bound the memory.
    if sparse:
        all_scale = layout.sqnorm[n_old:] + layout.sqnorm_max
        n_terms = layout.key_X.shape[1]
    else:
        all_scale = layout.key_sqnorm[n_old:] + layout.key_sqnorm_max
        n_terms = layout.aug.shape[1]
    per_pair = 32 if keys_out_of_range(all_scale, key_dtype, n_terms, rtol) else key_dtype.itemsize
    step = get_chunk_n_rows(row_bytes=per_pair * max(n_all, 1), max_n_rows=max(n_new, 1),
                            working_memory=_CHUNK_BYTES / 2**20)
    buf = None if sparse else np.empty((min(step, n_new), n_all), dtype=layout.aug.dtype)
    for start in range(0, n_new, step):
        stop = min(start + step, n_new)
        rows = np.arange(n_old + start, n_old + stop)
        Qc = X[n_old + start : n_old + stop]
        if sparse:
            V, fit_axis = layout.transposed_keys(Qc), 0
            qkey = layout.sqnorm[rows]
            scale = qkey + layout.sqnorm_max
        else:
            (V, scale), fit_axis = layout.ranking_keys(Qc, None, buf, loo_offset=n_old + start), 1
            qkey = layout.key_sqnorm[rows]
        everything = keys_out_of_range(scale, V.dtype, n_terms, rtol)
        # New rows: their own lists against every row, as fit's search (this marks
        # each row's own key +inf, a column the old rows do not read).
        if everything:
            r, c = np.divmod(np.arange((stop - start) * n_all), n_all)
            keep = c != r + n_old + start
            r, c = r[keep], c[keep]
        else:
            r, c = candidates(V, scale, n_old + start, own_width, fit_axis)
        sq, ind = finish(layout, Qc, r, c, own_width, stop - start)
        new_sq[start:stop, :own_width] = sq
        new_ind[start:stop, :own_width] = ind
        # Old rows: the key v of (new j, old i) gives |q_j|^2 + 2 v = d^2 up to the
        # band; a pair passes where v + |q_j|^2 / 2 - 2 band_j <= t_i / 2 (twice
        # step 2's margin: the float additions here round too). Shifted in place;
        # the column minima pick the few old rows any new row may enter.
        if everything:
            nj, oi = np.divmod(np.arange((stop - start) * n_old), n_old)
        else:
            Vq = (V.T if fit_axis == 0 else V)[:, :n_old]
            Vq += round_toward(0.5 * qkey - 4.0 * rtol * scale, V.dtype, down=True)[:, None]
            cols = np.flatnonzero(Vq.min(axis=0) <= thr)
            nj, at = np.nonzero(Vq[:, cols] <= thr[cols])
            oi = cols[at]
        if oi.size:
            exact = exact_sqdist(X, X, oi, nj + n_old + start)
            keep = exact < t[oi]
            pair_old.append(oi[keep])
            pair_new.append(nj[keep] + n_old + start)
            pair_sq.append(exact[keep])
    old_sq, old_ind = sqdist.copy(), indices.copy()
    if pair_old:
        _insert(old_sq, old_ind, np.concatenate(pair_old), np.concatenate(pair_new), np.concatenate(pair_sq))
    return np.vstack([old_sq, new_sq]), np.vstack([old_ind, new_ind])


def drop_first_rows(
    kernel: Any, n_drop: int, sqdist: NDArray[np.float64], indices: Index, width: int, needed: int
) -> tuple[NDArray[np.float64], Index]:
    """The exact lists after the first ``n_drop`` rows left.

    Parameters
    ----------
    kernel : BruteNeighbors
        Fitted on the remaining rows.
    n_drop : int
    sqdist, indices : ndarrays of shape (n_drop + n_kept, width)
        The state before the removal.
    width : int
    needed : int
        Exact entries every row must keep (the estimator's search width); a row
        left with fewer is searched again.

    Returns
    -------
    sqdist, indices : ndarrays of shape (n_kept, width)
    """
    layout = kernel._index.layout
    sq = sqdist[n_drop:].copy()
    ind = indices[n_drop:] - n_drop
    gone = ind < 0
    ind[gone] = PAD
    sq[gone] = np.inf
    # Entries that stay keep their order: move them to the front, stably.
    order = np.argsort(gone, axis=1, kind="stable")
    sq = np.take_along_axis(sq, order, axis=1)
    ind = np.take_along_axis(ind, order, axis=1)
    n = ind.shape[0]
    n_valid = (ind != PAD).sum(axis=1)
    redo = np.flatnonzero((n_valid < min(needed, n - 1)) & gone.any(axis=1))
    if redo.size:
        # The prepared rows themselves (preparing them again would normalise
        # cosine rows twice), searched one wider, then without their own index.
        w = min(width, n - 1)
        step = get_chunk_n_rows(row_bytes=8 * max(n, 1), max_n_rows=redo.size,
                                working_memory=_CHUNK_BYTES / 2**20)
        sq[redo] = np.inf
        ind[redo] = PAD
        for start in range(0, redo.size, step):
            part = redo[start : start + step]
            s, i = search_chunk(layout, layout.X[part], layout.sqnorm[part], None, w + 1)
            s, i = drop_own_index(i, part, s)
            sq[part, :w], ind[part, :w] = s, i
    return sq, ind


def _insert(sq: NDArray[np.float64], ind: Index, rows: Index, cols: Index, values: NDArray[np.float64]) -> None:
    """Merge entries (row, col, squared distance) into the padded lists, in place."""
    if rows.size == 0:
        return
    width = ind.shape[1]
    touched, local = np.unique(rows, return_inverse=True)
    m = touched.size
    slot_rows = np.repeat(np.arange(m), width)
    cur_ind = ind[touched].ravel()
    cur_sq = sq[touched].ravel()
    # Padding sorts after every real entry: the largest index, +inf.
    pad = cur_ind == PAD
    cur_ind = np.where(pad, np.iinfo(np.intp).max, cur_ind)
    all_rows = np.concatenate((slot_rows, local))
    all_cols = np.concatenate((cur_ind, cols.astype(np.intp)))
    all_sq = np.concatenate((cur_sq, values))
    top_sq, top_ind = topk_sorted(all_rows, all_cols, all_sq, width, m)
    top_ind = np.where(top_ind == np.iinfo(np.intp).max, PAD, top_ind)
    sq[touched] = top_sq
    ind[touched] = top_ind


def approximate_lists(
    index: Any, kernel: Any, X: Any, start: int, width: int
) -> tuple[NDArray[np.float64], Index]:
    """Leave-one-out lists from an approximate index, with exact squared distances.

    The approximate contract of ``partial_fit`` with a backend that grows (see
    docs/streams.md): which rows a list holds is the index's answer; their squared
    distances are recomputed by :func:`exact_sqdist` (the function the old rows'
    updates compare with) and the list is ordered by (squared distance, index).

    Parameters
    ----------
    index : ApproximateNeighbors
        Fitted on, or grown to, the same rows as ``kernel``.
    kernel : BruteNeighbors
        The exact kernel on every row.
    X : {array-like, sparse matrix} or None
        Rows ``start, start + 1, ...`` as given to ``fit`` (queried against the
        index, their own index removed); None: every row (the index's
        leave-one-out search, ``start`` must be 0).
    start : int
    width : int
        Slots per row; lists narrower than that (few rows) are padded.

    Returns
    -------
    sqdist : ndarray of shape (n_rows, width), float64
    indices : ndarray of shape (n_rows, width), intp
    """
    layout = kernel._index.layout
    n_all = layout.X.shape[0]
    w = min(width, n_all - 1)
    if X is None:
        ind = index.kneighbors(None, n_neighbors=w, return_distance=False)
    else:
        ind = index.kneighbors(X, n_neighbors=w + 1, return_distance=False)
        ind = drop_own_index(ind, start + np.arange(ind.shape[0]))
    ind = np.asarray(ind, dtype=np.intp)
    own = np.repeat(start + np.arange(ind.shape[0]), w)
    sq = exact_sqdist(layout.X, layout.X, own, ind.ravel()).reshape(ind.shape)
    order = np.lexsort((ind, sq))
    sq, ind = np.take_along_axis(sq, order, axis=1), np.take_along_axis(ind, order, axis=1)
    out_sq = np.full((ind.shape[0], width), np.inf)
    out_ind = np.full((ind.shape[0], width), PAD, dtype=np.intp)
    out_sq[:, :w], out_ind[:, :w] = sq, ind
    return out_sq, out_ind
