"""Compiled (numba) passes of the leave-one-out count updates over sparse rows.

Loaded lazily by :mod:`mlknn.algorithms._loo_counts`, never at ``import mlknn``.
Every matrix is a canonical CSR (sorted column indices per row), given as its
``indptr``, ``indices`` and ``data`` arrays; a value is found by binary search
within its row, so a pass costs O(entries x log(row length)) and allocates
nothing beyond its outputs.
"""

from typing import Any

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _value(indptr: Any, indices: Any, data: Any, row: int, col: int) -> int:
    """``M[row, col]`` of a canonical CSR matrix (0 where nothing is stored)."""
    lo, hi = indptr[row], indptr[row + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        c = indices[mid]
        if c < col:
            lo = mid + 1
        elif c > col:
            hi = mid
        else:
            return int(data[mid])
    return 0


@njit(cache=True, nogil=True)
def bin_moves(
    y_indptr: Any, y_indices: Any,
    t_indptr: Any, t_indices: Any, t_data: Any,
    q_indptr: Any, q_indices: Any, q_data: Any,
    removed: Any, owner: Any, replacement: Any, replacement_counts: Any,
    lo: int, hi: int, offsets: Any,
    out_row: Any, out_col: Any, out_move1: Any, out_move0: Any, out_valid: Any,
) -> None:
    """The bin moves of every (row j, removed neighbour i) pair; see ``_loo_counts.dense_bin_moves``.

    Pair p: row ``owner[p]`` loses its neighbour ``removed[p]`` and gains
    ``replacement[p]`` (counted only where ``replacement_counts[p]``), so its
    count of label l drops by ``d = y_i(l) - y_next(l)``; the labels with
    ``d != 0`` are the symmetric difference of the two sorted label rows.
    A row enters (+1) or leaves (-1) row i's bin ``Q[i, l]``. For the pairs
    ``lo:hi``, writes one output entry (i, l, move among rows with l, move among
    rows without) per move, pair p's from ``offsets[p]`` on (room for one per
    label of ``y_i`` and ``y_next``), and marks it in ``out_valid``: ranges of
    pairs run on separate threads.
    """
    for p in range(lo, hi):
        n_out = offsets[p]
        i, j, nxt = removed[p], owner[p], replacement[p]
        a, a_end = y_indptr[i], y_indptr[i + 1]
        if replacement_counts[p]:
            b, b_end = y_indptr[nxt], y_indptr[nxt + 1]
        else:
            b, b_end = 0, 0
        while a < a_end or b < b_end:
            if b >= b_end or (a < a_end and y_indices[a] < y_indices[b]):
                label, d = y_indices[a], 1
                a += 1
            elif a >= a_end or y_indices[b] < y_indices[a]:
                label, d = y_indices[b], -1
                b += 1
            else:  # both have the label: j's count does not change
                a += 1
                b += 1
                continue
            old = _value(t_indptr, t_indices, t_data, j, label)
            at = _value(q_indptr, q_indices, q_data, i, label)
            move = int(old - d == at) - int(old == at)
            if move == 0:
                continue
            lo, hi, has = y_indptr[j], y_indptr[j + 1], 0
            while lo < hi:
                mid = (lo + hi) // 2
                if y_indices[mid] < label:
                    lo = mid + 1
                elif y_indices[mid] > label:
                    hi = mid
                else:
                    has = 1
                    break
            out_row[n_out] = i
            out_col[n_out] = label
            out_move1[n_out] = move * has
            out_move0[n_out] = move * (1 - has)
            out_valid[n_out] = True
            n_out += 1


@njit(cache=True, nogil=True)
def values_at(p_indptr: Any, p_indices: Any, a_indptr: Any, a_indices: Any, a_data: Any, out: Any) -> None:
    """``out[e] = A[r, c]`` for every stored entry e = (r, c) of the pattern P, in CSR order
    (both canonical: one merge of the two sorted rows per row)."""
    for r in range(p_indptr.shape[0] - 1):
        b, b_end = a_indptr[r], a_indptr[r + 1]
        for e in range(p_indptr[r], p_indptr[r + 1]):
            c = p_indices[e]
            while b < b_end and a_indices[b] < c:
                b += 1
            out[e] = a_data[b] if (b < b_end and a_indices[b] == c) else 0


@njit(cache=True, nogil=True)
def _kth(S: Any, V: Any, A: Any, t: int) -> float:
    """The t-th smallest (0-based) of the multiset ``S - V + A`` (S, V, A sorted; V within S).

    The answer is an element of A, or of S at a position within ``[t - len(A),
    t + len(V)]``; it is the smallest such candidate with at least t + 1 elements
    of the multiset at or below it.
    """
    best = np.inf
    lo, hi = max(0, t - A.shape[0]), min(S.shape[0], t + V.shape[0] + 1)
    for c in range(hi - lo + A.shape[0]):
        x = S[lo + c] if c < hi - lo else A[c - (hi - lo)]
        if x >= best:
            continue
        rank = (np.searchsorted(S, x, side="right") - np.searchsorted(V, x, side="right")
                + np.searchsorted(A, x, side="right"))
        if rank >= t + 1:
            best = x
    return best


@njit(cache=True, nogil=True)
def medians_without(S: Any, own: Any, rev_ptr: Any, rev_old: Any, rev_new: Any, out: Any) -> None:
    """For every row i, the median (as ``np.median``) of the n - 1 values of a fit without i.

    ``S``: the n values of the full fit, sorted; ``own[i]``: row i's value,
    which leaves; ``rev_old[rev_ptr[i]:rev_ptr[i + 1]]``: the values of the rows
    that change without i, replaced by ``rev_new[...]``.
    """
    m = S.shape[0] - 1
    for i in range(S.shape[0]):
        a0, a1 = rev_ptr[i], rev_ptr[i + 1]
        V = np.empty(1 + a1 - a0)
        V[0] = own[i]
        V[1:] = rev_old[a0:a1]
        V.sort()
        A = np.sort(rev_new[a0:a1])
        if m % 2 == 1:
            out[i] = _kth(S, V, A, (m - 1) // 2)
        else:
            out[i] = (_kth(S, V, A, m // 2 - 1) + _kth(S, V, A, m // 2)) / 2
