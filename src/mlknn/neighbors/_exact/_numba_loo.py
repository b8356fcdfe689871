"""The compiled kernels of the symmetric leave-one-out path (``_loo.py``).

The Gram matrix of the training points is computed in tiles, each once: the
diagonal tiles (a strip of points against itself, ``loo_diagonal``) and the tiles
above the diagonal (a strip against later points, ``loo_tile``), whose keys serve
twice: as the candidates of the tile's rows and, read transposed, of its columns.
Both keep the running states of ``_loo._tiled_candidates``: per point and state,
the k smallest keys offered so far, ascending, whose last is an upper bound on the
point's final k-th key. Loaded with the other kernels by ``_compiled.kernels``;
same caching and GIL rules.
"""

from typing import Any

import numpy as np
from numba import njit

from ._numba_kernels import _group_minima, _kth_filtered, _sqdist, group_buffers, keep_best
from ._numba_simd import MASK_WIDTH, lowest_bit, passing_mask, prefetch_row

__all__ = ["loo_compact", "loo_diagonal", "loo_rerank", "loo_tile"]

_LARGEST = np.float32(np.finfo(np.float32).max)


@njit(cache=True, nogil=True, inline="always")
def _threshold_of(best: Any, r: int, band: Any) -> Any:
    """Point ``r``'s threshold now: the smallest of its states' bounds (the last of
    each state's k smallest, ``best[s, r, k - 1]``) plus its band, in float32 (the
    rule of ``_kernel.threshold``), capped at the largest float32 so that no +inf
    key passes while no bound is finite."""
    k = best.shape[2]
    c = np.float64(best[0, r, k - 1])
    for s in range(1, best.shape[0]):
        v = np.float64(best[s, r, k - 1])
        c = v if v < c else c
    t64 = c + band[r] + 1e-300
    return np.float32(t64) if t64 < _LARGEST else _LARGEST


@njit(cache=True, nogil=True, inline="always")
def _offer(best: Any, s: int, r: int, v: Any) -> bool:
    """Offer key ``v`` to state ``s`` of point ``r``: a key under the state's k-th
    smallest is inserted (branch-free, from the top down: ``b[u] = min(b[u],
    max(b[u - 1], v))``), so ``best[s, r]`` stays the k smallest keys offered, in
    ascending order. Returns whether the bound ``best[s, r, k - 1]`` went down.
    Indexed, not sliced: a view per offer would touch its reference count."""
    k = best.shape[2]
    if not v < best[s, r, k - 1]:
        return False
    for u in range(k - 1, 0, -1):
        a = best[s, r, u - 1]
        hi = a if a > v else v
        b = best[s, r, u]
        best[s, r, u] = b if b < hi else hi
    b = best[s, r, 0]
    best[s, r, 0] = b if b < v else v
    return True


