"""The compiled kernels of the symmetric leave-one-out path (``_loo.py``).

One pass per off-diagonal piece of the Gram matrix for both of its readings
(``loo_piece``), and the merge of candidates into the running k smallest keys per
row (``offer_running``). The group minima and the filtered k-th smallest are the
dense selection's (``_numba_kernels``), so every threshold follows the same rule.
Loaded with the other kernels by ``_compiled.kernels``; same caching and GIL rules.
"""

from typing import Any

import numpy as np
from numba import njit

from ._numba_kernels import _group_minima, _kth_filtered, group_buffers

__all__ = ["loo_piece", "offer_running"]


#: Rows of a symmetric leave-one-out piece whose column minima are taken together
#: (``loo_piece``): 8 rows of a 50k-wide piece are 1.5 MiB, still in a core's L2
#: when the column pass reads them again.
_PIECE_ROW_GROUP = 8


@njit(cache=True, nogil=True)
def loo_piece(
    V: Any, cap_row: Any, band_row: Any, thr_col: Any, k: int, m: int,
    out_r: Any, out_c: Any, out_k: Any, col_r: Any, col_c: Any, col_k: Any,
) -> Any:
    """Candidates of one off-diagonal piece of the symmetric leave-one-out path, both ways, in one pass.

    ``V`` (rows, cols), float32: the keys of the rows of a block I (query-major)
    against the later points (the columns). Per row ``i`` (the rule of
    ``_kernel.candidates`` with a cap): the threshold
    ``float32(min(kth_i, cap_row[i]) + band_row[i] + 1e-300)``, capped at the
    largest float32, where ``kth_i`` is the k-th smallest of the row's ``m``-column
    group minima and tail keys (+inf with fewer than k of them); the entries at or
    under it are the row's candidates. Per column ``j`` (a later point reading the
    piece transposed): the threshold ``thr_col[j]`` is given (its cap plus the band,
    every cap finite), and the entries at or under it are the column's candidates.
    Rows are taken ``_PIECE_ROW_GROUP`` at a time: each row's group minima and
    candidates, and the element-wise minimum of the group's rows, while they are in
    cache; then only the columns whose minimum passes are read again, group rows
    only.

    Writes (row, column, key) of the row candidates to ``out_r, out_c, out_k`` and
    (column, row, key) of the column candidates to ``col_r, col_c, col_k``, indices
    local to the piece. Returns ``(n_row, n_col)``, or ``(-1, -1)`` when a buffer
    is too small (the caller grows it and calls again; nothing else is written).
    """
    n_rows, n_cols = V.shape
    n_groups, body, pool, scratch, passed = group_buffers(n_cols, m, k)
    n_pool = pool.shape[0]
    colmin = np.empty(n_cols, dtype=np.float32)
    use_bound = n_pool >= k
    big = np.float32(np.finfo(np.float32).max)
    cap_out, cap_col = out_r.shape[0], col_r.shape[0]
    nr = 0
    ncol = 0
    for i0 in range(0, n_rows, _PIECE_ROW_GROUP):
        i1 = min(i0 + _PIECE_ROW_GROUP, n_rows)
        for i in range(i0, i1):
            row = V[i]
            kth = np.inf
            if use_bound:
                _group_minima(row, m, n_groups, pool)
                kth = _kth_filtered(pool, k, scratch)
            c = cap_row[i]
            bound = kth if kth < c else c
            t64 = bound + band_row[i] + 1e-300
            thr = np.float32(t64) if t64 < big else big
            n_pass = 0
            for t in range(n_groups):
                passed[n_pass] = t
                n_pass += (not use_bound) or pool[t] <= thr
            if nr + n_pass * m + (n_cols - body) > cap_out:
                return -1, -1
            for u in range(n_pass):
                t = passed[u]
                for g in range(m):
                    j = g * n_groups + t
                    v = row[j]
                    out_r[nr] = i
                    out_c[nr] = j
                    out_k[nr] = v
                    nr += v <= thr
            for j in range(body, n_cols):
                v = row[j]
                out_r[nr] = i
                out_c[nr] = j
                out_k[nr] = v
                nr += v <= thr
            # The group's column minima (vectorised element-wise minimum).
            if i == i0:
                colmin[:] = row
            else:
                for j in range(n_cols):
                    v = row[j]
                    p = colmin[j]
                    colmin[j] = v if v < p else p
        # The columns whose group minimum passes: their group rows, one by one.
        for j in range(n_cols):
            tj = thr_col[j]
            if colmin[j] <= tj:
                if ncol + (i1 - i0) > cap_col:
                    return -1, -1
                for i in range(i0, i1):
                    v = V[i, j]
                    col_r[ncol] = j
                    col_c[ncol] = i
                    col_k[ncol] = v
                    ncol += v <= tj
    return nr, ncol


@njit(cache=True, nogil=True)
def offer_running(best: Any, cap: Any, rows: Any, keys: Any) -> None:
    """Merge candidate keys into per-row running k smallest (``_loo._RunningTopK``).

    ``best`` (n, k) float32 holds each row's k smallest keys so far (+inf where
    fewer), ``cap`` (n,) float64 their maximum. A key under its row's cap replaces
    the row's largest, and the cap becomes the new maximum: the same multiset of k
    smallest values, hence the same caps, as merging by sorting. ``cap`` only
    decreases, one float64 store at a time, so a thread reading it without the
    lock sees a valid bound. The caller holds the lock.
    """
    k = best.shape[1]
    for e in range(rows.shape[0]):
        r = rows[e]
        v = keys[e]
        if v < cap[r]:
            b = best[r]
            j_max = 0
            for j in range(1, k):
                if b[j] > b[j_max]:
                    j_max = j
            b[j_max] = v
            top = b[0]
            for j in range(1, k):
                top = b[j] if b[j] > top else top
            cap[r] = top
