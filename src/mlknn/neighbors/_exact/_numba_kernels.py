"""The compiled (numba) steps 2-3 of the exact kernel; imported only by ``_compiled.py``.

Importing this module imports numba and compiles nothing: each function is compiled
on its first call for the argument types it gets, and the machine code is cached on
disk (``cache=True``), so a later process only loads it. Every function releases the
GIL (``nogil=True``): ``_compiled.py`` runs row ranges on several Python threads,
which is safe under concurrent callers (numba's own ``parallel=True`` pool, with its
default workqueue layer, aborts the process when two threads launch kernels at once).

Exactness (the contract of ``_kernel.py``): squared distances are summed in
float64 in the order of numpy's pairwise summation (``np.add.reduce`` along a
contiguous row: 8 accumulators per block of at most 128 terms, blocks halved
recursively), so that they equal, bit for bit, the numpy fallback's
``_exact_sqdist``; ties are ordered by the lower training index.
"""

from typing import Any

import numpy as np
from numba import njit
from numba.extending import overload

from ._numba_simd import _is_contiguous_float_row, vector_leaf


def _leaf(q: Any, x: Any) -> float:
    """numpy's pairwise leaf sum of (q - x)^2. Compiled callers get the overload below;
    called from Python it is the scalar sum (the same bits)."""
    return float(_leaf_scalar(q, x))


@overload(_leaf, inline="always", jit_options={"nogil": True})
def _leaf_overload(q: Any, x: Any) -> Any:
    """Contiguous float rows (every row the kernels read from C-ordered points): the
    8-wide vector sum (``_numba_simd``); any other layout: the scalar sum. The same
    additions in the same order: the same bits."""
    # (numba compares the implementation's parameters, annotations included, with
    # this function's.)
    def vector(q: Any, x: Any) -> float:
        return vector_leaf(q, x)  # type: ignore[call-arg]  # the intrinsic's typing context is numba's

    def scalar(q: Any, x: Any) -> float:
        return _leaf_scalar(q, x)

    return vector if _is_contiguous_float_row(q) and _is_contiguous_float_row(x) else scalar


@njit(cache=True, nogil=True, inline="always")
def _leaf_scalar(q: Any, x: Any) -> float:
    """numpy's pairwise sum of (q - x)^2 over at most 128 terms: 8 accumulators
    (term t into accumulator t mod 8), combined as ((r0 + r1) + (r2 + r3)) +
    ((r4 + r5) + (r6 + r7)), then the remaining terms one by one; below 8 terms, a
    plain sum. Row slices, not offsets: numba then drops its negative-index checks."""
    n = q.shape[0]
    if n < 8:
        res = -0.0
        for t in range(n):
            e = np.float64(q[t]) - np.float64(x[t])
            res += e * e
        return res
    r0 = r1 = r2 = r3 = r4 = r5 = r6 = r7 = 0.0
    nb = n // 8
    for b in range(nb):
        qs, xs = q[8 * b : 8 * b + 8], x[8 * b : 8 * b + 8]
        e0 = np.float64(qs[0]) - np.float64(xs[0])
        e1 = np.float64(qs[1]) - np.float64(xs[1])
        e2 = np.float64(qs[2]) - np.float64(xs[2])
        e3 = np.float64(qs[3]) - np.float64(xs[3])
        e4 = np.float64(qs[4]) - np.float64(xs[4])
        e5 = np.float64(qs[5]) - np.float64(xs[5])
        e6 = np.float64(qs[6]) - np.float64(xs[6])
        e7 = np.float64(qs[7]) - np.float64(xs[7])
        r0 += e0 * e0
        r1 += e1 * e1
        r2 += e2 * e2
        r3 += e3 * e3
        r4 += e4 * e4
        r5 += e5 * e5
        r6 += e6 * e6
        r7 += e7 * e7
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    qt, xt = q[8 * nb :], x[8 * nb :]
    for t in range(qt.shape[0]):
        e = np.float64(qt[t]) - np.float64(xt[t])
        res += e * e
    return res


@njit(cache=True, nogil=True, inline="always")
def _sqdist(Q: Any, a: int, X: Any, b: int, stack: Any, vals: Any) -> float:
    """``sqdist`` with the common case (at most 128 features) inlined."""
    if X.shape[1] <= 128:
        return _leaf(Q[a], X[b])
    return sqdist(Q, a, X, b, stack, vals)