@njit(cache=True, nogil=True)
def loo_diagonal(
    V: Any, a: int, group: int, best: Any, band: Any, out_pair: Any, out_key: Any
) -> int:
    """Candidates of a diagonal tile of the symmetric leave-one-out path.

    ``V`` (m, m), float32: the keys of the points ``a .. a + m - 1`` against each
    other (the diagonal is overwritten with +inf: a point is not its own
    neighbour). Per row ``i`` (point ``a + i``): an upper bound on its k-th key
    from interleaved groups of ``group`` columns (the k-th smallest of the group
    minima and tail keys, as the dense selection's step 2; +inf with fewer than k of
    them), its threshold (that bound plus the band, the rule of
    ``_threshold_of``), and the keys at or under it, written to ``out_pair``
    (``row << 32 | column``, global indices) and ``out_key`` (at least ``m * m``
    entries) and offered to the point's state 0. Every key of the row's k smallest
    is under the threshold, so the state ends as exactly those (+inf where fewer).
    Returns the number written.
    """
    m = V.shape[0]
    k = best.shape[2]
    n_groups, _, pool, scratch, _ = group_buffers(m, group, k)
    use_bound = pool.shape[0] >= k
    below = np.full(m, -np.inf, dtype=np.float32)  # no column threshold: the row's alone
    body_mask = m - m % MASK_WIDTH
    n_out = 0
    for i in range(m):
        row = V[i]
        row[i] = np.inf
        r = a + i
        kth = np.inf
        if use_bound:
            _group_minima(row, group, n_groups, pool)
            kth = _kth_filtered(pool, k, scratch)
        t64 = kth + band[r] + 1e-300
        thr = np.float32(t64) if t64 < _LARGEST else _LARGEST
        hi = np.int64(r) << 32
        for j0 in range(0, body_mask, MASK_WIDTH):
            mask: int = passing_mask(row, below, j0, thr)  # type: ignore[call-arg]  # typed by numba
            while mask != 0:
                j = j0 + lowest_bit(mask)
                mask &= mask - 1
                out_pair[n_out] = hi | (a + j)
                out_key[n_out] = row[j]
                n_out += 1
                _offer(best, 0, r, row[j])
        for j in range(body_mask, m):
            v = row[j]
            if v <= thr:
                out_pair[n_out] = hi | (a + j)
                out_key[n_out] = v
                n_out += 1
                _offer(best, 0, r, v)
    return n_out


#: Keys of a row tested per branch in ``loo_tile``: four masks of ``MASK_WIDTH``
#: bits in one int64.
_WORD = 4 * MASK_WIDTH


@njit(cache=True, nogil=True, inline="always")
def _take(
    V: Any, i: int, j: int, a: int, b: int, col_state: int, best: Any, band: Any, thr: Any, thr_col: Any,
    out_pair: Any, out_key: Any, n_out: int,
) -> Any:
    """Entry ``(i, j)`` of a tile, flagged by its group's mask: a candidate of its row
    if at or under ``thr``, of its column if at or under ``thr_col[j]`` (each offered
    to its state, each threshold lowered with its bound). Returns ``(n_out, thr)``."""
    v = V[i, j]
    r, c = a + i, b + j
    row_hit = v <= thr
    col_hit = v <= thr_col[j]
    # Both slots written, each kept by its test: no branch to mispredict on the
    # two tests, which go either way.
    out_pair[n_out] = (np.int64(r) << 32) | c
    out_key[n_out] = v
    n_out += row_hit
    out_pair[n_out] = (np.int64(c) << 32) | r
    out_key[n_out] = v
    n_out += col_hit
    # The bound tests first: most candidates lower their state's bound.
    k = best.shape[2]
    if v < best[0, r, k - 1] and row_hit:
        _offer(best, 0, r, v)
        thr = _threshold_of(best, r, band)
    if v < best[col_state, c, k - 1] and col_hit:
        _offer(best, col_state, c, v)
        thr_col[j] = _threshold_of(best, c, band)
    return n_out, thr


@njit(cache=True, nogil=True)
def loo_tile(
    V: Any, a: int, b: int, col_state: int, best: Any, band: Any, thr_col: Any,
    out_pair: Any, out_key: Any, n_out: int, first_row: int,
) -> Any:
    """Candidates of an off-diagonal tile of the symmetric leave-one-out path, both ways.

    ``V`` (rows, cols), float32: the keys of points ``a ..`` (the tile's rows)
    against points ``b ..`` (its columns, all after the rows). Entry ``(i, j)`` is
    a candidate of point ``a + i`` when it is at or under that point's threshold,
    and of point ``b + j`` (the transposed reading) when it is at or under that
    one's (``_threshold_of``, on every state's bound). Row candidates are offered to
    state 0 (the caller owns these points' state 0), column candidates to state
    ``col_state`` (the caller's own); an offer that lowers a bound lowers that
    point's threshold at once. Candidates go to ``out_pair`` (``row << 32 |
    column``, global indices) and ``out_key`` from ``n_out`` on; ``thr_col``
    (>= cols,) float32 is scratch.

    Rows ``first_row ..`` are processed while at least ``2 cols`` entries are
    free; returns ``(next_row, n_out)``: the caller empties the buffers and calls
    again from ``next_row`` until it is ``rows`` (a row is never half done, so no
    key is offered twice).
    """
    n_rows, n_cols = V.shape
    room = out_pair.shape[0]
    body = n_cols - n_cols % _WORD
    for j in range(n_cols):
        thr_col[j] = _threshold_of(best, b + j, band)
    for i in range(first_row, n_rows):
        if n_out + 2 * n_cols > room:
            return i, n_out
        row = V[i]
        thr = _threshold_of(best, a + i, band)
        # Candidates are rare: groups of keys are compared at once (four masks in
        # one word, one branch), and only the flagged entries are looked at.
        for j0 in range(0, body, _WORD):
            mask: int = passing_mask(row, thr_col, j0, thr)  # type: ignore[call-arg]  # typed by numba
            for g in range(1, _WORD // MASK_WIDTH):
                mask |= passing_mask(row, thr_col, j0 + g * MASK_WIDTH, thr) << (g * MASK_WIDTH)
            while mask != 0:
                j = j0 + lowest_bit(mask)
                mask &= mask - 1
                n_out, thr = _take(V, i, j, a, b, col_state, best, band, thr, thr_col, out_pair, out_key, n_out)
        for j in range(body, n_cols):
            if row[j] <= max(thr_col[j], thr):
                n_out, thr = _take(V, i, j, a, b, col_state, best, band, thr, thr_col, out_pair, out_key, n_out)
    return n_rows, n_out



@njit(cache=True, nogil=True)
def loo_compact(pairs: Any, keys: Any, thr: Any) -> int:
    """Keep, in place and in order, the pooled entries (``pairs``: ``row << 32 |
    column``, ``keys``: float32) whose key is at or under their row's threshold
    ``thr`` (float32); returns how many are kept (at the front). Branch-free: about
    half the entries go each way, which a branch would mispredict."""
    m = 0
    for p in range(pairs.shape[0]):
        pair, v = pairs[p], keys[p]
        pairs[m] = pair
        keys[m] = v
        m += v <= thr[pair >> 32]
    return m


@njit(cache=True, nogil=True, inline="always")
def _row_candidates(
    r: int, first: int, nc: int, cols: Any, row_keys: Any, band: Any, X: Any, small: Any, out: Any
) -> int:
    """The pooled columns of point ``r`` (``cols[first:first + nc]``, their keys in
    ``row_keys``) within the rounding band of the k-th smallest of those keys
    (``small``: scratch of k float32), written to ``out``; returns how many.

    Every key of the row at or under its final bound was pooled, so the k-th
    smallest pooled key is the row's own k-th key: the tightest threshold of the
    rule of ``_threshold_of``, whatever the running states held (with several
    threads each saw part of the row).
    """
    k = small.shape[0]
    for u in range(k):
        small[u] = np.inf
    for t in range(first, first + nc):
        v = row_keys[t]
        if v < small[k - 1]:
            u = k - 1
            while u > 0 and small[u - 1] > v:
                small[u] = small[u - 1]
                u -= 1
            small[u] = v
    t64 = np.float64(small[k - 1]) + band[r] + 1e-300
    thr = np.float32(t64) if t64 < _LARGEST else _LARGEST
    kept = 0
    for t in range(first, first + nc):
        out[kept] = cols[t]
        kept += row_keys[t] <= thr
    return kept


@njit(cache=True, nogil=True)
def loo_rerank(
    pairs: Any, keys: Any, band: Any, lo: int, hi: int, Q: Any, X: Any, out_d: Any, out_i: Any
) -> int:
    """The k nearest other points of points ``lo .. hi - 1`` from their pooled pairs.

    ``pairs`` (``row << 32 | column``, any order, each pair at most once) and
    ``keys`` (float32) hold the pooled candidates of every point, a superset of
    each row's keys at or under its final bound plus ``band`` (per point,
    float64). Those of the range are grouped by row (a counting sort); per row,
    the columns within ``band`` of the row's k-th pooled key
    (``_row_candidates``) get their exact float64 squared distances ``|Q[row] -
    X[column]|^2`` and the first ``k = out_d.shape[1]`` are kept in (distance,
    index) order (``_numba_kernels.sqdist`` and ``keep_best``: numpy's pairwise
    sums, the bits of ``_kernel.exact_sqdist``, and the order of
    ``_kernel.topk_sorted``),
    written to rows ``lo .. hi - 1`` of ``out_d`` and ``out_i``. Returns the fewest pooled pairs of a row of the range (the caller
    checks that it is at least k).
    """
    k = out_d.shape[1]
    m = hi - lo
    # Slot 0 of ``start`` and the last entry of ``cols`` take the pairs of other
    # rows (no branch on the row, which goes either way).
    start = np.zeros(m + 2, dtype=np.int64)
    for p in range(pairs.shape[0]):
        r = (pairs[p] >> 32) - lo
        inside = (r >= 0) & (r < m)
        start[(r + 2) * inside] += 1
    start[0] = start[1] = 0
    for i in range(2, m + 2):
        start[i] += start[i - 1]
    cols = np.empty(start[m + 1] + 1, dtype=np.int64)
    row_keys = np.empty(start[m + 1] + 1, dtype=keys.dtype)
    fill = start[: m + 1].copy()
    fill[0] = start[m + 1]
    for p in range(pairs.shape[0]):
        r = (pairs[p] >> 32) - lo
        inside = (r >= 0) & (r < m)
        slot = (r + 1) * inside
        cols[fill[slot]] = pairs[p] & 0xFFFFFFFF
        row_keys[fill[slot]] = keys[p]
        fill[slot] += inside
    fewest = int(pairs.shape[0])
    widest = 0
    for i in range(m):
        nc = start[i + 2] - start[i + 1]
        fewest = min(fewest, nc)
        widest = max(widest, nc)
    if m == 0 or fewest < k:
        return fewest
    stack, vals = np.empty((64, 3), dtype=np.int64), np.empty(64)
    best_d, best_j = np.empty(k, dtype=np.float64), np.empty(k, dtype=np.int64)
    small = np.empty(k, dtype=keys.dtype)
    cand = np.empty((2, widest), dtype=np.int64)
    cand_d = np.empty(widest, dtype=np.float64)
    # One point ahead: its candidates are chosen first, and the row of its t-th is
    # asked for from the cache (``prefetch_row``) as the current point's t-th
    # distance is summed (spread out, the requests do not queue up).
    n_next = _row_candidates(lo, start[1], start[2] - start[1], cols, row_keys, band, X, small, cand[0])
    for u in range(n_next):
        prefetch_row(X, cand[0, u])  # type: ignore[call-arg]  # typed by numba
    for i in range(m):
        r = lo + i
        here, n_here = cand[i & 1], n_next
        ahead = cand[(i + 1) & 1]
        n_next = 0
        if i + 1 < m:
            n_next = _row_candidates(r + 1, start[i + 2], start[i + 3] - start[i + 2], cols, row_keys, band, X,
                                     small, ahead)
        for t in range(n_here):
            if t < n_next:
                prefetch_row(X, ahead[t])  # type: ignore[call-arg]  # typed by numba
            cand_d[t] = _sqdist(Q, r, X, here[t], stack, vals)
        for t in range(n_here, n_next):
            prefetch_row(X, ahead[t])  # type: ignore[call-arg]  # typed by numba
        keep_best(cand_d, here, n_here, k, best_d, best_j)
        for u in range(k):
            out_d[r, u] = best_d[u]
            out_i[r, u] = best_j[u]
    return fewest