@njit(cache=True, nogil=True)
def sqdist(Q: Any, a: int, X: Any, b: int, stack: Any, vals: Any) -> float:
    """|Q[a] - X[b]|^2 in float64, summed in the order of numpy's pairwise summation.

    Rows of more than 128 features are halved (at a multiple of 8) until the pieces
    have at most 128, and the pieces' sums added pairwise, as numpy does
    (``_tree_sum``). Scratch ``stack``, int64 (64, 3), and ``vals``, float64 (64,).
    """
    if X.shape[1] <= 128:
        return _leaf(Q[a], X[b])
    return _tree_sum(Q[a], X[b], False, stack, vals)


@njit(cache=True, nogil=True)
def _tree_sum(q: Any, x: Any, values: bool, stack: Any, vals: Any) -> float:
    """numpy's pairwise summation above one leaf: the terms are halved at a multiple
    of 8 until each piece has at most 128, the pieces summed as leaves and the sums
    added pairwise. ``values``: the terms are ``q`` itself (``x`` unused), else the
    squares of ``q - x``. Without recursion (numba's on-disk cache does not reload
    recursive functions safely): ``stack`` holds (start, length, stage) and ``vals``
    the partial sums, innermost last.
    """
    nv = 0
    top = 0
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, q.shape[0], 0
    while top >= 0:
        lo, n, stage = stack[top, 0], stack[top, 1], stack[top, 2]
        if n <= 128:
            vals[nv] = _pairwise_leaf(q[lo : lo + n]) if values else _leaf(q[lo : lo + n], x[lo : lo + n])
            nv += 1
            top -= 1
            continue
        n2 = n // 2
        n2 -= n2 % 8
        if stage == 0:
            stack[top, 2] = 1
            top += 1
            stack[top, 0], stack[top, 1], stack[top, 2] = lo, n2, 0
        elif stage == 1:
            stack[top, 2] = 2
            top += 1
            stack[top, 0], stack[top, 1], stack[top, 2] = lo + n2, n - n2, 0
        else:
            nv -= 1
            vals[nv - 1] = vals[nv - 1] + vals[nv]
            top -= 1
    return float(vals[0])


@njit(cache=True, nogil=True)
def pair_sqdist(Q: Any, X: Any, r: Any, c: Any, out: Any) -> None:
    """out[p] = |Q[r[p]] - X[c[p]]|^2 for every pair p (``sqdist``)."""
    stack, vals = np.empty((64, 3), dtype=np.int64), np.empty(64)
    for p in range(r.shape[0]):
        out[p] = _sqdist(Q, r[p], X, c[p], stack, vals)


@njit(cache=True, nogil=True, inline="always")
def _offer(best_d: Any, best_j: Any, m: int, k: int, dist: float, j: int) -> int:
    """Insert (dist, j) into the (distance, index)-sorted best_d[:m], best_j[:m] (at most k kept)."""
    if m == k:
        last = best_d[k - 1]
        if dist > last or (dist == last and j > best_j[k - 1]) or not dist == dist:
            return m
        m -= 1
    p = m
    while p > 0 and (best_d[p - 1] > dist or (best_d[p - 1] == dist and best_j[p - 1] > j)):
        best_d[p] = best_d[p - 1]
        best_j[p] = best_j[p - 1]
        p -= 1
    best_d[p] = dist
    best_j[p] = j
    return m + 1


#: Up to this many candidates of a row, the k best are placed by rank (every pair
#: compared, no branches); beyond, sorted insertion (``_offer``).
_RANK_MAX = 32


@njit(cache=True, nogil=True, inline="always")
def keep_best(cand_d: Any, cand: Any, nc: int, k: int, best_d: Any, best_j: Any) -> None:
    """The first k of the candidates ``(cand_d[t], cand[t])``, ``t < nc`` (distinct
    indices, at least k of them), in (distance, index) order, written to
    ``best_d`` and ``best_j``: by rank for a few candidates, by sorted insertion
    (``_offer``) for many or where a distance is NaN."""
    nan = False
    for t in range(nc):
        nan |= not cand_d[t] == cand_d[t]
    if nc <= _RANK_MAX and not nan:
        # Rank of each candidate among the others (indices are distinct, so the
        # (distance, index) order is total): the first k ranks are the answer.
        for t in range(nc):
            dt, jt = cand_d[t], cand[t]
            r = 0
            for u in range(nc):
                du = cand_d[u]
                r += (du < dt) | ((du == dt) & (cand[u] < jt))
            if r < k:
                best_d[r] = dt
                best_j[r] = jt
    else:
        nb = 0
        for t in range(nc):
            nb = _offer(best_d, best_j, nb, k, cand_d[t], cand[t])


@njit(cache=True, nogil=True, inline="always")
def rank_candidates(
    Q: Any, i: int, X: Any, cand: Any, nc: int, cand_d: Any, best_d: Any, best_j: Any, stack: Any, vals: Any,
    out_d: Any, out_i: Any,
) -> None:
    """Row ``i`` of ``out_d`` and ``out_i`` (k = ``best_d.shape[0]`` wide): the exact
    squared distances of query ``Q[i]`` to its candidates ``X[cand[t]]``, ``t <
    nc`` (``sqdist``, into ``cand_d``), and the first k in (distance, index) order
    (``keep_best``; ``best_d``, ``best_j``, ``stack`` and ``vals`` are scratch)."""
    k = best_d.shape[0]
    for t in range(nc):
        cand_d[t] = _sqdist(Q, i, X, cand[t], stack, vals)
    keep_best(cand_d, cand, nc, k, best_d, best_j)
    for t in range(k):
        out_d[i, t] = best_d[t]
        out_i[i, t] = best_j[t]


@njit(cache=True, nogil=True, inline="always")
def group_buffers(n: int, m: int, k: int) -> Any:
    """Step 2's layout of a row of ``n`` keys in groups of ``m``: the number of
    groups, the columns they cover (the rest is the tail), and the scratch of one
    row's bound: the pool of group minima and tail keys, ``_kth_filtered``'s
    buffer, and the list of passing groups."""
    n_groups = n // m
    body = n_groups * m
    n_pool = n_groups + n - body
    pool = np.empty(n_pool, dtype=np.float32)
    scratch = np.empty(n_pool + k, dtype=np.float32)
    passed = np.empty(n_groups + 1, dtype=np.int64)
    return n_groups, body, pool, scratch, passed


@njit(cache=True, nogil=True)
def select_rows(
    V: Any, Q: Any, X: Any, scale: Any, rtol: float, self_offset: int, k: int, m: int, every: bool,
    lo: int, hi: int, out_d: Any, out_i: Any,
) -> None:
    """The k nearest training points of query rows ``lo..hi-1`` of one chunk.

    ``V`` (rows, n_fit), float32, holds the ranking keys of the GEMM (``_ranking_keys``);
    ``self_offset >= 0``: row i excludes training point ``i + self_offset``
    (leave-one-out; its entry of V is overwritten with +inf). ``scale[i]`` is the
    row's rounding scale, ``rtol`` the GEMM's relative rounding bound
    (``_GEMM_RTOL``), ``m`` the group size (``_compiled.group_size``). ``every``:
    the keys may have overflowed (``_compiled.keys_out_of_range``), every training
    point is a candidate.

    Steps 2-3 of ``_kernel``, per row: the minima of ``m`` interleaved groups
    (column j in group ``j mod n_groups``; one vectorised pass), the k-th smallest
    of those minima and of the tail columns as the upper bound (``_kth_filtered``),
    plus twice the rounding bound (the rule of ``_kernel.threshold``); then
    the members of the groups under the threshold whose key is under it: every
    true neighbour and every tie at the boundary (collected without branches:
    about k of them, the branches mispredicted on each). Their squared distances
    are recomputed exactly (8-wide vectors, ``_numba_simd``), and the k best kept in
    (distance, index) order: by rank for a few candidates, by sorted insertion for
    many. Writes rows ``lo..hi-1`` of ``out_d`` (float64 squared distances) and
    ``out_i``.
    """
    n_fit = V.shape[1]
    n_groups, body, pool, scratch, passed = group_buffers(n_fit, m, k)
    n_pool = pool.shape[0]
    cand = np.empty(n_fit + 1, dtype=np.int64)
    cand_d = np.empty(n_fit + 1, dtype=np.float64)
    best_d = np.empty(k, dtype=np.float64)
    best_j = np.empty(k, dtype=np.int64)
    stack, vals = np.empty((64, 3), dtype=np.int64), np.empty(64)
    # Fewer than k pool entries (tiny training sets): no bound, every key passes.
    use_bound = n_pool >= k
    for i in range(lo, hi):
        row = V[i]
        own = i + self_offset if self_offset >= 0 else -1
        if own >= 0:
            row[own] = np.inf
        thr = np.float32(np.inf)
        if use_bound and not every:
            _group_minima(row, m, n_groups, pool)
            # +inf when fewer than k entries are not NaN: then every key passes.
            thr = np.float32(_kth_filtered(pool, k, scratch) + band_of(rtol, scale[i]) + 1e-300)
        # Candidates: members of the groups (and tail columns) under the threshold.
        nc = 0
        if not every:
            n_pass = 0
            for t in range(n_groups):
                passed[n_pass] = t
                n_pass += (not use_bound) or pool[t] <= thr
            for u in range(n_pass):
                t = passed[u]
                for g in range(m):
                    j = g * n_groups + t
                    cand[nc] = j
                    nc += (row[j] <= thr) & (j != own)
            for j in range(body, n_fit):
                cand[nc] = j
                nc += (row[j] <= thr) & (j != own)
        if nc < k or every:
            # Fewer than k keys passed (NaN keys), or keys that may have overflowed:
            # every training point but the row's own is a candidate.
            nc = 0
            for j in range(n_fit):
                cand[nc] = j
                nc += j != own
        rank_candidates(Q, i, X, cand, nc, cand_d, best_d, best_j, stack, vals, out_d, out_i)


@njit(cache=True, nogil=True)
def _kth_filtered(pool: Any, k: int, scratch: Any) -> float:
    """``_kth_smallest(pool, k)``, over fewer entries: ``pool`` (at least k entries)
    is cut into consecutive blocks of k, and entry b of every block goes to class
    b; the largest of the k class minima is an upper bound on the k-th smallest
    (k entries, one per class, are at or below it). Only the entries under that
    bound (about a fifth of them on yeast) enter the sorted buffer: the same
    answer, a third of the time. ``scratch``: float32, ``len(pool) + k``."""
    n = pool.shape[0]
    low = scratch[:k]
    kept = scratch[k:]
    low[:] = np.inf
    s = 0
    while s + k <= n:
        blk = pool[s : s + k]
        for b in range(k):
            v = blk[b]
            p = low[b]
            low[b] = v if v < p else p
        s += k
    for b in range(n - s):
        v = pool[s + b]
        p = low[b]
        low[b] = v if v < p else p
    # NaN entries never lower a class minimum (v < p is false): a class of NaNs
    # stays +inf, and the bound +inf keeps every entry.
    bound = low[0]
    for b in range(1, k):
        v = low[b]
        bound = v if v > bound else bound
    nk = 0
    for t in range(n):
        v = pool[t]
        kept[nk] = v
        nk += v <= bound
    return _kth_smallest(kept[:nk], k, low)


@njit(cache=True, nogil=True)
def _group_minima(row: Any, m: int, n_groups: int, pool: Any) -> None:
    """pool[t] = min over g of row[g n_groups + t]; pool[n_groups:] = the tail keys.

    Slices rather than offset indices: numba then drops its negative-index check
    and LLVM vectorises the element-wise minimum (several times faster).
    """
    pool[:n_groups] = row[:n_groups]
    for g in range(1, m):
        seg = row[g * n_groups : (g + 1) * n_groups]
        for t in range(n_groups):
            v = seg[t]
            p = pool[t]
            pool[t] = v if v < p else p
    pool[n_groups:] = row[m * n_groups :]


@njit(cache=True, nogil=True)
def _kth_smallest(pool: Any, k: int, buf: Any) -> float:
    """The k-th smallest entry of ``pool`` (+inf if it has fewer than k that are not NaN).

    ``buf`` (k,) holds the k smallest seen, ascending; an entry below its last is
    inserted without branches: ``buf[u] = min(buf[u], max(buf[u - 1], v))`` from
    the top down (about a quarter faster than a shifting insertion, whose loop
    exits are unpredictable). NaN entries never pass ``v < buf[k - 1]``.
    """
    for u in range(k):
        buf[u] = np.inf
    for t in range(pool.shape[0]):
        v = pool[t]
        if not v < buf[k - 1]:
            continue
        for u in range(k - 1, 0, -1):
            a = buf[u - 1]
            hi = a if a > v else v
            b = buf[u]
            buf[u] = b if b < hi else hi
        b = buf[0]
        buf[0] = b if b < v else v
    return np.float64(buf[k - 1])


@njit(cache=True, nogil=True, inline="always")
def band_of(rtol: float, scale: float) -> float:
    """Twice the GEMM rounding bound of a row (``_kernel.threshold``)."""
    return 2.0 * (rtol * scale)


@njit(cache=True, nogil=True, inline="always")
def _pairwise_leaf(a: Any) -> float:
    """numpy's pairwise sum of at most 128 float64 values (``_leaf_scalar``'s order)."""
    n = a.shape[0]
    if n < 8:
        res = -0.0
        for t in range(n):
            res += a[t]
        return res
    r0, r1, r2, r3, r4, r5, r6, r7 = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
    nb = n // 8
    for b in range(1, nb):
        s = a[8 * b : 8 * b + 8]
        r0 += s[0]
        r1 += s[1]
        r2 += s[2]
        r3 += s[3]
        r4 += s[4]
        r5 += s[5]
        r6 += s[6]
        r7 += s[7]
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for t in range(8 * nb, n):
        res += a[t]
    return float(res)
